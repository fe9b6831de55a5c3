"""Session metadata (``meta.json``) and the timestamp format used for ordering.

Timestamps are always stored as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (UTC, fixed width), so that
comparing the strings compares the instants; listing sorts on them without parsing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

SCHEMA_VERSION = 1


def utc_now() -> str:
    """The current time in the store's timestamp format."""
    return format_timestamp(datetime.now(UTC))


def format_timestamp(moment: datetime) -> str:
    """Render ``moment`` in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"


def normalize_timestamp(value: datetime | str) -> str:
    """Accept a datetime or any ISO 8601 string and return the canonical fixed-width form.

    Raises ValueError for strings that are not ISO 8601.
    """
    if isinstance(value, datetime):
        return format_timestamp(value)
    return format_timestamp(datetime.fromisoformat(value))


@dataclass(frozen=True, slots=True)
class SessionMeta:
    """What the store knows about a session besides its events."""

    session_id: str
    cwd: str
    created_at: str
    updated_at: str
    title: str | None = None
    parent_id: str | None = None
    additional_directories: tuple[str, ...] = ()
    #: The principal the session belongs to on a shared server (``--auth``); None when the
    #: server knows one user only (stdio, a single ``--token``).
    owner: str | None = None

    @classmethod
    def new(
        cls,
        session_id: str,
        cwd: str,
        *,
        additional_directories: Sequence[str] = (),
        title: str | None = None,
        parent_id: str | None = None,
        owner: str | None = None,
    ) -> SessionMeta:
        """A session created now (created and updated at the same instant)."""
        now = utc_now()
        return cls(
            session_id, cwd, now, now, title, parent_id, tuple(additional_directories), owner
        )

    def forked(self, new_id: str, cwd: str | None) -> SessionMeta:
        """A fork of this session created now: same title and directories, this as parent."""
        now = utc_now()
        cwd = self.cwd if cwd is None else cwd
        return replace(
            self, session_id=new_id, cwd=cwd, created_at=now, updated_at=now,
            parent_id=self.session_id,
        )  # fmt: skip

    def to_wire(self) -> dict[str, Any]:
        """The ACP ``SessionInfo`` object; absent optional fields are left out, not null."""
        info: dict[str, Any] = {
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "updatedAt": self.updated_at,
        }
        if self.title is not None:
            info["title"] = self.title
        if self.additional_directories:
            info["additionalDirectories"] = list(self.additional_directories)
        return info

    def to_json(self) -> dict[str, Any]:
        """The on-disk form (``meta.json`` and index records)."""
        return {
            "schemaVersion": SCHEMA_VERSION,
            "id": self.session_id,
            "cwd": self.cwd,
            "title": self.title,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "parentId": self.parent_id,
            "additionalDirectories": list(self.additional_directories),
            # Only on a shared server's sessions: single-user files stay as they were.
            **({"owner": self.owner} if self.owner is not None else {}),
        }

    def to_index_record(self) -> dict[str, Any]:
        """The listing-index form: like :meth:`to_json` without empty fields (read often)."""
        record: dict[str, Any] = {
            "id": self.session_id,
            "cwd": self.cwd,
            "updatedAt": self.updated_at,
            "createdAt": self.created_at,
        }
        if self.title is not None:
            record["title"] = self.title
        if self.parent_id is not None:
            record["parentId"] = self.parent_id
        if self.additional_directories:
            record["additionalDirectories"] = list(self.additional_directories)
        if self.owner is not None:
            record["owner"] = self.owner
        return record

    @classmethod
    def from_json(cls, data: Any) -> SessionMeta:
        """Parse the on-disk form; raises ValueError when a required field is missing/wrong."""
        if not isinstance(data, dict):
            raise ValueError("session metadata is not a JSON object")
        session_id = data.get("id")
        cwd = data.get("cwd")
        created_at = data.get("createdAt")
        updated_at = data.get("updatedAt")
        title = data.get("title")
        parent_id = data.get("parentId")
        directories = data.get("additionalDirectories") or []
        owner = data.get("owner")
        if not (
            isinstance(session_id, str)
            and isinstance(cwd, str)
            and isinstance(created_at, str)
            and isinstance(updated_at, str)
        ):
            raise ValueError("session metadata lacks id, cwd, createdAt or updatedAt")
        if title is not None and not isinstance(title, str):
            raise ValueError("session title is not a string")
        if parent_id is not None and not isinstance(parent_id, str):
            raise ValueError("session parentId is not a string")
        if not isinstance(directories, list) or not all(isinstance(d, str) for d in directories):
            raise ValueError("session additionalDirectories is not a list of strings")
        if owner is not None and not isinstance(owner, str):
            raise ValueError("session owner is not a string")
        return cls(
            session_id=session_id,
            cwd=cwd,
            created_at=created_at,
            updated_at=updated_at,
            title=title,
            parent_id=parent_id,
            additional_directories=tuple(directories),
            owner=owner,
        )
