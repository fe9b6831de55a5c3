"""``iac_check``: validate, lint and scan the IaC under a path with what is installed.

Read-only (it changes no file; ``terraform init`` writes to a temporary data directory) and
offline (see ``iac_checkers``), so it runs without asking inside the workspace. The agent
also runs it by itself at the end of a turn that edited IaC files (``auto_check_path``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

import anyio

from iac_code.child_env import child_environment
from iac_code.tools.contract import (
    Access,
    AccessKind,
    JsonDict,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.iac_checkers import (
    CheckReport,
    Runner,
    check_checkov,
    check_cloudformation,
    check_hcl_files,
    check_json_templates,
    check_kubernetes,
    check_terraform,
    check_yaml,
    offline_environment,
)
from iac_code.tools.iac_detect import IAC_SUFFIXES, Detected, detect
from iac_code.tools.paths import resolve_path
from iac_code.tools.workspace import BaseDirectoryReadTool, path_access

# The whole check, all tools together, ends within this; each process gets what is left.
TOTAL_TIMEOUT_S = 120.0
_MIN_STEP_S = 5.0
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


class IacCheckTool(BaseDirectoryReadTool):
    name = "iac_check"
    kind = "read"
    read_only = True
    masks_output = True
    description = (
        "Check infrastructure-as-code under a path (a directory or one file; default: the "
        "working directory) with the checkers that are installed: terraform/tofu fmt -check "
        "and validate (or an HCL parse), cfn-lint for CloudFormation, yamllint and "
        "kubeconform for Kubernetes manifests, checkov. Returns a list of findings (file, "
        "line, severity, rule, message). Changes nothing and uses no network. Run it after "
        "editing IaC files; the agent also runs it itself at the end of such a turn."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "Directory or file to check (default: the working directory).",
            },
        },
    }

    def _title(self, tool_input: JsonDict) -> str:
        return f"Check IaC in {tool_input.get('path') or '.'}"

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return path_access(AccessKind.READ, self._raw_base(tool_input), ctx)

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        root = resolve_path(self._raw_base(tool_input), ctx.cwd)
        if not root.exists():
            return ToolOutcome.error(f"Nothing to check: {root} does not exist.")
        detected = await anyio.to_thread.run_sync(detect, root)
        report = CheckReport()
        if not detected.empty:
            await self._check(root, detected, ctx, report)
        return _outcome(root, ctx, detected.describe(), report, detected.cut_short)

    async def _check(
        self, root: Path, detected: Detected, ctx: ToolContext, report: CheckReport
    ) -> None:
        base_env = dict(ctx.env) if ctx.env is not None else child_environment()
        env = offline_environment(base_env)
        deadline = time.monotonic() + TOTAL_TIMEOUT_S

        def runner() -> Runner:
            left = max(deadline - time.monotonic(), _MIN_STEP_S)
            return Runner(env=env, cwd=ctx.cwd, timeout_s=left, grace_s=ctx.limits.kill_grace_s)

        with anyio.move_on_after(TOTAL_TIMEOUT_S + 10) as scope:
            for module in detected.terraform_dirs:
                await check_terraform(runner(), module, report)
            if detected.tfvars:
                await check_hcl_files(runner(), detected.tfvars, report)
            await check_cloudformation(runner(), detected.cloudformation, report)
            check_json_templates(runner(), detected.ros, report)
            yaml_files = [
                p
                for p in (*detected.cloudformation, *detected.ros, *detected.kubernetes)
                if p.suffix in (".yaml", ".yml")
            ]
            await check_yaml(runner(), yaml_files, report)
            await check_kubernetes(runner(), detected.kubernetes, report)
            await check_checkov(runner(), root, detected.root_is_file, report)
        if scope.cancelled_caught:
            report.skipped.append(f"the rest (the check stopped after {TOTAL_TIMEOUT_S:g} s)")


def _outcome(
    root: Path, ctx: ToolContext, found: str, report: CheckReport, cut_short: bool
) -> ToolOutcome:
    shown = os.fspath(root.relative_to(ctx.cwd)) if root.is_relative_to(ctx.cwd) else str(root)
    diagnostics = sorted(
        report.diagnostics,
        key=lambda d: (_SEVERITY_ORDER.get(d.severity, 3), d.file, d.line or 0),
    )
    lines = [f"iac_check of {shown or '.'}: {found}."]
    if cut_short:
        lines.append("(The tree is large: only its first files were looked at.)")
    if report.ran:
        lines.append("Ran: " + ", ".join(dict.fromkeys(report.ran)) + ".")
    if report.skipped:
        lines.append("Not run: " + "; ".join(dict.fromkeys(report.skipped)) + ".")
    counts = {s: sum(1 for d in diagnostics if d.severity == s) for s in _SEVERITY_ORDER}
    if any(d.severity in ("error", "warning") for d in diagnostics):
        lines.append(f"{counts['error']} error(s), {counts['warning']} warning(s):")
    elif found != "no IaC files":
        lines.append("No problems found.")
    lines += [f"- {d.line_text()}" for d in diagnostics]
    text = "\n".join(lines)
    return ToolOutcome(
        model_content=text,
        content=[text_content(text)],
        raw_output={
            "path": os.fspath(root),
            "found": found,
            "diagnostics": [d.as_dict() for d in diagnostics],
            "ran": list(dict.fromkeys(report.ran)),
            "skipped": list(dict.fromkeys(report.skipped)),
        },
    )


def is_iac_file(path: str) -> bool:
    return path.endswith(IAC_SUFFIXES)


def auto_check_path(edited: Iterable[str], cwd: Path) -> str | None:
    """What to check after a turn that edited ``edited`` (absolute paths): their deepest
    common directory relative to the cwd, when the edits include IaC files and it lies
    inside the cwd."""
    paths = [Path(p) for p in edited if is_iac_file(p)]
    if not paths:
        return None
    common = Path(os.path.commonpath([os.fspath(p.parent) for p in paths]))
    if not common.is_relative_to(cwd):
        return None
    return os.fspath(common.relative_to(cwd)) or "."
