"""The scripted model gives its turns to the agent's main calls; side calls (a title, a
summary) get a neutral answer and consume nothing."""

from __future__ import annotations

from acp_scripted_llm.script import SIDE_CALL_TURN, Script

MARKER = "[acp-conformance]"
TOOLS = [{"name": "write_file", "input_schema": {"type": "object"}}]


def _call(text: str, *, tools: bool) -> dict[str, object]:
    body: dict[str, object] = {"messages": [{"role": "user", "content": text}]}
    if tools:
        body["tools"] = TOOLS
    return body


def test_a_title_call_before_the_main_call_does_not_take_the_scripted_turn() -> None:
    script = Script(["scripted answer"])
    script.route_to(MARKER)
    title = script.next_turn(_call(f"Give a short title for: {MARKER} hello", tools=False))
    assert title == SIDE_CALL_TURN and script.routed == 0
    main = script.next_turn(_call(f"{MARKER} hello", tools=True))
    assert main["content"][0]["text"] == "scripted answer" and script.routed == 1


def test_an_agent_without_tools_is_routed_by_the_marker() -> None:
    script = Script(["first", "second"])
    script.route_to(MARKER)
    block_form = {"messages": [{"role": "user", "content": [{"type": "text", "text": MARKER}]}]}
    assert script.next_turn(block_form)["content"][0]["text"] == "first"
    assert script.next_turn(_call("Summarise the conversation", tools=False)) == SIDE_CALL_TURN
    assert script.remaining == 1


def test_once_tools_were_offered_tool_less_calls_are_side_calls() -> None:
    script = Script(["a", "b"])
    script.route_to(MARKER)
    script.next_turn(_call(f"{MARKER} go", tools=True))
    assert script.next_turn(_call(f"{MARKER} go", tools=False)) == SIDE_CALL_TURN
    assert script.remaining == 1


def test_without_routing_every_call_consumes_a_turn() -> None:
    script = Script(["a", "b"])
    script.next_turn(_call("no marker", tools=False))
    assert script.remaining == 1 and script.routed == 1
