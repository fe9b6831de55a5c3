"""session/list: order, paging with opaque cursors, cwd filter, several processes, index care."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from iac_code.store import InvalidCursorError, SessionMeta, SessionStore, new_session_id
from iac_code.store import index as index_module

from tests.agent.store.store_testkit import Child


def _stamp(number: int) -> str:
    """Distinct, increasing timestamps (one second apart)."""
    return f"2025-03-01T10:{number // 60:02d}:{number % 60:02d}.000000Z"


def _make(store: SessionStore, count: int, *, cwd: str = "/w", start: int = 0) -> list[str]:
    """Sessions whose updatedAt grows with their position; returns the ids oldest first."""
    ids = []
    for number in range(start, start + count):
        session_id = new_session_id()
        store.create(session_id, cwd)
        store.update_meta(session_id, updated_at=_stamp(number))
        ids.append(session_id)
    return ids


def _ids(metas: list[SessionMeta]) -> list[str]:
    return [meta.session_id for meta in metas]


def _all_pages(store: SessionStore, **kwargs: object) -> list[list[str]]:
    pages = []
    cursor = None
    while True:
        page, cursor = store.list(cursor=cursor, **kwargs)  # type: ignore[arg-type]
        pages.append(_ids(page))
        if cursor is None:
            return pages


def test_empty_store_lists_nothing(tmp_path: Path) -> None:
    assert SessionStore(tmp_path).list() == ([], None)
    assert not (tmp_path / "sessions").exists(), "listing must not create anything"


def test_newest_first_with_ties_broken_by_id(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    ids = _make(store, 5)
    extra = [new_session_id(), new_session_id()]
    for session_id in extra:
        store.create(session_id, "/w")
        store.update_meta(session_id, updated_at=_stamp(2))  # same instant as ids[2]
    tied = sorted([ids[2], *extra], reverse=True)

    page, cursor = store.list()
    assert cursor is None
    assert _ids(page) == [ids[4], ids[3], *tied, ids[1], ids[0]]
    # Paging through a tie group one by one neither repeats nor skips anyone.
    assert [sid for chunk in _all_pages(store, limit=1) for sid in chunk] == _ids(page)
    assert page[0].to_wire()["updatedAt"] == _stamp(4)


def test_pages_cover_everything_once_and_default_to_fifty(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    ids = _make(store, 120)
    pages = _all_pages(store)
    assert [len(page) for page in pages] == [50, 50, 20]
    assert [sid for page in pages for sid in page] == ids[::-1]

    exact = _all_pages(store, limit=40)
    assert [len(page) for page in exact] == [40, 40, 40]


def test_cursor_stays_correct_when_sessions_are_added_between_pages(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    ids = _make(store, 10)
    first, cursor = store.list(limit=4)
    assert _ids(first) == ids[9:5:-1]
    newer = _make(store, 3, start=30)  # newer than everything listed so far

    second, cursor = store.list(limit=4, cursor=cursor)
    assert _ids(second) == ids[5:1:-1]
    third, cursor = store.list(limit=4, cursor=cursor)
    assert _ids(third) == ids[1::-1]
    assert cursor is None
    assert _ids(store.list(limit=3)[0]) == newer[::-1]


def test_cwd_filter_is_an_exact_match(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    here = _make(store, 60, cwd="/work/a")
    _make(store, 30, cwd="/work/b", start=5)
    _make(store, 3, cwd="/work/a/sub", start=100)

    pages = _all_pages(store, cwd="/work/a")
    assert [len(page) for page in pages] == [50, 10]
    assert [sid for page in pages for sid in page] == here[::-1]
    assert store.list(cwd="/work/c") == ([], None)
    page, _ = store.list(cwd="/work/a", limit=200)
    assert {meta.cwd for meta in page} == {"/work/a"}


@pytest.mark.parametrize(
    "cursor",
    ["", "not a cursor!", "AAAA", "%%%", "a" * 5000, "eyJ1IjoxfQ"],
)
def test_malformed_cursors_are_rejected(tmp_path: Path, cursor: str) -> None:
    store = SessionStore(tmp_path)
    _make(store, 3)
    with pytest.raises(InvalidCursorError):
        store.list(cursor=cursor)


def test_edited_cursor_is_rejected(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    _make(store, 5)
    _, cursor = store.list(limit=2)
    assert cursor is not None
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[-3] ^= 0x01  # flip one bit of the payload
    tampered = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    with pytest.raises(InvalidCursorError):
        store.list(cursor=tampered)
    with pytest.raises(InvalidCursorError):
        store.list(cursor=cursor[:-2])
    assert len(store.list(cursor=cursor, limit=10)[0]) == 3
    with pytest.raises(ValueError):
        store.list(limit=0)


def test_a_cursor_from_another_store_instance_works(tmp_path: Path) -> None:
    ids = _make(SessionStore(tmp_path), 6)
    _, cursor = SessionStore(tmp_path).list(limit=3)
    page, _ = SessionStore(tmp_path).list(limit=3, cursor=cursor)
    assert _ids(page) == ids[2::-1]


_CREATING_CHILD = """
import sys
from pathlib import Path
from iac_code.store import SessionStore

store = SessionStore(Path(sys.argv[1]))
for line in sys.stdin:
    session_id, minute = line.split()
    store.create(session_id, "/shared")
    store.update_meta(session_id, updated_at=f"2025-03-01T11:{int(minute):02d}:00Z")
    print("created", flush=True)
"""


@pytest.mark.subprocess
def test_listing_sees_sessions_written_by_another_process(tmp_path: Path) -> None:
    mine = SessionStore(tmp_path)
    own = _make(mine, 2)
    assert _ids(mine.list()[0]) == own[::-1]  # the index is now cached in this instance

    theirs = [new_session_id() for _ in range(3)]
    with Child(_CREATING_CHILD, tmp_path) as child:
        for minute, session_id in enumerate(theirs):
            child.tell(f"{session_id} {minute}")
            child.wait_for("created")
            page, _ = mine.list(cwd="/shared")
            assert _ids(page) == theirs[minute::-1]
        child.process.stdin.close()  # type: ignore[union-attr]
        assert child.finish() == 0

    mine.delete(theirs[1])
    assert _ids(SessionStore(tmp_path).list()[0]) == [theirs[2], theirs[0], *own[::-1]]


def test_index_is_compacted_and_stays_correct(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "_COMPACT_SLACK_BYTES", 2000)
    store = SessionStore(tmp_path)
    reader = SessionStore(tmp_path)
    ids = _make(store, 10)
    assert len(reader.list()[0]) == 10  # reader caches the pre-compaction file
    for round_number in range(20):
        for number, session_id in enumerate(ids):
            store.update_meta(session_id, updated_at=_stamp(number), title=f"r{round_number}")
    store.delete(ids[0])

    index_file = tmp_path / "sessions" / "index.jsonl"
    assert len(index_file.read_bytes().splitlines()) < 60, "garbage was never compacted"
    for view in (store, reader, SessionStore(tmp_path)):
        page, cursor = view.list()
        assert _ids(page) == ids[:0:-1]
        assert {meta.title for meta in page} == {"r19"}
        assert cursor is None


def test_a_missing_index_is_rebuilt_from_the_sessions(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    ids = _make(store, 4)
    (tmp_path / "sessions" / "index.jsonl").unlink()
    (tmp_path / "sessions" / "stray-file").write_text("not a session")
    assert _ids(SessionStore(tmp_path).list()[0]) == ids[::-1]
    assert (tmp_path / "sessions" / "index.jsonl").exists()


def test_a_torn_index_line_does_not_hide_later_sessions(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = _make(store, 1)
    with (tmp_path / "sessions" / "index.jsonl").open("ab") as handle:
        handle.write(b'{"id": "torn-by-a-cra')
    assert _ids(SessionStore(tmp_path).list()[0]) == first
    later = _make(store, 1, start=10)
    assert _ids(SessionStore(tmp_path).list()[0]) == [*later, *first]


_BULK_CREATOR = """
import sys
from pathlib import Path
import iac_code.store.index as index_module
from iac_code.store import SessionStore, new_session_id

index_module._COMPACT_SLACK_BYTES = 3000  # compact often, racing the other writer
store = SessionStore(Path(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
for number in range(int(sys.argv[2])):
    session_id = new_session_id()
    store.create(session_id, sys.argv[3])
    store.update_meta(session_id, title=str(number))
    print(session_id, flush=True)
print("done", flush=True)
"""


@pytest.mark.subprocess
def test_two_processes_writing_the_index_at_once_lose_nothing(tmp_path: Path) -> None:
    count = 40
    with (
        Child(_BULK_CREATOR, tmp_path, count, "/one") as first,
        Child(_BULK_CREATOR, tmp_path, count, "/two") as second,
    ):
        first.wait_for("ready")
        second.wait_for("ready")
        first.tell("go")
        second.tell("go")
        created = {
            cwd: [child.read_line() for _ in range(count)]
            for cwd, child in (("/one", first), ("/two", second))
        }
        first.wait_for("done")
        second.wait_for("done")

    store = SessionStore(tmp_path)
    for cwd, ids in created.items():
        page, cursor = store.list(cwd=cwd, limit=1000)
        assert cursor is None
        assert sorted(_ids(page)) == sorted(ids)
        assert all(meta.title is not None for meta in page)
    assert len(store.list(limit=1000)[0]) == 2 * count
