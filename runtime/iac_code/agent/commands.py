"""Slash commands advertised with ``available_commands_update``.

Each command is a prompt template: ``/name rest`` in a prompt is expanded into instructions
for the model before the turn starts, so a command does exactly what its description says.
"""

from __future__ import annotations

from typing import Any

_COMMANDS: dict[str, tuple[str, str, str]] = {
    "validate": (
        "Run the infrastructure validators that fit this workspace and fix what they report",
        "optional path or module to validate",
        "Find the infrastructure-as-code in this workspace{target}. Run the validators that fit"
        " it (for example `terraform validate` / `tofu validate`, `cfn-lint`, `kubeconform` or"
        " `kubectl --dry-run=client`, `pulumi preview`), explain each problem they report and"
        " propose fixes.",
    ),
    "review": (
        "Review infrastructure code for security and reliability problems",
        "optional path to review",
        "Review the infrastructure-as-code in this workspace{target} for security and"
        " reliability problems: public exposure, missing encryption, over-broad IAM, missing"
        " tags or limits, drift-prone settings. List findings by severity with file and line.",
    ),
    "explain": (
        "Explain what the infrastructure in this workspace deploys",
        "optional path to explain",
        "Explain what the infrastructure-as-code in this workspace{target} deploys, how the"
        " pieces depend on each other, and what it would cost to run at a rough level.",
    ),
}


def available_commands() -> list[dict[str, Any]]:
    return [
        {"name": name, "description": description, "input": {"hint": hint}}
        for name, (description, hint, _template) in _COMMANDS.items()
    ]


def expand_command(text: str) -> str:
    """``/validate modules/vpc`` → the command's instructions; other text is unchanged."""
    if not text.startswith("/"):
        return text
    name, _, rest = text[1:].partition(" ")
    command = _COMMANDS.get(name)
    if command is None:
        return text
    rest = rest.strip()
    return command[2].format(target=f" (focus on {rest})" if rest else "")
