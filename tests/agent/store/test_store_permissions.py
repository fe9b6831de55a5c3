"""Everything the store creates is private (dirs 0700, files 0600) whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from iac_code.store import SessionStore, new_session_id


@pytest.fixture(params=[0o000, 0o022, 0o277], ids=["umask000", "umask022", "umask277"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def _modes(root: Path) -> dict[str, int]:
    return {
        str(path.relative_to(root)): stat.S_IMODE(path.stat().st_mode)
        for path in [root, *root.rglob("*")]
    }


def test_files_are_0600_and_directories_0700(tmp_path: Path, umask: int) -> None:
    home = tmp_path / "home"  # does not exist yet: the store creates it
    store = SessionStore(home)
    source = new_session_id()
    store.create(source, "/w", title="t")
    store.append(source, {"type": "user_message"})
    store.update_meta(source, title="renamed")
    with store.lock(source):
        pass
    store.fork(source, new_session_id())
    store._index.compact()  # the compacted index is written through a temporary file too
    store.load_events(source)

    modes = _modes(home)
    assert len(modes) >= 10
    for name, mode in modes.items():
        is_dir = (home / name).is_dir() if name != "." else True
        assert mode == (0o700 if is_dir else 0o600), f"{name}: {oct(mode)} under umask {umask:o}"
