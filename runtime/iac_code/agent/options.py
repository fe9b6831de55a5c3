"""Session modes and configuration options, as advertised on the wire (plain dicts)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

    from acp_bindings.errors import InvalidParamsError


def _invalid_params(message: str, data: Any = None) -> InvalidParamsError:
    # Imported here: the start-up fast path builds session/new answers with this module
    # before the generated bindings are loaded.
    from acp_bindings.errors import InvalidParamsError

    return InvalidParamsError(message, data=data)


DEFAULT_MODE = "default"
MODES: dict[str, tuple[str, str]] = {
    "default": ("Default", "Ask before editing files or running commands"),
    "accept_edits": ("Accept edits", "Edit files inside the workspace without asking"),
    "read_only": ("Read only", "Refuse every edit and command without asking"),
}

#: Extended-thinking levels offered as the ``thought_level`` option → token budget.
THOUGHT_LEVELS: dict[str, tuple[str, int]] = {
    "off": ("Off", 0),
    "low": ("Low", 2_048),
    "medium": ("Medium", 8_192),
    "high": ("High", 24_576),
}
DEFAULT_THOUGHT_LEVEL = "off"


def modes_state(current: str) -> dict[str, Any]:
    return {
        "currentModeId": current,
        "availableModes": [
            {"id": mode_id, "name": name, "description": description}
            for mode_id, (name, description) in MODES.items()
        ],
    }


def check_mode(mode_id: str) -> str:
    if mode_id not in MODES:
        raise _invalid_params(
            "Unknown mode.", data={"modeId": f"must be one of: {', '.join(MODES)}"}
        )
    return mode_id


class SessionConfig:
    """The current values of a session's config options.

    A plain class rather than a dataclass: the start-up fast path builds ``session/new``
    answers with this module, and importing ``dataclasses`` costs more than the answer."""

    __slots__ = ("model", "thought_level")

    def __init__(self, model: str, thought_level: str = DEFAULT_THOUGHT_LEVEL) -> None:
        self.model = model
        self.thought_level = thought_level

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionConfig):
            return NotImplemented
        return (self.model, self.thought_level) == (other.model, other.thought_level)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return f"SessionConfig(model={self.model!r}, thought_level={self.thought_level!r})"

    @property
    def thinking_budget(self) -> int:
        return THOUGHT_LEVELS[self.thought_level][1]

    def to_events(self) -> dict[str, str]:
        return {"model": self.model, "thought_level": self.thought_level}


def config_options(config: SessionConfig, models: tuple[str, ...]) -> list[dict[str, Any]]:
    """The complete ``configOptions`` list (select options only: no boolean ones are offered)."""
    return [
        {
            "id": "model",
            "name": "Model",
            "description": "The Claude model used for the next request",
            "category": "model",
            "type": "select",
            "currentValue": config.model,
            "options": [{"value": model, "name": model} for model in models],
        },
        {
            "id": "thought_level",
            "name": "Thinking",
            "description": "Extended thinking budget for each model request",
            "category": "thought_level",
            "type": "select",
            "currentValue": config.thought_level,
            "options": [
                {"value": level, "name": name} for level, (name, _budget) in THOUGHT_LEVELS.items()
            ],
        },
    ]


def apply_config_value(
    config: SessionConfig, models: tuple[str, ...], config_id: str, value: object
) -> None:
    """Validate and apply one ``session/set_config_option`` change (raises -32602)."""
    if config_id == "model":
        allowed: tuple[str, ...] = models
    elif config_id == "thought_level":
        allowed = tuple(THOUGHT_LEVELS)
    else:
        raise _invalid_params(
            "Unknown config option.", data={"configId": "must be one of: model, thought_level"}
        )
    if not isinstance(value, str) or value not in allowed:
        raise _invalid_params(
            "Unknown config value.", data={"value": f"must be one of: {', '.join(allowed)}"}
        )
    setattr(config, config_id, value)
