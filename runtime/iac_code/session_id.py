"""Fresh session ids (standard library only: the start-up fast path makes them too)."""

from __future__ import annotations

import base64
import os


def new_session_id() -> str:
    """Return a fresh opaque URL-safe id carrying 144 bits of randomness (24 characters)."""
    return base64.urlsafe_b64encode(os.urandom(18)).decode("ascii")
