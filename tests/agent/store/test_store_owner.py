"""The session owner (a principal of a shared server) is kept by both stores: created with the
session, read back by another store on the same data, listed, and inherited by a fork."""

from __future__ import annotations

import pytest
from iac_code.store import new_session_id

from tests.agent.store.conftest import Backend

pytestmark = pytest.mark.xdist_group("postgres")


def test_owner_is_stored_listed_and_forked(backend: Backend) -> None:
    store = backend.store
    owned, plain = new_session_id(), new_session_id()
    store.create(owned, "/work/alice/project", owner="alice")
    store.create(plain, "/work/project")

    other = backend.another()
    meta = other.get_meta(owned)
    assert meta is not None and meta.owner == "alice"
    plain_meta = other.get_meta(plain)
    assert plain_meta is not None and plain_meta.owner is None
    listed = {m.session_id: m.owner for m in other.list()[0]}
    assert listed == {owned: "alice", plain: None}

    fork_id = new_session_id()
    assert store.fork(owned, fork_id).owner == "alice"
    forked = other.get_meta(fork_id)
    assert forked is not None and forked.owner == "alice"
    # Updating the metadata keeps the owner.
    store.update_meta(owned, title="renamed")
    renamed = other.get_meta(owned)
    assert renamed is not None and renamed.owner == "alice"
    assert "owner" not in plain_meta.to_json()  # single-user files stay as they were


def test_listing_by_owner_pages_in_the_store_and_scopes_its_cursors(backend: Backend) -> None:
    """One principal's pages come from the store's own filter: correct pages however many
    sessions others own in between, a cursor for one owner only, hostile cursors refused."""
    from iac_code.store import InvalidCursorError

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
