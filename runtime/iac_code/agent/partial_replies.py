"""Write-ahead for streamed model text: what the client saw survives a kill -9 (issue 37).

A model reply is stored as one ``assistant_message`` when it ends. Before each streamed delta
is relayed to the client, the turn appends a ``partial_reply`` event carrying that delta
(``{messageId, kind: "text"|"thinking", text}``); deltas relayed in one written batch are
joined into one event. Each event holds only its own text, not the reply so far, so a long
reply costs its length once on disk rather than its square.

The views (:mod:`iac_code.agent.history`) read them with one rule: a reply whose
``assistant_message`` exists (ended, cancelled, failed) ignores its partials; a reply that has
only partials (the process died mid-stream) is rebuilt from them, once, at the place its
first partial sits. Logs written before these events existed simply have none.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

PARTIAL_REPLY = "partial_reply"
#: The two streamed kinds and the update each replays as.
REPLAY_KIND = {"text": "agent_message_chunk", "thinking": "agent_thought_chunk"}


def partial_event(message_id: str, kind: str, text: str) -> dict[str, Any]:
    """The event appended before one streamed delta is relayed."""
    return {"type": PARTIAL_REPLY, "messageId": message_id, "kind": kind, "text": text}


#: A buffered partial stops growing past this many characters (each join copies its text).
MAX_JOINED_CHARS = 64 * 1024


def extend_partial(unstored: list[dict[str, Any]], event: dict[str, Any]) -> bool:
    """Join ``event`` to the last not-yet-stored partial when it continues the same reply
    and kind; True when joined. The store then gets one line per written batch and run
    instead of one per delta; memory holds the same joined event, so both keep one order."""
    last = unstored[-1] if unstored else None
    if (
        last is None
        or last.get("type") != PARTIAL_REPLY
        or last.get("messageId") != event.get("messageId")
        or last.get("kind") != event.get("kind")
        or len(last["text"]) >= MAX_JOINED_CHARS
    ):
        return False
    last["text"] += event["text"]
    return True


def is_partial(event: dict[str, Any]) -> bool:
    """Whether ``event`` is a well-formed partial (string id and text)."""
    return (
        event.get("type") == PARTIAL_REPLY
        and isinstance(event.get("messageId"), str)
        and isinstance(event.get("text"), str)
    )


def unfinished_replies(events: Iterable[dict[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """Replies that have partials but no ``assistant_message``, by message id.

    Each value is the reply's streamed text as runs of one kind, in streamed order
    (consecutive deltas of the same kind joined), e.g. ``[("thinking", …), ("text", …)]``.
    """
    finished: set[str] = set()
    pieces: dict[str, list[tuple[str, list[str]]]] = {}
    for event in events:
        kind = event.get("type")
        message_id = event.get("messageId")
        if kind == "assistant_message":
            finished.add(str(message_id))
        elif kind == PARTIAL_REPLY:
            delta_kind, text = event.get("kind"), event.get("text")
            if not is_partial(event) or delta_kind not in REPLAY_KIND or not text:
                continue  # a hand-edited or foreign line: nothing to rebuild from
            reply = pieces.setdefault(str(message_id), [])
            if reply and reply[-1][0] == delta_kind:
                reply[-1][1].append(text)  # joined once below: no quadratic concatenation
            else:
                reply.append((delta_kind, [text]))
    return {
        message_id: [(kind, "".join(texts)) for kind, texts in reply]
        for message_id, reply in pieces.items()
        if message_id not in finished
    }
