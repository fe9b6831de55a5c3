"""`ScriptedModelClient`: an in-memory `ModelClient` for fast unit tests (no HTTP).

It plays the same turn data as the scripted LLM server (`acp_scripted_llm`), by
rendering the same Anthropic wire events and running them through the same
`StreamAssembler` as the real client, so agent-loop tests see exactly what a real stream
would produce. Scripted faults become the errors the real client raises for them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Mapping
from typing import Any

import anyio
from acp_scripted_llm import anthropic_wire
from acp_scripted_llm.planned import plan_response
from acp_scripted_llm.script import Script, ScriptExhausted
from iac_code.llm.assembler import StreamAssembler, error_from_api
from iac_code.llm.contract import ModelRequest, ModelRequestError, ModelResponseError, StreamEvent


def request_body(request: ModelRequest) -> dict[str, Any]:
    """The JSON body the real client would send (what responders and echo look at)."""
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": request.messages,
        "stream": True,
    }
    if request.system:
        body["system"] = request.system
    if request.tools:
        body["tools"] = request.tools
    if request.thinking_budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    return body


class ScriptedModelClient:
    """Answers each `stream()` call with the next scripted turn.

    `turns` accepts what `Script.coerce` accepts (turn dicts, `Turn` builders, strings,
    responder callables, a ``{"turns", "fallback"}`` mapping). `timing=False` ignores the
    scripted latency and chunk delays. Every request is kept in `requests`.
    """

    def __init__(
        self,
        turns: Script | Iterable[Any] | Mapping[str, Any] | None = None,
        *,
        timing: bool = True,
    ) -> None:
        self.script = Script.coerce(turns)
        self.timing = timing
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        body = request_body(request)
        try:
            plan = plan_response(self.script.next_turn(body), body)
        except ScriptExhausted as exc:
            raise ModelRequestError(str(exc), status_code=400) from exc
        if self.timing and plan.latency:
            await anyio.sleep(plan.latency)
        if plan.error is not None:
            error = plan.error
            raise error_from_api(
                error["status"],
                error["type"],
                f"The model API answered {error['status']}: {error['message']}",
                retry_after=error.get("retry_after"),
            )
        if plan.garbage is not None:
            raise ModelResponseError("the model stream contained data that is not JSON")
        assembler = StreamAssembler()
        delay = plan.chunk_delay if self.timing else 0.0
        for count, (_name, data, is_delta) in enumerate(anthropic_wire.stream_events(plan)):
            if plan.truncate_after is not None and count >= plan.truncate_after:
                raise ModelResponseError("The model stream was cut off.", retryable=True)
            if delay and is_delta:
                await anyio.sleep(delay)
            event = assembler.feed(data)
            if event is not None:
                yield event
        assembler.check_complete()
