"""Typed routing on top of the untyped dispatcher: wire name → handler with validated params.

For each inbound message: look the wire name up in the generated method table, check that the
agent handles it, that its kind matches and that the handlers implement it, validate
``params`` strictly into the generated model, call the ``AgentHandlers`` method of the same
Python name, and dump the model result in wire form.

A method the handlers leave to the generated ``AgentHandlers`` default (of any protocol
version's bindings) is unimplemented: it answers -32601 *before* its params are looked at, so
a client probing an optional method learns "not implemented" whatever it sent, never a
-32602 about params nobody would read.

The resolved handler and model class are cached per method name, so a call costs two dict
lookups plus the validation itself.

Strictness: params are validated in pydantic's JSON mode with ``strict=True`` — a JSON string
is never accepted for an integer, while enum values (strings on the wire) are — and by alias
only, so a snake_case key is not taken for its camelCase field.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from acp_bindings.errors import InvalidParamsError, MethodNotFoundError
from pydantic import BaseModel, ValidationError

from iac_code.rpc.context import RequestContext
from iac_code.rpc.param_errors import describe_validation_error

if TYPE_CHECKING:
    from acp_bindings.methods import MethodSpec

__all__ = ["MethodEntry", "Router", "build_models", "dump_result", "validate_params"]

_AGENT_SIDE = "agent"


class MethodEntry(Protocol):
    """The parts of ``acp_bindings.methods.MethodSpec`` the router uses."""

    @property
    def name(self) -> str: ...
    @property
    def python_name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def side(self) -> str: ...
    @property
    def alias_of(self) -> str | None: ...
    def params_model(self) -> type[BaseModel]: ...


@dataclass(frozen=True, slots=True)
class _Route:
    call: Callable[[Any], Awaitable[Any]]
    params_model: type[BaseModel]


def validate_params(model: type[BaseModel], params: object) -> BaseModel:
    """Strictly validate raw JSON ``params`` (None = absent) into ``model``.

    Absent params are validated as ``{}``: fine for a model without required fields,
    otherwise the answer names each missing field.
    """
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        raise InvalidParamsError(data={"params": "must be an object"})
    try:
        return model.model_validate_json(
            json.dumps(params), strict=True, by_alias=True, by_name=False
        )
    except ValidationError as exc:
        raise InvalidParamsError(data=describe_validation_error(exc, params)) from None


def dump_result(result: object) -> object:
    """Wire form of a handler's result: models are dumped, plain values pass through."""
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return result


def _is_generated_stub_class(cls: type) -> bool:
    """``acp_bindings.agent.AgentHandlers`` or its twin in another version's bindings."""
    return cls.__name__ == "AgentHandlers" and cls.__module__.split(".")[0] == "acp_bindings"


def is_stub(handlers: type, python_name: str) -> bool:
    """Whether ``handlers`` lack the method or leave it to the generated default.

    The class that defines the method (first in the MRO) decides, so any subclass of any
    version's generated ``AgentHandlers`` is judged alike.
    """
    for cls in handlers.__mro__:
        if python_name in vars(cls):
            return _is_generated_stub_class(cls)
    return True


def build_models(
    handlers: type,
    methods: Mapping[str, MethodSpec] | None = None,
) -> list[str]:
    """Build the params and result models of every method ``handlers`` implement, now.

    The generated models build their validators on first use (the first one in a process
    costs tens of milliseconds, later ones a few each), which would land on the first request
    of each method. The stdio server calls this while the runtime is still loading in the
    background, before any request is read. Returns the wire names covered.
    """
    if methods is None:
        from acp_bindings.methods import METHODS

        methods = METHODS
    built = []
    for spec in methods.values():
        if spec.side != _AGENT_SIDE or spec.alias_of is not None:
            continue
        if is_stub(handlers, spec.python_name):
            continue
        for model in (spec.params_model(), spec.result_model()):
            if model is not None:
                model.model_rebuild(force=True)
        built.append(spec.name)
    return built


class Router:
    """A ``RequestHandler`` for the connection, built from a method table and handlers.

    ``methods`` defaults to ``acp_bindings.methods.METHODS``; ``handlers`` is an
    ``AgentHandlers`` instance (any object with one coroutine method per Python name).
    """

    def __init__(
        self,
        handlers: object,
        methods: Mapping[str, MethodEntry] | None = None,
        *,
        logger: logging.Logger | None = None,
    ) -> None:
        if methods is None:
            from acp_bindings.methods import METHODS

            methods = METHODS
        self._handlers = handlers
        self._methods = methods
        # Fields the protocol requires but the agent tolerates missing (e.g. ``mcpServers``
        # in ``session/new``): handlers may declare ``PARAM_DEFAULTS = {method: {field: v}}``.
        self._defaults: Mapping[str, Mapping[str, Any]] = getattr(handlers, "PARAM_DEFAULTS", {})
        self._logger = logger or logging.getLogger("iac_code.router")
        # Only names from the method table are cached, so junk method names cannot grow these.
        self._routes: dict[tuple[str, str], _Route] = {}

    async def handle_request(self, ctx: RequestContext, method: str, params: object) -> object:
        route = self._routes.get((method, "request")) or self._resolve(method, "request")
        if route is None:
            raise MethodNotFoundError(data={"method": method})
        defaults = self._defaults.get(method)
        if defaults and isinstance(params, dict):
            params = {**defaults, **params}
        validated = validate_params(route.params_model, params)
        return dump_result(await route.call(validated))

    async def handle_notification(self, method: str, params: object) -> None:
        route = self._routes.get((method, "notification")) or self._resolve(method, "notification")
        if route is None:
            self._logger.debug("ignoring notification %s: not handled by the agent", method)
            return
        try:
            validated = validate_params(route.params_model, params)
        except InvalidParamsError as exc:
            self._logger.warning(
                "ignoring notification %s with invalid params: %s", method, exc.data
            )
            return
        try:
            await route.call(validated)
        except MethodNotFoundError:
            self._logger.debug("ignoring notification %s: not implemented", method)

    def _resolve(self, method: str, kind: str) -> _Route | None:
        spec = self._methods.get(method)
        if spec is None or spec.kind != kind or spec.side != _AGENT_SIDE:
            return None
        call = self._implementation(spec.python_name)
        if spec.alias_of is not None:
            canonical = self._methods.get(spec.alias_of)
            if canonical is None:
                return None
            # An alias the handlers do not override themselves is served by the canonical
            # method directly (the generated alias default would only delegate to it).
            if call is None:
                call = self._implementation(canonical.python_name)
        if call is None:
            return None
        route = _Route(call=call, params_model=spec.params_model())
        self._routes[(method, kind)] = route
        return route

    def _implementation(self, python_name: str) -> Callable[[Any], Awaitable[Any]] | None:
        """The handlers' own method of that name; None when absent or the generated default."""
        call = getattr(self._handlers, python_name, None)
        if call is None or is_stub(type(self._handlers), python_name):
            return None
        return call
