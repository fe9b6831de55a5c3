"""Torn and corrupt lines, and a writer killed with SIGKILL in the middle of its appends."""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import pytest
from iac_code.store import SessionStore, new_session_id

from tests.agent.store.store_testkit import Child


def _events_path(store: SessionStore, session_id: str) -> Path:
    return store.sessions_dir / session_id / "events.jsonl"


def test_torn_last_line_is_ignored_and_cut_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    store.append_many(session_id, [{"n": 1}, {"n": 2}])
    path = _events_path(store, session_id)
    intact = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b'{"n": 3, "text": "half a li')

    with caplog.at_level(logging.WARNING, logger="iac_code.store"):
        assert SessionStore(tmp_path).load_events(session_id) == [{"n": 1}, {"n": 2}]
    assert path.read_bytes() == intact, "the torn fragment must be truncated away"
    assert "torn" in caplog.text

    store.append(session_id, {"n": 4})
    assert store.load_events(session_id) == [{"n": 1}, {"n": 2}, {"n": 4}]


def test_append_after_a_torn_line_starts_a_new_line_even_without_a_load(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    store.append(session_id, {"n": 1})
    with _events_path(store, session_id).open("ab") as handle:
        handle.write(b'{"n": 2, "tor')

    store.append(session_id, {"n": 3})  # must not be glued onto the fragment
    assert store.load_events(session_id) == [{"n": 1}, {"n": 3}]


def test_a_torn_line_is_left_alone_while_another_store_holds_the_lock(tmp_path: Path) -> None:
    writer = SessionStore(tmp_path)
    session_id = new_session_id()
    writer.create(session_id, "/w")
    writer.append(session_id, {"n": 1})
    path = _events_path(writer, session_id)
    with path.open("ab") as handle:
        handle.write(b'{"n": 2, "still being wri')
    with writer.lock(session_id):
        # A reader cannot tell a torn line from an append in progress, so only the lock
        # holder may truncate.
        assert SessionStore(tmp_path).load_events(session_id) == [{"n": 1}]
        assert path.read_bytes().endswith(b"still being wri")
        assert writer.load_events(session_id) == [{"n": 1}]  # the holder repairs
        assert path.read_bytes().endswith(b"\n")


def test_corrupt_lines_in_the_middle_are_skipped_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    store.append(session_id, {"n": 1})
    with _events_path(store, session_id).open("ab") as handle:
        handle.write(b"this is not json\n[1, 2]\n\xff\xfe{}\n\n")
    store.append(session_id, {"n": 2})

    with caplog.at_level(logging.WARNING, logger="iac_code.store"):
        assert store.load_events(session_id) == [{"n": 1}, {"n": 2}]
    assert "corrupt" in caplog.text
    store.append(session_id, {"n": 3})
    assert store.load_events(session_id)[-1] == {"n": 3}


_APPENDING_CHILD = """
import sys
from pathlib import Path
from iac_code.store import SessionStore

store = SessionStore(Path(sys.argv[1]))
session_id = sys.argv[2]
lock = store.lock(session_id)
padding = "x" * 20_000  # large lines make a kill in the middle of a write likely
for number in range(2000):
    store.append(session_id, {"type": "tool_result", "n": number, "padding": padding})
    if number == 200:
        print("progress", flush=True)
print("done", flush=True)
"""


@pytest.mark.subprocess
def test_kill_9_while_appending_leaves_a_consistent_prefix(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")

    with Child(_APPENDING_CHILD, tmp_path, session_id) as child:
        child.wait_for("progress")
        child.process.send_signal(signal.SIGKILL)
        assert child.finish() == -signal.SIGKILL

    events = store.load_events(session_id)
    assert len(events) > 200
    assert [event["n"] for event in events] == list(range(len(events)))
    assert all(len(event["padding"]) == 20_000 for event in events)
    assert _events_path(store, session_id).read_bytes().endswith(b"\n")

    # The kernel dropped the dead writer's lock; this process can take over and carry on.
    with store.lock(session_id):
        store.append(session_id, {"type": "user_message", "n": len(events)})
    reloaded = SessionStore(tmp_path).load_events(session_id)
    assert [event["n"] for event in reloaded] == list(range(len(events) + 1))
