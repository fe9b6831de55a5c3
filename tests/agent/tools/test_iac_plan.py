"""``iac_plan``: the summary of ``show -json`` documents written here, and a real plan with
the terraform binary when one is installed (built-in ``terraform_data`` resources only, so
no provider is downloaded)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from iac_code.tools.contract import AccessKind, ToolContext
from iac_code.tools.iac_plan import IacPlanTool
from iac_code.tools.infra_commands import classify_command
from iac_code.tools.permissions import decide
from iac_code.tools.plan_summary import summarize_plan

pytestmark = pytest.mark.anyio


def change(address: str, *actions: str, reason: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"address": address, "change": {"actions": list(actions)}}
    if reason:
        item["action_reason"] = reason
    return item


PLAN = {
    "format_version": "1.2",
    "resource_changes": [
        change("aws_vpc.main", "no-op"),
        change("aws_subnet.a", "create"),
        change("aws_subnet.b", "create"),
        change("aws_security_group.web", "update"),
        change("aws_db_instance.main", "delete", "create", reason="replace_because_cannot_update"),
        change("aws_instance.web", "create", "delete", reason="replace_because_tainted"),
        change("aws_s3_bucket.logs", "delete"),
        change("data.aws_ami.ubuntu", "read"),
    ],
    "resource_drift": [
        change("aws_security_group.web", "update"),
        change("aws_vpc.main", "no-op"),
    ],
}


def test_the_summary_counts_and_names_what_matters() -> None:
    summary = summarize_plan(PLAN)
    assert summary.counts() == {"create": 2, "update": 1, "replace": 2, "destroy": 1}
    assert summary.destroy == ["aws_s3_bucket.logs"]
    assert summary.replace == ["aws_db_instance.main", "aws_instance.web"]
    assert summary.drift == ["aws_security_group.web"]
    text = summary.text("/w/.iac-code/plans/p.tfplan")
    assert text.splitlines()[0] == "Plan: 2 to create, 1 to update, 2 to replace, 1 to destroy."
    assert "- destroy aws_s3_bucket.logs" in text
    assert "- replace aws_db_instance.main (an argument that forces replacement changed)" in text
    assert "- replace aws_instance.web (it is tainted)" in text
    assert "Drift (changed outside Terraform): aws_security_group.web" in text
    assert text.endswith("Plan file: /w/.iac-code/plans/p.tfplan")


def test_an_empty_or_odd_document_is_summarized_without_failing() -> None:
    assert summarize_plan({}).changes_nothing
    assert "No changes" in summarize_plan({"resource_changes": []}).text(None)
    odd = {"resource_changes": [None, {"address": "x"}, {"change": {"actions": "create"}}]}
    assert summarize_plan(odd).changes_nothing
    assert summarize_plan({"errored": True}).errored


async def test_iac_plan_asks_but_is_not_infrastructure_changing(tmp_path: Path) -> None:
    tool = IacPlanTool()
    access = await tool.access({}, ToolContext.for_session(tmp_path))
    assert access.kind is AccessKind.EXECUTE and access.infra_change is None
    assert decide(tool, access, "default").needs_asking
    assert classify_command("terraform plan -out=tfplan") is None


async def test_without_a_binary_the_model_is_told_what_to_do(tmp_path: Path) -> None:
    ctx = ToolContext.for_session(tmp_path, env={**os.environ, "PATH": "/nonexistent"})
    outcome = await IacPlanTool().run({}, ctx)
    assert outcome.is_error and "Neither terraform nor tofu is installed" in outcome.model_content


V1 = """
resource "terraform_data" "gone" {
  input = "a"
}
resource "terraform_data" "kept" {
  input = "before"
}
resource "terraform_data" "swap" {
  triggers_replace = ["v1"]
}
"""
V2 = """
resource "terraform_data" "kept" {
  input = "after"
}
resource "terraform_data" "swap" {
  triggers_replace = ["v2"]
}
resource "terraform_data" "added" {
  input = "new"
}
"""


@pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not installed")
async def test_a_real_plan_is_summarized(tmp_path: Path) -> None:
    env = {**os.environ, "CHECKPOINT_DISABLE": "1", "HTTPS_PROXY": "http://127.0.0.1:9"}
    (tmp_path / "main.tf").write_text(V1)
    # Local state made by the real binary (built-in provider only: nothing is downloaded).
    for argv in (["init", "-input=false"], ["apply", "-auto-approve", "-input=false"]):
        with anyio.fail_after(120):
            await anyio.run_process(["terraform", *argv], cwd=tmp_path, env=env, check=True)
    (tmp_path / "main.tf").write_text(V2)
    ctx = ToolContext.for_session(tmp_path, env=env)
    outcome = await IacPlanTool().run({}, ctx)
    assert not outcome.is_error, outcome.model_content
    raw = outcome.raw_output
    assert raw["counts"] == {"create": 1, "update": 1, "replace": 1, "destroy": 1}
    assert raw["destroy"] == ["terraform_data.gone"]
    assert raw["replace"] == ["terraform_data.swap"]
    assert await anyio.Path(raw["planFile"]).is_file()
    assert Path(raw["planFile"]).parent == tmp_path / ".iac-code" / "plans"
    assert "- destroy terraform_data.gone" in outcome.model_content
