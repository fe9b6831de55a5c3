"""Scripted LLM HTTP server (Anthropic Messages, OpenAI Chat Completions and Responses, the
Gemini API) for tests,
the conformance checker and the offline demo. See `script` for the turn format."""

from .http_server import ScriptedLLMServer
from .planned import PlannedBlock, PlannedResponse, echo_text, plan_response, split_pieces
from .recorded_request import RecordedRequest
from .script import (
    DEFAULT_CHUNK_SIZE,
    Script,
    ScriptExhausted,
    Turn,
    error_turn,
    text_turn,
    tool_turn,
)

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "PlannedBlock",
    "PlannedResponse",
    "RecordedRequest",
    "Script",
    "ScriptExhausted",
    "ScriptedLLMServer",
    "Turn",
    "echo_text",
    "error_turn",
    "plan_response",
    "split_pieces",
    "text_turn",
    "tool_turn",
]
