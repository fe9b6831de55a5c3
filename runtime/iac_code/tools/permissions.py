"""The permission policy: when a tool call runs, asks the user, or is refused.

Pure functions over plain data, so every rule is unit-tested without a client:

* :func:`decide` — mode + what the call touches + remembered answers → allow / ask / deny.
* :func:`interpret_permission_response` — the client's answer to
  ``session/request_permission`` → a :class:`Verdict`.
* :class:`PermissionMemory` — ``allow_always`` / ``reject_always`` per tool, kept for the
  session and persisted with it as plain records.

Rules (SPEC §2.1, §5, §6):

1. Invalid input is allowed through: ``run()`` refuses it without touching anything.
2. ``read_only`` mode refuses writes, commands and sub-agents without asking.
3. Restricted calls — outside the workspace roots, a sensitive path, or a private-network
   URL — ask every time. A remembered ``allow_always`` never covers them (it would silently
   widen what the user agreed to); a remembered ``reject_always`` does apply, because
   refusing without asking can only narrow what happens.
4. Reads and searches inside the roots, and fetches of public URLs, run without asking.
5. ``accept_edits`` mode allows file edits inside the roots without asking.
6. Everything else (edits in ``default`` mode, commands, sub-agents) asks, unless a
   remembered answer for that tool settles it. Remembered answers are only consulted where
   the policy would otherwise ask, so they never override rules 2-5.
7. A command that changes real infrastructure (``Access.infra_change``) asks every single
   time, offering only allow once / reject once: no ``allow_always``, mode or saved rule
   covers it, and its answer is never remembered. A remembered ``reject_always`` for the
   tool still refuses it (refusing can only narrow what happens).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from iac_code.tools.contract import Access, AccessKind, Tool, ToolOutcome

MODE_DEFAULT = "default"
MODE_ACCEPT_EDITS = "accept_edits"
MODE_READ_ONLY = "read_only"
MODES = (MODE_DEFAULT, MODE_ACCEPT_EDITS, MODE_READ_ONLY)

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECT_ALWAYS = "reject_always"

RememberedChoice = Literal["allow_always", "reject_always"]

# The options offered in every session/request_permission; ids equal their kinds.
PERMISSION_OPTIONS: list[dict[str, str]] = [
    {"optionId": ALLOW_ONCE, "name": "Allow once", "kind": ALLOW_ONCE},
    {"optionId": ALLOW_ALWAYS, "name": "Always allow this tool", "kind": ALLOW_ALWAYS},
    {"optionId": REJECT_ONCE, "name": "Reject once", "kind": REJECT_ONCE},
    {"optionId": REJECT_ALWAYS, "name": "Always reject this tool", "kind": REJECT_ALWAYS},
]
_OPTION_KINDS = frozenset(option["kind"] for option in PERMISSION_OPTIONS)


# An infrastructure-changing command is approved one call at a time.
INFRA_OPTIONS: list[dict[str, str]] = [
    {"optionId": ALLOW_ONCE, "name": "Allow this once", "kind": ALLOW_ONCE},
    {"optionId": REJECT_ONCE, "name": "Reject", "kind": REJECT_ONCE},
]


def permission_options(access: Access | None = None) -> list[dict[str, str]]:
    """Options to offer for ``access``.

    All four are offered (SPEC §6), also for restricted calls where an ``allow_always``
    will be remembered but never covers such a call again; an infrastructure-changing
    command gets only allow once / reject, so there is nothing to remember.
    """
    if access is not None and access.infra_change is not None:
        return [dict(option) for option in INFRA_OPTIONS]
    return [dict(option) for option in PERMISSION_OPTIONS]


# --- Decisions -------------------------------------------------------------------------------


class Action(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""

    @property
    def allowed(self) -> bool:
        return self.action is Action.ALLOW

    @property
    def needs_asking(self) -> bool:
        return self.action is Action.ASK

    @property
    def denied(self) -> bool:
        return self.action is Action.DENY

    @classmethod
    def ask(cls, reason: str = "") -> Decision:
        return cls(Action.ASK, reason)

    @classmethod
    def deny(cls, reason: str) -> Decision:
        return cls(Action.DENY, reason)


AUTO_ALLOW = Decision(Action.ALLOW)


class PermissionMemory:
    """Remembered ``allow_always`` / ``reject_always`` answers, one per tool name.

    The newest answer for a tool wins. ``to_records()`` / ``from_records()`` give the plain
    form the session store persists, so the answers survive load and resume.
    """

    def __init__(self) -> None:
        self._choices: dict[str, RememberedChoice] = {}

    def remember(self, tool_name: str, choice: RememberedChoice) -> None:
        if choice not in (ALLOW_ALWAYS, REJECT_ALWAYS):
            raise ValueError(f"not a remembered choice: {choice!r}")
        self._choices[tool_name] = choice

    def lookup(self, tool_name: str) -> RememberedChoice | None:
        return self._choices.get(tool_name)

    def forget(self, tool_name: str) -> None:
        self._choices.pop(tool_name, None)

    def __len__(self) -> int:
        return len(self._choices)

    def to_records(self) -> list[dict[str, str]]:
        return [{"tool": name, "choice": choice} for name, choice in sorted(self._choices.items())]

    @classmethod
    def from_records(cls, records: Iterable[Any]) -> PermissionMemory:
        """Rebuild from persisted records; malformed entries are skipped, later ones win."""
        memory = cls()
        for record in records:
            if not isinstance(record, Mapping):
                continue
            tool, choice = record.get("tool"), record.get("choice")
            if isinstance(tool, str) and choice in (ALLOW_ALWAYS, REJECT_ALWAYS):
                memory.remember(tool, choice)
        return memory


def _restriction_reason(access: Access) -> str:
    if access.reasons:
        return "; ".join(access.reasons)
    parts = []
    if access.outside_workspace:
        parts.append("outside the workspace")
    if access.sensitive:
        parts.append("sensitive path")
    if access.private_network:
        parts.append("private-network address")
    return ", ".join(parts)


def decide(
    tool: Tool | str, access: Access, mode: str, memory: PermissionMemory | None = None
) -> Decision:
    """Apply the policy in the module docstring to one tool call."""
    tool_name = tool if isinstance(tool, str) else tool.name
    if access.input_error is not None:
        return AUTO_ALLOW
    changes_things = access.kind in (AccessKind.WRITE, AccessKind.EXECUTE)
    if mode == MODE_READ_ONLY and changes_things:
        return Decision.deny(f"the session is in read-only mode, which does not allow {tool_name}")
    remembered = memory.lookup(tool_name) if memory is not None else None
    if access.infra_change is not None:
        if remembered == REJECT_ALWAYS:
            return Decision.deny(f"the user chose to always reject {tool_name}")
        return Decision.ask(f"changes real infrastructure: {access.infra_change}")
    if access.restricted:
        if remembered == REJECT_ALWAYS:
            return Decision.deny(f"the user chose to always reject {tool_name}")
        return Decision.ask(_restriction_reason(access))
    if access.kind in (AccessKind.READ, AccessKind.FETCH):
        return AUTO_ALLOW
    if access.kind is AccessKind.WRITE and mode == MODE_ACCEPT_EDITS:
        return AUTO_ALLOW
    if remembered == ALLOW_ALWAYS:
        return AUTO_ALLOW
    if remembered == REJECT_ALWAYS:
        return Decision.deny(f"the user chose to always reject {tool_name}")
    return Decision.ask(f"{tool_name} needs permission")


# --- Answers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What the client's answer means."""

    allowed: bool
    remember: RememberedChoice | None = None
    cancelled: bool = False
    reason: str = ""
    option_id: str | None = None


def _offered_kinds(offered: Iterable[str | Mapping[str, Any]]) -> dict[str, str]:
    """Map offered option ids to their kinds; bare ids are looked up in PERMISSION_OPTIONS."""
    known = {option["optionId"]: option["kind"] for option in PERMISSION_OPTIONS}
    kinds: dict[str, str] = {}
    for item in offered:
        if isinstance(item, str):
            if item in known:
                kinds[item] = known[item]
        elif isinstance(item, Mapping):
            option_id, kind = item.get("optionId"), item.get("kind")
            if isinstance(option_id, str) and kind in _OPTION_KINDS:
                kinds[option_id] = kind
    return kinds


def _verdict_for_option(option_id: Any, kinds: Mapping[str, str]) -> Verdict:
    if not isinstance(option_id, str):
        return Verdict(False, reason="the permission answer named no valid option")
    kind = kinds.get(option_id)
    if kind is None:
        return Verdict(
            False, reason=f"the client selected an option that was not offered: {option_id!r}"
        )
    remember: RememberedChoice | None = None
    if kind.startswith("allow_"):
        if kind == ALLOW_ALWAYS:
            remember = "allow_always"
        return Verdict(True, remember=remember, option_id=option_id)
    if kind == REJECT_ALWAYS:
        remember = "reject_always"
    return Verdict(False, remember=remember, reason="the user rejected it", option_id=option_id)


def _option_id_of(node: Mapping[str, Any]) -> Any:
    return node.get("optionId", node.get("option_id"))


def interpret_permission_response(
    result: Any, offered: Sequence[str | Mapping[str, Any]] = tuple(PERMISSION_OPTIONS)
) -> Verdict:
    """Turn a ``session/request_permission`` result into a Verdict. Never raises.

    ``offered`` lists the options sent (option dicts, or bare ids of PERMISSION_OPTIONS).
    The decision follows the *kind* of the selected option. Accepted shapes:

    * ACP v1: ``{"outcome": {"outcome": "selected", "optionId": ...}}`` and
      ``{"outcome": {"outcome": "cancelled"}}``;
    * legacy iac-code: ``{"outcome": "allowed", "option_id"|"optionId": ...}`` (the named
      option's kind still decides; without an option it means allow once),
      ``{"outcome": "denied"}`` and ``{"outcome": "cancelled"}``.

    Anything else — including an option id that was not offered — denies.
    """
    kinds = _offered_kinds(offered)
    malformed = Verdict(False, reason="the permission answer was malformed")
    if not isinstance(result, Mapping):
        return malformed
    outcome = result.get("outcome")
    if isinstance(outcome, Mapping):
        tag = outcome.get("outcome")
        if tag == "cancelled":
            return Verdict(False, cancelled=True, reason="the prompt turn was cancelled")
        if tag == "selected":
            return _verdict_for_option(_option_id_of(outcome), kinds)
        return malformed
    if outcome == "cancelled":
        return Verdict(False, cancelled=True, reason="the prompt turn was cancelled")
    if outcome in ("allowed", "selected"):
        option_id = _option_id_of(result)
        if option_id is None and outcome == "allowed":
            return Verdict(True, reason="allowed (legacy answer without an option)")
        return _verdict_for_option(option_id, kinds)
    if outcome == "denied":
        option_id = _option_id_of(result)
        remember: RememberedChoice | None = None
        if isinstance(option_id, str) and kinds.get(option_id) == REJECT_ALWAYS:
            remember = "reject_always"
        return Verdict(
            False,
            remember=remember,
            reason="the user rejected it",
            option_id=option_id if isinstance(option_id, str) else None,
        )
    return malformed


CLIENT_NOT_ASKED = "the client could not be asked"


def declined_outcome(
    tool: Tool | str, reason: str = "", access: Access | None = None
) -> ToolOutcome:
    """The error result the model gets when a call was refused or not permitted."""
    if access is not None and access.infra_change is not None:
        return _infra_declined(access.infra_change, reason)
    tool_name = tool if isinstance(tool, str) else tool.name
    detail = f" ({reason})" if reason else ""
    return ToolOutcome.error(
        f"The user declined permission for {tool_name}{detail}; it was not run. Do not retry "
        "the same call; continue another way or ask the user.",
        raw_output={"declined": True, "reason": reason},
    )


def _infra_declined(change: str, reason: str) -> ToolOutcome:
    """What the model gets when an infrastructure-changing command was not approved: why,
    and what it can do instead (the user must run or approve it; plans stay possible)."""
    if reason == CLIENT_NOT_ASKED:
        why = "it needs the user's approval every time, and the client could not be asked for it"
    else:
        why = reason or "it was not approved"
    message = (
        f"Not run: this command changes real infrastructure ({change}), and {why}. Do not "
        "retry it or work around this check. Show the user the exact command so they can run "
        "it themselves, or continue with read-only steps (terraform plan, kubectl diff, "
        "--dry-run, --check)."
    )
    return ToolOutcome.error(
        message, raw_output={"declined": True, "reason": reason, "infraChange": change}
    )


def apply_verdict(memory: PermissionMemory, tool: Tool | str, verdict: Verdict) -> bool:
    """Record a verdict's ``remember`` choice; returns True when memory changed.

    Note that an ``allow_always`` given for a restricted call is remembered, yet ``decide``
    never lets it cover restricted calls, so this is always safe to call.
    """
    if verdict.remember is None:
        return False
    tool_name = tool if isinstance(tool, str) else tool.name
    memory.remember(tool_name, verdict.remember)
    return True
