"""``iac_plan``: ``terraform|tofu plan -out=FILE`` then ``show -json FILE``, summarized.

A plan changes no infrastructure (it reads state and the provider APIs), so it is not
infrastructure-changing, but it runs a command with the user's credentials: it asks like any
command. The plan file is kept (``.iac-code/plans/`` in the module) so the user can review
or apply exactly that plan themselves.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio

from iac_code.child_env import child_environment
from iac_code.tools.contract import (
    Access,
    AccessKind,
    JsonDict,
    Tool,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.iac_checkers import Runner
from iac_code.tools.paths import resolve_path
from iac_code.tools.plan_summary import summarize_plan
from iac_code.tools.text import cap_text
from iac_code.tools.workspace import path_access, path_locations

PLAN_DIR = Path(".iac-code") / "plans"
PLAN_TIMEOUT_S = 600.0
_ERROR_TAIL_CHARS = 4_000


class IacPlanTool(Tool):
    name = "iac_plan"
    kind = "execute"
    masks_output = True
    description = (
        "Run `terraform plan` (or `tofu plan`) in a module directory, save the plan file and "
        "summarize it: how many resources would be created, updated, replaced and destroyed, "
        "every destroy and replace by address, and drift found. Changes no infrastructure; "
        "the plan file path is returned so the user can review or apply exactly that plan."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "Module directory (default: the working directory).",
            },
            "var_files": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "description": "Variable files passed as -var-file (relative to the module).",
            },
        },
    }

    def _title(self, tool_input: JsonDict) -> str:
        return f"Plan {tool_input.get('path') or '.'}"

    def _locations(self, tool_input: JsonDict, ctx: ToolContext) -> list[JsonDict]:
        return path_locations(resolve_path(tool_input.get("path") or ".", ctx.cwd))

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        return path_access(AccessKind.EXECUTE, tool_input.get("path") or ".", ctx)

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        module = resolve_path(tool_input.get("path") or ".", ctx.cwd)
        if not await anyio.to_thread.run_sync(module.is_dir):
            return ToolOutcome.error(f"{module} is not a directory; give the module directory.")
        env = dict(ctx.env) if ctx.env is not None else child_environment()
        env.update(TF_IN_AUTOMATION="1", TF_INPUT="0", CHECKPOINT_DISABLE="1")
        runner = Runner(
            env=env, cwd=ctx.cwd, timeout_s=PLAN_TIMEOUT_S, grace_s=ctx.limits.kill_grace_s
        )
        binary = runner.which("terraform") or runner.which("tofu")
        if binary is None:
            return ToolOutcome.error(
                "Neither terraform nor tofu is installed here, so no plan can be made. Use "
                "iac_check to validate the files, or ask the user to run the plan."
            )
        tool = Path(binary).name
        plan_file = module / PLAN_DIR / time.strftime("%Y%m%dT%H%M%SZ.tfplan", time.gmtime())
        await anyio.to_thread.run_sync(lambda: plan_file.parent.mkdir(parents=True, exist_ok=True))
        argv = [binary, "plan", "-input=false", "-no-color", f"-out={plan_file}"]
        argv += [f"-var-file={name}" for name in tool_input.get("var_files") or []]
        code, output, timed_out = await runner.run(argv, module)
        if timed_out or code != 0:
            why = "did not finish in time" if timed_out else f"failed (exit code {code})"
            tail = cap_text(output, _ERROR_TAIL_CHARS, "head_tail")
            return ToolOutcome.error(
                f"{tool} plan {why}:\n{tail}",
                raw_output={"exitCode": code, "timedOut": timed_out},
            )
        code, shown, _ = await runner.run([binary, "show", "-json", os.fspath(plan_file)], module)
        document = _plan_document(shown)
        if code != 0 or document is None:
            return ToolOutcome.error(
                f"{tool} show -json could not read the plan {plan_file}:\n"
                + cap_text(shown, _ERROR_TAIL_CHARS, "head_tail")
            )
        summary = summarize_plan(document)
        text = summary.text(os.fspath(plan_file))
        return ToolOutcome(
            model_content=text,
            content=[text_content(text)],
            raw_output={"planFile": os.fspath(plan_file), "tool": tool, **summary.as_dict()},
        )


def _plan_document(output: str) -> JsonDict | None:
    """The JSON document ``show -json`` printed (warnings may come before it)."""
    start = output.find("{")
    if start < 0:
        return None
    try:
        document = json.JSONDecoder().raw_decode(output, start)[0]
    except json.JSONDecodeError:
        return None
    return document if isinstance(document, dict) else None
