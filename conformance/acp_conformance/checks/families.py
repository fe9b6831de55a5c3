"""Check families as data: a table of rows, each row one requirement, all judged by one check
body that reads the row. A family registers its rows with :func:`register_family` (through
the same :func:`..requirements.requirement` every check uses), so its rules are listed,
gated and reported like any other. The families: the HTTP refusals (:mod:`.http_status`),
the unknown-session answers (:mod:`.session_unknown`) and the prompt content blocks of v1
and v2 (:mod:`.prompt_content`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

from ..outcomes import Outcome
from ..requirements import Requirement, requirement
from ..scenarios.check_context import CheckContext


class FamilyRow(Protocol):
    """A row of a family: its rule (a :class:`..requirements.Requirement`, not yet
    registered), and whatever else its family's check body reads."""

    @property
    def rule(self) -> Requirement: ...


RowT = TypeVar("RowT", bound=FamilyRow)


def register_family(
    rows: Iterable[RowT],
    scenario: str,
    body: Callable[[CheckContext, RowT], Awaitable[Outcome]],
    *,
    module: str,
) -> None:
    """Define each row's rule and bind ``body``, given the row, as its check in ``scenario``
    (the checks run in the rows' order). ``module`` is the registering module's
    ``__name__``: the checks count as defined there (a check's module is its place in the
    run order), not here."""
    for row in rows:
        rule = row.rule
        requirement(
            rule.id,
            rule.tier,
            rule.statement,
            rule.reference,
            scenario=scenario,
            gate=rule.gate,
            llm=rule.llm,
            house=rule.house,
            drafts=rule.drafts,
        )(_bound(row, body, module))


def _bound(
    row: RowT, body: Callable[[CheckContext, RowT], Awaitable[Outcome]], module: str
) -> Callable[[CheckContext], Awaitable[Outcome]]:
    async def check(ctx: CheckContext) -> Outcome:
        return await body(ctx, row)

    # The report names a check by its function: the row's id tells which row this is.
    check.__name__ = check.__qualname__ = row.rule.id.replace(".", "_").replace("-", "_")
    check.__module__ = module
    return check
