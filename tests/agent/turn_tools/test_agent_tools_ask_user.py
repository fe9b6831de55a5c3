"""``ask_user``: the model asks the user a structured question through form elicitation.

A scripted client answers ``elicitation/create``; what the agent sends is validated with the
project's JSON Schemas (jsonschema, not the lax models), and whatever the client answers —
an answer, a decline, a cancel, an error or garbage — reaches the model as the tool result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_schema.validation import validate_params, validate_result
from acp_scripted_llm import ScriptedLLMServer, Turn

from tests.agent.turn_tools.agent_tools_kit import (
    ErrorAnswer,
    Frame,
    WireClient,
    final_update,
    in_memory_agent,
    result_text,
    tool_results_in,
)

pytestmark = pytest.mark.anyio

FORMS = {"elicitation": {"form": {}}}
WHICH_ENV = {"question": "Which environment?", "choices": ["staging", "production"]}


def answering(result: Any, seen: list[Frame]) -> Any:
    async def handler(client: WireClient, frame: Frame) -> Any:
        seen.append(frame)
        return result

    return handler


async def _ask(
    home: Path,
    workspace: Path,
    llm: ScriptedLLMServer,
    answer: Any,
    tool_input: dict[str, Any] = WHICH_ENV,
) -> tuple[list[Frame], dict[str, Any], str]:
    """One turn in which the model asks; returns (requests seen, final update, result text)."""
    llm.script.add(
        Turn().tool_use("ask_user", tool_input, id="q1"),
        Turn().text("ok").stop("end_turn"),
    )
    seen: list[Frame] = []
    async with in_memory_agent(home, llm_url=llm.url, capabilities=FORMS) as run:
        client = run.client
        client.handlers["elicitation/create"] = answering(answer, seen)
        session = await client.new_session(workspace)
        assert (await client.prompt(session, "deploy"))["stopReason"] == "end_turn"
        final = final_update(client, "q1")
        listed = await client.request("session/list", {})  # the agent is still up
        assert listed["sessions"]
    results = tool_results_in(llm.model_requests[-1].messages)
    return seen, final, result_text(results["q1"])


async def test_a_choice_is_asked_as_a_valid_form_and_the_answer_reaches_the_model(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    answer = {"action": "accept", "content": {"answer": "staging"}}
    seen, final, text = await _ask(home, workspace, llm, answer)
    [request] = seen
    params = request["params"]
    assert validate_params("elicitation/create", params) == []  # schema-valid on the wire
    assert validate_result("elicitation/create", answer) == []
    assert params["mode"] == "form" and params["toolCallId"] == "q1"
    assert params["message"] == "Which environment?"
    field = params["requestedSchema"]["properties"]["answer"]
    assert [o["const"] for o in field["oneOf"]] == ["staging", "production"]
    assert params["requestedSchema"]["required"] == ["answer"]
    assert final["status"] == "completed"
    assert text == "The user answered: staging"


async def test_a_short_text_question_is_a_bounded_text_field(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    answer = {"action": "accept", "content": {"answer": "ws-blue"}}
    seen, _final, text = await _ask(
        home, workspace, llm, answer, {"question": "Terraform workspace name?", "default": "dev"}
    )
    field = seen[0]["params"]["requestedSchema"]["properties"]["answer"]
    assert validate_params("elicitation/create", seen[0]["params"]) == []
    assert field["type"] == "string" and field["default"] == "dev" and "oneOf" not in field
    assert field["maxLength"] > 0
    assert text == "The user answered: ws-blue"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"action": "decline"}, "declined"),
        ({"action": "cancel"}, "without answering"),
    ],
)
async def test_decline_and_cancel_go_back_to_the_model(
    workspace: Path, home: Path, llm: ScriptedLLMServer, answer: Any, expected: str
) -> None:
    _seen, final, text = await _ask(home, workspace, llm, answer)
    assert final["status"] == "completed"
    assert expected in text
    assert final["rawOutput"]["action"] == answer["action"]


@pytest.mark.parametrize(
    "answer",
    [
        {"action": "accept", "content": {"answer": "qa"}},  # not one of the choices
        {"action": "accept", "content": {"answer": 3}},  # not text
        {"action": "accept"},  # no content
        {"action": "maybe"},  # an action the agent does not know
        {"content": {"answer": "staging"}},  # no action at all: not a valid result
        "staging",  # not even an object
    ],
)
async def test_an_answer_that_does_not_fit_is_an_error_for_the_model(
    workspace: Path, home: Path, llm: ScriptedLLMServer, answer: Any
) -> None:
    _seen, final, text = await _ask(home, workspace, llm, answer)
    assert final["status"] == "failed"
    assert "could not be used" in text


async def test_a_client_error_is_an_error_for_the_model(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    _seen, final, text = await _ask(home, workspace, llm, ErrorAnswer(-32603, "form crashed"))
    assert final["status"] == "failed"
    assert "could not be asked" in text


async def test_without_the_capability_the_tool_is_not_offered(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    llm.script.add(Turn().text("ok").stop("end_turn"))
    async with in_memory_agent(home, llm_url=llm.url, capabilities={"elicitation": {}}) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "hi")
    tools = [tool["name"] for tool in llm.model_requests[-1].body["tools"]]
    assert "ask_user" not in tools and "read_file" in tools


async def test_with_the_capability_the_model_sees_the_tool(
    workspace: Path, home: Path, llm: ScriptedLLMServer
) -> None:
    llm.script.add(Turn().text("ok").stop("end_turn"))
    async with in_memory_agent(home, llm_url=llm.url, capabilities=FORMS) as run:
        session = await run.client.new_session(workspace)
        await run.client.prompt(session, "hi")
    tools = [tool["name"] for tool in llm.model_requests[-1].body["tools"]]
    assert "ask_user" in tools
