"""Metrics of real turns, and their Prometheus text."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from acp_scripted_llm import Turn
from iac_code import telemetry
from iac_code.telemetry.json_logs import JsonLineFormatter
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.telemetry.telemetry_kit import METRIC_NAMES, Recorded
from tests.agent.turn_tools.agent_tools_kit import in_memory_agent

pytestmark = pytest.mark.anyio


async def tool_turn(workspace: Path, home: Path) -> None:
    model = ScriptedModelClient(
        [
            Turn()
            .tool_use("write_file", {"path": "a.txt", "content": "x"}, id="w1")
            .usage(input_tokens=50, output_tokens=5),
            Turn().text("Done.").usage(input_tokens=80, output_tokens=3),
        ],
        timing=False,
    )
    async with in_memory_agent(home, model_client=model) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "write")


async def test_a_turn_records_every_metric(workspace: Path, home: Path, recorded: Recorded) -> None:
    await tool_turn(workspace, home)
    points = recorded.metric_points()
    assert set(points) >= METRIC_NAMES
    tokens = {
        (p.attributes["gen_ai.token.type"], p.sum) for p in points["gen_ai.client.token.usage"]
    }
    assert tokens == {("input", 130), ("output", 8)}
    assert {p.attributes["gen_ai.operation.name"] for p in points["gen_ai.client.token.usage"]} == {
        "chat"
    }
    assert sum(p.count for p in points["gen_ai.client.operation.time_to_first_chunk"]) == 2
    assert [(dict(p.attributes), p.value) for p in points["iac_code.turns"]] == [
        ({"iac_code.stop_reason": "end_turn"}, 1)
    ]
    # The session and the connection closed when the agent shut down.
    assert [p.value for p in points["iac_code.sessions.open"]] == [0]
    assert [p.value for p in points["iac_code.connections.open"]] == [0]


async def test_prometheus_text_names_the_metrics(
    workspace: Path, home: Path, recorded: Recorded
) -> None:
    await tool_turn(workspace, home)
    text = telemetry.prometheus_text()
    assert text is not None
    assert "# TYPE gen_ai_client_token_usage histogram" in text
    assert 'gen_ai_client_token_usage_bucket{gen_ai_operation_name="chat"' in text
    assert 'le="+Inf"} ' in text
    assert "# TYPE gen_ai_client_operation_duration_seconds histogram" in text
    assert 'iac_code_turns_total{iac_code_stop_reason="end_turn"} 1' in text
    assert "# TYPE iac_code_sessions_open gauge" in text
    assert 'iac_code_permission_outcomes_total{iac_code_permission_outcome="allowed"} 1' in text
    for line in text.splitlines():  # every sample line is "name{labels} number"
        if not line.startswith("#"):
            float(line.rsplit(" ", 1)[1])


def test_json_log_lines_carry_the_current_trace(recorded: Recorded) -> None:
    formatter = JsonLineFormatter()
    record = logging.LogRecord(
        "iac_code.x", logging.WARNING, __file__, 1, "hello %s", ("you",), None
    )
    import json

    outside = json.loads(formatter.format(record))
    assert outside["message"] == "hello you" and outside["level"] == "WARNING"
    assert "trace_id" not in outside
    with telemetry.tool_call("bash", "c1", {}):
        inside = json.loads(formatter.format(record))
    span = recorded.one("execute_tool")
    assert inside["trace_id"] == format(span.context.trace_id, "032x")
    assert inside["span_id"] == format(span.context.span_id, "016x")


def test_prometheus_label_values_are_escaped(recorded: Recorded) -> None:
    recorded.recorder.metrics.turns.add(1, {"iac_code.stop_reason": 'a "quoted"\\ value\nnext'})
    text = telemetry.prometheus_text() or ""
    assert 'iac_code_turns_total{iac_code_stop_reason="a \\"quoted\\"\\\\ value\\nnext"} 1' in text
