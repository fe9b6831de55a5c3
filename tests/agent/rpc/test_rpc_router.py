"""The router: method table lookup, strict params validation, result dumping."""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, cast

import anyio
import pytest
from acp_bindings.errors import InvalidParamsError, MethodNotFoundError
from iac_code.router import Router, dump_result, validate_params
from iac_code.rpc import RequestContext, current_request
from iac_code.rpc.memory import RawPeer, raw_peer_connection
from pydantic import BaseModel, ConfigDict, Field

pytestmark = pytest.mark.anyio

V = {"jsonrpc": "2.0"}


class Mode(enum.StrEnum):
    FAST = "fast"
    SLOW = "slow"


class Inner(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    max_tokens: int = Field(alias="maxTokens", ge=1)


class DoParams(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    session_id: str = Field(alias="sessionId")
    count: int
    mode: Mode | None = None
    kind: Literal["a", "b"] | None = None
    inner: Inner | None = None
    items: list[Inner] | None = None
    field_meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NoRequired(BaseModel):
    model_config = ConfigDict(extra="allow")
    flag: bool | None = None


class DoResult(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    session_id: str = Field(alias="sessionId")
    note: str | None = None


@dataclass(frozen=True)
class FakeSpec:
    name: str
    python_name: str
    kind: str
    side: str
    model: type[BaseModel]
    alias_of: str | None = None

    def params_model(self) -> type[BaseModel]:
        return self.model


FAKE_METHODS = {
    spec.name: spec
    for spec in [
        FakeSpec("x/do", "x_do", "request", "agent", DoParams),
        FakeSpec("x/do_alias", "x_do_alias", "request", "agent", DoParams, alias_of="x/do"),
        FakeSpec("x/plain", "x_plain", "request", "agent", NoRequired),
        FakeSpec("x/ctx", "x_ctx", "request", "agent", NoRequired),
        FakeSpec("x/note", "x_note", "notification", "agent", NoRequired),
        FakeSpec("x/client_only", "x_client_only", "request", "client", NoRequired),
        FakeSpec("x/client_note", "x_client_note", "notification", "client", NoRequired),
        FakeSpec("$/proto", "proto", "notification", "protocol", NoRequired),
        FakeSpec("x/missing_impl", "x_missing_impl", "request", "agent", NoRequired),
    ]
}


class FakeHandlers:
    def __init__(self) -> None:
        self.calls: list[tuple[str, BaseModel]] = []
        self.noted = anyio.Event()

    async def x_do(self, params: DoParams) -> DoResult:
        self.calls.append(("x_do", params))
        return DoResult(sessionId=params.session_id)

    async def x_plain(self, params: NoRequired) -> dict[str, Any]:
        self.calls.append(("x_plain", params))
        return {"flag": params.flag, "extra": params.model_extra}

    async def x_ctx(self, params: NoRequired) -> dict[str, Any]:
        ctx = current_request()
        return {"id": ctx.request_id, "method": ctx.method}

    async def x_note(self, params: NoRequired) -> None:
        self.calls.append(("x_note", params))
        self.noted.set()

    async def x_client_only(self, params: NoRequired) -> dict[str, Any]:
        raise AssertionError("client-side methods must never reach agent handlers")

    async def proto(self, params: NoRequired) -> None:
        raise AssertionError("protocol notifications are not routed to handlers")


def fake_router() -> tuple[Router, FakeHandlers]:
    handlers = FakeHandlers()
    return Router(handlers, FAKE_METHODS), handlers


CTX = RequestContext(cast(Any, None), 1, "test")  # the router itself never uses the context


async def invalid_params(router: Router, method: str, params: object) -> dict[str, str]:
    with pytest.raises(InvalidParamsError) as caught:
        await router.handle_request(CTX, method, params)
    assert caught.value.message == "Invalid params"
    data = caught.value.data
    assert isinstance(data, dict)
    return data


async def test_a_valid_request_reaches_its_handler_and_the_model_result_is_dumped() -> None:
    router, handlers = fake_router()
    result = await router.handle_request(
        CTX, "x/do", {"sessionId": "s1", "count": 2, "mode": "fast"}
    )
    assert result == {"sessionId": "s1"}  # unset optional fields are not invented as nulls
    ((name, params),) = handlers.calls
    assert name == "x_do" and isinstance(params, DoParams)
    assert params.mode is Mode.FAST


async def test_an_alias_is_served_by_the_canonical_handler() -> None:
    router, handlers = fake_router()
    assert await router.handle_request(CTX, "x/do_alias", {"sessionId": "s", "count": 1}) == {
        "sessionId": "s"
    }
    assert handlers.calls[0][0] == "x_do"


@pytest.mark.parametrize(
    "method", ["nope", "_iac/unknown", "x/client_only", "$/proto", "x/note", "x/missing_impl"]
)
async def test_unknown_client_side_and_notification_names_are_method_not_found(method: str) -> None:
    router, _ = fake_router()
    with pytest.raises(MethodNotFoundError) as caught:
        await router.handle_request(CTX, method, {})
    assert caught.value.data == {"method": method}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"sessionId": "s", "count": "1"}, {"count": "must be an integer"}),
        ({"sessionId": "s", "count": True}, {"count": "must be an integer"}),
        ({"sessionId": "s", "count": 1.5}, {"count": "must be an integer"}),
        ({"sessionId": 5, "count": 1}, {"sessionId": "must be a string"}),
        ({"count": 1}, {"sessionId": "is required"}),
        ({"session_id": "s", "count": 1}, {"sessionId": "is required"}),
        ({"sessionId": "s", "count": 1, "mode": "warp"}, {"mode": "must be one of: fast, slow"}),
        ({"sessionId": "s", "count": 1, "kind": "c"}, {"kind": "must be one of: a, b"}),
        (
            {"sessionId": "s", "count": 1, "inner": {"maxTokens": 0}},
            {"inner.maxTokens": "must be at least 1"},
        ),
        ({"sessionId": "s", "count": 1, "inner": []}, {"inner": "must be an object"}),
        (
            {"sessionId": "s", "count": 1, "items": [{"maxTokens": 1}, {}]},
            {"items.1.maxTokens": "is required"},
        ),
        ({"sessionId": "s", "count": 1, "items": {}}, {"items": "must be an array"}),
        ({"sessionId": "s", "count": 1, "_meta": "x"}, {"_meta": "must be an object"}),
    ],
)
async def test_params_are_validated_strictly_with_field_level_detail(
    params: dict[str, Any], expected: dict[str, str]
) -> None:
    router, handlers = fake_router()
    assert await invalid_params(router, "x/do", params) == expected
    assert handlers.calls == []


async def test_absent_params_mean_an_empty_object() -> None:
    router, _ = fake_router()
    assert await router.handle_request(CTX, "x/plain", None) == {"flag": None, "extra": {}}
    assert await invalid_params(router, "x/do", None) == {
        "sessionId": "is required",
        "count": "is required",
    }


async def test_params_that_are_not_an_object_are_invalid_params() -> None:
    router, _ = fake_router()
    assert await invalid_params(router, "x/plain", [1, 2]) == {"params": "must be an object"}


async def test_meta_is_accepted_and_never_overrides_validated_params() -> None:
    router, handlers = fake_router()
    params = {"sessionId": "real", "count": 1, "_meta": {"sessionId": "fake", "count": 9}}
    assert await router.handle_request(CTX, "x/do", params) == {"sessionId": "real"}
    validated = handlers.calls[0][1]
    assert isinstance(validated, DoParams)
    assert (validated.session_id, validated.count) == ("real", 1)
    assert validated.field_meta == {"sessionId": "fake", "count": 9}


async def test_notifications_for_the_agent_are_routed_and_others_ignored() -> None:
    router, handlers = fake_router()
    await router.handle_notification("x/note", {"flag": True})
    for method in ("x/client_note", "$/proto", "_iac/whatever", "nope", "x/do"):
        await router.handle_notification(method, {})
    await router.handle_notification("x/note", {"flag": "yes"})  # invalid: logged, dropped
    assert [(name, params.model_dump()) for name, params in handlers.calls] == [
        ("x_note", {"flag": True})
    ]


def test_dump_result_passes_plain_values_through() -> None:
    assert dump_result({"a": None}) == {"a": None}
    assert dump_result(None) is None
    assert dump_result(DoResult(sessionId="s", note=None)) == {"sessionId": "s", "note": None}


def test_validate_params_is_usable_alone() -> None:
    model = validate_params(DoParams, {"sessionId": "s", "count": 3})
    assert isinstance(model, DoParams) and model.count == 3


@asynccontextmanager
async def routed(handlers: object, methods: Any = None) -> AsyncIterator[RawPeer]:
    connection, peer = raw_peer_connection(Router(handlers, methods))
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(connection.serve)
            yield peer
            peer.close_input()


async def test_router_behind_a_connection_answers_on_the_wire() -> None:
    handlers = FakeHandlers()
    async with routed(handlers, FAKE_METHODS) as peer:
        await peer.send(
            {**V, "id": 1, "method": "x/do", "params": {"sessionId": "s", "count": "2"}}
        )
        assert await peer.receive() == {
            **V,
            "id": 1,
            "error": {
                "code": -32602,
                "message": "Invalid params",
                "data": {"count": "must be an integer"},
            },
        }
        await peer.send({**V, "id": 2, "method": "_iac/nothing"})
        assert (await peer.receive())["error"] == {
            "code": -32601,
            "message": "Method not found",
            "data": {"method": "_iac/nothing"},
        }
        await peer.send({**V, "method": "_iac/unknown_note"})
        await peer.send({**V, "method": "x/note", "params": {}})
        with anyio.fail_after(60):
            await handlers.noted.wait()
        await peer.send({**V, "id": "c", "method": "x/ctx"})
        assert (await peer.receive())["result"] == {"id": "c", "method": "x/ctx"}


# ----------------------------------------------------------------- with the generated bindings


@pytest.fixture
def real_handlers() -> object:
    agent = pytest.importorskip("acp_bindings.agent")

    class Handlers(agent.AgentHandlers):  # type: ignore[name-defined]
        async def initialize(self, params: Any) -> dict[str, Any]:
            return {"protocolVersion": params.protocol_version, "agentCapabilities": {}}

    return Handlers()


async def test_real_initialize_rejects_a_string_protocol_version(real_handlers: object) -> None:
    async with routed(real_handlers) as peer:
        await peer.send({**V, "id": 0, "method": "initialize", "params": {"protocolVersion": "1"}})
        reply = await peer.receive()
        assert reply["id"] == 0
        assert reply["error"]["code"] == -32602
        assert reply["error"]["data"] == {"protocolVersion": "must be an integer"}
        await peer.send({**V, "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        assert (await peer.receive())["result"] == {"protocolVersion": 1, "agentCapabilities": {}}


@pytest.mark.parametrize(
    "method",
    ["session/update", "fs/read_text_file", "session/request_permission", "$/cancel_request"],
)
async def test_real_client_side_methods_sent_to_the_agent_are_not_found(
    real_handlers: object, method: str
) -> None:
    router = Router(real_handlers)
    with pytest.raises(MethodNotFoundError) as caught:
        await router.handle_request(CTX, method, {})
    assert caught.value.data == {"method": method}


async def test_real_unimplemented_methods_answer_method_not_found(real_handlers: object) -> None:
    router = Router(real_handlers)
    with pytest.raises(MethodNotFoundError) as caught:
        await router.handle_request(CTX, "sessions/list", {})
    assert caught.value.data == {"method": "sessions/list"}
    # Notification defaults raise MethodNotFoundError too: a notification is never answered.
    await router.handle_notification("session/cancel", {"sessionId": "s"})


async def test_real_prompt_params_get_wire_paths() -> None:
    agent = pytest.importorskip("acp_bindings.agent")

    class Prompting(agent.AgentHandlers):  # type: ignore[name-defined]
        async def session_prompt(self, params: Any) -> dict[str, Any]:
            raise AssertionError("invalid params never reach the handler")

    router = Router(Prompting())
    data = await invalid_params(
        router, "session/prompt", {"sessionId": "s", "prompt": [{"type": "bogus"}]}
    )
    assert list(data) == ["prompt.0.type"]
    assert data["prompt.0.type"].startswith("must be one of: text, image")
    data = await invalid_params(
        router, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text"}]}
    )
    assert data == {"prompt.0.text": "is required"}


# ----------------------------------------------------------------- unimplemented = -32601 first

INVALID_PARAMS = {
    "session/prompt": {"sessionId": 5, "prompt": "not a list"},
    "session/load": [1, 2],
    "session/fork": {"cwd": 3},
    "sessions/list": {"cursor": 7},
    "logout": "x",
}


@pytest.mark.parametrize("method", sorted(INVALID_PARAMS))
async def test_a_method_left_to_the_generated_stub_is_not_found_before_params_are_checked(
    real_handlers: object, method: str
) -> None:
    router = Router(real_handlers)
    with pytest.raises(MethodNotFoundError) as caught:
        await router.handle_request(CTX, method, INVALID_PARAMS[method])
    assert caught.value.data == {"method": method}


async def test_unimplemented_method_with_bad_params_answers_32601_on_the_wire(
    real_handlers: object,
) -> None:
    async with routed(real_handlers) as peer:
        await peer.send({**V, "id": 1, "method": "session/prompt", "params": {"sessionId": 1}})
        assert (await peer.receive())["error"] == {
            "code": -32601,
            "message": "Method not found",
            "data": {"method": "session/prompt"},
        }


async def test_an_alias_of_an_implemented_method_is_served_and_validated() -> None:
    agent = pytest.importorskip("acp_bindings.agent")
    seen: list[object] = []

    class Listing(agent.AgentHandlers):  # type: ignore[name-defined]
        async def session_list(self, params: Any) -> dict[str, Any]:
            seen.append(params.cursor)
            return {"sessions": []}

    router = Router(Listing())
    assert await router.handle_request(CTX, "sessions/list", {"cursor": "c"}) == {"sessions": []}
    assert seen == ["c"]
    assert await invalid_params(router, "sessions/list", {"cursor": 7}) == {
        "cursor": "must be a string"
    }


async def test_handlers_not_derived_from_the_stubs_are_routed_by_attribute() -> None:
    # Any object works as handlers; only the stub class's own methods mean "unimplemented".
    router, handlers = fake_router()
    await router.handle_request(CTX, "x/plain", {"flag": True})
    assert handlers.calls[0][0] == "x_plain"


def test_build_models_covers_exactly_the_implemented_agent_methods() -> None:
    agent = pytest.importorskip("acp_bindings.agent")
    from acp_bindings.methods import METHODS
    from iac_code.router import build_models

    class Listing(agent.AgentHandlers):  # type: ignore[name-defined]
        async def session_list(self, params: Any) -> dict[str, Any]:
            return {"sessions": []}

    # The alias sessions/list shares the canonical method's models; logout is a stub.
    assert build_models(Listing) == ["session/list"]
    assert METHODS["session/list"].params_model().__pydantic_complete__
    assert METHODS["session/list"].result_model().__pydantic_complete__


async def test_the_stubs_of_another_protocol_versions_bindings_count_as_unimplemented() -> None:
    # A second bindings package (say acp_bindings.v2) generates its own AgentHandlers.
    async def _stub(self: object, params: object) -> object:
        raise AssertionError("a generated default must not be called for unimplemented methods")

    other_stubs = type("AgentHandlers", (), {"x_do": _stub, "x_plain": _stub})
    other_stubs.__module__ = "acp_bindings.v9.agent"

    class OtherVersion(other_stubs):  # type: ignore[misc, valid-type]
        async def x_plain(self, params: NoRequired) -> dict[str, Any]:
            return {"served": True}

    router = Router(OtherVersion(), FAKE_METHODS)
    with pytest.raises(MethodNotFoundError):
        await router.handle_request(CTX, "x/do", {"sessionId": 1})  # invalid, yet -32601
    assert await router.handle_request(CTX, "x/plain", {}) == {"served": True}
