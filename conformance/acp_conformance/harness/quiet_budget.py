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

A new process's ``initialize`` is the one wait the shrinking must not cut below what the agent
has shown it needs to start: once this run has seen an initialize answered, a later one waits
at least ``STARTUP_MARGIN`` times the slowest so far (``STARTUP_FLOOR`` at the least, up to
what was asked). Otherwise a slow starter (codex-acp takes about a second) that went quiet
once had each later scenario's setup cut to 0.25 s, and the setup failure was charged to the
scenario's first rule. A quiet agent's new processes answer initialize, so this costs its run
nothing; an agent that never answered one is not given the allowance.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Seconds all the run's unanswered waits may cost together (a quiet agent's run then
#: stays within about a minute).
QUIET_BUDGET = 45.0
#: The shortest wait once the budget is spent: an answer already on its way still counts.
FLOOR = 0.25
#: A later initialize waits at least this many times the slowest initialize answer seen...
STARTUP_MARGIN = 4.0
#: ... and at least this many seconds.
STARTUP_FLOOR = 5.0


@dataclass
class QuietBudget:
    """Shared by every connection of one run (see ``RunEvidence.quiet``)."""

    total: float = QUIET_BUDGET
    #: Seconds spent in waits that ran out, all connections together.
    spent: float = 0.0
    #: How many waits ran out.
    unanswered: int = 0
    #: Seconds the slowest answered initialize took (None: none answered yet).
    slowest_start: float | None = None

    def bound(self, wanted: float, method: str | None = None) -> float:
        """How long a wait that asked for ``wanted`` seconds (for an answer to ``method``,
        when it waits for one) may take now."""
        if not self.unanswered:
            return wanted
        shrunk = max(FLOOR, (self.total - self.spent) / 2)
        if method == "initialize" and self.slowest_start is not None:
            shrunk = max(shrunk, STARTUP_FLOOR, STARTUP_MARGIN * self.slowest_start)
        return min(wanted, shrunk)

    def ran_out(self, waited: float) -> None:
        """A wait of ``waited`` seconds ended with no answer."""
        self.unanswered += 1
        self.spent += waited

    def answered(self, method: str, seconds: float) -> None:
        """The agent answered ``method`` after ``seconds``. A real request: it is not quiet,
        the waits are whole again (what was spent stays spent, so an agent that keeps going
        quiet still costs little). An initialize: how long its processes take to start."""
        if method == "initialize":
            self.slowest_start = max(self.slowest_start or 0.0, seconds)
        else:
            self.unanswered = 0

    def describe(self) -> str:
        """A note for a reason: why a wait was shorter than ``--timeout``."""
        return (
            f"after {self.unanswered} unanswered waits the run's waits are shortened "
            f"(a quiet agent costs at most ~{self.total:g} s of waiting)"
        )
