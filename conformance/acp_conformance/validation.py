"""Schema validation of recorded traffic, method by method and direction by direction.

The schemas and the validator live in ``acp_schema`` (the project's source of truth); this
module only decides *which* schema applies to each recorded message: requests and
notifications by their method name, responses by the method of the request whose id they
answer (looked up among the requests the other side sent). Messages of methods the index
does not know (extensions, the checker's barrier) carry no schema and are skipped; the
envelope itself is judged by the JSON-RPC checks, never by a root schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol

from .harness.agent_client import id_key
from .harness.recorder import Direction, Frame


class SchemaBackend(Protocol):
    """What ``acp_schema.validation`` provides; each call returns error strings."""

    def validate_params(self, method: str, params: Any) -> list[str]: ...
    def validate_result(self, method: str, result: Any) -> list[str]: ...
    def validate_error(self, error: Any) -> list[str]: ...
    def validate_definition(self, relpath: str, name: str, instance: Any) -> list[str]: ...


#: The generic JSON-RPC error object; per-code ``data`` shapes are project conventions
#: (SPEC §1.1) and are reported separately, as part ``error-data``.
GENERIC_ERROR = ("defs/jsonrpc.json", "Error")


class SchemaUnavailable(Exception):
    """The project's schema validator could not be imported."""


def load_backend() -> SchemaBackend:
    try:
        from acp_schema import validation as module  # lazily: it loads jsonschema
    except ImportError as exc:
        raise SchemaUnavailable(f"acp_schema.validation is not importable: {exc}") from exc
    backend: SchemaBackend = module
    return backend


def method_index(version: int = 1) -> dict[str, dict[str, Any]]:
    """Wire method name → index entry (kind, side, capability, ...) of protocol ``version``."""
    try:
        import acp_schema as schema

        loader = getattr(schema, "load_index", None)
        if loader is not None:
            return dict(loader(version)["methods"])
    except ImportError:
        pass
    name = "index.json" if version == 1 else f"v{version}/index.json"
    text = resources.files("acp_schema").joinpath(name).read_text(encoding="utf-8")
    return dict(json.loads(text)["methods"])


@dataclass
class Violation:
    """One message that does not match its schema."""

    seq: int
    direction: Direction
    method: str
    part: str  # "params" | "result" | "error" | "error-data"
    errors: list[str]
    deliberate: bool = False

    def describe(self) -> str:
        head = f"#{self.seq} {self.direction} {self.method} {self.part}"
        return head + ": " + "; ".join(self.errors[:5])

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "dir": self.direction,
            "method": self.method,
            "part": self.part,
            "errors": self.errors,
        }


def _other(direction: Direction) -> Direction:
    return "a2c" if direction == "c2a" else "c2a"


#: Lines up to this size have their validation remembered, up to this many per transcript.
_MEMO_LINE = 4096
_MEMO_ENTRIES = 20_000


class TranscriptValidator:
    """Validates frames in order, remembering request ids to type the responses."""

    def __init__(self, backend: SchemaBackend, index: dict[str, dict[str, Any]]) -> None:
        self.backend = backend
        self.index = index
        self._requests: dict[Direction, dict[str, str]] = {"c2a": {}, "a2c": {}}
        #: Errors of small values already validated: an agent repeats the same update many
        #: times (a flood of identical lines cost 6 ms each to validate again).
        self._memo: dict[tuple[str, str, str], list[str]] = {}

    def validate(self, frame: Frame) -> Violation | None:
        msg = frame.message
        if not isinstance(msg, dict):
            return None
        method = msg.get("method")
        if isinstance(method, str):
            if "id" in msg:
                self._requests[frame.direction][id_key(msg["id"])] = method
            # Absent params are judged as {} so a missing required field is reported.
            return self._check(frame, method, "params", msg.get("params", {}), method in self.index)
        if "id" not in msg:
            return None
        answered = self._requests[_other(frame.direction)].pop(id_key(msg["id"]), None)
        if "error" in msg:
            generic = self.backend.validate_definition(*GENERIC_ERROR, msg["error"])
            if generic:
                return self._violation(frame, answered or "?", "error", generic)
            specific = self.backend.validate_error(msg["error"])
            return self._violation(frame, answered or "?", "error-data", specific)
        if answered is not None and answered in self.index and "result" in msg:
            return self._check(frame, answered, "result", msg["result"], True)
        return None

    def _check(
        self, frame: Frame, method: str, part: str, value: Any, known: bool
    ) -> Violation | None:
        if not known:
            return None
        text = json.dumps(value, sort_keys=True) if len(frame.raw) <= _MEMO_LINE else None
        key = (method, part, text or "")
        errors = self._memo.get(key) if text is not None else None
        if errors is None:
            if part == "params":
                errors = self.backend.validate_params(method, value)
            else:
                errors = self.backend.validate_result(method, value)
            if text is not None and len(self._memo) < _MEMO_ENTRIES:
                self._memo[key] = errors
        return self._violation(frame, method, part, errors)

    @staticmethod
    def _violation(frame: Frame, method: str, part: str, errors: list[str]) -> Violation | None:
        if not errors:
            return None
        return Violation(frame.seq, frame.direction, method, part, list(errors), frame.deliberate)


def validate_frames(
    frames: Iterable[Frame],
    backend: SchemaBackend | None = None,
    index: dict[str, dict[str, Any]] | None = None,
) -> list[Violation]:
    """Every schema violation among ``frames`` (both directions), in wire order."""
    validator = TranscriptValidator(backend or load_backend(), index or method_index())
    return [v for frame in frames if (v := validator.validate(frame)) is not None]
