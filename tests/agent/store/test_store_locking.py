"""One writer per session: the lock excludes other processes and other store instances."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from iac_code.store import SessionLockedError, SessionNotFoundError, SessionStore, new_session_id

from tests.agent.store.store_testkit import Child

_LOCK_HOLDER = """
import sys
from pathlib import Path
from iac_code.store import SessionStore, SessionLockedError

store = SessionStore(Path(sys.argv[1]))
try:
    lock = store.lock(sys.argv[2])
except SessionLockedError:
    print("busy", flush=True)
    raise SystemExit(0)
print("locked", flush=True)
sys.stdin.readline()
lock.release()
print("released", flush=True)
sys.stdin.readline()
"""


@pytest.mark.subprocess
def test_lock_held_by_another_process_is_refused_until_released(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    with Child(_LOCK_HOLDER, tmp_path, session_id) as child:
        child.wait_for("locked")
        with pytest.raises(SessionLockedError):
            store.lock(session_id)
        child.tell("release")
        child.wait_for("released")
        with store.lock(session_id) as lock:
            assert lock.held
        assert not lock.held
        child.tell("exit")
        assert child.finish() == 0


@pytest.mark.subprocess
def test_another_process_is_refused_while_this_one_holds_the_lock(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    with store.lock(session_id), Child(_LOCK_HOLDER, tmp_path, session_id) as child:
        child.wait_for("busy")
        assert child.finish() == 0


@pytest.mark.subprocess
def test_lock_of_a_killed_process_is_free_again(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    with Child(_LOCK_HOLDER, tmp_path, session_id) as child:
        child.wait_for("locked")
        child.process.send_signal(signal.SIGKILL)
        child.finish()
    with store.lock(session_id):
        pass


def test_two_store_instances_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    first, second = SessionStore(tmp_path), SessionStore(tmp_path)
    session_id = new_session_id()
    first.create(session_id, "/w")
    lock = first.lock(session_id)
    with pytest.raises(SessionLockedError):
        second.lock(session_id)
    with pytest.raises(SessionLockedError):
        first.lock(session_id)  # not re-entrant either
    lock.release()
    lock.release()  # harmless
    with second.lock(session_id), pytest.raises(SessionLockedError):
        first.lock(session_id)
    first.lock(session_id).release()


def test_lock_of_an_unknown_session_is_not_found(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with pytest.raises(SessionNotFoundError):
        store.lock(new_session_id())
    assert not (tmp_path / "sessions").exists()
