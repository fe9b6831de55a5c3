"""A run-wide budget for waiting on an agent that has gone quiet.

Every wait for an answer is bounded by ``--timeout``. An agent that stops answering makes
each check spend that bound in turn: a quiet fixture cost 203 s. The spec sets no deadline,
so the waits cannot simply be short; instead, once one request went unanswered, the run
knows the agent may be quiet, and every later wait gets at most half of what is left of
``QUIET_BUDGET`` (and never less than ``FLOOR``). The waits that run out are charged to the
budget, so all of them together stay near ``QUIET_BUDGET`` however many checks there are,
while an agent that answers never meets the budget at all.

An answer to a real request (anything but ``initialize``, which even a quiet agent's new
processes answer) after a wait ran out shows the agent was only slow, not quiet: the waits are
whole again. Without that, one answer that missed ``--timeout`` on a loaded machine shortened
every later wait of a conformant agent's run to a second or two, and failed checks it passes.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Seconds all the run's unanswered waits may cost together (a quiet agent's run then
#: stays within about a minute).
QUIET_BUDGET = 45.0
#: The shortest wait once the budget is spent: an answer already on its way still counts.
FLOOR = 0.25


@dataclass
class QuietBudget:
    """Shared by every connection of one run (see ``RunEvidence.quiet``)."""

    total: float = QUIET_BUDGET
    #: Seconds spent in waits that ran out, all connections together.
    spent: float = 0.0
    #: How many waits ran out.
    unanswered: int = 0

    def bound(self, wanted: float) -> float:
        """How long a wait that asked for ``wanted`` seconds may take now."""
        if not self.unanswered:
            return wanted
        return min(wanted, max(FLOOR, (self.total - self.spent) / 2))

    def ran_out(self, waited: float) -> None:
        """A wait of ``waited`` seconds ended with no answer."""
        self.unanswered += 1
        self.spent += waited

    def answered(self) -> None:
        """The agent answered a real request: it is not quiet, the waits are whole again
        (what was spent stays spent, so an agent that keeps going quiet still costs little)."""
        self.unanswered = 0

    def describe(self) -> str:
        """A note for a reason: why a wait was shorter than ``--timeout``."""
        return (
            f"after {self.unanswered} unanswered waits the run's waits are shortened "
            f"(a quiet agent costs at most ~{self.total:g} s of waiting)"
        )
