"""The ACP v2 drafts the checker grades, and which of them each v2 rule belongs to.

v2 is still a draft that changes between releases: the spec repository published
2.0.0-alpha.3 (2026-08) to alpha.8 (2026-10), and the official TypeScript SDK 2.4.0
(2026-11) bundles a newer one still, called ``newest`` here (the project's ``schema/v2``
follows it). The official test kit pins alpha.5. A rule a later draft removed (JSON-RPC
batches) must never fail an agent that follows the draft still having it, and a rule only the
newest draft has must never be missing from a newest-draft verdict, so every v2 requirement
carries the range of drafts it belongs to and ``--v2-draft`` picks the draft a run grades.

What the checker knows of each draft comes from the reference material it was written
against: alpha.3's and the newest schema, and the kit's (alpha.5) own rules. alpha.4 to alpha.8
are graded like alpha.3 plus what the kit requires; where a change's exact draft is not
known, its range starts at the first draft known to have it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: Every draft, oldest first.
DRAFTS: tuple[str, ...] = (
    "alpha.3",
    "alpha.4",
    "alpha.5",
    "alpha.6",
    "alpha.7",
    "alpha.8",
    "newest",
)
NEWEST = "newest"
#: The draft the official test kit pins.
KIT_DRAFT = "alpha.5"
#: Other spellings accepted by :func:`parse_draft`.
_ALIASES = {"latest": NEWEST, "sdk-2.4.0": NEWEST, "2.4.0": NEWEST}
_FULL_NAME = re.compile(r"^(?:2\.0\.0-|v2-?)?(alpha\.\d+)$")


def parse_draft(name: str) -> str:
    """The canonical name of a draft (``2.0.0-alpha.5`` → ``alpha.5``); ValueError if unknown."""
    text = name.strip().lower()
    text = _ALIASES.get(text, text)
    match = _FULL_NAME.match(text)
    if match is not None:
        text = match.group(1)
    if text not in DRAFTS:
        raise ValueError(f"unknown v2 draft {name!r} (known: {', '.join(DRAFTS)})")
    return text


def _position(draft: str) -> int:
    return DRAFTS.index(draft)


@dataclass(frozen=True)
class DraftRange:
    """The drafts from ``first`` to ``last`` (both included, oldest first)."""

    first: str = DRAFTS[0]
    last: str = NEWEST

    def __post_init__(self) -> None:
        if _position(self.first) > _position(self.last):
            raise ValueError(f"empty draft range {self.first}..{self.last}")

    def covers(self, draft: str) -> bool:
        return _position(self.first) <= _position(draft) <= _position(self.last)

    @property
    def label(self) -> str:
        """``alpha.3..newest``; one name when the range is one draft."""
        return self.first if self.first == self.last else f"{self.first}..{self.last}"

    def drafts(self) -> Iterable[str]:
        return DRAFTS[_position(self.first) : _position(self.last) + 1]


#: Every draft: the default of a v2 requirement.
ALL_DRAFTS = DraftRange()
#: The drafts that allow a line to carry a JSON-RPC batch; the newest says ACP uses none.
BATCH_DRAFTS = DraftRange(DRAFTS[0], "alpha.8")
#: The drafts that define ``stopReason: "error"`` (with the error object on the idle).
ERROR_STOP_REASON_DRAFTS = DraftRange(NEWEST, NEWEST)


def draft_exemption(drafts: DraftRange | None, graded: str) -> str | None:
    """Why a rule of ``drafts`` does not apply when ``graded`` is graded, or None."""
    if drafts is None or drafts.covers(graded):
        return None
    return f"belongs to the v2 drafts {drafts.label}, not to {graded} (--v2-draft)"


@dataclass(frozen=True)
class OlderShape:
    """A shape an agent of an older draft may send that the newest schema refuses."""

    drafts: DraftRange
    method: str
    part: str  # "params" or "result"
    #: Matches the validation error (``$.path: message``) the newest schema reports for it.
    error: re.Pattern[str]
    why: str


#: Where a command list sits in each message that carries one, as a validation error path.
_COMMAND_LISTS = (
    ("session/new", "result", r"\$\.availableCommands"),
    ("session/resume", "result", r"\$\.availableCommands"),
    ("session/update", "params", r"\$\.update\.availableCommands"),
)

#: The newest-only shapes, judged with the draft a run grades: an error the newest schema
#: reports for one of these is not an error under an older draft.
OLDER_SHAPES: tuple[OlderShape, ...] = (
    *(
        OlderShape(
            DraftRange(DRAFTS[0], "alpha.8"),
            method,
            part,
            re.compile(rf"^{where}\[\d+\]: 'type' is a required property$"),
            "before the newest draft commands are plain objects; the newest tags each with `type`",
        )
        for method, part, where in _COMMAND_LISTS
    ),
    OlderShape(
        # The kit (alpha.5) and the newest draft require the inserted message's id.
        DraftRange(DRAFTS[0], "alpha.4"),
        "session/prompt",
        "result",
        re.compile(r"^\$: 'messageId' is a required property$"),
        "alpha.3's prompt answer has no messageId (the kit's alpha.5 requires it)",
    ),
)


def older_draft_errors(draft: str, method: str, part: str, errors: list[str]) -> list[str]:
    """``errors`` (from the newest schema) as the draft ``draft`` judges them."""
    if draft == NEWEST or not errors:
        return errors
    tolerated = [
        shape.error
        for shape in OLDER_SHAPES
        if shape.drafts.covers(draft) and shape.method == method and shape.part == part
    ]
    return [e for e in errors if not any(pattern.match(e) for pattern in tolerated)]
