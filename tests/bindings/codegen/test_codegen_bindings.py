"""The generated method table, errors, handler defaults and typed client peer."""

from __future__ import annotations

import inspect
from typing import Any, TypeVar, cast

import pytest
from acp_bindings import errors
from acp_bindings.agent import AgentHandlers
from acp_bindings.client import ClientPeer
from acp_bindings.methods import METHODS, UPDATE_KINDS, MethodSpec
from acp_schema.codegen_common import load_index
from pydantic import BaseModel

INDEX = load_index()
T = TypeVar("T", bound=BaseModel)
RESULT = object()


def test_method_table_matches_the_index_exactly() -> None:
    assert sorted(METHODS) == sorted(INDEX["methods"])
    for name, entry in INDEX["methods"].items():
        spec = METHODS[name]
        assert spec.name == name
        assert (spec.kind, spec.side) == (entry["kind"], entry["side"])
        assert (spec.params_type, spec.result_type) == (entry["params"], entry["result"])
        assert spec.capability == entry["capability"]
        assert spec.stability == entry["stability"]
        assert spec.alias_of == entry["aliasOf"]
        assert spec.schema_file == entry["file"]


@pytest.mark.parametrize(
    ("wire", "python"),
    [
        ("session/new", "session_new"),
        ("$/cancel_request", "cancel_request"),
        ("sessions/list", "sessions_list"),
        ("fs/read_text_file", "fs_read_text_file"),
    ],
)
def test_python_names(wire: str, python: str) -> None:
    assert METHODS[wire].python_name == python


def test_method_spec_is_frozen() -> None:
    with pytest.raises(AttributeError):
        METHODS["initialize"].name = "x"  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(INDEX["methods"]))
def test_params_and_result_resolve_to_model_classes(name: str) -> None:
    spec = METHODS[name]
    assert issubclass(spec.params_model(), BaseModel)
    assert spec.params_model().__name__ == spec.params_type
    result = spec.result_model()
    if spec.kind == "request":
        assert result is not None and issubclass(result, BaseModel)
        assert result.__name__ == spec.result_type
    else:
        assert result is None


def test_update_kinds_match_the_index_and_resolve() -> None:
    from acp_bindings import models

    assert {kind: entry["def"] for kind, entry in INDEX["updates"].items()} == UPDATE_KINDS
    for class_name in UPDATE_KINDS.values():
        assert issubclass(getattr(models, class_name), BaseModel)


def test_error_objects_resolve_to_model_classes() -> None:
    from acp_bindings import models

    for entry in INDEX["errors"].values():
        assert issubclass(getattr(models, entry["def"]), BaseModel)


# ------------------------------------------------------------------------------- errors


def test_error_constants_and_classes_follow_the_index() -> None:
    assert errors.INVALID_PARAMS == -32602
    for code, entry in INDEX["errors"].items():
        assert getattr(errors, entry["name"].upper()) == int(code)
        exception = getattr(errors, entry["exception"])
        assert issubclass(exception, errors.RpcError)
        assert exception.code == int(code)
        assert exception.default_message == entry["message"]
        assert errors.ERRORS_BY_CODE[int(code)] is exception
    assert len(errors.ERRORS_BY_CODE) == len(INDEX["errors"])


def test_rpc_error_wire_form() -> None:
    plain = errors.InvalidParamsError()
    assert plain.message == "Invalid params" and plain.data is None
    assert plain.to_wire() == {"code": -32602, "message": "Invalid params"}
    detailed = errors.ResourceNotFoundError("No such session.", data={"sessionId": "s1"})
    assert detailed.to_wire() == {
        "code": -32002,
        "message": "No such session.",
        "data": {"sessionId": "s1"},
    }
    assert str(detailed) == "No such session."


def test_error_from_wire_rebuilds_known_and_unknown_codes() -> None:
    known = errors.error_from_wire({"code": -32601, "message": "nope", "data": [1]})
    assert isinstance(known, errors.MethodNotFoundError)
    assert (known.message, known.data) == ("nope", [1])
    unknown = errors.error_from_wire({"code": 4242, "message": "custom"})
    assert type(unknown) is errors.RpcError
    assert unknown.to_wire() == {"code": 4242, "message": "custom"}


# ------------------------------------------------------------------------------- agent side


AGENT_METHODS = sorted(name for name, e in INDEX["methods"].items() if e["side"] == "agent")


def test_agent_handlers_cover_exactly_the_agent_methods() -> None:
    coroutines = {
        name
        for name, member in inspect.getmembers(AgentHandlers, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }
    assert coroutines == {METHODS[name].python_name for name in AGENT_METHODS}


@pytest.mark.anyio
@pytest.mark.parametrize("name", AGENT_METHODS)
async def test_agent_defaults_raise_method_not_found(name: str) -> None:
    handler = getattr(AgentHandlers(), METHODS[name].python_name)
    with pytest.raises(errors.MethodNotFoundError) as raised:
        await handler(object())
    assert raised.value.data == {"method": name}
    assert raised.value.code == errors.METHOD_NOT_FOUND


@pytest.mark.anyio
async def test_alias_delegates_to_the_canonical_handler() -> None:
    aliases = {name: spec for name, spec in METHODS.items() if spec.alias_of is not None}
    assert aliases, "the index defines aliases"

    class Implemented(AgentHandlers):
        pass

    calls: list[tuple[str, Any]] = []
    for spec in aliases.values():
        canonical = METHODS[spec.alias_of or ""]

        async def handle(self: AgentHandlers, params: Any, wire: str = canonical.name) -> Any:
            calls.append((wire, params))
            return "answered"

        setattr(Implemented, canonical.python_name, handle)

    handlers = Implemented()
    for alias, spec in sorted(aliases.items()):
        marker = object()
        assert await getattr(handlers, spec.python_name)(marker) == "answered"
        assert calls[-1] == (spec.alias_of, marker), alias


# ------------------------------------------------------------------------------- client side


class RecordingPeer(ClientPeer):
    """Records what each typed method sends instead of using a connection."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any, Any]] = []

    async def send_request(self, method: str, params: BaseModel, result_type: type[T]) -> T:
        self.sent.append(("request", method, params, result_type))
        return cast(T, RESULT)

    async def send_notification(self, method: str, params: BaseModel) -> None:
        self.sent.append(("notification", method, params, None))


PEER_METHODS = sorted(
    name for name, e in INDEX["methods"].items() if e["side"] in ("client", "protocol")
)


@pytest.mark.anyio
@pytest.mark.parametrize("name", PEER_METHODS)
async def test_client_peer_sends_the_wire_name(name: str) -> None:
    spec: MethodSpec = METHODS[name]
    peer = RecordingPeer()
    params = object()  # the typed methods pass params through untouched
    answer = await getattr(peer, spec.python_name)(params)
    assert answer is (RESULT if spec.kind == "request" else None)
    kind, method, sent_params, result_type = peer.sent[-1]
    assert (kind, method, sent_params) == (spec.kind, name, params)
    assert result_type is spec.result_model()


def test_client_peer_has_one_method_per_client_method() -> None:
    coroutines = {
        name
        for name, _ in inspect.getmembers(ClientPeer, inspect.iscoroutinefunction)
        if not name.startswith(("_", "send_"))
    }
    assert coroutines == {METHODS[name].python_name for name in PEER_METHODS}
    assert "cancel_request" in coroutines
    with pytest.raises(TypeError):
        ClientPeer()  # type: ignore[abstract]
