"""Check families as data: a table of rows, each naming one rule (defined in the rules data
like every other), all judged by one check body that reads the row. A family binds its rows
with :func:`register_family` (through the same :func:`..requirements.check` every check
uses), so its rules are listed, gated and reported like any other. The families: the HTTP
refusals (:mod:`.http_status`), the unknown-session answers (:mod:`.session_unknown`),
the prompt content blocks of v1 and v2 (:mod:`.prompt_content`) and the turns cut short by a
cancel or a close, v1 and v2 (:mod:`.cancelled_turns`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

from ..outcomes import Outcome
from ..requirements import check
from ..scenarios.check_context import CheckContext


class FamilyRow(Protocol):
    """A row of a family: its rule's id, and whatever else its family's check body reads."""

    @property
    def rule(self) -> str: ...


RowT = TypeVar("RowT", bound=FamilyRow)


def register_family(
    rows: Iterable[RowT],
    scenario: str,
    body: Callable[[CheckContext, RowT], Awaitable[Outcome]],
    *,
    module: str,
) -> None:
    """Bind ``body``, given the row, as the check of each row's rule in ``scenario`` (the
    checks run in the rows' order). ``module`` is the registering module's ``__name__``: the
    checks count as defined there (a check's module is its place in the run order), not
    here."""
    for row in rows:
        check(row.rule, scenario=scenario)(_bound(row, body, module))


def _bound(
    row: RowT, body: Callable[[CheckContext, RowT], Awaitable[Outcome]], module: str
) -> Callable[[CheckContext], Awaitable[Outcome]]:
    async def judge_row(ctx: CheckContext) -> Outcome:
        return await body(ctx, row)

    # The report names a check by its function: the row's id tells which row this is.
    judge_row.__name__ = judge_row.__qualname__ = row.rule.replace(".", "_").replace("-", "_")
    judge_row.__module__ = module
    return judge_row
