"""A missing index next to bad session folders is rebuilt without the process locking itself.

Each scenario runs in a child process: a self-deadlock on the index flock cannot be
interrupted from inside the process, so the bounded wait lives in the parent.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from iac_code.store import SessionStore, new_session_id

from tests.agent.store.store_testkit import Child

_LISTER = """
import sys
from pathlib import Path
from iac_code.store import SessionStore

store = SessionStore(Path(sys.argv[1]))
sessions, _ = store.list()
print(",".join(sorted(meta.session_id for meta in sessions)), flush=True)
for name in sys.argv[2:]:
    print(f"{name}={store.get_meta(name) is not None}", flush=True)
"""


def _home_with_bad_folder(tmp_path: Path, damage: str) -> tuple[str, str]:
    """Two good sessions, one damaged folder, and no index: (good ids joined, bad id)."""
    store = SessionStore(tmp_path)
    good = sorted(new_session_id() for _ in range(2))
    for session_id in good:
        store.create(session_id, "/w")
    sessions = tmp_path / "sessions"
    bad = new_session_id()
    if damage == "corrupt":
        store.create(bad, "/w")
        (sessions / bad / "meta.json").write_text("{not json")
    elif damage == "mismatched":
        store.create(bad, "/w")
        meta = json.loads((sessions / bad / "meta.json").read_text())
        meta["id"] = new_session_id()
        (sessions / bad / "meta.json").write_text(json.dumps(meta))
    elif damage == "copied":
        shutil.copytree(sessions / good[0], sessions / bad)
    elif damage == "missing-fields":
        store.create(bad, "/w")
        (sessions / bad / "meta.json").write_text(json.dumps({"id": bad}))
    (sessions / "index.jsonl").unlink()
    return ",".join(good), bad


@pytest.mark.subprocess
@pytest.mark.parametrize("damage", ["corrupt", "mismatched", "copied", "missing-fields"])
def test_list_and_load_with_a_bad_folder_and_no_index_finish(tmp_path: Path, damage: str) -> None:
    good, bad = _home_with_bad_folder(tmp_path, damage)
    with Child(_LISTER, tmp_path, bad) as child:
        assert child.read_line(timeout=60) == good  # the bad folder is skipped
        assert child.read_line(timeout=60) == f"{bad}=False"
        assert child.finish() == 0
    assert (tmp_path / "sessions" / "index.jsonl").exists()  # rebuilt from the good folders


@pytest.mark.subprocess
def test_two_processes_rebuilding_at_once_both_finish(tmp_path: Path) -> None:
    good, bad = _home_with_bad_folder(tmp_path, "corrupt")
    with Child(_LISTER, tmp_path, bad) as first, Child(_LISTER, tmp_path, bad) as second:
        for child in (first, second):
            assert child.read_line(timeout=60) == good
            assert child.read_line(timeout=60) == f"{bad}=False"
            assert child.finish() == 0


_LOCK_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.readline()
"""


@pytest.mark.subprocess
def test_a_reader_does_not_wait_for_another_process_holding_the_index_lock(
    tmp_path: Path,
) -> None:
    good, bad = _home_with_bad_folder(tmp_path, "mismatched")
    lock_file = tmp_path / "sessions" / "index.lock"
    with Child(_LOCK_HOLDER, lock_file) as holder:
        holder.wait_for("locked")
        with Child(_LISTER, tmp_path, bad) as lister:
            assert lister.read_line(timeout=60) == good  # listed from its own scan
            assert lister.read_line(timeout=60) == f"{bad}=False"
            assert lister.finish() == 0
        holder.tell("done")
        assert holder.finish() == 0


def test_corrupt_folder_is_logged_and_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good, bad = _home_with_bad_folder(tmp_path, "corrupt")
    store = SessionStore(tmp_path)
    sessions, _ = store.list()
    assert ",".join(sorted(m.session_id for m in sessions)) == good
    assert any(bad in record.getMessage() for record in caplog.records)
