"""Session persistence for ``iac-code acp``: one append-only event log per session.

The store is generic: it keeps JSON-object *events* in order plus small metadata, and does
not know what the events mean (the agent layer decides, e.g. ``{"type": "user_message"}``).

On disk, under ``home / "sessions"`` (home is ``$IAC_CODE_HOME`` or ``~/.iac-code``)::

    index.jsonl              listing index: metadata records folded by id, tombstones
    index.lock               flock-ed by index writers (appends and compaction)
    <session id>/meta.json   id, cwd, title, createdAt, updatedAt, parentId,
                             additionalDirectories, schemaVersion
    <session id>/events.jsonl  one JSON object per line, append-only
    session.locks            one byte-range lock per active session (no descriptor each)
    <session id>/lock        fallback lock where session.locks cannot be written

Directories are 0700 and files 0600 whatever the umask. Guarantees:

* an append is one ``write`` of whole lines; ``kill -9`` loses at most the event being
  written, and the torn line it may leave is ignored and cut off by the next load;
* a failed write (disk full, read-only) raises StoreWriteError and leaves what was already
  stored intact;
* two processes can share the directory: listing sees everyone's sessions, and
  ``SessionStore.lock`` keeps a session to one writer at a time;
* session ids are checked against the URL-safe alphabet before they become path names;
  anything else is "not found" and never touches the file system.
"""

from iac_code.settings import default_home

from .errors import (
    InvalidCursorError,
    InvalidSessionIdError,
    SessionExistsError,
    SessionLockedError,
    SessionNotFoundError,
    SessionTakenOverError,
    StoreError,
    StoreUnreachableError,
    StoreWriteError,
)
from .ids import MAX_SESSION_ID_LENGTH, is_valid_session_id, new_session_id
from .locking import SessionLock
from .meta import SessionMeta
from .session_store import DEFAULT_PAGE_SIZE, UNSET, SessionStore

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_SESSION_ID_LENGTH",
    "UNSET",
    "InvalidCursorError",
    "InvalidSessionIdError",
    "SessionExistsError",
    "SessionLock",
    "SessionLockedError",
    "SessionMeta",
    "SessionNotFoundError",
    "SessionStore",
    "SessionTakenOverError",
    "StoreError",
    "StoreUnreachableError",
    "StoreWriteError",
    "default_home",
    "is_valid_session_id",
    "new_session_id",
]
