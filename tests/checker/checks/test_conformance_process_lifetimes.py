"""How long the checker keeps agent processes: a process started for one check alone is
stopped when that check ends, not with its scenario, and no process is started only to ask
what the agent advertises (see ``ScenarioRuntime.release`` and ``ScenarioRuntime.surface``).

Some agents keep working for seconds after start-up (opencode spends ~4 CPU-s loading its
plugins and model lists): every process kept alive longer than its check is CPU that the
other scenarios, and in the peers matrix another agent's run, wait for."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from acp_conformance.harness.agent_client import Response
from acp_conformance.harness.process import Rung
from acp_conformance.harness.recorder import Frame
from acp_conformance.outcomes import Verdict
from acp_conformance.run_result import RunResult
from acp_conformance.scenarios.agent_run import AgentRun
from acp_conformance.scenarios.runtime import ScenarioRuntime

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker

pytestmark = pytest.mark.subprocess

INIT_CHECKS = [
    "init.responds",
    "init.version-negotiation",
    "init.unsupported-version-not-echoed",
    "init.version-zero",
]


def _run_of(result: RunResult, requirement: str) -> AgentRun:
    (run_id,) = {outcome.run_id for outcome in result.results[requirement].outcomes}
    (run,) = [run for run in result.runs if run.id == run_id]
    return run


def test_a_process_started_for_one_check_stops_when_that_check_ends() -> None:
    result = run_checker(raw_agent(), only=[*INIT_CHECKS, "init.capabilities-shape"])
    verdicts = {rid: (r.verdict, r.reason) for rid, r in result.results.items()}
    assert {v for v, _ in verdicts.values()} == {Verdict.PASS}, verdicts
    runs = [_run_of(result, rid) for rid in INIT_CHECKS]
    # The first two checks judge the same answer to a version 1 initialize: one process,
    # which then goes on as the scenario's shared agent (no process is started for it).
    assert runs[0] is runs[1] is _run_of(result, "init.capabilities-shape")
    one_each = [runs[0], runs[2], runs[3]]
    assert len({run.id for run in one_each}) == 3
    assert len([run for run in result.runs if run.scenario == "initialize"]) == 3
    for run in one_each:
        # Stopped on stdin EOF, like any other: its transcript is complete (the last round
        # trip ran) and the shutdown requirement judges it as before.
        assert run.exit is not None and run.exit.rung is Rung.STDIN_EOF, run.exit
    # The 65535 process is stopped as soon as its check ends; a check and a whole process
    # start later, the version 0 process answers its initialize (without the release every
    # process would be stopped only at the scenario's end, after that answer). When the stop
    # began is compared, not when the process was gone: how soon a loaded machine lets it exit
    # is not the checker's doing.
    first, last = runs[2], runs[3]
    answer = next(frame for frame in last.frames if frame.direction == "a2c")
    answered = last.recorder.started_wall + answer.t
    assert first.exit is not None
    assert first.exit.began < answered, (
        f"{first.id} was stopped only after its check: the stop began "
        f"{first.exit.began - answered:.3f} s after {last.id} answered initialize"
    )


def _answer(message: dict[str, object]) -> Response:
    frame = Frame(seq=1, t=0.0, direction="a2c", raw=b"", message=message)
    return Response(method="initialize", request=frame, frame=frame)


@pytest.mark.parametrize(
    ("shared", "auth_method", "message", "adopted"),
    [
        (None, None, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}, True),
        # An error (or a result that is no object) leaves a one-off process.
        (None, None, {"jsonrpc": "2.0", "id": 0, "error": {"code": -32603, "message": "x"}}, False),
        (None, None, {"jsonrpc": "2.0", "id": 0, "result": 1}, False),
        # A shared agent already exists; or the shared agent would also be authenticated.
        ("other", None, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}, False),
        (None, "key", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}, False),
    ],
)
def test_only_a_process_that_initialized_like_the_shared_agent_becomes_it(
    shared: object, auth_method: str | None, message: dict[str, object], adopted: bool
) -> None:
    runtime = SimpleNamespace(_shared=shared, config=SimpleNamespace(auth_method=auth_method))
    run = SimpleNamespace(init_params=None, init_result=None)
    params = {"protocolVersion": 1}
    answer = _answer(message)
    took = ScenarioRuntime.adopt_as_shared(cast(Any, runtime), cast(Any, run), params, answer)
    assert took is adopted
    assert (runtime._shared is run) is adopted
    if adopted:
        assert (run.init_params, run.init_result) == (params, {"protocolVersion": 1})


def test_a_turn_scenario_asks_its_turn_agent_what_the_agent_advertises() -> None:
    # session.close-cancels-prompt is gated on the close capability: the gate used to start
    # the scenario's shared agent just to read initialize and session/new, beside the turn
    # agent the check then used.
    requirement = "session.close-cancels-prompt"
    result = run_checker(
        raw_agent(),
        only=[requirement],
        llm="anthropic",
        agent_env=[("FIXTURE_LLM_URL", "{llm_url}")],
    )
    item = result.results[requirement]
    assert item.verdict is Verdict.PASS, item.reason
    assert [run.id for run in result.runs if run.scenario == "cancel"] == ["cancel#1"]
