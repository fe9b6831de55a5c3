"""Judges the client from the frames the double recorded, scenario by scenario.

Each function takes one :class:`ScenarioRun` and returns ``{requirement id: [Outcome]}``;
the command combines them over all scenarios. A run in which the client never reached the
double yields harness errors (the run is inconclusive, not the client's fault as far as
anything was seen).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..catalogue import judged_by
from ..outcomes import (
    NO_DEADLINE,
    Outcome,
    failed,
    harness_error,
    not_applicable,
    out_of_scope,
    passed,
    soft_failed,
)
from ..validation import TranscriptValidator, load_backend, method_index
from .launch import ScenarioRun
from .scenarios import (
    PERMISSION_OPTIONS,
    READ_CONTENT,
    SESSION_ID,
    STRING_ID,
    UNKNOWN_KIND,
    WRITE_CONTENT,
)

Outcomes = dict[str, list[Outcome]]


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


class View:
    """The recorded conversation of one run, indexed for the checks."""

    def __init__(self, run: ScenarioRun) -> None:
        self.run = run
        self.sent = [f for f in run.frames if f.direction == "c2a"]
        self.messages = [f for f in self.sent if isinstance(f.message, dict)]
        self.agent_requests = [
            f
            for f in run.frames
            if f.direction == "a2c"
            and isinstance(f.message, dict)
            and "method" in f.message
            and "id" in f.message
        ]
        self.initialize = next(
            (f for f in self.messages if f.message.get("method") == "initialize"), None
        )

    def calls(self, method: str) -> list[Any]:
        return [f for f in self.messages if f.message.get("method") == method]

    def answer_to(self, request: Any) -> Any:
        """The client's answer to the agent request frame ``request`` (by exact id)."""
        want = request.message["id"]
        for f in self.messages:
            if (
                f.seq > request.seq
                and "method" not in f.message
                and _same_id(f.message.get("id"), want)
            ):
                return f
        return None

    def requests_of(self, method: str) -> list[Any]:
        return [f for f in self.agent_requests if f.message["method"] == method]

    def capability(self, *path: str) -> bool:
        node: Any = self.initialize.message.get("params") if self.initialize else None
        for key in ("clientCapabilities", *path):
            node = node.get(key) if isinstance(node, dict) else None
        return node is True

    def tail(self) -> str:
        return self.run.stderr_tail[-600:].strip()


def _tag(run: ScenarioRun, outcome: Outcome) -> Outcome:
    outcome.run_id = run.scenario
    outcome.check = f"client/{run.scenario}"
    return outcome


def judge(run: ScenarioRun) -> Outcomes:
    found: Outcomes = {}
    if not run.reached_double:
        why = run.start_error or (
            f"the client never wrote to the agent double ({run.describe_exit()})"
        )
        if run.stderr_tail:
            why += f"; stderr tail: {run.stderr_tail[-600:].strip()}"
        for req in judged_by("client"):
            found[req.id] = [_tag(run, harness_error(why, scenario=run.scenario))]
        return found
    view = View(run)
    for check in (_wire, _init, _schema, _ids, _session, _permission, _capabilities, _scenario):
        for req_id, outcome in check(view):
            found.setdefault(req_id, []).append(_tag(run, outcome))
    return found


def _wire(view: View) -> list[tuple[str, Outcome]]:
    bad = [
        f for f in view.sent if not isinstance(f.message, dict) or f.message.get("jsonrpc") != "2.0"
    ]
    if bad:
        first = bad[0]
        what = first.decode_error or "not a JSON-RPC 2.0 object"
        return [
            (
                "client.wire.json",
                failed(
                    f"#{first.seq}: {what}: {first.text(200)!r}", frames=[f.seq for f in bad[:5]]
                ),
            )
        ]
    return [("client.wire.json", passed(f"{len(view.sent)} lines, all JSON-RPC"))]


def _init(view: View) -> list[tuple[str, Outcome]]:
    out: list[tuple[str, Outcome]] = []
    first = next((f for f in view.messages if "method" in f.message), None)
    if first is None:
        out.append(("client.init.first", failed("the client sent no request at all")))
    elif first.message["method"] != "initialize":
        out.append(
            (
                "client.init.first",
                failed(
                    f"the first message is {first.message['method']}, before initialize",
                    frames=[first.seq],
                ),
            )
        )
    else:
        out.append(("client.init.first", passed("initialize came first", frames=[first.seq])))
    if view.initialize is not None:
        errors = load_backend().validate_params(
            "initialize", view.initialize.message.get("params", {})
        )
        verdict = (
            failed("; ".join(errors[:5]), frames=[view.initialize.seq])
            if errors
            else passed("matches InitializeRequest")
        )
        out.append(("client.init.shape", verdict))
    return out


def _schema(view: View) -> list[tuple[str, Outcome]]:
    validator = TranscriptValidator(load_backend(), method_index())
    bad = []
    for frame in view.run.frames:
        if not frame.is_json:
            continue
        violation = validator.validate(frame)
        if violation is not None and frame.direction == "c2a":
            bad.append(violation)
    if bad:
        return [
            (
                "client.schema.messages",
                failed("; ".join(v.describe() for v in bad[:3]), frames=[v.seq for v in bad]),
            )
        ]
    return [
        ("client.schema.messages", passed(f"{len(view.messages)} messages match their schemas"))
    ]


def _ids(view: View) -> list[tuple[str, Outcome]]:
    if not view.agent_requests:
        reason = "the agent double sent no request in this run"
        return [
            ("client.jsonrpc.id-echo", not_applicable(reason)),
            ("client.jsonrpc.answers", not_applicable(reason)),
        ]
    known = [f.message["id"] for f in view.agent_requests]
    strays = [
        f
        for f in view.messages
        if "method" not in f.message and not any(_same_id(f.message.get("id"), k) for k in known)
    ]
    unanswered = [f for f in view.agent_requests if view.answer_to(f) is None]
    out: list[tuple[str, Outcome]] = []
    if strays:
        got = [f.message.get("id") for f in strays]
        out.append(
            (
                "client.jsonrpc.id-echo",
                failed(
                    f"answers carry ids {got!r}; the agent's requests had {known!r}",
                    frames=[f.seq for f in strays],
                ),
            )
        )
    elif len(unanswered) < len(view.agent_requests):
        out.append(("client.jsonrpc.id-echo", passed(f"ids echoed: {known!r}")))
    if unanswered:
        names = [f"{f.message['method']} (id {f.message['id']!r})" for f in unanswered]
        why = f"no answer to {', '.join(names)} ({view.run.describe_exit()})"
        out.append(
            (
                "client.jsonrpc.answers",
                failed(why, frames=[f.seq for f in unanswered], stderr=view.tail()),
            )
        )
    else:
        out.append(("client.jsonrpc.answers", passed(f"{len(known)} agent requests answered")))
    return out


def _session(view: View) -> list[tuple[str, Outcome]]:
    prompts = view.calls("session/prompt")
    if not prompts:
        return [("client.order.session", not_applicable("the client sent no session/prompt"))]
    loaded = {f.message.get("params", {}).get("sessionId") for f in view.calls("session/load")}
    known = {SESSION_ID} | loaded
    wrong = [f for f in prompts if f.message.get("params", {}).get("sessionId") not in known]
    if wrong:
        return [
            (
                "client.order.session",
                failed(
                    "session/prompt names a session the agent never created",
                    frames=[f.seq for f in wrong],
                ),
            )
        ]
    return [("client.order.session", passed("prompts name the created session"))]


def _outcome_of(answer: Any) -> dict[str, Any] | None:
    result = answer.message.get("result") if answer is not None else None
    outcome = result.get("outcome") if isinstance(result, dict) else None
    return outcome if isinstance(outcome, dict) else None


def _permission(view: View) -> list[tuple[str, Outcome]]:
    out: list[tuple[str, Outcome]] = []
    offered = {o["optionId"] for o in PERMISSION_OPTIONS}
    cancels = [f.seq for f in view.calls("session/cancel")]
    for request in view.requests_of("session/request_permission"):
        answer = view.answer_to(request)
        if answer is None:
            continue  # client.jsonrpc.answers reports it
        outcome = _outcome_of(answer)
        kind = outcome.get("outcome") if outcome else None
        cancelled_first = any(request.seq < c < answer.seq for c in cancels) or any(
            c < request.seq for c in cancels
        )
        if cancelled_first:
            ok = kind == "cancelled"
            verdict = (
                passed("answered cancelled after session/cancel")
                if ok
                else failed(
                    f"answered {outcome!r} after sending session/cancel", frames=[answer.seq]
                )
            )
            out.append(("client.permission.cancelled", verdict))
            continue
        if kind == "cancelled" or (
            kind == "selected" and outcome and outcome.get("optionId") in offered
        ):
            out.append(
                ("client.permission.option", passed(f"answered {outcome!r}", frames=[answer.seq]))
            )
        else:
            out.append(
                (
                    "client.permission.option",
                    failed(
                        f"{_answer_text(answer, outcome)}; offered {sorted(offered)}",
                        frames=[request.seq, answer.seq],
                    ),
                )
            )
    return out


def _answer_text(answer: Any, outcome: dict[str, Any] | None) -> str:
    """What a permission answer said, for a reason: its outcome, or the error it was."""
    error = answer.message.get("error")
    if isinstance(error, dict):
        return f"answered with error {error.get('code')} {str(error.get('message', ''))[:80]!r}"
    return f"answered {outcome!r}"


def _capabilities(view: View) -> list[tuple[str, Outcome]]:
    if view.run.scenario != "baseline":
        return []
    backend = load_backend()
    out: list[tuple[str, Outcome]] = []
    specs = (
        ("client.fs.read", ("fs", "readTextFile"), "fs/read_text_file"),
        ("client.fs.write", ("fs", "writeTextFile"), "fs/write_text_file"),
        ("client.terminal.create", ("terminal",), "terminal/create"),
    )
    for req_id, path, method in specs:
        if not view.capability(*path):
            out.append((req_id, out_of_scope(f"the client does not advertise {'.'.join(path)}")))
            continue
        requests = view.requests_of(method)
        if not requests:
            out.append((req_id, harness_error(f"the double did not get to send {method}")))
            continue
        answer = view.answer_to(requests[0])
        if answer is None:
            out.append((req_id, failed(f"no answer to {method}", frames=[requests[0].seq])))
            continue
        if "error" in answer.message:
            out.append(
                (
                    req_id,
                    failed(
                        f"{method} answered with error {answer.message['error']!r}",
                        frames=[answer.seq],
                    ),
                )
            )
            continue
        errors = backend.validate_result(method, answer.message.get("result"))
        if errors:
            out.append((req_id, failed("; ".join(errors[:3]), frames=[answer.seq])))
            continue
        out.append((req_id, _content_check(req_id, requests[0], answer)))
    return out


def _content_check(req_id: str, request: Any, answer: Any) -> Outcome:
    if req_id == "client.fs.read":
        content = answer.message["result"].get("content")
        if content != READ_CONTENT:
            return failed(f"read {content!r}, the file holds {READ_CONTENT!r}", frames=[answer.seq])
        return passed("returned the file's text", frames=[answer.seq])
    if req_id == "client.fs.write":
        path = Path(request.message["params"]["path"])
        try:
            written = path.read_text(encoding="utf-8")
        except OSError as exc:
            return failed(f"answered, but {path} cannot be read: {exc}", frames=[answer.seq])
        if written != WRITE_CONTENT:
            return failed(f"{path} holds {written!r}", frames=[answer.seq])
        return passed("wrote the file", frames=[answer.seq])
    return passed("answered with a terminalId", frames=[answer.seq])


def _scenario(view: View) -> list[tuple[str, Outcome]]:
    name = view.run.scenario
    prompted = bool(view.calls("session/prompt"))
    out: list[tuple[str, Outcome]] = []
    loads = view.calls("session/load")
    if loads:
        out.append(
            (
                "client.load.replay",
                passed("the client loaded a session and went on after the replay")
                if prompted or view.run.returncode == 0
                else failed("the client stopped after the session/load replay", stderr=view.tail()),
            )
        )
    if not prompted:
        return out
    if name == "tolerance":
        request = next(
            (
                f
                for f in view.requests_of("session/request_permission")
                if f.message["id"] == STRING_ID
            ),
            None,
        )
        unknown = next(
            (f for f in view.run.frames if f.direction == "a2c" and UNKNOWN_KIND in f.text()), None
        )
        answered = request is not None and view.answer_to(request) is not None
        if answered:
            out.append(
                (
                    "client.tolerance.unknown-update",
                    passed("kept answering after the unknown update kind and _meta fields"),
                )
            )
            out.append(
                (
                    "client.tolerance.interleaved",
                    passed("answered the request sent between updates"),
                )
            )
        else:
            exit_ = view.run.describe_exit()
            why = f"after the unknown update kind the client stopped answering ({exit_})"
            out.append(
                (
                    "client.tolerance.unknown-update",
                    failed(why, frames=[unknown.seq] if unknown else [], stderr=view.tail()),
                )
            )
            out.append(
                (
                    "client.tolerance.interleaved",
                    not_applicable("not reached: the client stopped at the unknown update"),
                )
            )
    if name == "prompt-error":
        after = [f for f in view.sent if not isinstance(f.message, dict)]
        if view.run.timed_out:
            out.append(
                (
                    "client.prompt.error",
                    soft_failed(
                        "the client still ran at the deadline after the prompt error", NO_DEADLINE
                    ),
                )
            )
        elif after:
            out.append(
                (
                    "client.prompt.error",
                    failed(
                        "the client wrote non-JSON after the error", frames=[f.seq for f in after]
                    ),
                )
            )
        else:
            out.append(
                (
                    "client.prompt.error",
                    passed(f"the client ended cleanly ({view.run.describe_exit()})"),
                )
            )
    if name == "cancel" and not view.calls("session/cancel"):
        out.append(
            (
                "client.permission.cancelled",
                not_applicable(
                    "the client did not send session/cancel in the cancel scenario "
                    "(give it its own args via {scenario})"
                ),
            )
        )
    return out
