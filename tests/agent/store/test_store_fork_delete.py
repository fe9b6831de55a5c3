"""session/fork copies history; session/delete removes it, idempotently."""

from __future__ import annotations

from pathlib import Path

import pytest
from iac_code.store import (
    SessionExistsError,
    SessionLockedError,
    SessionNotFoundError,
    SessionStore,
    new_session_id,
)

from tests.agent.store.store_testkit import Child


def test_fork_copies_events_and_sets_parent_and_survives_a_new_store(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    source = new_session_id()
    store.create(source, "/w", title="origin", additional_directories=["/lib"])
    history = [{"type": "user_message", "n": n} for n in range(5)]
    store.append_many(source, history)
    source_meta = store.get_meta(source)
    source_bytes = (store.sessions_dir / source / "events.jsonl").read_bytes()

    fork_id = new_session_id()
    fork = store.fork(source, fork_id)
    assert fork.parent_id == source
    assert (fork.cwd, fork.title, fork.additional_directories) == ("/w", "origin", ("/lib",))

    store.append(fork_id, {"type": "user_message", "n": "fork only"})
    fresh = SessionStore(tmp_path)
    assert fresh.load_events(fork_id) == [*history, {"type": "user_message", "n": "fork only"}]
    assert fresh.get_meta(fork_id) == fork
    assert fresh.load_events(source) == history
    assert fresh.get_meta(source) == source_meta
    assert (store.sessions_dir / source / "events.jsonl").read_bytes() == source_bytes
    assert {meta.session_id for meta in fresh.list()[0]} == {source, fork_id}


def test_fork_can_move_to_another_cwd_and_drops_a_torn_tail(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    source = new_session_id()
    store.create(source, "/w")
    store.append(source, {"n": 1})
    with (store.sessions_dir / source / "events.jsonl").open("ab") as handle:
        handle.write(b'{"n": 2, "tor')
    fork_id = new_session_id()
    assert store.fork(source, fork_id, cwd="/elsewhere").cwd == "/elsewhere"
    store.append(fork_id, {"n": 3})
    assert store.load_events(fork_id) == [{"n": 1}, {"n": 3}]


def test_fork_errors(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    source = new_session_id()
    store.create(source, "/w")
    with pytest.raises(SessionNotFoundError):
        store.fork(new_session_id(), new_session_id())
    with pytest.raises(SessionExistsError):
        store.fork(source, source)


def test_delete_removes_from_disk_and_listing_and_is_idempotent(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    keep, doomed = new_session_id(), new_session_id()
    store.create(keep, "/w")
    store.create(doomed, "/w")
    store.append(doomed, {"n": 1})
    assert len(store.list()[0]) == 2

    store.delete(doomed)
    store.delete(doomed)
    store.delete(new_session_id())
    assert not store.exists(doomed)
    assert not (store.sessions_dir / doomed).exists()
    assert [meta.session_id for meta in store.list()[0]] == [keep]
    assert [meta.session_id for meta in SessionStore(tmp_path).list()[0]] == [keep]
    assert sorted(p.name for p in store.sessions_dir.iterdir()) == sorted(
        ["index.jsonl", "index.lock", "session.locks", keep]
    )
    with pytest.raises(SessionNotFoundError):
        store.load_events(doomed)
    with pytest.raises(SessionNotFoundError):
        store.append(doomed, {"n": 2})
    store.create(doomed, "/w")  # the id may be reused once it is gone
    assert store.load_events(doomed) == []


def test_delete_of_a_session_locked_by_this_store_releases_the_lock(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    lock = store.lock(session_id)
    store.delete(session_id)
    assert not lock.held
    assert not store.exists(session_id)


_LOCK_HOLDER = """
import sys
from pathlib import Path
from iac_code.store import SessionStore

lock = SessionStore(Path(sys.argv[1])).lock(sys.argv[2])
print("locked", flush=True)
sys.stdin.readline()
"""


@pytest.mark.subprocess
def test_delete_refuses_a_session_another_process_has_locked(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    with Child(_LOCK_HOLDER, tmp_path, session_id) as child:
        child.wait_for("locked")
        with pytest.raises(SessionLockedError):
            store.delete(session_id)
        assert store.exists(session_id)
        child.tell("release")
        assert child.finish() == 0
    store.delete(session_id)
    assert not store.exists(session_id)


def test_a_crash_between_rename_and_tombstone_is_cleaned_up_by_delete(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    (store.sessions_dir / session_id).rename(store.sessions_dir / ".trash-simulated")
    assert [m.session_id for m in store.list()[0]] == [session_id]  # stale index entry
    store.delete(session_id)
    assert store.list() == ([], None)
