"""``ask_user``: the model asks the user one structured question (ACP elicitation, form mode).

Offered only when the client advertised ``clientCapabilities.elicitation.form``. The question
is either a choice among a few values (which environment, which workspace) or a short text.
The client shows it as a one-field form; whatever comes back — an answer, a decline or a
cancel — is given to the model as the tool's result. The request is checked against the
generated ``elicitation/create`` models before it is sent, and the answer both against them
and against the form that was asked (a value outside the choices is not an answer).
"""

from __future__ import annotations

from typing import Any

from iac_code.tools.contract import Access, AccessKind, JsonDict, Tool, ToolContext, ToolOutcome

MAX_CHOICES = 20
MAX_ANSWER_CHARS = 2_000
ANSWER_FIELD = "answer"


class ElicitationAnswerError(Exception):
    """The client's answer does not fit the question (or the protocol's shapes)."""


def requested_schema(tool_input: JsonDict) -> dict[str, Any]:
    """The one-field form for a question: a choice when ``choices`` is given, else text."""
    field: dict[str, Any] = {"type": "string", "title": "Answer"}
    choices: list[str] = list(tool_input.get("choices") or [])
    if choices:
        field["oneOf"] = [{"const": choice, "title": choice} for choice in choices]
    else:
        field["maxLength"] = MAX_ANSWER_CHARS
    default = tool_input.get("default")
    if isinstance(default, str) and (not choices or default in choices):
        field["default"] = default
    return {"type": "object", "properties": {ANSWER_FIELD: field}, "required": [ANSWER_FIELD]}


def answer_from(result: Any, schema: dict[str, Any]) -> tuple[str, str | None]:
    """``(action, answer)`` from an ``elicitation/create`` result; raises when it is invalid."""
    from acp_bindings.models import CreateElicitationResponse
    from pydantic import ValidationError

    try:
        CreateElicitationResponse.model_validate(result)
    except ValidationError:
        raise ElicitationAnswerError("the answer is not an elicitation result") from None
    action = result.get("action")
    if action in ("decline", "cancel"):
        return action, None
    if action != "accept":
        raise ElicitationAnswerError(f"unknown action {action!r}")
    content = result.get("content")
    value = content.get(ANSWER_FIELD) if isinstance(content, dict) else None
    if not isinstance(value, str):
        raise ElicitationAnswerError("the accepted answer has no text")
    field = schema["properties"][ANSWER_FIELD]
    allowed = [option["const"] for option in field.get("oneOf", [])]
    if allowed and value not in allowed:
        raise ElicitationAnswerError(f"{value!r} is not one of the choices offered")
    if len(value) > field.get("maxLength", MAX_ANSWER_CHARS):
        raise ElicitationAnswerError("the answer is longer than the form allows")
    return "accept", value


class AskUserTool(Tool):
    name = "ask_user"
    kind = "other"
    description = (
        "Ask the user one short question and wait for the answer, when you cannot go on"
        " without a decision only they can make (for example which environment, account or"
        " Terraform workspace to target). Give `choices` when the answer is one of a few known"
        " values; leave them out for a short free-text answer. The user may also decline or"
        " cancel; then do not ask the same question again."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "question": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1000,
                "description": "The question, in one or two sentences.",
            },
            "choices": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 200},
                "minItems": 2,
                "maxItems": MAX_CHOICES,
                "uniqueItems": True,
                "description": "The possible answers, when the user should pick one.",
            },
            "default": {
                "type": "string",
                "description": "The answer suggested to the user (one of the choices, if any).",
            },
        },
        "required": ["question"],
    }

    def _title(self, tool_input: JsonDict) -> str:
        return f"Ask: {tool_input['question']}"[:120]

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return Access(kind=AccessKind.READ)  # it only asks the user: nothing to permit

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        if ctx.ask_user is None:
            return ToolOutcome.error("This client cannot ask the user questions.")
        schema = requested_schema(tool_input)
        try:
            result = await ctx.ask_user(tool_input["question"], schema)
            action, answer = answer_from(result, schema)
        except ElicitationAnswerError as exc:
            return ToolOutcome.error(f"The client's answer could not be used: {exc}.")
        except Exception as exc:  # a JSON-RPC error from the client, a closed connection
            return ToolOutcome.error(f"The question could not be asked: {exc}")
        if action == "accept":
            text = f"The user answered: {answer}"
        elif action == "decline":
            text = "The user declined to answer. Go on without this information or stop."
        else:
            text = "The user dismissed the question without answering."
        return ToolOutcome(model_content=text, raw_output={"action": action, "answer": answer})
