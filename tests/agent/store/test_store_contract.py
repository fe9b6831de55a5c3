"""The session store contract: the same tests against the JSONL files and PostgreSQL.

Each test takes the ``backend`` fixture (tests/agent/store/conftest.py), so it runs once per
implementation; the PostgreSQL runs use the server the fixture starts and skip, saying why,
without one (CI turns that skip into a failure with IAC_CODE_REQUIRE_POSTGRES=1).
"""

from __future__ import annotations

import errno
import threading
from typing import Any

import pytest
from iac_code.store import (
    InvalidCursorError,
    InvalidSessionIdError,
    SessionExistsError,
    SessionLockedError,
    SessionNotFoundError,
    StoreWriteError,
    new_session_id,
)

from tests.agent.store.conftest import Backend

pytestmark = pytest.mark.xdist_group("postgres")

EVENTS: list[dict[str, Any]] = [
    {"type": "user_message", "content": [{"type": "text", "text": "héllo\nworld ☃"}]},
    {"type": "assistant_message", "content": [{"type": "text", "text": "\u2028 ok \u0000"}]},
    {"type": "tool_result", "zeta": 1, "alpha": [1.5, None, True], "nested": {"b": 2, "a": 1}},
    {"type": "mode", "modeId": "plan", "surrogate": "\ud800 kept"},
]

HOSTILE_IDS = [
    "",
    "../escape",
    "a/b",
    "a b",
    "x" * 129,
    "a'; DROP TABLE iac_sessions; --",
    "nul\x00byte",
    "é",
]


def test_events_come_back_in_append_order_from_another_store(backend: Backend) -> None:
    store = backend.store
    session_id = new_session_id()
    store.create(session_id, "/work/project")
    store.append(session_id, EVENTS[0])
    store.append_many(session_id, EVENTS[1:3])
    store.append_many(session_id, [])  # nothing to write is not an error
    store.append(session_id, EVENTS[3])

    assert store.load_events(session_id) == EVENTS
    resumed = backend.another().load_events(session_id)
    assert resumed == EVENTS
    assert [list(event) for event in resumed] == [list(event) for event in EVENTS]  # key order


def test_a_new_session_has_no_events_and_its_id_is_never_reused(backend: Backend) -> None:
    session_id = new_session_id()
    meta = backend.store.create(session_id, "/w", additional_directories=["/x"], title="t")
    assert backend.store.load_events(session_id) == []
    assert backend.another().get_meta(session_id) == meta
    with pytest.raises(SessionExistsError):
        backend.another().create(session_id, "/elsewhere")
    assert backend.store.get_meta(session_id) == meta


def test_an_append_batch_that_cannot_be_encoded_keeps_none_of_its_events(
    backend: Backend,
) -> None:
    session_id = new_session_id()
    backend.store.create(session_id, "/w")
    backend.store.append(session_id, {"n": 1})
    with pytest.raises(ValueError):
        backend.store.append_many(session_id, [{"n": 2}, {"n": float("nan")}, {"n": 3}])
    with pytest.raises(TypeError):
        backend.store.append(session_id, ["not", "a", "dict"])  # type: ignore[arg-type]
    backend.store.append(session_id, {"n": 4})
    assert backend.store.load_events(session_id) == [{"n": 1}, {"n": 4}]


def test_concurrent_appends_from_two_stores_are_never_torn_or_interleaved(
    backend: Backend,
) -> None:
    """Two writers (as two processes would be) append batches at once: every event is kept,
    each batch stays contiguous and each writer's batches keep their order."""
    session_id = new_session_id()
    backend.store.create(session_id, "/w")
    stores = [backend.store, backend.another()]
    batches, size = 20, 5
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            for batch in range(batches):
                stores[writer].append_many(
                    session_id, [{"w": writer, "b": batch, "i": i} for i in range(size)]
                )
        except BaseException as error:  # reported below, never lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=write, args=(writer,)) for writer in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    events = backend.another().load_events(session_id)
    assert len(events) == 2 * batches * size
    for start in range(0, len(events), size):
        chunk = events[start : start + size]
        assert [event["i"] for event in chunk] == list(range(size))
        assert len({(event["w"], event["b"]) for event in chunk}) == 1
    for writer in (0, 1):
        order = [event["b"] for event in events if event["w"] == writer and event["i"] == 0]
        assert order == list(range(batches))


def test_list_pages_newest_first_filters_by_cwd_and_survives_inserts(backend: Backend) -> None:
    store = backend.store
    ids = [f"s{n:02d}" for n in range(7)]
    for n, session_id in enumerate(ids):
        store.create(session_id, "/a" if n % 2 == 0 else "/b", title=f"t{n}")
        store.update_meta(session_id, updated_at=f"2026-01-01T00:00:{n:02d}+00:00")
    expected = list(reversed(ids))

    first, cursor = store.list(limit=3)
    assert [meta.session_id for meta in first] == expected[:3]
    assert cursor is not None
    store.create("s99", "/a")  # newest: must not shift the pages already handed out
    second, cursor = backend.another().list(limit=3, cursor=cursor)
    assert [meta.session_id for meta in second] == expected[3:6]
    third, cursor = store.list(limit=3, cursor=cursor)
    assert [meta.session_id for meta in third] == expected[6:]
    assert cursor is None

    only_b, cursor = store.list(cwd="/b")
    assert [meta.session_id for meta in only_b] == ["s05", "s03", "s01"]
    assert cursor is None
    assert store.list(cwd="/nowhere") == ([], None)
    assert first[0].to_wire() == {
        "sessionId": "s06",
        "cwd": "/a",
        "updatedAt": "2026-01-01T00:00:06.000000Z",
        "title": "t6",
    }


def test_ties_on_updated_at_are_broken_by_id_and_bad_cursors_are_refused(
    backend: Backend,
) -> None:
    for session_id in ("a1", "a3", "a2"):
        backend.store.create(session_id, "/w")
        backend.store.update_meta(session_id, updated_at="2026-02-02T00:00:00Z")
    page, cursor = backend.store.list(limit=2)
    assert [meta.session_id for meta in page] == ["a3", "a2"]
    rest, _ = backend.store.list(limit=2, cursor=cursor)
    assert [meta.session_id for meta in rest] == ["a1"]
    for bad in ("", "not-a-cursor", (cursor or "") + "x", "A" * 600):
        with pytest.raises(InvalidCursorError):
            backend.store.list(cursor=bad)
    with pytest.raises(ValueError):
        backend.store.list(limit=0)


def test_listing_by_owner_pages_in_the_store_and_scopes_its_cursors(backend: Backend) -> None:
    """One principal's pages come from the store's own filter: correct pages however many
    sessions others own in between, a cursor for one owner only, hostile cursors refused."""
    store = backend.store
    owners = ["alice", "bob", None, "bob", "bob"]  # alice's sessions are far apart
    mine: list[str] = []
    for n in range(25):
        session_id, owner = f"o{n:02d}", owners[n % len(owners)]
        store.create(session_id, "/w" if n % 2 else "/v", owner=owner)
        store.update_meta(session_id, updated_at=f"2026-03-03T00:00:{n:02d}Z")
        if owner == "alice":
            mine.append(session_id)
    newest_first = list(reversed(mine))  # o20, o15, o10, o05, o00

    first, cursor = store.list(owner="alice", limit=2)
    assert [meta.session_id for meta in first] == newest_first[:2]
    assert cursor is not None
    store.create("o99", "/v", owner="alice")  # newer: later pages do not shift
    second, cursor = backend.another().list(owner="alice", limit=2, cursor=cursor)
    assert [meta.session_id for meta in second] == newest_first[2:4]
    third, last = store.list(owner="alice", limit=2, cursor=cursor)
    assert [meta.session_id for meta in third] == newest_first[4:]
    assert last is None

    ownerless, _ = store.list(owner=None)
    assert [meta.session_id for meta in ownerless] == ["o22", "o17", "o12", "o07", "o02"]
    assert {meta.owner for meta in ownerless} == {None}
    assert store.list(owner="nobody") == ([], None)
    only_v, _ = store.list(owner="alice", cwd="/v")
    assert [meta.session_id for meta in only_v] == ["o99", "o20", "o10", "o00"]
    assert len(store.list(limit=100)[0]) == 26  # no owner given: everybody's sessions

    # The cursor belongs to alice's listing: bob, the ownerless listing and the
    # unfiltered one refuse it, as they refuse anything not made by the store.
    _, alices = store.list(owner="alice", limit=1)
    assert alices is not None
    for other in ({"owner": "bob"}, {"owner": None}, {}):
        with pytest.raises(InvalidCursorError):
            store.list(cursor=alices, **other)  # type: ignore[arg-type]
    _, unfiltered = store.list(limit=1)
    for hostile in (unfiltered, alices[:-2], alices + "A", "x" * 600, "", "é"):
        with pytest.raises(InvalidCursorError):
            store.list(owner="alice", cursor=hostile)


def test_update_meta_sets_clears_and_keeps_fields(backend: Backend) -> None:
    session_id = new_session_id()
    backend.store.create(session_id, "/w", additional_directories=["/d1"], title="old")
    changed = backend.store.update_meta(session_id, title="new", updated_at="2030-01-01T00:00:00Z")
    assert (changed.title, changed.updated_at) == ("new", "2030-01-01T00:00:00.000000Z")
    assert changed.additional_directories == ("/d1",)
    cleared = backend.store.update_meta(session_id, title=None, additional_directories=[])
    assert (cleared.title, cleared.additional_directories) == (None, ())
    assert backend.another().get_meta(session_id) == cleared
    with pytest.raises(SessionNotFoundError):
        backend.store.update_meta(new_session_id(), title="x")


def test_fork_copies_the_events_and_leaves_the_source_alone(backend: Backend) -> None:
    source = new_session_id()
    backend.store.create(source, "/w", additional_directories=["/d"], title="parent")
    backend.store.append_many(source, EVENTS)
    fork = new_session_id()
    meta = backend.store.fork(source, fork, cwd="/other")
    assert (meta.parent_id, meta.title, meta.cwd) == (source, "parent", "/other")
    assert meta.additional_directories == ("/d",)
    assert backend.store.load_events(fork) == EVENTS

    backend.store.append(fork, {"only": "fork"})
    backend.store.append(source, {"only": "source"})
    assert backend.another().load_events(fork) == [*EVENTS, {"only": "fork"}]
    assert backend.another().load_events(source) == [*EVENTS, {"only": "source"}]
    with pytest.raises(SessionNotFoundError):
        backend.store.fork(new_session_id(), new_session_id())
    with pytest.raises(SessionExistsError):
        backend.store.fork(source, fork)


def test_delete_removes_everything_and_is_refused_while_another_store_holds_it(
    backend: Backend,
) -> None:
    held, free = new_session_id(), new_session_id()
    for session_id in (held, free):
        backend.store.create(session_id, "/w")
        backend.store.append(session_id, {"n": 1})
    other = backend.another()
    with other.lock(held):
        with pytest.raises(SessionLockedError):
            backend.store.delete(held)
        assert backend.store.load_events(held) == [{"n": 1}]
    backend.store.delete(held)
    lock = backend.store.lock(free)
    backend.store.delete(free)  # a session held by this store is deleted with its lock
    lock.release()
    for session_id in (held, free):
        assert backend.store.get_meta(session_id) is None
        assert not backend.another().exists(session_id)
        with pytest.raises(SessionNotFoundError):
            backend.store.load_events(session_id)
        with pytest.raises(SessionNotFoundError):
            backend.store.append(session_id, {"n": 2})
        backend.store.delete(session_id)  # twice is fine
    assert backend.store.list() == ([], None)


def test_one_writer_per_session(backend: Backend) -> None:
    session_id = new_session_id()
    backend.store.create(session_id, "/w")
    first, second = backend.store, backend.another()
    lock = first.lock(session_id)
    assert lock.session_id == session_id
    with pytest.raises(SessionLockedError):
        second.lock(session_id)
    with pytest.raises(SessionLockedError):
        first.lock(session_id)  # not re-entrant either
    first.append(session_id, {"by": "holder"})
    lock.release()
    lock.release()  # harmless
    with second.lock(session_id):
        second.append(session_id, {"by": "next"})
    assert first.load_events(session_id) == [{"by": "holder"}, {"by": "next"}]
    with pytest.raises(SessionNotFoundError):
        first.lock(new_session_id())


@pytest.mark.parametrize("hostile", HOSTILE_IDS)
def test_hostile_ids_are_unknown_sessions_and_touch_nothing(backend: Backend, hostile: str) -> None:
    kept = new_session_id()
    backend.store.create(kept, "/w")
    store = backend.store
    assert store.get_meta(hostile) is None
    assert not store.exists(hostile)
    for call in (
        lambda: store.load_events(hostile),
        lambda: store.append(hostile, {"n": 1}),
        lambda: store.lock(hostile),
        lambda: store.update_meta(hostile, title="x"),
        lambda: store.fork(hostile, new_session_id()),
    ):
        with pytest.raises(SessionNotFoundError):
            call()
    store.delete(hostile)  # ignored
    with pytest.raises(InvalidSessionIdError):
        store.create(hostile, "/w")
    with pytest.raises(InvalidSessionIdError):
        store.fork(kept, hostile)
    assert [meta.session_id for meta in store.list()[0]] == [kept]
    assert store.get_meta(kept) is not None


def test_a_read_only_store_refuses_writes_and_keeps_what_was_stored(backend: Backend) -> None:
    session_id = new_session_id()
    backend.store.create(session_id, "/w", title="kept")
    backend.store.append_many(session_id, [{"n": 1}, {"n": 2}])
    with backend.read_only() as refusing:
        for write in (
            lambda: refusing.append(session_id, {"n": 3}),
            lambda: refusing.append_many(session_id, [{"n": 3}, {"n": 4}]),
            lambda: refusing.create(new_session_id(), "/w"),
            lambda: refusing.update_meta(session_id, title="lost"),
        ):
            with pytest.raises(StoreWriteError) as caught:
                write()
            assert caught.value.errno == errno.EROFS
    assert backend.store.load_events(session_id) == [{"n": 1}, {"n": 2}]
    meta = backend.store.get_meta(session_id)
    assert meta is not None and meta.title == "kept"
    backend.store.append(session_id, {"n": 5})  # the caller reports the error and carries on
    assert backend.another().load_events(session_id) == [{"n": 1}, {"n": 2}, {"n": 5}]


def test_a_write_torn_by_a_crash_is_left_out(backend: Backend) -> None:
    if backend.kind != "jsonl":
        pytest.skip("a PostgreSQL append commits whole or not at all: no torn line to leave out")
    session_id = new_session_id()
    backend.store.create(session_id, "/w")
    backend.store.append(session_id, {"n": 1})
    log = backend.store.sessions_dir / session_id / "events.jsonl"  # type: ignore[attr-defined]
    with log.open("ab") as handle:
        handle.write(b'{"n": 2, "cut sh')  # kill -9 in the middle of a write
    assert backend.another().load_events(session_id) == [{"n": 1}]
    backend.store.append(session_id, {"n": 3})
    assert backend.store.load_events(session_id) == [{"n": 1}, {"n": 3}]
