"""``iac-code-dev demo --iac``: one realistic IaC turn, offline, printed as a short transcript.

The scripted model reads a Terraform module, adds S3 log expiry with ``edit_file`` (the
permission request carries the diff, and the demo user approves it), runs ``iac_check``,
which finds the variable it forgot to declare, declares it, then tries ``terraform apply``:
that call is titled "Changes real infrastructure" and offers only allow once / reject, and
the demo user rejects it. ``iac-code acp`` runs as a real subprocess against the scripted
model server; the transcript is built from the messages on the wire.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from .demo import run_offline
from .wire_client import WireClient, open_agent_process

INFRA_TITLE = "Changes real infrastructure: "

MAIN_TF = """\
resource "aws_s3_bucket" "logs" {
  bucket = var.bucket_name
}

resource "aws_s3_bucket_public_access_block" "logs" {
  bucket                  = aws_s3_bucket.logs.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}
"""
VARIABLES_TF = """\
variable "bucket_name" {
  type        = string
  description = "Name of the log bucket."
}
"""
LIFECYCLE_ANCHOR = "  restrict_public_buckets = true\n}\n"
LIFECYCLE = """\
  restrict_public_buckets = true
}

resource "aws_s3_bucket_lifecycle_configuration" "logs" {
  bucket = aws_s3_bucket.logs.id

  rule {
    id     = "expire-logs"
    status = "Enabled"

    filter {}

    expiration {
      days = var.retention_days
    }
  }
}
"""
RETENTION_VARIABLE = """
variable "retention_days" {
  type        = number
  description = "Days to keep log objects."
  default     = 90
}
"""
APPLY = "terraform -chdir=modules/logs apply -auto-approve"
_TIMEOUT = 30.0


def _script() -> list[Any]:
    from acp_scripted_llm.script import Turn

    main = "modules/logs/main.tf"
    variables = "modules/logs/variables.tf"
    return [
        Turn()
        .text("Let me read the logs module first.")
        .tool_use("read_file", {"path": main}, id="toolu_read")
        .stop("tool_use"),
        Turn()
        .text("I'll add a lifecycle rule that expires log objects.")
        .tool_use(
            "edit_file",
            {"path": main, "old_string": LIFECYCLE_ANCHOR, "new_string": LIFECYCLE},
            id="toolu_edit",
        )
        .stop("tool_use"),
        Turn()
        .text("Checking the module.")
        .tool_use("iac_check", {"path": "modules/logs"}, id="toolu_check")
        .stop("tool_use"),
        Turn()
        .text("The check found that `retention_days` is not declared; declaring it.")
        .tool_use(
            "edit_file",
            {
                "path": variables,
                "old_string": VARIABLES_TF,
                "new_string": VARIABLES_TF + RETENTION_VARIABLE,
            },
            id="toolu_declare",
        )
        .stop("tool_use"),
        Turn()
        .text("Applying it.")
        .tool_use("bash", {"command": APPLY}, id="toolu_apply")
        .stop("tool_use"),
        Turn()
        .text(
            "Log objects now expire after `retention_days` (default 90). I did not apply it: "
            f"review the plan and run `{APPLY}` yourself when ready."
        )
        .stop("end_turn"),
    ]


class Transcript:
    """Turns wire messages into a few readable lines, and answers permission requests."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.refused: list[str] = []
        self._text: list[str] = []

    def say(self, line: str) -> None:
        self._flush()
        self.lines.append(line)
        print(line)

    def _flush(self) -> None:
        if self._text:
            text, self._text = "".join(self._text), []
            self.lines.append(f"agent: {text}")
            print(f"agent: {text}")

    def observe(self, direction: str, message: Any) -> None:
        if direction != "received" or not isinstance(message, dict):
            return
        params = message.get("params") or {}
        if message.get("method") != "session/update":
            return
        update = params.get("update") or {}
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            self._text.append(str((update.get("content") or {}).get("text", "")))
        elif kind == "tool_call":
            self.say(f"tool call: {update.get('title')} [{update.get('kind')}]")
            for item in update.get("content") or []:
                if item.get("type") == "diff":
                    self.say(_diff_lines(item))
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            self.say(f"  -> {update['status']}")
            for item in update.get("content") or []:
                if item.get("type") == "content":
                    text = str((item.get("content") or {}).get("text", ""))
                    if update.get("toolCallId", "").startswith(("toolu_check", "toolu_iac")):
                        for line in text.splitlines():
                            self.say(f"     {line}")
                    elif update["status"] == "failed":
                        self.say(f"     {text.splitlines()[0] if text else ''}")

    async def answer_permission(self, client: WireClient, frame: dict[str, Any]) -> Any:
        params = frame.get("params") or {}
        title = str((params.get("toolCall") or {}).get("title", ""))
        options = [o["kind"] for o in params.get("options") or []]
        if title.startswith(INFRA_TITLE):
            self.refused.append(title)
            choice = "reject_once"
        else:
            choice = "allow_once"
        self.say(f"permission asked: {title}")
        self.say(f"  options: {', '.join(options)} -> the user chooses {choice}")
        return {"outcome": {"outcome": "selected", "optionId": choice}}

    def finish(self) -> None:
        self._flush()


def _diff_lines(diff: dict[str, Any]) -> str:
    old = (diff.get("oldText") or "").splitlines()
    new = (diff.get("newText") or "").splitlines()
    added = [line for line in new if line not in old]
    removed = [line for line in old if line not in new]
    shown = "\n".join(f"     + {line}" for line in added[:14])
    return f"  diff of {diff.get('path')}: +{len(added)} -{len(removed)} lines\n{shown}"


async def _run(env: dict[str, str], workspace: Path) -> int:
    transcript = Transcript()
    async with open_agent_process(
        env=env,
        cwd=workspace,
        handlers={"session/request_permission": transcript.answer_permission},
        wait_s=_TIMEOUT,
    ) as agent:
        agent.client.observers.append(transcript.observe)
        await agent.client.initialize()
        session_id = await agent.client.new_session(workspace)
        prompt = "Make the log bucket expire old objects, then apply it."
        transcript.say(f"user: {prompt}")
        result = await agent.client.prompt(session_id, prompt, wait_s=120.0)
        transcript.finish()
        await agent.close_stdin()
        with anyio.move_on_after(5):
            await agent.wait_exit(5)
    main_tf = (workspace / "modules" / "logs" / "main.tf").read_text()
    checks = [
        ("the edit was written", "aws_s3_bucket_lifecycle_configuration" in main_tf),
        ("iac_check reported the undeclared variable", _found(transcript, "retention_days")),
        ("terraform apply was refused", len(transcript.refused) == 1),
        ("the turn ended normally", result.get("stopReason") == "end_turn"),
    ]
    print()
    for name, ok in checks:
        print(f"# {name}: {'yes' if ok else 'NO'}")
    succeeded = all(ok for _, ok in checks)
    print("# demo " + ("succeeded" if succeeded else "FAILED"))
    return 0 if succeeded else 1


def _found(transcript: Transcript, name: str) -> bool:
    return any("undeclared" in line and name in line for line in transcript.lines)


def _prepare(workspace: Path) -> None:
    module = workspace / "modules" / "logs"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(MAIN_TF)
    (module / "variables.tf").write_text(VARIABLES_TF)


def main() -> int:
    return run_offline(_script(), _run, _prepare)
