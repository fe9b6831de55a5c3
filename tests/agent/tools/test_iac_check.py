"""``iac_check``: detection, each checker on real files, structured findings, no writes.

The real ``terraform`` and ``cfn-lint`` run when installed (skipped with a reason otherwise);
the python-hcl2 fallback is tested with a PATH that has no terraform.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from iac_code.tools.contract import AccessKind, ToolContext
from iac_code.tools.iac_check import IacCheckTool, auto_check_path
from iac_code.tools.iac_checkers import offline_environment
from iac_code.tools.iac_detect import detect
from iac_code.tools.permissions import decide

pytestmark = pytest.mark.anyio

BROKEN_TF = 'variable "region" {\n  type = string\n}\n\noutput "id" {\n    value = var.nope\n}\n'
SYNTAX_ERROR_TF = 'resource "null_resource" "x" {\n  triggers = {\n    a = \n  }\n}\n'
CFN = (
    'AWSTemplateFormatVersion: "2010-09-09"\nResources:\n  Logs:\n    Type: AWS::S3::Bucket\n'
    "    Properties:\n      BucketNam: logs\n"
)
K8S = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
ROS = '{"ROSTemplateFormatVersion": "2015-09-01", "Resources": {'


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def context(root: Path, *, path_env: str | None = None) -> ToolContext:
    env = dict(os.environ)
    if path_env is not None:
        env["PATH"] = path_env
    return ToolContext.for_session(root, env=env)


def diagnostics(outcome: Any) -> list[dict[str, Any]]:
    return list(outcome.raw_output["diagnostics"])


def test_detection_sorts_files_by_kind(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "net/main.tf": BROKEN_TF,
            "net/prod.tfvars": 'region = "x"\n',
            "stack.yaml": CFN,
            "k8s/web.yaml": K8S,
            "ros.json": ROS,
            "notes.yaml": "just: data\n",
            ".terraform/modules/x/main.tf": "",
        },
    )
    found = detect(tmp_path)
    assert found.terraform_dirs == [tmp_path / "net"]
    assert found.tfvars == [tmp_path / "net" / "prod.tfvars"]
    assert found.cloudformation == [tmp_path / "stack.yaml"]
    assert found.kubernetes == [tmp_path / "k8s" / "web.yaml"]
    assert found.ros == [tmp_path / "ros.json"]
    assert "1 Terraform module" in found.describe()


async def test_without_terraform_hcl_is_parsed_with_python_hcl2(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": SYNTAX_ERROR_TF, "ok.tf": 'variable "a" {}\n'})
    outcome = await IacCheckTool().run({}, context(tmp_path, path_env="/nonexistent"))
    assert not outcome.is_error
    [found] = diagnostics(outcome)
    assert found["file"] == "main.tf" and found["line"] == 3
    assert found["severity"] == "error" and found["tool"] == "python-hcl2"
    assert "python-hcl2 parse" in outcome.raw_output["ran"]
    assert "main.tf:3 error [python-hcl2 syntax]" in outcome.model_content


@pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not installed")
async def test_real_terraform_validates_and_checks_format_without_writing(
    tmp_path: Path,
) -> None:
    module = write(tmp_path / "mod", {"main.tf": BROKEN_TF})
    outcome = await IacCheckTool().run({"path": "mod"}, context(tmp_path))
    found = {(d["rule"], d["file"], d["line"]) for d in diagnostics(outcome)}
    assert ("validate", "mod/main.tf", 6) in found
    assert ("fmt", "mod/main.tf", None) in found
    assert sorted(p.name for p in module.iterdir()) == ["main.tf"]  # no .terraform, no lock
    assert "Reference to undeclared input variable" in outcome.model_content


EVIL_PROVIDER_TF = """terraform {
  required_providers {
    evil = {
      source = "acme/evil"
    }
  }
}
"""


@pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not installed")
async def test_a_provider_shipped_in_the_repository_is_never_run(tmp_path: Path) -> None:
    """terraform.d/plugins is an implied local mirror: plain init would install this plugin
    from the repository and validate would start it, without anyone being asked."""
    marker = tmp_path / "plugin-ran"
    plugin = (
        tmp_path
        / "terraform.d/plugins/registry.terraform.io/acme/evil/1.0.0/linux_amd64"
        / "terraform-provider-evil_v1.0.0"
    )
    write(
        tmp_path, {"main.tf": EVIL_PROVIDER_TF, os.fspath(plugin): f"#!/bin/sh\ntouch {marker}\n"}
    )
    plugin.chmod(0o755)
    outcome = await IacCheckTool().run({}, context(tmp_path))
    assert not marker.exists()
    assert [d["rule"] for d in diagnostics(outcome)] == ["init"]  # validate skipped, said so
    assert not (tmp_path / ".terraform").exists()
    assert not (tmp_path / ".terraform.lock.hcl").exists()


@pytest.mark.skipif(shutil.which("cfn-lint") is None, reason="cfn-lint is not installed")
async def test_real_cfn_lint_reports_rule_and_line(tmp_path: Path) -> None:
    write(tmp_path, {"stack.yaml": CFN})
    outcome = await IacCheckTool().run({"path": "stack.yaml"}, context(tmp_path))
    found = [d for d in diagnostics(outcome) if d["tool"] == "cfn-lint"]
    assert [(d["file"], d["line"], d["rule"], d["severity"]) for d in found] == [
        ("stack.yaml", 6, "E3002", "error")
    ]


@pytest.mark.skipif(shutil.which("cfn-lint") is None, reason="cfn-lint is not installed")
async def test_a_repository_s_cfn_lint_config_cannot_load_its_code(tmp_path: Path) -> None:
    """A .cfnlintrc in the working directory may append rule modules, which cfn-lint imports:
    run in the repository, this one would write the marker."""
    marker = tmp_path / "rule-code-ran"
    write(
        tmp_path,
        {
            "stack.yaml": CFN,
            ".cfnlintrc": "append_rules:\n  - ./rules\n",
            "rules/evil.py": f"open({str(marker)!r}, 'w').close()\n",
        },
    )
    outcome = await IacCheckTool().run({}, context(tmp_path))
    assert not marker.exists()
    assert any(d["rule"] == "E3002" for d in diagnostics(outcome))


async def test_without_linters_a_json_template_is_still_parsed(tmp_path: Path) -> None:
    write(tmp_path, {"ros.json": ROS})
    outcome = await IacCheckTool().run({}, context(tmp_path, path_env="/nonexistent"))
    [found] = diagnostics(outcome)
    assert (found["file"], found["tool"], found["severity"]) == ("ros.json", "json", "error")
    assert any("not installed" in s for s in outcome.raw_output["skipped"])


async def test_without_terraform_undeclared_variables_are_found(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": BROKEN_TF + "# var.commented_out\n", "vars.tf": ""})
    outcome = await IacCheckTool().run({}, context(tmp_path, path_env="/nonexistent"))
    [found] = diagnostics(outcome)
    assert (found["file"], found["line"], found["rule"]) == ("main.tf", 6, "undeclared-variable")
    assert '"nope"' in found["message"]


async def test_a_path_without_iac_and_a_missing_path(tmp_path: Path) -> None:
    write(tmp_path, {"README.md": "hello\n"})
    clean = await IacCheckTool().run({}, context(tmp_path))
    assert not clean.is_error and diagnostics(clean) == []
    assert "no IaC files" in clean.model_content
    missing = await IacCheckTool().run({"path": "nope"}, context(tmp_path))
    assert missing.is_error and "does not exist" in missing.model_content


async def test_iac_check_is_read_only_and_auto_allowed_inside_the_workspace(
    tmp_path: Path,
) -> None:
    tool = IacCheckTool()
    access = await tool.access({"path": "."}, context(tmp_path))
    assert tool.read_only and access.kind is AccessKind.READ
    assert decide(tool, access, "default").allowed
    outside = await tool.access({"path": "/etc"}, context(tmp_path))
    assert decide(tool, outside, "default").needs_asking


def test_the_checks_run_without_network() -> None:
    env = offline_environment({"PATH": "/bin", "HTTPS_PROXY": "http://corp:3128"})
    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == "http://127.0.0.1:9"
    assert env["NO_PROXY"] == "" and env["CHECKPOINT_DISABLE"] == "1"


def test_the_auto_check_covers_the_edited_iac_files(tmp_path: Path) -> None:
    edited = [str(tmp_path / "net" / "main.tf"), str(tmp_path / "net" / "vpc" / "vars.tf")]
    assert auto_check_path(edited, tmp_path) == "net"
    assert auto_check_path([str(tmp_path / "main.tf")], tmp_path) == "."
    assert auto_check_path([str(tmp_path / "README.md")], tmp_path) is None
    assert auto_check_path(["/elsewhere/main.tf"], tmp_path) is None
