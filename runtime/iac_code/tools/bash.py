"""``bash``: run a shell command in the session cwd, in the client's terminal when offered."""

from __future__ import annotations

import os
from typing import Any

import anyio
import anyio.to_thread

from iac_code.child_env import child_environment
from iac_code.tools.contract import (
    Access,
    AccessKind,
    JsonDict,
    Tool,
    ToolContext,
    ToolOutcome,
    terminal_content,
    text_content,
)
from iac_code.tools.infra_commands import classify_command
from iac_code.tools.process_group import run_in_process_group, shell_argv
from iac_code.tools.text import cap_text

# Bounded waits for client requests made during cleanup, so a client that stops answering
# cannot keep a cancelled or timed-out call alive forever.
_CLIENT_CLEANUP_S = 5.0
# How long a background call waits for its job's first output (or its early end).
_FIRST_OUTPUT_S = 1.0


def _status_line(
    exit_code: int | None, signal_name: str | None, timed_out: bool, timeout_s: float
) -> str:
    if timed_out:
        return (
            f"[timed out after {timeout_s:g} s; the command and its child processes were stopped]"
        )
    if signal_name:
        return f"[terminated by {signal_name}]"
    return f"[exit code: {exit_code}]"


INFRA_TITLE_PREFIX = "Changes real infrastructure: "

# Characters that could hide or reorder part of a command when the title is displayed:
# control characters (terminal escapes, carriage returns) and Unicode bidi/invisible marks.
_HIDING_CHARACTERS = frozenset(
    [
        *map(chr, range(0x00, 0x20)),
        "\x7f",
        *map(chr, range(0x80, 0xA0)),
        *"\u061c\u200b\u200c\u200d\u200e\u200f\u2060\ufeff",
        *map(chr, range(0x202A, 0x202F)),
        *map(chr, range(0x2066, 0x206A)),
    ]
)


def _escape_hiding(line: str) -> str:
    return "".join(
        f"\\u{ord(char):04x}" if char in _HIDING_CHARACTERS and char != "\t" else char
        for char in line
    )


def visible_command(command: str) -> str:
    """``command`` on one line with nothing hidden: line breaks become " \u23ce ", other
    invisible or reordering characters are shown as ``\\uXXXX`` escapes."""
    return " \u23ce ".join(_escape_hiding(line) for line in command.strip().splitlines())


def _non_interactive_env(base: dict[str, str]) -> dict[str, str]:
    """Pagers would wait for a keypress that never comes; make them print instead."""
    env = dict(base)
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_PAGER", "cat")
    return env


class BashTool(Tool):
    name = "bash"
    kind = "execute"
    masks_output = True
    description = (
        "Run a shell command (bash -c) in the working directory and return its combined "
        "stdout and stderr and exit code. Non-interactive: stdin is empty, so commands that "
        "prompt must get flags such as -auto-approve/-input=false/--yes. The command is "
        "stopped, with every process it started, after `timeout` seconds (default 120, at "
        "most 600); background processes do not survive the call. Long output is shortened "
        "in the middle. For a server or watcher that must keep running, set `background` "
        "to true: the call returns after at most a second with a job id and the output so "
        "far, and the job runs on (no timeout) until it exits or the session ends."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "minLength": 1,
                "description": "The shell command line to run.",
            },
            "timeout": {
                "type": "number",
                "minimum": 1,
                "maximum": 600,
                "description": "Seconds before the command is stopped (default 120).",
            },
            "description": {
                "type": "string",
                "description": "A few words saying what the command does, shown to the user.",
            },
            "background": {
                "type": "boolean",
                "description": (
                    "Keep the command running after this call returns (default false); "
                    "it is stopped when the session ends."
                ),
            },
        },
        "required": ["command"],
    }

    def _title(self, tool_input: JsonDict) -> str:
        # The user approves what the title shows, so it shows the whole command, never the
        # model's description alone nor only the first line (a second line could hide
        # "curl ... | sh"). The description follows as a hint.
        command = visible_command(tool_input["command"])
        if classify_command(tool_input["command"]) is not None:
            title = INFRA_TITLE_PREFIX + command
        else:
            title = f"Run {command}"
        if tool_input.get("background"):
            title += " (in the background)"
        description = visible_command(tool_input.get("description") or "")
        return f"{title} \u2014 {description}" if description else title

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        change = classify_command(tool_input["command"])
        return Access(
            kind=AccessKind.EXECUTE,
            paths=(os.fspath(ctx.cwd),),
            infra_change=change.summary if change is not None else None,
        )

    def _timeout(self, tool_input: JsonDict, ctx: ToolContext) -> float:
        requested = tool_input.get("timeout")
        timeout = float(requested) if requested is not None else ctx.limits.bash_timeout_s
        return min(timeout, ctx.limits.bash_max_timeout_s)

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        if tool_input.get("background"):
            # Always the agent's own process, also when the client offers terminals: the
            # agent must be able to stop it when the session ends.
            return await self._start_in_background(tool_input, ctx)
        if ctx.terminal is not None:
            return await self._run_in_client_terminal(tool_input, ctx)
        return await self._run_locally(tool_input, ctx)

    async def _run_locally(self, tool_input: JsonDict, ctx: ToolContext) -> ToolOutcome:
        timeout_s = self._timeout(tool_input, ctx)
        # Without an agent-provided environment, still never pass on the agent's secrets.
        env = _non_interactive_env(dict(ctx.env if ctx.env is not None else child_environment()))
        try:
            result = await run_in_process_group(
                shell_argv(tool_input["command"]),
                cwd=ctx.cwd,
                env=env,
                timeout_s=timeout_s,
                output_cap=ctx.limits.bash_output_bytes,
                grace_s=ctx.limits.kill_grace_s,
            )
        except OSError as exc:
            return ToolOutcome.error(f"Could not start the command: {exc}")
        status = _status_line(result.exit_code, result.signal_name, result.timed_out, timeout_s)
        return self._outcome(
            output=result.output,
            status=status,
            failed=result.timed_out or result.exit_code != 0,
            content=[
                text_content(cap_text(result.output, ctx.limits.result_cap_chars, "head_tail"))
            ],
            raw={
                "exitCode": result.exit_code,
                "signal": result.signal_name,
                "timedOut": result.timed_out,
                "truncated": result.truncated,
                "outputBytes": result.output_bytes,
            },
            ctx=ctx,
        )

    async def _start_in_background(self, tool_input: JsonDict, ctx: ToolContext) -> ToolOutcome:
        if ctx.start_background is None:
            return ToolOutcome.error("Background commands are not available here.")
        env = _non_interactive_env(dict(ctx.env if ctx.env is not None else child_environment()))
        command = tool_input["command"]
        try:
            job = await ctx.start_background(
                command, shell_argv(command), ctx.cwd, env, ctx.limits.bash_output_bytes
            )
        except OSError as exc:
            return ToolOutcome.error(f"Could not start the command: {exc}")
        # A command that fails at once (a typo, a port in use) should say so in this call;
        # the wait ends as soon as the job does.
        await anyio.to_thread.run_sync(job.ended.wait, _FIRST_OUTPUT_S)
        ended = job.ended.is_set()
        if ended:
            code = job.exit_code
            ending = f"exit code {code}" if code is None or code >= 0 else f"signal {-code}"
            status = f"[background job {job.job_id} already ended: {ending}]"
        else:
            status = (
                f"[running in the background as {job.job_id}; it is stopped when the session ends]"
            )
        output = job.output()
        return self._outcome(
            output=output,
            status=status,
            failed=ended and job.exit_code != 0,
            content=[text_content(cap_text(output, ctx.limits.result_cap_chars, "head_tail"))],
            raw={"jobId": job.job_id, "running": not ended, "exitCode": job.exit_code},
            ctx=ctx,
        )

    async def _run_in_client_terminal(self, tool_input: JsonDict, ctx: ToolContext) -> ToolOutcome:
        terminal = ctx.terminal
        assert terminal is not None
        timeout_s = self._timeout(tool_input, ctx)
        argv = shell_argv(tool_input["command"])
        terminal_id = await terminal.create(
            argv[0], argv[1:], os.fspath(ctx.cwd), [], ctx.limits.bash_output_bytes
        )
        try:
            # The terminal must be shown before it is released (ACP), so report it now.
            if ctx.report_content is not None:
                await ctx.report_content([terminal_content(terminal_id)])
            exit_code: int | None = None
            signal_name: str | None = None
            with anyio.move_on_after(timeout_s) as deadline:
                exit_code, signal_name = await terminal.wait_for_exit(terminal_id)
            timed_out = deadline.cancelled_caught
            if timed_out:
                with anyio.move_on_after(_CLIENT_CLEANUP_S):
                    await terminal.kill(terminal_id)
            output, truncated, exit_status = await terminal.output(terminal_id)
            if timed_out and isinstance(exit_status, dict):
                exit_code = exit_status.get("exitCode")
                signal_name = exit_status.get("signal")
        finally:
            with anyio.move_on_after(_CLIENT_CLEANUP_S, shield=True):
                try:
                    await terminal.release(terminal_id)
                except Exception:
                    pass  # nothing more can be done; the client owns the terminal
        status = _status_line(exit_code, signal_name, timed_out, timeout_s)
        raw: dict[str, Any] = {
            "terminalId": terminal_id,
            "exitCode": exit_code,
            "signal": signal_name,
            "timedOut": timed_out,
            "truncated": truncated,
        }
        return self._outcome(
            output=output,
            status=status,
            failed=timed_out or exit_code != 0,
            content=[terminal_content(terminal_id)],
            raw=raw,
            ctx=ctx,
        )

    @staticmethod
    def _outcome(
        *,
        output: str,
        status: str,
        failed: bool,
        content: list[JsonDict],
        raw: JsonDict,
        ctx: ToolContext,
    ) -> ToolOutcome:
        # Keep head and tail of long output (errors tend to be at the end), leaving room
        # for the status line so the final cap never cuts it off.
        room = max(ctx.limits.result_cap_chars - len(status) - 1, 0)
        shown = cap_text(output.rstrip("\n"), room, "head_tail")
        model_content = f"{shown}\n{status}" if shown else status
        return ToolOutcome(
            model_content=model_content, is_error=failed, content=content, raw_output=raw
        )
