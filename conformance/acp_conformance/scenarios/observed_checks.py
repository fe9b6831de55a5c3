"""Checks bound to a shared observation: several rules judge one turn, one resume, one
negotiated agent; each check's body gets what was observed, and when it could not be, the
reason (not applicable, failed) is the check's outcome. :func:`check_given` binds such a
body through the same :func:`..requirements.check` every check uses."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..outcomes import Outcome
from ..requirements import check
from .check_context import CheckContext

GivenT = TypeVar("GivenT")


def check_given(
    rule: str, scenario: str, given: Callable[[CheckContext], Awaitable[GivenT | Outcome]]
) -> Callable[
    [Callable[[CheckContext, GivenT], Awaitable[Outcome]]],
    Callable[[CheckContext, GivenT], Awaitable[Outcome]],
]:
    """Bind the decorated ``body(ctx, observed)`` as the check of ``rule`` in ``scenario``,
    given what ``given`` observed (a turn several rules judge, memoised by ``given``); when
    that could not be observed, ``given``'s outcome (not applicable, failed) is the check's.
    The check is named and placed (a check's module is its place in the run order) as
    ``body``."""

    def register(
        body: Callable[[CheckContext, GivenT], Awaitable[Outcome]],
    ) -> Callable[[CheckContext, GivenT], Awaitable[Outcome]]:
        async def on_observed(ctx: CheckContext) -> Outcome:
            observed = await given(ctx)
            return observed if isinstance(observed, Outcome) else await body(ctx, observed)

        check(rule, scenario=scenario, like=body)(on_observed)
        return body

    return register
