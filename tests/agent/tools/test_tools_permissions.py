"""The permission policy: every mode and access class, answers in every shape, memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from iac_code.tools.contract import Access, AccessKind, ToolContext
from iac_code.tools.permissions import (
    PERMISSION_OPTIONS,
    Action,
    PermissionMemory,
    apply_verdict,
    decide,
    declined_outcome,
    interpret_permission_response,
)
from iac_code.tools.registry import default_tools

READ_IN = Access(kind=AccessKind.READ, paths=("/w/a.tf",))
READ_OUT = Access(kind=AccessKind.READ, paths=("/etc/hosts",), outside_workspace=True)
READ_SENSITIVE = Access(kind=AccessKind.READ, paths=("/w/.env",), sensitive=True)
WRITE_IN = Access(kind=AccessKind.WRITE, paths=("/w/a.tf",))
WRITE_OUT = Access(kind=AccessKind.WRITE, paths=("/tmp/a.tf",), outside_workspace=True)
WRITE_SENSITIVE = Access(kind=AccessKind.WRITE, paths=("/w/.git/config",), sensitive=True)
EXECUTE = Access(kind=AccessKind.EXECUTE, paths=("/w",))
FETCH_PUBLIC = Access(kind=AccessKind.FETCH, url="https://registry.terraform.io/")
FETCH_PRIVATE = Access(kind=AccessKind.FETCH, url="http://10.0.0.1/", private_network=True)
INVALID = Access(kind=AccessKind.EXECUTE, input_error="Invalid input for bash: ...")

ALLOW, ASK, DENY = Action.ALLOW, Action.ASK, Action.DENY

# (tool, access) → expected action in default / accept_edits / read_only, with no memory.
MATRIX = [
    ("read_file", READ_IN, ALLOW, ALLOW, ALLOW),
    ("read_file", READ_OUT, ASK, ASK, ASK),
    ("read_file", READ_SENSITIVE, ASK, ASK, ASK),
    ("grep", READ_IN, ALLOW, ALLOW, ALLOW),
    ("write_file", WRITE_IN, ASK, ALLOW, DENY),
    ("edit_file", WRITE_OUT, ASK, ASK, DENY),
    ("edit_file", WRITE_SENSITIVE, ASK, ASK, DENY),
    ("bash", EXECUTE, ASK, ASK, DENY),
    ("agent", Access(kind=AccessKind.EXECUTE), ASK, ASK, DENY),
    ("web_fetch", FETCH_PUBLIC, ALLOW, ALLOW, ALLOW),
    ("web_fetch", FETCH_PRIVATE, ASK, ASK, ASK),
    ("bash", INVALID, ALLOW, ALLOW, ALLOW),
]


@pytest.mark.parametrize(("tool", "access", "default", "accept_edits", "read_only"), MATRIX)
def test_policy_matrix(
    tool: str, access: Access, default: Action, accept_edits: Action, read_only: Action
) -> None:
    assert decide(tool, access, "default", PermissionMemory()).action is default
    assert decide(tool, access, "accept_edits", PermissionMemory()).action is accept_edits
    assert decide(tool, access, "read_only", PermissionMemory()).action is read_only


def test_read_only_denial_says_why() -> None:
    decision = decide("bash", EXECUTE, "read_only")
    assert decision.denied and "read-only mode" in decision.reason


def test_restricted_ask_names_the_reason() -> None:
    access = Access(
        kind=AccessKind.READ, outside_workspace=True, reasons=("/etc/hosts is outside",)
    )
    assert decide("read_file", access, "default").reason == "/etc/hosts is outside"


@pytest.mark.parametrize("mode", ["default", "accept_edits"])
def test_allow_always_settles_unrestricted_asks(mode: str) -> None:
    memory = PermissionMemory()
    memory.remember("bash", "allow_always")
    memory.remember("write_file", "allow_always")
    assert decide("bash", EXECUTE, mode, memory).allowed
    assert decide("write_file", WRITE_IN, mode, memory).allowed
    assert decide("edit_file", WRITE_IN, "default", memory).needs_asking  # per tool


@pytest.mark.parametrize("mode", ["default", "accept_edits", "read_only"])
@pytest.mark.parametrize(
    ("tool", "access"),
    [
        ("read_file", READ_OUT),
        ("read_file", READ_SENSITIVE),
        ("write_file", WRITE_OUT),
        ("write_file", WRITE_SENSITIVE),
        ("web_fetch", FETCH_PRIVATE),
    ],
)
def test_allow_always_never_widens_restricted_access(mode: str, tool: str, access: Access) -> None:
    memory = PermissionMemory()
    memory.remember(tool, "allow_always")
    decision = decide(tool, access, mode, memory)
    expected = DENY if mode == "read_only" and access.kind is AccessKind.WRITE else ASK
    assert decision.action is expected


def test_allow_always_does_not_beat_read_only() -> None:
    memory = PermissionMemory()
    memory.remember("bash", "allow_always")
    assert decide("bash", EXECUTE, "read_only", memory).denied


def test_reject_always_denies_without_asking_but_never_blocks_auto_allowed() -> None:
    memory = PermissionMemory()
    memory.remember("bash", "reject_always")
    memory.remember("read_file", "reject_always")
    memory.remember("write_file", "reject_always")
    assert decide("bash", EXECUTE, "default", memory).denied
    assert decide("read_file", READ_OUT, "default", memory).denied  # narrowing is fine
    assert decide("read_file", READ_IN, "default", memory).allowed
    assert decide("write_file", WRITE_IN, "default", memory).denied
    assert decide("write_file", WRITE_IN, "accept_edits", memory).allowed  # the mode decides


def test_memory_round_trip_and_tolerance() -> None:
    memory = PermissionMemory()
    memory.remember("bash", "allow_always")
    memory.remember("web_fetch", "reject_always")
    records = memory.to_records()
    assert records == [
        {"tool": "bash", "choice": "allow_always"},
        {"tool": "web_fetch", "choice": "reject_always"},
    ]
    restored = PermissionMemory.from_records(
        [*records, "junk", {"tool": 3, "choice": "allow_always"}, {"tool": "x", "choice": "yes"},
         {"tool": "bash", "choice": "reject_always"}]
    )  # fmt: skip
    assert restored.lookup("web_fetch") == "reject_always"
    assert restored.lookup("bash") == "reject_always"  # later records win
    assert restored.lookup("x") is None and len(restored) == 2
    with pytest.raises(ValueError):
        memory.remember("bash", "allow_once")  # type: ignore[arg-type]


def test_options_are_the_four_acp_kinds() -> None:
    assert [option["optionId"] for option in PERMISSION_OPTIONS] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert all(
        option["optionId"] == option["kind"] and option["name"] for option in PERMISSION_OPTIONS
    )


# --- answers ---------------------------------------------------------------------------------


def _selected(option_id: Any) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


@pytest.mark.parametrize(
    ("answer", "allowed", "remember"),
    [
        (_selected("allow_once"), True, None),
        (_selected("allow_always"), True, "allow_always"),
        (_selected("reject_once"), False, None),
        (_selected("reject_always"), False, "reject_always"),
        ({"outcome": "allowed", "option_id": "allow_once"}, True, None),
        ({"outcome": "allowed", "optionId": "allow_always"}, True, "allow_always"),
        ({"outcome": "allowed", "option_id": "reject_once"}, False, None),
        ({"outcome": "allowed", "optionId": "reject_always"}, False, "reject_always"),
        ({"outcome": "allowed"}, True, None),
        ({"outcome": "denied"}, False, None),
        ({"outcome": "denied", "option_id": "reject_always"}, False, "reject_always"),
        ({"outcome": "denied", "option_id": "allow_always"}, False, None),
    ],
)
def test_answers_follow_the_option_kind(answer: Any, allowed: bool, remember: str | None) -> None:
    verdict = interpret_permission_response(answer, ["allow_once", "allow_always", "reject_once",
                                                     "reject_always"])  # fmt: skip
    assert verdict.allowed is allowed
    assert verdict.remember == remember
    assert not verdict.cancelled


def test_kind_comes_from_the_offered_option_not_the_id() -> None:
    offered = [
        {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
        {"optionId": "no-forever", "name": "Never", "kind": "reject_always"},
    ]
    assert interpret_permission_response(_selected("yes"), offered).allowed
    never = interpret_permission_response(_selected("no-forever"), offered)
    assert not never.allowed and never.remember == "reject_always"
    # An id that looks like a kind but was not offered denies.
    assert not interpret_permission_response(_selected("allow_once"), offered).allowed


@pytest.mark.parametrize(
    "answer", [{"outcome": {"outcome": "cancelled"}}, {"outcome": "cancelled"}]
)
def test_cancelled(answer: Any) -> None:
    verdict = interpret_permission_response(answer)
    assert not verdict.allowed and verdict.cancelled


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "allow_once",
        [],
        {},
        {"outcome": None},
        {"outcome": {}},
        {"outcome": {"outcome": "selected"}},
        {"outcome": {"outcome": "selected", "optionId": 1}},
        {"outcome": {"outcome": "selected", "optionId": "allow_sometimes"}},
        {"outcome": {"outcome": "approve", "optionId": "allow_once"}},
        {"outcome": "maybe"},
        {"outcome": "allowed", "option_id": "not-offered"},
    ],
)
def test_malformed_or_unknown_answers_deny(answer: Any) -> None:
    verdict = interpret_permission_response(answer)
    assert not verdict.allowed and not verdict.cancelled and verdict.reason


def test_unknown_option_is_denied_even_if_only_some_were_offered() -> None:
    verdict = interpret_permission_response(
        _selected("allow_always"), ["allow_once", "reject_once"]
    )
    assert not verdict.allowed and "not offered" in verdict.reason


def test_apply_verdict_and_declined_outcome() -> None:
    memory = PermissionMemory()
    assert apply_verdict(memory, "bash", interpret_permission_response(_selected("allow_always")))
    assert memory.lookup("bash") == "allow_always"
    assert not apply_verdict(memory, "grep", interpret_permission_response(_selected("allow_once")))
    outcome = declined_outcome("write_file", "the user rejected it")
    assert outcome.is_error
    assert outcome.model_content.startswith("The user declined permission for write_file")
    assert outcome.raw_output["declined"] is True


# --- end to end with the real tools' Access --------------------------------------------------


@pytest.mark.anyio
async def test_real_tool_accesses_through_the_policy(
    workspace: Path, outside: Path, fake_home: Path
) -> None:
    tools = default_tools()
    ctx = ToolContext.for_session(workspace)
    memory = PermissionMemory()
    memory.remember("write_file", "allow_always")
    memory.remember("read_file", "allow_always")

    async def action(name: str, tool_input: dict[str, Any], mode: str = "default") -> Action:
        access = await tools[name].access(tool_input, ctx)
        return decide(tools[name], access, mode, memory).action

    assert await action("read_file", {"path": "main.tf"}) is ALLOW
    assert await action("read_file", {"path": "../outside/x"}) is ASK
    assert await action("read_file", {"path": str(fake_home / ".ssh/id_rsa")}) is ASK
    assert await action("write_file", {"path": "main.tf", "content": ""}) is ALLOW
    assert await action("write_file", {"path": ".env", "content": ""}) is ASK
    assert await action("write_file", {"path": "../outside/x", "content": ""}) is ASK
    assert await action("edit_file", {"path": "a", "old_string": "x", "new_string": "y"}) is ASK
    assert await action("bash", {"command": "ls"}, "accept_edits") is ASK
    assert await action("glob", {"pattern": "*"}, "read_only") is ALLOW
    assert await action("agent", {"task": "t", "description": "d"}, "read_only") is DENY
