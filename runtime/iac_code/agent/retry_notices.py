"""Telling the client that a model request failed and is being retried, or that the model
has been silent for a while (:func:`quiet_update`, the same two shapes).

A retry (429, 5xx/529, a timeout) can add seconds to a turn; the user should see why, not
only the log. Each retry becomes one ``session/update`` of the session whose turn waits:

* ``notice`` (severity ``warning``) when the client advertised
  ``clientCapabilities.session.notices`` (ACP: notices only go to clients that asked);
* otherwise an ``agent_thought_chunk`` with its own ``messageId``: visible in every client,
  and never mixed into the answer text the way an ``agent_message_chunk`` would be.

Either way it is a live event only: nothing is persisted, so ``session/load`` does not replay
it and the model never sees it. ``_meta.iac_code.retry`` carries the numbers for clients
that want them. Which session a retry belongs to comes from a context variable set around
each prompt turn, so the model-call plumbing needs no session argument.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from iac_code.llm.retry import RetryNotice

_turn_session: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "iac_code_turn_session", default=None
)


@contextmanager
def turn_of(session_id: str) -> Iterator[None]:
    """Model requests made inside the block report their retries to ``session_id``."""
    token = _turn_session.set(session_id)
    try:
        yield
    finally:
        _turn_session.reset(token)


def current_turn_session() -> str | None:
    return _turn_session.get()


def client_accepts_notices(client_capabilities: Mapping[str, Any]) -> bool:
    session = client_capabilities.get("session")
    return isinstance(session, Mapping) and session.get("notices") is not None


def retry_text(notice: RetryNotice) -> str:
    return (
        f"The model request failed ({notice.error}); retrying in {notice.delay:.1f} s"
        f" (attempt {notice.attempt + 1} of {notice.max_attempts})."
    )


def retry_update(notice: RetryNotice, *, notices: bool) -> dict[str, Any]:
    """The ``update`` object announcing ``notice``, in the shape the client can take."""
    meta = {
        "retry": {
            "attempt": notice.attempt,
            "maxAttempts": notice.max_attempts,
            "delaySeconds": round(notice.delay, 3),
            "statusCode": notice.error.status_code,
        }
    }
    title = "The model request is being retried."
    return _warning(title, retry_text(notice), meta, notices=notices, kind="retry")


def quiet_text(seconds: float, deadline: float) -> str:
    return (
        f"The model has sent nothing for {seconds:.0f} s; still waiting (the prompt ends"
        f" with an error after {deadline:g} s of silence)."
    )


def quiet_update(seconds: float, deadline: float, *, notices: bool) -> dict[str, Any]:
    """The ``update`` telling the client that the model is silent, shaped as for retries."""
    meta = {"quiet": {"seconds": round(seconds, 3), "deadlineSeconds": deadline}}
    title = "The model has not answered yet."
    return _warning(title, quiet_text(seconds, deadline), meta, notices=notices, kind="quiet")


def _warning(
    title: str, text: str, meta: dict[str, Any], *, notices: bool, kind: str
) -> dict[str, Any]:
    """A warning ``notice`` for clients that take notices, else a thought chunk of its own
    (``messageId`` prefixed with ``kind``); ``meta`` goes under ``_meta.iac_code``."""
    if notices:
        return {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": title,
            "description": text,
            "_meta": {"iac_code": meta},
        }
    return {
        "sessionUpdate": "agent_thought_chunk",
        "content": {"type": "text", "text": text + "\n"},
        "messageId": f"{kind}-{uuid.uuid4().hex}",
        "_meta": {"iac_code": meta},
    }
