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
