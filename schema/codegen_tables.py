"""Renders the hand-shaped binding modules that come from ``index.json`` alone.

``shared_errors.py`` (the exception classes of every version), ``errors.py`` (a version's
codes and exceptions), ``methods.py`` (the method table), ``agent.py`` (typed
handler defaults) and ``client.py`` (a typed peer for calling the client). The models are
written by :mod:`acp_schema.codegen_models`; these modules only name model classes and resolve
them lazily, so importing them never imports pydantic models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp_schema.codegen_common import Target, py_literal, python_method_name


@dataclass(frozen=True)
class MethodRow:
    """One ``index.json`` method entry, normalised for the templates."""

    name: str
    python_name: str
    kind: str
    side: str
    params_type: str
    result_type: str | None
    capability: str | None
    stability: str
    alias_of: str | None
    schema_file: str
    object_capability: str | None = None


@dataclass(frozen=True)
class ErrorRow:
    code: int
    constant: str
    exception: str
    message: str
    model: str


def method_rows(index: dict[str, Any]) -> list[MethodRow]:
    """Methods sorted by wire name, with the index's fields checked for shape."""
    rows = []
    for name, entry in sorted(index["methods"].items()):
        if entry["kind"] not in ("request", "notification"):
            raise ValueError(f"{name}: unknown kind {entry['kind']!r}")
        if entry["side"] not in ("agent", "client", "protocol"):
            raise ValueError(f"{name}: unknown side {entry['side']!r}")
        if (entry["kind"] == "request") != (entry["result"] is not None):
            raise ValueError(f"{name}: requests need a result type, notifications must not")
        object_capability = entry.get("objectCapability")
        if object_capability is not None and (
            not isinstance(object_capability, str) or "." not in object_capability
        ):
            raise ValueError(f"{name}: objectCapability must be 'Definition.dotted.path'")
        rows.append(
            MethodRow(
                name=name,
                python_name=python_method_name(name),
                kind=entry["kind"],
                side=entry["side"],
                params_type=entry["params"],
                result_type=entry["result"],
                capability=entry["capability"],
                stability=entry["stability"],
                alias_of=entry["aliasOf"],
                schema_file=entry["file"],
                object_capability=object_capability,
            )
        )
    by_name = {row.name: row for row in rows}
    for row in rows:
        if row.alias_of is not None and by_name[row.alias_of].alias_of is not None:
            raise ValueError(f"{row.name}: alias of an alias ({row.alias_of})")
    return rows


def error_rows(index: dict[str, Any]) -> list[ErrorRow]:
    """Error codes in numeric order."""
    return [
        ErrorRow(
            code=int(code),
            constant=entry["name"].upper(),
            exception=entry["exception"],
            message=entry["message"],
            model=entry["def"],
        )
        for code, entry in sorted(index["errors"].items(), key=lambda item: int(item[0]))
    ]


# --------------------------------------------------------------------------- errors


def render_shared_errors(index: dict[str, Any]) -> str:
    """The one error tree: ``RpcError`` and a class per code of the owning version."""
    errors = error_rows(index)
    internal = next((e for e in errors if e.constant == "INTERNAL_ERROR"), None)
    if internal is None:
        raise ValueError("index.json must define internal_error (the base RpcError code)")
    exports = ["ERRORS_BY_CODE", "RpcError", "error_from_wire"]
    exports += [e.constant for e in errors] + [e.exception for e in errors]
    out = [
        '"""JSON-RPC error codes of the ACP wire, and one exception class per code.',
        "",
        "Every protocol version's ``errors`` module re-exports these classes (a version that",
        "adds a code subclasses ``RpcError`` there), so ``except RpcError`` — or any one code's",
        "class — catches the error whichever version's code raised it. Handlers raise them; the",
        "connection turns them into error responses with ``to_wire()``. ``error_from_wire`` goes",
        "the other way for responses received from a peer.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping",
        "from typing import Any",
        "",
        f"__all__ = {_str_list(sorted(exports))}",
        "",
    ]
    out += [f"{e.constant} = {e.code}" for e in errors]
    out += [
        "",
        "",
        "class RpcError(Exception):",
        '    """An error answer to a JSON-RPC request: ``{code, message, data?}`` on the wire.',
        "",
        "    ``code`` and ``default_message`` are class attributes set by each subclass; an",
        "    instance may carry its own ``code`` when built from an unknown wire code.",
        '    """',
        "",
        f"    code: int = {internal.constant}",
        f"    default_message: str = {py_literal(internal.message)}",
        "",
        "    def __init__(self, message: str | None = None, data: Any = None) -> None:",
        "        self.message: str = self.default_message if message is None else message",
        "        self.data: Any = data",
        "        super().__init__(self.message)",
        "",
        "    def to_wire(self) -> dict[str, Any]:",
        '        """The JSON-RPC error object; ``data`` appears only when it is not None."""',
        '        wire: dict[str, Any] = {"code": self.code, "message": self.message}',
        "        if self.data is not None:",
        '            wire["data"] = self.data',
        "        return wire",
        "",
        "    def __repr__(self) -> str:",
        '        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"',
    ]
    out += _error_classes(errors)
    out += ["", "", *_errors_by_code(errors)]
    out += [
        "",
        "",
        "def error_from_wire(",
        "    error: dict[str, Any], known: Mapping[int, type[RpcError]] = ERRORS_BY_CODE",
        ") -> RpcError:",
        '    """Rebuild the exception for an error object received from a peer.',
        "",
        "    ``known`` maps the codes that get their own class (a version's ``ERRORS_BY_CODE``);",
        "    any other code becomes a plain ``RpcError`` carrying that code.",
        '    """',
        '    code = error.get("code")',
        '    message = error.get("message")',
        '    data = error.get("data")',
        "    text = message if isinstance(message, str) else None",
        "    cls = known.get(code) if isinstance(code, int) else None",
        "    if cls is not None:",
        "        return cls(text, data)",
        "    unknown = RpcError(text, data)",
        "    if isinstance(code, int):",
        "        unknown.code = code",
        "    return unknown",
    ]
    return "\n".join(out)


def render_version_errors(
    index: dict[str, Any], shared_index: dict[str, Any], shared_module: str
) -> str:
    """A version's ``errors``: the shared classes of its codes, plus subclasses for new ones.

    A code the version shares must carry the same name and message as in the shared tree
    (one class per code); a code only this version has becomes a subclass of the shared
    ``RpcError`` defined here.
    """
    errors = error_rows(index)
    shared = {row.code: row for row in error_rows(shared_index)}
    for row in errors:
        known = shared.get(row.code)
        if known is not None and (known.constant, known.exception, known.message) != (
            row.constant,
            row.exception,
            row.message,
        ):
            raise ValueError(
                f"error {row.code} is {row.exception} ({row.message!r}) here but "
                f"{known.exception} ({known.message!r}) in the shared tree: one class per code"
            )
    reused = [row for row in errors if row.code in shared]
    added = [row for row in errors if row.code not in shared]
    exports = ["ERRORS_BY_CODE", "RpcError", "error_from_wire"]
    exports += [e.constant for e in errors] + [e.exception for e in errors]
    imported = sorted(["RpcError", *(e.constant for e in reused), *(e.exception for e in reused)])
    out = [
        '"""This version\'s JSON-RPC error codes and their exception classes.',
        "",
        f"The classes are those of ``{shared_module}``, shared by every protocol version, so",
        "``except RpcError`` catches an error of any version. ``ERRORS_BY_CODE`` lists the codes",
        "of this version; ``error_from_wire`` rebuilds one of them from a peer's error object.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        f"from {shared_module} import (",
        *(f"    {name}," for name in imported),
        ")",
        f"from {shared_module} import error_from_wire as _rebuild",
        "",
        f"__all__ = {_str_list(sorted(exports))}",
    ]
    if added:
        out += ["", *(f"{e.constant} = {e.code}" for e in added)]
        out += _error_classes(added)
    out += ["", "", *_errors_by_code(errors)]
    out += [
        "",
        "",
        "def error_from_wire(error: dict[str, Any]) -> RpcError:",
        '    """Rebuild the exception for an error object received from a peer."""',
        "    return _rebuild(error, ERRORS_BY_CODE)",
    ]
    return "\n".join(out)


def _error_classes(errors: list[ErrorRow]) -> list[str]:
    out: list[str] = []
    for e in errors:
        out += [
            "",
            "",
            f"class {e.exception}(RpcError):",
            f'    """``{e.code}`` — {e.message}. Wire shape: ``{e.model}``."""',
            "",
            f"    code = {e.constant}",
            f"    default_message = {py_literal(e.message)}",
        ]
    return out


def _errors_by_code(errors: list[ErrorRow]) -> list[str]:
    return [
        "ERRORS_BY_CODE: dict[int, type[RpcError]] = {",
        *(f"    {e.constant}: {e.exception}," for e in errors),
        "}",
    ]


# --------------------------------------------------------------------------- methods.py


def render_methods(index: dict[str, Any], package: str) -> str:
    rows = method_rows(index)
    out = [
        '"""The ACP method table: every wire method, who handles it and its model names.',
        "",
        "Model classes are named, not imported: ``params_model()`` / ``result_model()`` resolve",
        f"them through the lazy ``{package}.models`` facade on first use.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import importlib",
        "from dataclasses import dataclass",
        "from typing import TYPE_CHECKING, Literal",
        "",
        "if TYPE_CHECKING:",
        "    from pydantic import BaseModel",
        "",
        '__all__ = ["METHODS", "UPDATE_KINDS", "MethodSpec", "resolve_model"]',
        "",
        "",
        "def resolve_model(name: str) -> type[BaseModel]:",
        '    """The generated model class called ``name`` (imports only its module)."""',
        f"    models = importlib.import_module({py_literal(package + '.models')})",
        "    model: type[BaseModel] = getattr(models, name)",
        "    return model",
        "",
        "",
        "@dataclass(frozen=True, slots=True)",
        "class MethodSpec:",
        '    """One wire method as bound by ``schema/index.json``.',
        "",
        "    ``side`` is who handles the method (``protocol``: either side). ``capability`` is",
        "    the dotted path of the handler's capability that gates it, or None.",
        "    ``object_capability`` (``Definition.dotted.path``, e.g.",
        "    ``ToolCallUpdate.capabilities.cancel``) gates it per object instead: the method is",
        "    offered only for objects whose latest state carries that capability. ``alias_of``",
        "    names the canonical method when ``stability`` is ``alias``. ``schema_file`` is",
        "    relative to the version's schema folder.",
        '    """',
        "",
        "    name: str",
        "    python_name: str",
        '    kind: Literal["request", "notification"]',
        '    side: Literal["agent", "client", "protocol"]',
        "    params_type: str",
        "    result_type: str | None",
        "    capability: str | None",
        '    stability: Literal["stable", "unstable", "alias"]',
        "    alias_of: str | None",
        "    schema_file: str",
        "    object_capability: str | None = None",
        "",
        "    @property",
        "    def is_request(self) -> bool:",
        '        return self.kind == "request"',
        "",
        "    @property",
        "    def is_gated(self) -> bool:",
        '        """True when a capability (of the handler or of an object) gates the call."""',
        "        return self.capability is not None or self.object_capability is not None",
        "",
        "    def params_model(self) -> type[BaseModel]:",
        "        return resolve_model(self.params_type)",
        "",
        "    def result_model(self) -> type[BaseModel] | None:",
        '        """The result model for requests; None for notifications."""',
        "        return None if self.result_type is None else resolve_model(self.result_type)",
        "",
        "",
        "METHODS: dict[str, MethodSpec] = {",
    ]
    for row in rows:
        out += [
            f"    {py_literal(row.name)}: MethodSpec(",
            f"        name={py_literal(row.name)},",
            f"        python_name={py_literal(row.python_name)},",
            f"        kind={py_literal(row.kind)},",
            f"        side={py_literal(row.side)},",
            f"        params_type={py_literal(row.params_type)},",
            f"        result_type={py_literal(row.result_type)},",
            f"        capability={py_literal(row.capability)},",
            f"        stability={py_literal(row.stability)},",
            f"        alias_of={py_literal(row.alias_of)},",
            f"        schema_file={py_literal(row.schema_file)},",
            *(
                [f"        object_capability={py_literal(row.object_capability)},"]
                if row.object_capability
                else []
            ),
            "    ),",
        ]
    out += [
        "}",
        "",
        "#: ``session/update`` kind (the ``sessionUpdate`` tag) → model class name of that arm.",
        "UPDATE_KINDS: dict[str, str] = {",
    ]
    out += [
        f"    {py_literal(kind)}: {py_literal(entry['def'])},"
        for kind, entry in sorted(index["updates"].items())
    ]
    out.append("}")
    return "\n".join(out)


# --------------------------------------------------------------------------- agent.py


def _annotation_imports(rows: list[MethodRow], package: str, *third_party: str) -> list[str]:
    """A ``TYPE_CHECKING`` block importing the model names used in annotations."""
    names = sorted({r.params_type for r in rows} | {r.result_type for r in rows if r.result_type})
    out = ["if TYPE_CHECKING:"]
    if third_party:
        out += [f"    {line}" for line in third_party] + [""]
    out += [f"    from {package}.models import ("]
    out += [f"        {name}," for name in names]
    out += ["    )"]
    return out


def render_agent(index: dict[str, Any], package: str) -> str:
    rows = [row for row in method_rows(index) if row.side == "agent"]
    by_name = {row.name: row for row in method_rows(index)}
    out = [
        '"""Typed handler defaults for every method the agent handles.',
        "",
        "Subclass ``AgentHandlers`` and override the methods the agent implements; every other",
        'method answers ``MethodNotFoundError`` with ``data={"method": <wire name>}``. An alias',
        "(e.g. ``sessions/list``) delegates to its canonical method, so overriding the canonical",
        "one serves both names.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import TYPE_CHECKING",
        "",
        f"from {package}.errors import MethodNotFoundError",
        "",
        *_annotation_imports(rows, package),
        "",
        '__all__ = ["AgentHandlers"]',
        "",
        "",
        "class AgentHandlers:",
        f'    """One coroutine per agent-handled wire method (see ``{package}.methods``)."""',
    ]
    for row in rows:
        returns = row.result_type or "None"
        out += ["", *_async_def(row.python_name, row.params_type, returns)]
        if row.alias_of is None:
            out += [
                f'        """Handle ``{row.name}`` ({row.kind}, {row.stability})."""',
                f"        raise {_not_found(row.name)}",
            ]
        else:
            canonical = by_name[row.alias_of]
            target = canonical.python_name
            out += [
                f'        """Handle ``{row.name}``, an alias of ``{row.alias_of}``."""',
                f"        if type(self).{target} is AgentHandlers.{target}:",
                f"            raise {_not_found(row.name)}",
                f"        return await self.{target}(params)",
            ]
    return "\n".join(out)


# --------------------------------------------------------------------------- client.py


def render_client(index: dict[str, Any], package: str) -> str:
    rows = [row for row in method_rows(index) if row.side in ("client", "protocol")]
    out = [
        '"""A typed peer for calling the methods the client handles.',
        "",
        "Implement ``send_request`` and ``send_notification`` on top of a connection; the typed",
        "methods fix the wire name and the result model of each call.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import abc",
        "from typing import TYPE_CHECKING, TypeVar, cast",
        "",
        f"from {package}.methods import resolve_model",
        "",
        *_annotation_imports(rows, package, "from pydantic import BaseModel"),
        "",
        '__all__ = ["ClientPeer"]',
        "",
        'T = TypeVar("T", bound="BaseModel")',
        "",
        "",
        "class ClientPeer(abc.ABC):",
        '    """Outbound calls from the agent to the client (and ``$/cancel_request``)."""',
        "",
        "    @abc.abstractmethod",
        "    async def send_request(",
        "        self, method: str, params: BaseModel, result_type: type[T]",
        "    ) -> T:",
        '        """Send a request and return its result parsed as ``result_type``."""',
        "",
        "    @abc.abstractmethod",
        "    async def send_notification(self, method: str, params: BaseModel) -> None:",
        '        """Send a notification (no answer is expected)."""',
    ]
    for row in rows:
        wire = py_literal(row.name)
        if row.result_type is not None:
            out += [
                "",
                *_async_def(row.python_name, row.params_type, row.result_type),
                f'        """Call ``{row.name}`` on the client."""',
                "        result_type = cast(",
                f'            "type[{row.result_type}]", {_resolve_call(row.result_type)}',
                "        )",
                f"        return await self.send_request({wire}, params, result_type)",
            ]
        else:
            out += [
                "",
                *_async_def(row.python_name, row.params_type, "None"),
                f'        """Send the ``{row.name}`` notification."""',
                f"        await self.send_notification({wire}, params)",
            ]
    return "\n".join(out)


def _not_found(wire_name: str) -> str:
    return f"MethodNotFoundError(data={{{py_literal('method')}: {py_literal(wire_name)}}})"


def _resolve_call(model: str) -> str:
    return f"resolve_model({py_literal(model)})"


def _async_def(name: str, params_type: str, returns: str) -> list[str]:
    """A method signature, wrapped like a formatter would when it exceeds 100 columns."""
    line = f"    async def {name}(self, params: {params_type}) -> {returns}:"
    if len(line) <= 100:
        return [line]
    return [
        f"    async def {name}(",
        "        self,",
        f"        params: {params_type},",
        f"    ) -> {returns}:",
    ]


def render_package_init(target: Target) -> str:
    lines = [
        f'"""Python bindings for ACP {target.version}, generated from ``{target.schema_label}/``.',
        "",
        "Modules: ``models`` (lazy facade over pydantic models), ``methods`` (method table),",
        "``errors`` (codes and exceptions), ``agent`` (handler defaults), ``client`` (typed",
        "peer). Nothing is imported eagerly, so importing the package stays cheap.",
    ]
    if target.owns_shared_errors():
        lines += [
            "",
            "``shared_errors`` holds the exception classes every protocol version's ``errors``",
            "re-exports.",
        ]
    nested = sorted(target.nested_outputs())
    if nested:
        lines += ["", "Other protocol versions: " + ", ".join(f"``{n}``" for n in nested) + "."]
    return "\n".join([*lines, '"""'])


def _str_list(items: list[str]) -> str:
    if not items:
        return "[]"
    return "[\n" + "".join(f"    {py_literal(item)},\n" for item in items) + "]"
