"""How each protocol version ends a prompt turn, and a running turn the checker cut short.

v1 and v2 end a turn differently: on v1 the ``session/prompt`` request is answered only
when its turn is over, and that answer carries the ``stopReason``; on v2 the prompt is
answered at once (accepted) and the turn ends with a ``state_update`` ``idle`` that carries
it. What a cancel check asks of either is the same — the cut turn ends ``cancelled`` and
nothing of it comes after its end — so the difference is data (:class:`TurnEnding`), and
what was seen of one cut turn is one shape (:class:`CutTurn`), whichever version made it.
The checks are :mod:`..checks.cancelled_turns`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..harness.agent_client import Response
from ..harness.recorder import Frame
from ..outcomes import NO_DEADLINE, Outcome, failed, soft_failed
from ._expect import TURN_UPDATE_KINDS, session_updates
from .check_context import AgentRun


def _answer_stop_reason(end: Frame) -> object:
    result = end.message.get("result") if isinstance(end.message, dict) else None
    return result.get("stopReason") if isinstance(result, dict) else None


def _idle_stop_reason(end: Frame) -> object:
    update = ((end.message.get("params") or {}).get("update")) or {}
    return update.get("stopReason") if isinstance(update, dict) else None


def _answers_with_error(end: Frame) -> bool:
    return isinstance(end.message, dict) and "error" in end.message


@dataclass(frozen=True)
class TurnEnding:
    """How one protocol version ends a prompt turn, as far as the cancel checks care."""

    #: The frame that ends a turn, as the reasons name it ("the answer of the cancelled
    #: prompt says stopReason 'end_turn'").
    end_name: str
    #: Where the turn's ``stopReason`` is, in that frame.
    stop_reason: Callable[[Frame], object]
    #: Whether that frame can be an error answer instead (v1's prompt answer can).
    is_error: Callable[[Frame], bool]
    #: The session updates that belong to the turn when they come after its end: v1 counts
    #: the turn's own kinds (an ``available_commands_update`` may follow any time), v2
    #: counts every update (its statement: every update of the cancelled work comes before).
    turn_kinds: frozenset[str] | None
    #: Whether a turn not ended within the wait fails only as SHOULD (v1: ACP sets no time
    #: for the prompt's answer) or as the rule's own tier (v2, as the official kit judges).
    no_end_is_soft: bool
    #: Whether a failure is a SHOULD under ``--llm none`` (the turn ran on the agent's own
    #: model, which the checker does not control): v1's rules say so; v2's never did.
    own_model_soft: bool

    def no_end(self, why: str, frames: list[int]) -> Outcome:
        """The outcome of a cut turn that did not end within the wait."""
        if self.no_end_is_soft:
            return soft_failed(why, NO_DEADLINE, frames=frames)
        return failed(why, frames=frames)


#: v1: the prompt's answer ends the turn and carries its stop reason.
V1_ENDING = TurnEnding(
    end_name="the answer",
    stop_reason=_answer_stop_reason,
    is_error=_answers_with_error,
    turn_kinds=TURN_UPDATE_KINDS,
    no_end_is_soft=True,
    own_model_soft=True,
)

#: v2: the idle ``state_update`` ends the turn and carries its stop reason.
V2_ENDING = TurnEnding(
    end_name="the idle",
    stop_reason=_idle_stop_reason,
    is_error=lambda end: False,
    turn_kinds=None,
    no_end_is_soft=False,
    own_model_soft=False,
)


@dataclass
class CutTurn:
    """A running turn the checker cut short (``session/cancel``, or ``session/close`` of
    its session), and what ended it."""

    run: AgentRun
    session_id: str
    ending: TurnEnding
    #: The frame that cut the turn (the cancel notification, the close request).
    cut: Frame
    #: Frames before the cut worth showing (v2: the prompt's acceptance).
    lead: list[int] = field(default_factory=list)
    #: Frames the checker sent after the cut (v1: the pending permission request answered
    #: cancelled).
    trail: list[int] = field(default_factory=list)
    #: The answer to the cut when it is a request (session/close).
    cut_answer: Response | None = None
    #: The frame that ended the turn (v1: the prompt's answer; v2: the idle), once seen.
    end: Frame | None = None
    #: Why no end was seen (the wait ran out, the agent exited).
    no_end: str | None = None
    #: The seq of a barrier answered after the end: everything the agent sent about the turn
    #: is before it (set by :meth:`settle`).
    settled: int | None = None

    @property
    def stop_reason(self) -> object:
        return None if self.end is None else self.ending.stop_reason(self.end)

    @property
    def frames(self) -> list[int]:
        """The decisive frames: what led up to the cut, the cut (and what followed it from
        the checker), its answer, the end."""
        found = [*self.lead, self.cut.seq, *self.trail]
        if self.cut_answer is not None:
            found.append(self.cut_answer.frame.seq)
        if self.end is not None:
            found.append(self.end.seq)
        return found

    async def settle(self) -> int:
        """A barrier after the end (once): whatever the agent still sends about the turn
        comes before its answer."""
        if self.settled is None:
            barrier = await self.run.live.barrier()
            self.settled = barrier.frame.seq
        return self.settled

    async def updates_after_end(self) -> list[tuple[int, dict[str, Any]]]:
        """The turn's updates (``ending.turn_kinds``) after its end and before a barrier."""
        assert self.end is not None
        settled = await self.settle()
        return [
            (seq, update)
            for seq, update in session_updates(self.run, self.session_id, self.end.seq + 1, settled)
            if self.ending.turn_kinds is None
            or update.get("sessionUpdate") in self.ending.turn_kinds
        ]


def late_update_failure(
    late: list[tuple[int, dict[str, Any]]], after: str, first: int
) -> Outcome | None:
    """The failure for session updates that came after ``after`` (a turn's end, an answer
    that should have been the last word), or None when there are none; ``first`` is the
    frame they came after."""
    if not late:
        return None
    kinds = sorted({str(update.get("sessionUpdate")) for _, update in late})
    return failed(
        f"{len(late)} updates ({', '.join(kinds)}) came after {after}",
        frames=[first, *[seq for seq, _ in late[:5]]],
    )
