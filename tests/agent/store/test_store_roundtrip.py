"""Creating sessions, appending and loading events, metadata and ids."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from iac_code.store import (
    InvalidSessionIdError,
    SessionExistsError,
    SessionMeta,
    SessionNotFoundError,
    SessionStore,
    default_home,
    is_valid_session_id,
    new_session_id,
)


def test_events_round_trip_in_order_and_survive_a_new_store(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/work/project")
    events: list[dict[str, Any]] = [
        {"type": "user_message", "content": [{"type": "text", "text": "héllo\nworld ☃"}]},
        {"type": "assistant_message", "content": [{"type": "text", "text": "\u2028 ok"}]},
        {"type": "tool_result", "tool_use_id": "t1", "content": "done", "is_error": False},
    ]
    store.append(session_id, events[0])
    store.append_many(session_id, events[1:])
    store.append_many(session_id, [])  # nothing to write is not an error

    assert store.load_events(session_id) == events
    assert SessionStore(tmp_path).load_events(session_id) == events
    raw_lines = (tmp_path / "sessions" / session_id / "events.jsonl").read_bytes().splitlines()
    assert [json.loads(line) for line in raw_lines] == events


def test_a_lone_surrogate_is_stored_escaped_and_reads_back(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    store.append(session_id, {"text": "broken \ud800 pair"})
    assert store.load_events(session_id) == [{"text": "broken \ud800 pair"}]


def test_append_refuses_what_is_not_a_json_object(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    store.create(session_id, "/w")
    with pytest.raises(TypeError):
        store.append(session_id, ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        store.append(session_id, {"value": float("nan")})
    with pytest.raises(TypeError):
        store.append(session_id, {"value": object()})
    assert store.load_events(session_id) == []


def test_create_writes_metadata_and_refuses_an_existing_id(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    meta = store.create(
        session_id, "/work/project", additional_directories=["/work/lib"], title="Fix the VPC"
    )
    assert meta.session_id == session_id
    assert meta.created_at == meta.updated_at
    assert meta.updated_at.endswith("Z")
    assert datetime.fromisoformat(meta.updated_at).tzinfo is not None
    assert store.exists(session_id)
    assert SessionStore(tmp_path).get_meta(session_id) == meta

    on_disk = json.loads((tmp_path / "sessions" / session_id / "meta.json").read_text())
    assert on_disk == {
        "schemaVersion": 1,
        "id": session_id,
        "cwd": "/work/project",
        "title": "Fix the VPC",
        "createdAt": meta.created_at,
        "updatedAt": meta.updated_at,
        "parentId": None,
        "additionalDirectories": ["/work/lib"],
    }
    with pytest.raises(SessionExistsError):
        store.create(session_id, "/elsewhere")
    assert store.get_meta(session_id) == meta


def test_to_wire_gives_session_info_fields_only_when_set() -> None:
    bare = SessionMeta("abc", "/w", "2025-01-01T00:00:00.000000Z", "2025-01-02T00:00:00.000000Z")
    assert bare.to_wire() == {
        "sessionId": "abc",
        "cwd": "/w",
        "updatedAt": "2025-01-02T00:00:00.000000Z",
    }
    full = SessionMeta(
        "abc",
        "/w",
        "2025-01-01T00:00:00.000000Z",
        "2025-01-02T00:00:00.000000Z",
        title="T",
        additional_directories=("/x",),
    )
    assert full.to_wire() == {
        "sessionId": "abc",
        "cwd": "/w",
        "updatedAt": "2025-01-02T00:00:00.000000Z",
        "title": "T",
        "additionalDirectories": ["/x"],
    }


def test_update_meta_changes_only_what_is_given(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id = new_session_id()
    created = store.create(session_id, "/w", title="first")

    renamed = store.update_meta(
        session_id, title="second", updated_at=datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC)
    )
    assert renamed.title == "second"
    assert renamed.updated_at == "2030-05-06T07:08:09.000000Z"
    assert renamed.created_at == created.created_at

    from_string = store.update_meta(session_id, updated_at="2031-01-01T00:00:00+02:00")
    assert from_string.title == "second"
    assert from_string.updated_at == "2030-12-31T22:00:00.000000Z"

    cleared = store.update_meta(session_id, title=None, additional_directories=["/extra"])
    assert cleared.title is None
    assert cleared.additional_directories == ("/extra",)
    assert cleared.updated_at != from_string.updated_at  # defaulted to "now"

    fresh = SessionStore(tmp_path)
    assert fresh.get_meta(session_id) == cleared
    assert fresh.list()[0] == [cleared]
    with pytest.raises(SessionNotFoundError):
        store.update_meta(new_session_id(), title="x")


def test_session_ids_are_random_url_safe_and_long_enough() -> None:
    ids = {new_session_id() for _ in range(1000)}
    assert len(ids) == 1000
    for session_id in ids:
        assert is_valid_session_id(session_id)
        assert len(session_id) * 6 >= 122


@pytest.mark.parametrize(
    "bad_id",
    ["../escape", "a/b", "/etc", "..", ".", "", "x" * 129, "a.b", "a b", "ünï", "a\x00b", 7],
)
def test_unsafe_ids_are_unknown_and_never_touch_the_disk(tmp_path: Path, bad_id: str) -> None:
    store = SessionStore(tmp_path)
    store.create(new_session_id(), "/w")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))

    assert not is_valid_session_id(bad_id)
    assert not store.exists(bad_id)
    assert store.get_meta(bad_id) is None
    store.delete(bad_id)
    for call in (
        lambda: store.load_events(bad_id),
        lambda: store.append(bad_id, {"type": "x"}),
        lambda: store.update_meta(bad_id, title="x"),
        lambda: store.lock(bad_id),
        lambda: store.fork(bad_id, new_session_id()),
    ):
        with pytest.raises(SessionNotFoundError):
            call()
    with pytest.raises(InvalidSessionIdError):
        store.create(bad_id, "/w")
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_path_like_ids_cannot_reach_a_session_elsewhere(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    outside = SessionStore(tmp_path / "other")
    victim = new_session_id()
    outside.create(victim, "/w")
    sneaky = f"../../other/sessions/{victim}"
    assert store.get_meta(sneaky) is None
    with pytest.raises(SessionNotFoundError):
        store.load_events(sneaky)


def test_unknown_sessions_are_reported_as_not_found(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    unknown = new_session_id()
    assert not store.exists(unknown)
    assert store.get_meta(unknown) is None
    with pytest.raises(SessionNotFoundError):
        store.load_events(unknown)
    with pytest.raises(SessionNotFoundError):
        store.append(unknown, {"type": "x"})
    with pytest.raises(SessionNotFoundError):
        store.lock(unknown)


def test_default_home_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("IAC_CODE_HOME", str(tmp_path / "state"))
    assert default_home() == tmp_path / "state"
    monkeypatch.delenv("IAC_CODE_HOME")
    assert default_home() == Path.home() / ".iac-code"
