"""One request the scripted model server received, as tests and the checker read it: which
API it spoke, its key, whether it is a model call, and its messages, system prompt and tools
whatever the API's shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .request_views import (
    GEMINI_MODEL_METHODS,
    gemini_call,
    gemini_view,
    responses_view,
)

Api = Literal["anthropic", "openai", "openai-responses", "gemini"]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One HTTP request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    timestamp: float  # time.time() when the request line was read
    monotonic: float = field(default=0.0, repr=False)

    @property
    def api(self) -> Api | None:
        if self.path.startswith("/v1/messages"):
            return "anthropic"
        if self.path.startswith("/v1/chat/completions"):
            return "openai"
        if self.path.startswith("/v1/responses"):
            return "openai-responses"
        if gemini_call(self.path) is not None:
            return "gemini"
        return None

    @property
    def api_key(self) -> str | None:
        """The credential sent: ``x-api-key`` or a bearer ``authorization`` header."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        if "x-goog-api-key" in self.headers:
            return self.headers["x-goog-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None

    @property
    def is_model_call(self) -> bool:
        if self.method != "POST":
            return False
        gemini = gemini_call(self.path)
        if gemini is not None:
            return gemini[1] in GEMINI_MODEL_METHODS
        return self.path in ("/v1/messages", "/v1/chat/completions", "/v1/responses")

    @property
    def streaming(self) -> bool:
        if self.api == "gemini":  # Gemini streams by method, not by a body flag
            return self.path.endswith(":streamGenerateContent")
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def chat_view(self) -> dict[str, Any]:
        """The body in the Anthropic / Chat Completions shape the `Script` reads (see
        `request_views`); the body itself for those two APIs."""
        if not isinstance(self.body, dict):
            return {}
        gemini = gemini_call(self.path)
        if gemini is not None:
            return gemini_view(self.body, gemini[0])
        if self.api == "openai-responses":
            return responses_view(self.body)
        return self.body

    @property
    def messages(self) -> list[Any]:
        return list(self.chat_view.get("messages") or [])

    @property
    def system(self) -> Any:
        """The system prompt: Anthropic ``system`` (string or blocks) or OpenAI system message."""
        if not isinstance(self.body, dict):
            return None
        if "system" in self.body:
            return self.body["system"]
        for message in self.messages:
            if isinstance(message, dict) and message.get("role") in ("system", "developer"):
                return message.get("content")
        return None

    @property
    def tools(self) -> list[Any]:
        return list(self.chat_view.get("tools") or [])

    @property
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.tools:
            if isinstance(tool, dict):
                names.append(tool.get("name") or (tool.get("function") or {}).get("name", ""))
        return names

    @property
    def has_cache_control(self) -> bool:
        """True when any block of the body carries ``cache_control``."""
        return _contains_key(self.body, "cache_control")

    @property
    def thinking(self) -> Any:
        return self.body.get("thinking") if isinstance(self.body, dict) else None


def _contains_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_contains_key(v, key) for v in value.values())
    if isinstance(value, list):
        return any(_contains_key(v, key) for v in value)
    return False
