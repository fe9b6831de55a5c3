"""Model client layer: the `ModelClient` protocol, stream events, retries, implementations.

Importing this package is cheap (stdlib only). `AnthropicModelClient` is loaded on first
attribute access and imports the SDK only on its first call; `ScriptedModelClient` (tests)
lives in `iac_code_dev.fake_llm`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .contract import (
    BlockFinished,
    ContentBlock,
    Message,
    MessageFinished,
    ModelAuthError,
    ModelClient,
    ModelConnectionError,
    ModelError,
    ModelRateLimitError,
    ModelRequest,
    ModelRequestError,
    ModelResponse,
    ModelResponseError,
    ModelServerError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    ToolUseInputDelta,
    ToolUseStarted,
    Usage,
    collect,
)

if TYPE_CHECKING:
    from .anthropic_client import AnthropicModelClient
    from .retry import RetryNotice, stream_with_retries

__all__ = [
    "AnthropicModelClient",
    "BlockFinished",
    "ContentBlock",
    "Message",
    "MessageFinished",
    "ModelAuthError",
    "ModelClient",
    "ModelConnectionError",
    "ModelError",
    "ModelRateLimitError",
    "ModelRequest",
    "ModelRequestError",
    "ModelResponse",
    "ModelResponseError",
    "ModelServerError",
    "RetryNotice",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingSignature",
    "ToolUseInputDelta",
    "ToolUseStarted",
    "Usage",
    "collect",
    "stream_with_retries",
]

_LAZY = {
    "AnthropicModelClient": ".anthropic_client",
    "RetryNotice": ".retry",
    "stream_with_retries": ".retry",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name, __name__), name)
