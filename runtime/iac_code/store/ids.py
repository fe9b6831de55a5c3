"""Session ids: generation, and validation before an id is used as a directory name."""

from __future__ import annotations

import re
from typing import TypeGuard

from iac_code.session_id import new_session_id

#: Ids come off the wire and become directory names, so only the URL-safe base64 alphabet
#: is accepted (no ".", no "/", nothing that could escape ``sessions/``).
MAX_SESSION_ID_LENGTH = 128
_SESSION_ID_PATTERN = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_SESSION_ID_LENGTH}}}")


def is_valid_session_id(value: object) -> TypeGuard[str]:
    """True when ``value`` is a string that is safe to use as a session directory name."""
    return isinstance(value, str) and _SESSION_ID_PATTERN.fullmatch(value) is not None


__all__ = ["MAX_SESSION_ID_LENGTH", "is_valid_session_id", "new_session_id"]
