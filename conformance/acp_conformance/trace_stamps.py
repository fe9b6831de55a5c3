"""W3C ``traceparent`` values the checker puts on the prompts it sends (``--traceparent``).

With ``--traceparent`` every ``session/prompt`` the checker sends carries a fresh
``traceparent`` in its ``_meta`` (unless it already has one, as the rule's own probe does),
so that ``ext.traceparent-continued`` can judge continuation on every turn of the run, not
only on one probe. The recorded request frames are the record of what was sent: the judge
reads the trace and parent span ids back from them.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

#: version 00, 32 hex trace id, 16 hex parent span id, flags (01: sampled).
_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")


def new_traceparent() -> str:
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def with_traceparent(params: Any) -> Any:
    """``params`` with a fresh ``_meta.traceparent`` added; unchanged when it is not an object
    or already carries one (a check that sends its own keeps it)."""
    if not isinstance(params, dict):
        return params
    meta = params.get("_meta")
    if meta is not None and not isinstance(meta, dict):
        return params  # a deliberately odd _meta is left as the check wrote it
    if isinstance(meta, dict) and "traceparent" in meta:
        return params
    return {**params, "_meta": {**(meta or {}), "traceparent": new_traceparent()}}


def trace_ids(params: Any) -> tuple[str, str] | None:
    """(trace id, parent span id) of the ``traceparent`` in ``params._meta``, if well formed."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    value = meta.get("traceparent") if isinstance(meta, dict) else None
    match = _TRACEPARENT.match(value) if isinstance(value, str) else None
    return (match.group(1), match.group(2)) if match else None
