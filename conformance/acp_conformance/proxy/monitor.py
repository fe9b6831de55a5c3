"""Judges live editor↔agent traffic one line at a time.

The relay hands every complete line of each direction to :meth:`LiveMonitor.feed` *after*
forwarding it, so nothing here can delay or change what the other side receives. The
monitor keeps only what the rules need (open requests, sessions handed out, finished
turns) plus a bounded transcript for the reports, and returns each finding the moment the
line that proves it arrives. The rules mirror the checker's run-wide checks
(``judges.wire``, ``judges.session_ids``), written incrementally; schemas are those of the
negotiated version.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from acp_schema import SUPPORTED_VERSIONS

from ..harness.agent_client import id_key
from ..harness.limits import PROCESS_BYTES
from ..harness.recorder import Direction, Frame, decode_line
from ..judges.session_ids import SESSION_CREATING_METHODS
from ..judges.wire import envelope_problem
from ..scenarios._expect import TURN_UPDATE_KINDS
from ..v2_drafts import NEWEST
from ..validation import GENERIC_ERROR
from ..versions import DEFAULT_VERSION, VersionedBackend, method_index_for
from .rules import LiveRule, live_rules

#: Frames kept for the reports (at most this many, holding at most this many bytes); later
#: ones are counted, and findings keep their own line. Findings themselves are kept up to
#: `KEPT_FINDINGS` (each is still printed live), updates naming an unknown session up to
#: `KEPT_SUSPECTS`: a flood of bad lines must not grow the judge without end.
KEPT_FRAMES = 20_000
KEPT_BYTES = PROCESS_BYTES
KEPT_FINDINGS = 5_000
KEPT_SUSPECTS = 1_000
LINE_LIMIT = 2000

#: Properties holding free text, which no ACP schema constrains beyond "a string" (checked
#: by tests/checker/proxy/test_proxy_monitor.py). Validating one message costs ~2 ms
#: (the session/update union has many branches), while agents stream thousands of chunks a
#: second; so a message whose *shape* — everything but these texts — was already found
#: valid is known valid without running the validator again.
FREE_TEXT = frozenset({"text", "data", "newText", "oldText", "output"})
SHAPE_CACHE = 50_000


def shape_key(value: Any, name: str | None = None) -> Any:
    """``value`` with each free-text string replaced by whether it is empty."""
    if isinstance(value, str):
        return ("free", bool(value)) if name in FREE_TEXT else value
    if isinstance(value, dict):
        return tuple(sorted((k, shape_key(v, k)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", *(shape_key(v) for v in value))
    return (type(value).__name__, value)


@dataclass
class Finding:
    rule: LiveRule
    seq: int
    direction: Direction
    reason: str
    line: str
    t: float

    def describe(self) -> str:
        return (
            f"{self.rule.tier} {self.rule.id} #{self.seq} {self.direction} "
            f"({self.rule.side}): {self.reason}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule.id,
            "tier": self.rule.tier,
            "side": self.rule.side,
            "seq": self.seq,
            "dir": self.direction,
            "t": round(self.t, 6),
            "reason": self.reason,
            "line": self.line,
            "reference": self.rule.reference,
        }


@dataclass
class _Open:
    method: str
    seq: int
    session: str | None


@dataclass
class _Side:
    """Requests one side sent and the other has not answered yet."""

    open: dict[str, _Open] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)


def _session_of(msg: dict[str, Any]) -> str | None:
    params = msg.get("params")
    session = params.get("sessionId") if isinstance(params, dict) else None
    return session if isinstance(session, str) else None


def _loose_match(value: Any, open_ids: dict[str, _Open]) -> str | None:
    """The open id a mangled response id stands for (``"3"`` for ``3`` and back)."""
    candidates: list[Any] = []
    if isinstance(value, str) and value.lstrip("-").isdigit():
        candidates.append(int(value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        candidates += [str(value), int(value)]
    for candidate in candidates:
        key = id_key(candidate)
        if key in open_ids and key != id_key(value):
            return key
    return None


class LiveMonitor:
    """Incremental judge of one proxied connection."""

    def __init__(self, profile: str = "acp", v2_draft: str = NEWEST) -> None:
        self.rules = live_rules(profile)
        self.profile = profile
        #: ``--v2-draft``: the draft a v2 session's messages are validated as.
        self.v2_draft = v2_draft
        self.started = time.monotonic()
        self.frames: list[Frame] = []
        self.counts: dict[Direction, int] = {"c2a": 0, "a2c": 0}
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        self.version = DEFAULT_VERSION
        self._backends: dict[int, VersionedBackend] = {}
        #: Shapes (see `shape_key`) of messages already found valid.
        self._valid_shapes: set[Any] = set()
        self._sent: dict[Direction, _Side] = {"c2a": _Side(), "a2c": _Side()}
        self._initialize_ids: set[str] = set()
        self._initialized = False
        self._handed_out: set[str] = set()
        self._named: set[str] = set()
        #: Updates naming a session nobody had mentioned yet: session → (seq, line).
        self._suspects: dict[str, list[tuple[int, str, float]]] = {}
        #: Session → seq of the prompt result that ended its last turn.
        self._finished: dict[str, int] = {}
        self._seq = 0
        #: Bytes of the kept frames, findings not kept (see `KEPT_FINDINGS`), suspects kept.
        self._kept_bytes = 0
        self.dropped_findings = 0
        self._suspect_count = 0

    # -- input --------------------------------------------------------------------------

    def feed(
        self, direction: Direction, raw: bytes, *, terminated: bool = True, oversized: int = 0
    ) -> list[Finding]:
        """Judge one line (without its newline); returns the findings it proves.
        ``oversized``: the full length of a line over the line cap, of which ``raw`` is the
        head (such a line is judged as that, and not parsed)."""
        seq = self._seq
        self._seq += 1
        self.counts[direction] += 1
        message, error = decode_line(raw, oversized=oversized, terminated=terminated)
        frame = Frame(
            seq, time.monotonic() - self.started, direction, raw, message, error, terminated
        )
        frame.oversized = oversized
        if len(self.frames) < KEPT_FRAMES and self._kept_bytes + len(raw) <= KEPT_BYTES:
            self.frames.append(frame)
            self._kept_bytes += len(raw)
        found: list[Finding] = []
        agent = direction == "a2c"
        if agent and not terminated and not oversized:
            found.append(self._finding("transport.newline-terminated", frame, "no newline at EOF"))
        if oversized:
            rule = "transport.output-bounded" if agent else "client.wire.json"
            found.append(self._finding(rule, frame, f"not judged: {error}"))
        elif error is not None:
            rule = "client.wire.json"
            if agent:
                utf8 = error.startswith("invalid UTF-8")
                rule = "transport.utf8" if utf8 else "transport.stdout-only-json"
            found.append(self._finding(rule, frame, f"not a JSON-RPC frame ({error})"))
        elif isinstance(message, list) and message and self.version >= 2:
            for item in message:  # a v2 batch: judge each entry as if it came alone
                found += self._message(frame, item)
        else:
            found += self._message(frame, message)
        self._keep(found)
        return found

    def _keep(self, found: list[Finding]) -> None:
        room = KEPT_FINDINGS - len(self.findings)
        self.findings += found[: max(room, 0)]
        self.dropped_findings += max(len(found) - max(room, 0), 0)

    def finish(self) -> list[Finding]:
        """What only the end of the connection proves; notes what was left open."""
        found: list[Finding] = []
        if self.dropped_findings:
            self.notes.append(
                f"{self.dropped_findings} more findings were reported live but not kept for "
                f"the reports (at most {KEPT_FINDINGS} are)"
            )
        for session, updates in self._suspects.items():
            for seq, line, t in updates:
                frame = Frame(seq, t, "a2c", line.encode())
                found.append(
                    self._finding(
                        "prompt.updates-name-known-session",
                        frame,
                        f"session/update names session {session!r}, which was never handed "
                        "out or named by the client",
                    )
                )
        self._suspects.clear()
        for direction, side in self._sent.items():
            for key, opened in side.open.items():
                who = "client" if direction == "c2a" else "agent"
                self.notes.append(
                    f"{who} request {opened.method} (id {key}, #{opened.seq}) was still "
                    "unanswered when the connection ended"
                )
        self.findings += found
        return found

    # -- rules --------------------------------------------------------------------------

    def _message(self, frame: Frame, msg: Any) -> list[Finding]:
        agent = frame.direction == "a2c"
        if not isinstance(msg, dict):
            rule = "transport.stdout-only-json" if agent else "client.wire.json"
            return [self._finding(rule, frame, "JSON but not a JSON-RPC object")]
        if why := envelope_problem(msg):
            rule = "jsonrpc.envelope-valid" if agent else "client.jsonrpc.envelope"
            return [self._finding(rule, frame, why)]
        found: list[Finding] = []
        if isinstance(msg.get("method"), str):
            found += self._request(frame, msg)
        else:
            found += self._response(frame, msg)
        return found

    def _request(self, frame: Frame, msg: dict[str, Any]) -> list[Finding]:
        method: str = msg["method"]
        agent = frame.direction == "a2c"
        session = _session_of(msg)
        found: list[Finding] = []
        if "id" in msg:
            key = id_key(msg["id"])
            self._sent[frame.direction].open[key] = _Open(method, frame.seq, session)
            if not agent:
                if method == "initialize":
                    self._initialize_ids.add(key)
                    requested = (msg.get("params") or {}).get("protocolVersion")
                    if not self._initialized and requested in SUPPORTED_VERSIONS:
                        self.version = requested  # judge the request by what it asks for
                elif not self._initialize_ids and not method.startswith("_"):
                    # A client may pipeline requests after its initialize; none may come
                    # before it.
                    found.append(
                        self._finding("client.init.first", frame, f"{method} before initialize")
                    )
        if not agent and session is not None:
            self._named.add(session)
            self._resolve_suspects(session)
            if method in ("session/prompt", "session/load") and "id" in msg:
                self._finished.pop(session, None)
        if agent and method == "session/update" and "id" not in msg:
            found += self._update(frame, msg, session)
        found += self._schema(frame, method, "params", msg.get("params", {}))
        return found

    def _update(self, frame: Frame, msg: dict[str, Any], session: str | None) -> list[Finding]:
        if session is None:
            return []  # a missing sessionId is the schema's to report
        if (
            session not in self._handed_out
            and session not in self._named
            and self._suspect_count < KEPT_SUSPECTS
        ):
            self._suspect_count += 1
            self._suspects.setdefault(session, []).append(
                (frame.seq, frame.text(LINE_LIMIT), frame.t)
            )
        update = (msg.get("params") or {}).get("update")
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        ended = self._finished.get(session)
        if self.version < 2 and kind in TURN_UPDATE_KINDS and ended is not None:
            return [
                self._finding(
                    "prompt.updates-before-response",
                    frame,
                    f"{kind} for session {session!r} after its prompt's result #{ended} "
                    "(and before the next prompt)",
                )
            ]
        return []

    def _response(self, frame: Frame, msg: dict[str, Any]) -> list[Finding]:
        agent = frame.direction == "a2c"
        asker: Direction = "c2a" if agent else "a2c"
        side = self._sent[asker]
        key = id_key(msg["id"])
        opened = side.open.pop(key, None)
        unanswered, echo = (
            ("jsonrpc.one-response-per-request", "jsonrpc.id-echo")
            if agent
            else ("client.jsonrpc.answers", "client.jsonrpc.id-echo")
        )
        if opened is None:
            if msg["id"] is None:
                return []  # an error answering an unreadable line: nothing to match
            if key in side.answered:
                why = f"second response to id {msg['id']!r}"
                return [self._finding(unanswered, frame, why)]
            loose = _loose_match(msg["id"], side.open)
            if loose is not None:
                opened = side.open.pop(loose)
                why = (
                    f"response id {msg['id']!r} does not echo the request's id {loose} "
                    f"({opened.method}, #{opened.seq})"
                )
                side.answered.add(loose)
                return [self._finding(echo, frame, why)]
            why = f"response to id {msg['id']!r}, which was never sent"
            return [self._finding(unanswered, frame, why)]
        side.answered.add(key)
        found = self._agent_answered(frame, msg, key, opened) if agent else []
        return found + self._answer_schema(frame, msg, opened.method)

    def _agent_answered(
        self, frame: Frame, msg: dict[str, Any], key: str, opened: _Open
    ) -> list[Finding]:
        result = msg.get("result")
        if key in self._initialize_ids and isinstance(result, dict):
            self._initialized = True
            version = result.get("protocolVersion")
            if isinstance(version, int) and not isinstance(version, bool):
                if version in SUPPORTED_VERSIONS:
                    self.version = version
                else:
                    self.notes.append(
                        f"the agent answered protocol version {version}, which has no schemas "
                        "here; messages are judged by the v1 schemas"
                    )
                    self.version = DEFAULT_VERSION
        found: list[Finding] = []
        creates = opened.method in SESSION_CREATING_METHODS
        if creates and isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            session = result["sessionId"]
            self._handed_out.add(session)
            found += self._early_updates(session, frame)
        if opened.method == "session/prompt" and opened.session is not None:
            still_open = any(
                o.session == opened.session and o.method == "session/prompt"
                for o in self._sent["c2a"].open.values()
            )
            if not still_open:
                self._finished[opened.session] = frame.seq
        return found

    def _early_updates(self, session: str, result_frame: Frame) -> list[Finding]:
        """Updates that named ``session`` before this result handed it out (the finding
        points at the update; the result is what proves it)."""
        return [
            self._finding(
                "prompt.updates-after-session-handed-out",
                Frame(seq, t, "a2c", line.encode()),
                f"session/update names session {session!r} before the result "
                f"#{result_frame.seq} that hands it out",
            )
            for seq, line, t in self._suspects.pop(session, [])
        ]

    def _resolve_suspects(self, session: str) -> None:
        self._suspects.pop(session, None)

    # -- schemas ------------------------------------------------------------------------

    def _backend(self) -> VersionedBackend:
        backend = self._backends.get(self.version)
        if backend is None:
            backend = self._backends[self.version] = VersionedBackend(self.version, self.v2_draft)
        return backend

    def _schema(self, frame: Frame, method: str, part: str, value: Any) -> list[Finding]:
        if method not in method_index_for(self.version):
            return []  # extensions and unknown methods carry no schema
        shape = (self.version, method, part, shape_key(value))
        if shape in self._valid_shapes:
            return []
        backend = self._backend()
        if part == "params":
            errors = backend.validate_params(method, value)
        else:
            errors = backend.validate_result(method, value)
        if not errors:
            if len(self._valid_shapes) >= SHAPE_CACHE:
                self._valid_shapes.clear()
            self._valid_shapes.add(shape)
        return self._schema_findings(frame, method, part, errors)

    def _answer_schema(self, frame: Frame, msg: dict[str, Any], method: str) -> list[Finding]:
        if "error" in msg:
            errors = self._backend().validate_definition(*GENERIC_ERROR, msg["error"])
            return self._schema_findings(frame, method, "error", errors)
        if "result" in msg:
            return self._schema(frame, method, "result", msg["result"])
        return []

    def _schema_findings(
        self, frame: Frame, method: str, part: str, errors: list[str]
    ) -> list[Finding]:
        if not errors:
            return []
        rule = (
            "schema.agent-messages-valid" if frame.direction == "a2c" else "client.schema.messages"
        )
        why = f"{method} {part} (v{self.version} schema): " + "; ".join(errors[:5])
        return [self._finding(rule, frame, why)]

    def _finding(self, rule_id: str, frame: Frame, reason: str) -> Finding:
        return Finding(
            self.rules[rule_id], frame.seq, frame.direction, reason, frame.text(LINE_LIMIT), frame.t
        )
