"""The summary of a Terraform/OpenTofu plan, from the JSON that ``show -json PLANFILE`` prints.

Counted per resource instance from ``resource_changes[].change.actions``: ``["create"]``,
``["update"]``, ``["delete"]``, and ``["delete", "create"]`` / ``["create", "delete"]`` for a
replacement (``no-op`` and ``read`` change nothing). Every destroy and replace is named, with
Terraform's reason for a replacement when it gives one; ``resource_drift`` lists objects that
changed outside Terraform since the last apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_REPLACE_REASONS = {
    "replace_because_cannot_update": "an argument that forces replacement changed",
    "replace_because_tainted": "it is tainted",
    "replace_by_request": "replacement was requested",
    "replace_by_triggers": "a replace_triggered_by reference changed",
}


@dataclass
class PlanSummary:
    create: list[str] = field(default_factory=list)
    update: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)
    destroy: list[str] = field(default_factory=list)
    drift: list[str] = field(default_factory=list)
    replace_reasons: dict[str, str] = field(default_factory=dict)
    errored: bool = False

    @property
    def changes_nothing(self) -> bool:
        return not (self.create or self.update or self.replace or self.destroy)

    def counts(self) -> dict[str, int]:
        return {
            "create": len(self.create),
            "update": len(self.update),
            "replace": len(self.replace),
            "destroy": len(self.destroy),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts(),
            "create": self.create,
            "update": self.update,
            "replace": self.replace,
            "destroy": self.destroy,
            "replaceReasons": self.replace_reasons,
            "drift": self.drift,
            "errored": self.errored,
        }

    def text(self, plan_path: str | None) -> str:
        counts = self.counts()
        lines = [
            f"Plan: {counts['create']} to create, {counts['update']} to update, "
            f"{counts['replace']} to replace, {counts['destroy']} to destroy."
        ]
        if self.errored:
            lines.append("The plan is incomplete: Terraform reported errors while planning.")
        if self.changes_nothing and not self.errored:
            lines.append("No changes: the infrastructure matches the configuration.")
        for address in self.destroy:
            lines.append(f"- destroy {address}")
        for address in self.replace:
            reason = self.replace_reasons.get(address)
            lines.append(f"- replace {address}" + (f" ({reason})" if reason else ""))
        if self.drift:
            lines.append(f"Drift (changed outside Terraform): {', '.join(self.drift)}")
        if plan_path:
            lines.append(f"Plan file: {plan_path}")
        return "\n".join(lines)


def _actions(change: Mapping[str, Any]) -> tuple[str, ...]:
    actions = change.get("actions")
    return tuple(a for a in actions if isinstance(a, str)) if isinstance(actions, list) else ()


def summarize_plan(document: Mapping[str, Any]) -> PlanSummary:
    """Summarize a ``show -json`` plan document (unknown or missing parts are ignored)."""
    summary = PlanSummary(errored=bool(document.get("errored")))
    for item in document.get("resource_changes") or []:
        if not isinstance(item, Mapping):
            continue
        address = str(item.get("address", "?"))
        change = item.get("change")
        actions = _actions(change) if isinstance(change, Mapping) else ()
        if set(actions) == {"delete", "create"}:
            summary.replace.append(address)
            reason = _REPLACE_REASONS.get(str(item.get("action_reason", "")))
            if reason:
                summary.replace_reasons[address] = reason
        elif actions == ("create",):
            summary.create.append(address)
        elif actions == ("update",):
            summary.update.append(address)
        elif actions == ("delete",):
            summary.destroy.append(address)
    for item in document.get("resource_drift") or []:
        if isinstance(item, Mapping):
            change = item.get("change")
            actions = _actions(change) if isinstance(change, Mapping) else ()
            if actions and actions != ("no-op",):
                summary.drift.append(str(item.get("address", "?")))
    return summary
