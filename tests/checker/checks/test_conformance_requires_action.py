"""v2 ``requires_action`` while a permission request waits (issue 36, item 4; the kit's
PATCH-209): seeded defects of the raw v2 fixture agent fail the SHOULD and the MUST, the
correct fixture passes both. The judges are run-wide, so each run also asks for
``version.v2-permission-requests``, the check whose turn asks for permission."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest
from acp_conformance.harness.recorder import Frame
from acp_conformance.judges.foreground_state import _walk
from acp_conformance.outcomes import Verdict
from acp_conformance.scenarios.agent_run import AgentRun
from acp_conformance.v2_drafts import NEWEST

from tests.checker.checks.conformance_checker_support import (
    LOADED_MACHINE_TIMEOUT,
    WITH_MODEL,
    raw_v2_agent,
    run_checker,
    verdicts,
)

PERMISSION = "session/request_permission"
REPORTED = "version.v2-requires-action-while-asked"
RESUMED = "version.v2-requires-action-resumes"
#: The MUST is the newest draft's text, so these runs grade the newest draft.
OPTIONS = {**WITH_MODEL, "v2_draft": NEWEST}


def _judge(*args: str) -> dict[str, tuple[Verdict, str]]:
    only = [REPORTED, RESUMED, "version.v2-permission-requests"]
    # The rules that should pass wait on answers that come: a generous bound costs nothing.
    timeout = LOADED_MACHINE_TIMEOUT
    return verdicts(run_checker(raw_v2_agent(*args), only=only, timeout=timeout, **OPTIONS))


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("defect", "failing", "said"),
    [
        ("no-requires-action", REPORTED, "no requires_action"),
        ("stuck-requires-action", RESUMED, "still requires_action"),
    ],
)
def test_a_seeded_defect_fails_its_rule_and_only_that_one(
    defect: str, failing: str, said: str
) -> None:
    judged = _judge("--defect", defect)
    verdict, reason = judged[failing]
    assert verdict is Verdict.FAIL, judged
    assert said in reason
    others = {rid: v for rid, (v, _) in judged.items() if rid != failing}
    assert set(others.values()) == {Verdict.PASS}, judged


@pytest.mark.subprocess
def test_the_correct_fixture_passes_both() -> None:
    judged = _judge()
    assert {v for v, _ in judged.values()} == {Verdict.PASS}, judged


def _frame(seq: int, direction: str, message: dict[str, Any]) -> Frame:
    raw = json.dumps(message).encode()
    return Frame(seq=seq, t=float(seq), direction=direction, raw=raw, message=message)


def _state(seq: int, state: str) -> Frame:
    update = {"sessionUpdate": "state_update", "state": state}
    params = {"sessionId": "s1", "update": update}
    return _frame(seq, "a2c", {"jsonrpc": "2.0", "method": "session/update", "params": params})


def test_requires_action_reported_just_after_the_question_counts_for_it() -> None:
    # The state may change once the request is out; the walk once compared the session with
    # the request's method (fields passed in the wrong order) and failed this agent.
    asked = {"sessionId": "s1", "options": []}
    frames = [
        _frame(0, "a2c", {"jsonrpc": "2.0", "id": 7, "method": PERMISSION, "params": asked}),
        _state(1, "requires_action"),
        _frame(2, "c2a", {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {}}}),
        _state(3, "running"),
    ]
    run = cast(AgentRun, SimpleNamespace(frames=frames))
    assert list(_walk(run)) == []
    unreported = cast(AgentRun, SimpleNamespace(frames=[frames[0], frames[2]]))
    [(kind, frame, why)] = list(_walk(unreported))
    assert (kind, frame.seq) == ("unreported", 0)
    assert why.startswith(f"{PERMISSION} for session 's1' was answered at #2"), why


@pytest.mark.subprocess
def test_the_fixture_reporting_requires_action_after_asking_passes() -> None:
    judged = _judge("--quirk", "requires-action-after-asking")
    assert {v for v, _ in judged.values()} == {Verdict.PASS}, judged
