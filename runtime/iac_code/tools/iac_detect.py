"""What a path holds, for ``iac_check``: Terraform modules, CloudFormation and ROS templates,
Kubernetes manifests. Detection reads names and the first bytes of candidate files only."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

# Directories that hold tools' caches or other people's code, never the user's IaC.
_SKIPPED_DIRS = frozenset(
    {".git", ".terraform", ".terragrunt-cache", "node_modules", ".venv", "venv", "__pycache__"}
)
_MAX_FILES = 5_000  # entries looked at before detection stops (a huge tree is cut short)
_HEAD_BYTES = 64 * 1024

TERRAFORM_SUFFIXES = (".tf", ".tofu", ".tf.json")
TFVARS_SUFFIXES = (".tfvars",)
TEMPLATE_SUFFIXES = (".yaml", ".yml", ".json", ".template")
# Files whose edit makes the agent check them at the end of the turn.
IAC_SUFFIXES = TERRAFORM_SUFFIXES + TFVARS_SUFFIXES + TEMPLATE_SUFFIXES + (".hcl",)

_CFN = re.compile(r"AWSTemplateFormatVersion|[\"']?Type[\"']?\s*:\s*[\"']?AWS::\w+::")
_ROS = re.compile(r"ROSTemplateFormatVersion|[\"']?Type[\"']?\s*:\s*[\"']?ALIYUN::\w+::")
_K8S_API = re.compile(r"^apiVersion:\s*\S", re.MULTILINE)
_K8S_KIND = re.compile(r"^kind:\s*\S", re.MULTILINE)


@dataclass
class Detected:
    """The IaC files under one path, by kind (absolute paths, sorted)."""

    terraform_dirs: list[Path] = field(default_factory=list)
    tfvars: list[Path] = field(default_factory=list)
    cloudformation: list[Path] = field(default_factory=list)
    ros: list[Path] = field(default_factory=list)
    kubernetes: list[Path] = field(default_factory=list)
    cut_short: bool = False
    root_is_file: bool = False

    @property
    def empty(self) -> bool:
        return not (
            self.terraform_dirs or self.tfvars or self.cloudformation or self.ros or self.kubernetes
        )

    def describe(self) -> str:
        parts = []
        for count, noun in (
            (len(self.terraform_dirs), "Terraform module"),
            (len(self.tfvars), "tfvars file"),
            (len(self.cloudformation), "CloudFormation template"),
            (len(self.ros), "ROS template"),
            (len(self.kubernetes), "Kubernetes manifest"),
        ):
            if count:
                parts.append(f"{count} {noun}{'s' if count != 1 else ''}")
        return ", ".join(parts) or "no IaC files"


def _candidate_files(root: Path) -> tuple[list[Path], bool]:
    if root.is_file():
        return [root], False
    found: list[Path] = []
    seen = 0
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            seen += 1
            if seen > _MAX_FILES:
                return found, True
            found.append(Path(directory) / name)
    return found, False


def _head(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def detect(root: Path) -> Detected:
    """Classify the files under ``root`` (or ``root`` itself when it is a file)."""
    files, cut_short = _candidate_files(root)
    detected = Detected(cut_short=cut_short, root_is_file=root.is_file())
    terraform_dirs: set[Path] = set()
    for path in files:
        name = path.name
        if name.endswith(TERRAFORM_SUFFIXES):
            terraform_dirs.add(path.parent)
        elif name.endswith(TFVARS_SUFFIXES):
            detected.tfvars.append(path)
        elif name.endswith(TEMPLATE_SUFFIXES):
            head = _head(path)
            if _CFN.search(head):
                detected.cloudformation.append(path)
            elif _ROS.search(head):
                detected.ros.append(path)
            elif (
                name.endswith((".yaml", ".yml"))
                and _K8S_API.search(head)
                and _K8S_KIND.search(head)
            ):
                detected.kubernetes.append(path)
    detected.terraform_dirs = sorted(terraform_dirs)
    return detected
