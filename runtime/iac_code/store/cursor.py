"""Opaque ``session/list`` cursors.

A cursor names the last position handed out, ``(updatedAt, sessionId)``, not a page number,
so sessions created between two page requests do not shift later pages. The payload carries
a short keyed checksum: it catches truncated, mangled or hand-edited cursors (it is an
integrity check, not a security boundary — listing is not secret from the caller).

A listing filtered by owner (one principal's sessions on a shared server) mixes the owner
into the checksum, so a cursor handed to one principal is refused as invalid when another
presents it, and an unfiltered listing's cursors (no scope) stay what they always were.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json

from .errors import InvalidCursorError
from .ids import is_valid_session_id

_VERSION = 1
_KEY = b"iac-code session/list cursor v1"
_TAG_SIZE = 8
_MAX_CURSOR_LENGTH = 512
_MAX_TIMESTAMP_LENGTH = 64


def _tag(payload: bytes, scope: bytes) -> bytes:
    digest = hashlib.blake2b(digest_size=_TAG_SIZE, key=_KEY)
    if scope:
        # Length first: no (scope, payload) pair can collide with another split.
        digest.update(len(scope).to_bytes(4, "big") + scope)
    digest.update(payload)
    return digest.digest()


def owner_scope(owner: str | None) -> bytes:
    """The checksum scope of a listing of ``owner``'s sessions (None: the ownerless ones)."""
    return b"owner:-" if owner is None else b"owner:=" + owner.encode("utf-8", "surrogatepass")


def encode_cursor(updated_at: str, session_id: str, *, scope: bytes = b"") -> str:
    """A cursor resuming the listing just after ``(updated_at, session_id)``; ``scope``
    (see :func:`owner_scope`) binds it to one filtered listing."""
    payload = json.dumps([_VERSION, updated_at, session_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(_tag(payload, scope) + payload).rstrip(b"=").decode("ascii")


def decode_cursor(cursor: object, *, scope: bytes = b"") -> tuple[str, str]:
    """The ``(updated_at, session_id)`` position of a cursor made by :func:`encode_cursor`
    with the same ``scope``."""
    if not isinstance(cursor, str) or not 0 < len(cursor) <= _MAX_CURSOR_LENGTH:
        raise InvalidCursorError("cursor is not a non-empty string of reasonable length")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        raw = base64.b64decode(padded, altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidCursorError("cursor is not valid base64") from None
    tag, payload = raw[:_TAG_SIZE], raw[_TAG_SIZE:]
    if len(tag) != _TAG_SIZE or not hmac.compare_digest(tag, _tag(payload, scope)):
        raise InvalidCursorError("cursor checksum does not match")
    try:
        version, updated_at, session_id = json.loads(payload)
    except (ValueError, TypeError):
        raise InvalidCursorError("cursor payload is malformed") from None
    if (
        version != _VERSION
        or not isinstance(updated_at, str)
        or not 0 < len(updated_at) <= _MAX_TIMESTAMP_LENGTH
        or not is_valid_session_id(session_id)
    ):
        raise InvalidCursorError("cursor payload is malformed")
    return updated_at, session_id
