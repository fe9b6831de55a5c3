"""Context compaction: older turns are summarised near the window; recent ones stay verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_scripted_llm.script import Turn
from iac_code.agent.compaction import kept_from, needs_compaction
from iac_code.settings import Settings
from iac_code.store import SessionStore
from iac_code_dev.fake_llm import ScriptedModelClient

from tests.agent.handlers.agent_harness import open_agent

pytestmark = pytest.mark.anyio
WINDOW = 1_000


def _big(text: str) -> Turn:
    """A reply whose usage says the prompt almost filled the (tiny) window."""
    return Turn().text(text).stop("end_turn").usage(input_tokens=900, output_tokens=5)


def test_threshold_and_boundary_rules() -> None:
    assert needs_compaction(850, 1_000)
    assert not needs_compaction(849, 1_000)
    events = [{"type": "user_message"}, {"type": "assistant_message"}] * 3
    assert kept_from(events) == 2  # the last two prompts (indices 2 and 4) stay verbatim
    assert kept_from(events[:4]) is None  # only two prompts: nothing to summarise
    events.append({"type": "compaction", "keptFrom": 2, "summary": "s"})
    assert kept_from(events) is None  # already compacted up to there


@pytest.mark.parametrize("advertise", [False, True])
async def test_history_is_summarised_near_the_window(tmp_path: Path, advertise: bool) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    model = ScriptedModelClient(
        [
            _big("one"),
            _big("two"),
            Turn().text("SUMMARY: did one and two").stop("end_turn"),
            _big("three"),
        ],
        timing=False,
    )
    store = SessionStore(tmp_path / "home")
    settings = Settings(home=tmp_path / "home", context_window=WINDOW)
    capabilities = {"session": {"compaction": {}}} if advertise else {}
    async with open_agent(tmp_path, model, settings=settings, store=store) as client:
        await client.initialize(clientCapabilities=capabilities)
        session_id = await client.new_session(cwd)
        for text in ("first", "second", "third"):
            answer = await client.prompt(session_id, text)
            assert answer.result["stopReason"] == "end_turn"
        updates = client.wire.updates()

    # The third prompt triggered one summary request, then the real one.
    assert len(model.requests) == 4
    summary_request, after = model.requests[2], model.requests[3]
    assert "Summarise the conversation" in summary_request.messages[-1]["content"][0]["text"]
    sent = [block.get("text", "") for message in after.messages for block in message["content"]]
    assert any("SUMMARY: did one and two" in text for text in sent)
    assert "first" not in sent  # summarised away from the model's view
    assert "second" in sent and "third" in sent  # the recent prompts stay verbatim

    markers = [e for e in store.load_events(session_id) if e["type"] == "compaction"]
    assert len(markers) == 1 and markers[0]["summary"] == "SUMMARY: did one and two"
    notices = [
        u
        for u in updates
        if u["sessionUpdate"] == "agent_message_chunk" and "summarised" in u["content"]["text"]
    ]
    assert len(notices) == 1
    progress = [u["status"] for u in updates if u["sessionUpdate"] == "compaction_update"]
    assert progress == (["in_progress", "completed"] if advertise else [])
