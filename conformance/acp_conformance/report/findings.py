"""What the reports say about failures, computed once for all of them: which rules are ACP's
and which are iac-code's house rules (and what each adds beyond ACP), which failures block
the verdict, and which failures share one root cause (the same frame of the same run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..outcomes import Outcome, Verdict
from ..requirements import Requirement
from ..run_result import RequirementResult, RunResult

#: Section titles, in the order the reports show them.
ACP_SECTION = "ACP and JSON-RPC 2.0 rules"
HOUSE_SECTION = "iac-code house rules (stricter than ACP: they block only under --profile iac-code)"

#: A house rule's citation reads "iac-code house rule (WHAT IT ADDS); basis: SOURCE".
_HOUSE_CITATION = re.compile(r"^iac-code house rule \((?P<adds>.*?)\); basis: ")


def house_addition(req: Requirement) -> str | None:
    """What a house rule asks beyond ACP, in a few words (None for an ACP rule)."""
    if not req.house:
        return None
    found = _HOUSE_CITATION.match(req.reference)
    return found.group("adds") if found else req.statement


def sections(result: RunResult) -> list[tuple[str, list[RequirementResult]]]:
    """The results split into ACP rules and house rules (registry order kept in each)."""
    acp = [r for r in result.results.values() if not r.requirement.house]
    house = [r for r in result.results.values() if r.requirement.house]
    return [
        (title, items) for title, items in ((ACP_SECTION, acp), (HOUSE_SECTION, house)) if items
    ]


def first_failure(item: RequirementResult) -> Outcome | None:
    """The failure a reader should see first: a blocking (not softened) one if there is one."""
    failures = [o for o in item.outcomes if o.verdict is Verdict.FAIL]
    hard = [o for o in failures if o.soft is None]
    chosen = hard or failures
    return chosen[0] if chosen else None


def blocks_verdict(result: RunResult) -> list[RequirementResult]:
    """The results that make the run NOT CONFORMANT: blocking failures and stale baseline
    entries (registry order)."""
    blocking = {id(r) for r in result.blocking_failures} | {id(r) for r in result.stale}
    return [r for r in result.results.values() if id(r) in blocking]


@dataclass
class Cause:
    """One root cause: the frame several failures point at first, and the rules it broke.
    A failure that cites no frame is a cause of its own (``run_id`` and ``seq`` None)."""

    run_id: str | None
    seq: int | None
    items: list[RequirementResult] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, int] | None:
        if self.run_id is None or self.seq is None:
            return None
        return self.run_id, self.seq


def _cause_key(item: RequirementResult) -> tuple[str, int] | None:
    outcome = first_failure(item)
    if outcome is None or outcome.run_id is None or not outcome.frames:
        return None
    return outcome.run_id, min(outcome.frames)


def causes(items: list[RequirementResult]) -> list[Cause]:
    """``items`` grouped by root cause, in the order each cause is first met."""
    grouped: dict[tuple[str, int], Cause] = {}
    out: list[Cause] = []
    for item in items:
        key = _cause_key(item)
        if key is None:
            out.append(Cause(None, None, [item]))
            continue
        cause = grouped.get(key)
        if cause is None:
            cause = grouped[key] = Cause(key[0], key[1])
            out.append(cause)
        cause.items.append(item)
    return out
