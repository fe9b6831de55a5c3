"""One prompt turn as the client saw it, for the terminal report.

A verdict proves conformance but shows nothing of the agent at work. This picks, from the
frames the run already recorded, the turn that shows the most (a permission question, a tool
call, a streamed reply: any agent's turn, nothing is replayed) and writes it as a dozen
short lines: who sent what, in order, with consecutive message chunks joined into one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..harness.recorder import Frame
from ..scenarios.check_context import AgentRun

#: Most lines a transcript shows (the turn's end is always among them).
MAX_LINES = 14
#: Updates that keep the client's state in step but show nothing of the work.
BOOKKEEPING = frozenset(
    {
        "available_commands_update",
        "session_info_update",
        "usage_update",
        "current_mode_update",
        "config_option_update",
    }
)
#: An absolute path of three or more parts (shown by its last two: temporary folders are long).
_LONG_PATH = re.compile(r"/(?:[^/\s\"']+/){2,}([^/\s\"']+/[^/\s\"']+)")
#: Width of the "who" and "what" columns.
_WHO = 7
_WHAT = 19


@dataclass
class _Turn:
    run: AgentRun
    frames: list[Frame]  # from the prompt request to its answer, this session only
    score: int


def render(runs: list[AgentRun], width: int) -> list[str]:
    """The transcript's lines, or [] when no run recorded a prompt turn that was answered."""
    best: _Turn | None = None
    for run in runs:
        for turn in _turns(run):
            if best is None or turn.score > best.score:
                best = turn
    if best is None:
        return []
    first, last = best.frames[0].seq, best.frames[-1].seq
    lines = [f"One prompt turn as the client saw it ({best.run.id}, frames {first}-{last}):"]
    body = list(_lines(best.frames))
    if len(body) > MAX_LINES:
        skipped = len(body) - MAX_LINES + 1
        body = [*body[: MAX_LINES - 2], f"  … {skipped} more lines", body[-1]]
    room = max(width, 60)
    return lines + [line if len(line) <= room else line[: room - 1] + "…" for line in body]


def _turns(run: AgentRun) -> Iterator[_Turn]:
    frames = [frame for frame in run.frames if frame.is_json and isinstance(frame.message, dict)]
    for index, frame in enumerate(frames):
        message = frame.message
        if frame.direction != "c2a" or message.get("method") != "session/prompt":
            continue
        params = _object(message.get("params"))
        session_id, request_id = params.get("sessionId"), message.get("id")
        turn = [frame]
        for later in frames[index + 1 :]:
            if _belongs(later, session_id):
                turn.append(later)
            if later.direction == "a2c" and _answers(later.message, request_id):
                yield _Turn(run, turn, _score(turn))
                break


def _belongs(frame: Frame, session_id: object) -> bool:
    """A frame of this session's turn: its updates and requests, and the client's answers."""
    message = frame.message
    params = message.get("params")
    if isinstance(params, dict) and "sessionId" in params:
        return bool(params["sessionId"] == session_id)
    return "method" not in message  # a response: the client's answer or the prompt's own


def _answers(message: dict[str, Any], request_id: object) -> bool:
    return "method" not in message and message.get("id") == request_id


def _score(turn: list[Frame]) -> int:
    """How much a turn shows: a permission question most, then a tool call, then text."""
    kinds = {_update_kind(frame.message) for frame in turn}
    methods = {frame.message.get("method") for frame in turn}
    answered = "result" in turn[-1].message
    return (
        8 * ("session/request_permission" in methods)
        + 4 * ("tool_call" in kinds)
        + 2 * ("agent_message_chunk" in kinds)
        + 1 * answered
    )


def _update_kind(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return update.get("sessionUpdate") if isinstance(update, dict) else None


def _lines(turn: list[Frame]) -> Iterator[str]:
    prompt_id = turn[0].message.get("id")
    chunk_kind: str | None = None
    chunk_text = ""
    for frame in turn:
        message = frame.message
        kind = _update_kind(message)
        if kind in BOOKKEEPING:
            continue
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            text = _content_text(message["params"]["update"].get("content"))
            if kind == chunk_kind:
                chunk_text += text
                continue
            if chunk_kind is not None:
                yield _line("agent", chunk_kind.removesuffix("_chunk"), _quoted(chunk_text))
            chunk_kind, chunk_text = kind, text
            continue
        if chunk_kind is not None:
            yield _line("agent", chunk_kind.removesuffix("_chunk"), _quoted(chunk_text))
            chunk_kind = None
        who = "client" if frame.direction == "c2a" else "agent"
        if "method" not in message:
            yield _line(who, *_answer(message, is_prompt=message.get("id") == prompt_id))
        elif kind is not None:
            yield _line(who, kind, _update_summary(message["params"]["update"]))
        else:
            method = str(message["method"])
            yield _line(who, method.removeprefix("session/"), _request_summary(message))
    if chunk_kind is not None:
        yield _line("agent", chunk_kind.removesuffix("_chunk"), _quoted(chunk_text))


def _line(who: str, what: str, detail: str) -> str:
    detail = _LONG_PATH.sub(r"…/\1", detail)
    return f"  {who:<{_WHO}}{what:<{_WHAT}} {detail}".rstrip()


def _answer(message: dict[str, Any], *, is_prompt: bool) -> tuple[str, str]:
    what = "prompt answer" if is_prompt else "answer"
    error = message.get("error")
    if isinstance(error, dict):
        return what, f"error {error.get('code')}: {error.get('message')}"
    result = message.get("result")
    if isinstance(result, dict):
        outcome = result.get("outcome")
        if isinstance(outcome, dict):  # a permission answer
            return what, str(outcome.get("optionId") or outcome.get("outcome"))
        if "stopReason" in result:
            return what, f"stopReason {result['stopReason']}"
    return what, "ok" if not result else _compact(result)


def _update_summary(update: dict[str, Any]) -> str:
    kind = update.get("sessionUpdate")
    if kind in ("tool_call", "tool_call_update"):
        parts = [
            str(update[key]) for key in ("title", "kind", "status") if update.get(key) is not None
        ]
        text = _content_text(update.get("content"))
        if text:
            parts.append(_quoted(text))
        return " ".join(parts)
    if kind == "plan":
        entries = update.get("entries")
        return f"{len(entries) if isinstance(entries, list) else 0} entries"
    return ""


def _request_summary(message: dict[str, Any]) -> str:
    params = _object(message.get("params"))
    method = message.get("method")
    if method == "session/prompt":
        prompt = params.get("prompt")
        return _quoted(_content_text(prompt))
    if method == "session/request_permission":
        tool = _object(params.get("toolCall"))
        options = params.get("options")
        options = options if isinstance(options, list) else []
        names = [str(o.get("name") or o.get("optionId")) for o in options if isinstance(o, dict)]
        return f"{tool.get('title') or tool.get('toolCallId') or ''}? {' | '.join(names)}"
    for key in ("path", "command"):
        if isinstance(params.get(key), str):
            return str(params[key]).rsplit("/", 1)[-1] if key == "path" else str(params[key])
    return ""


def _content_text(content: object) -> str:
    """The text of a content block, or of a list of blocks (nested tool-call content too)."""
    if isinstance(content, list):
        return " ".join(filter(None, (_content_text(item) for item in content)))
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return str(content["text"])
        return _content_text(content.get("content"))
    return ""


def _quoted(text: str) -> str:
    return '"' + " ".join(text.split()) + '"'


def _compact(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
