"""Workspace path rules: resolution, containment with ``..``/symlink escapes, sensitive paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from iac_code.tools.paths import (
    is_inside_roots,
    is_sensitive,
    real_path,
    resolve_path,
    resolve_roots,
)


def test_relative_paths_resolve_against_cwd(workspace: Path) -> None:
    assert resolve_path("modules/vpc/main.tf", workspace) == workspace / "modules/vpc/main.tf"
    assert resolve_path("./a/../b.tf", workspace) == workspace / "b.tf"
    assert resolve_path("/etc/hosts", workspace) == Path("/etc/hosts")


def test_tilde_expands_to_home(workspace: Path, fake_home: Path) -> None:
    assert resolve_path("~/notes.txt", workspace) == fake_home / "notes.txt"


def test_dotdot_escape_is_outside(workspace: Path, outside: Path) -> None:
    roots = resolve_roots(workspace)
    escaped = resolve_path("../outside/secret.txt", workspace)
    assert not is_inside_roots(escaped, roots)
    assert is_inside_roots(resolve_path("main.tf", workspace), roots)
    assert is_inside_roots(workspace, roots)


def test_symlink_escape_is_outside_also_for_missing_files(workspace: Path, outside: Path) -> None:
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    (outside / "existing.txt").write_text("x")
    roots = resolve_roots(workspace)
    assert not is_inside_roots(workspace / "link" / "existing.txt", roots)
    # The file does not exist yet: its nearest existing parent (the link) decides.
    assert not is_inside_roots(workspace / "link" / "new" / "deep.txt", roots)
    assert real_path(workspace / "link" / "new.txt") == outside.resolve() / "new.txt"


def test_symlinked_file_pointing_outside_is_outside(workspace: Path, outside: Path) -> None:
    (outside / "target.txt").write_text("x")
    (workspace / "innocent.txt").symlink_to(outside / "target.txt")
    assert not is_inside_roots(workspace / "innocent.txt", resolve_roots(workspace))


def test_additional_directories_are_roots(workspace: Path, outside: Path) -> None:
    roots = resolve_roots(workspace, [outside])
    assert is_inside_roots(outside / "x.tf", roots)
    assert not is_inside_roots(outside.parent / "elsewhere.tf", roots)


def test_prefix_sibling_is_not_inside(tmp_path: Path, workspace: Path) -> None:
    sibling = tmp_path / "ws-other"
    sibling.mkdir()
    assert not is_inside_roots(sibling / "a.tf", resolve_roots(workspace))


def test_roots_that_are_symlinks_are_resolved(tmp_path: Path, workspace: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace, target_is_directory=True)
    roots = resolve_roots(alias)
    assert is_inside_roots(workspace / "main.tf", roots)
    assert is_inside_roots(alias / "main.tf", roots)


@pytest.mark.parametrize(
    "relative",
    [
        ".git/config",
        ".git",
        "sub/.git/hooks/pre-commit",
        ".env",
        "app/.env.production",
        "certs/server.pem",
        "keys/id_rsa",
        "keys/id_rsa.pub",
        ".terraformrc",
        "credentials.tfrc.json",
        "terraform.tfstate",
        "kubeconfig",
        ".netrc",
    ],
)
def test_sensitive_names_anywhere(workspace: Path, relative: str, fake_home: Path) -> None:
    assert is_sensitive(workspace / relative)


@pytest.mark.parametrize(
    "relative",
    [".ssh/id_ed25519", ".ssh/config", ".aws/credentials", ".config/gcloud/creds.json",
     ".kube/config", ".iac-code/sessions/x.jsonl"],
)  # fmt: skip
def test_sensitive_home_locations(fake_home: Path, relative: str) -> None:
    assert is_sensitive(fake_home / relative)


@pytest.mark.parametrize(
    "relative", ["main.tf", ".gitignore", ".github/CODEOWNERS", "environment.tf", "envs/a"]
)
def test_ordinary_files_are_not_sensitive(workspace: Path, relative: str, fake_home: Path) -> None:
    assert not is_sensitive(workspace / relative)


def test_symlink_to_sensitive_file_is_sensitive(workspace: Path, fake_home: Path) -> None:
    ssh = fake_home / ".ssh"
    ssh.mkdir()
    (ssh / "config").write_text("Host *")
    (workspace / "harmless.txt").symlink_to(ssh / "config")
    assert is_sensitive(workspace / "harmless.txt")


def test_agent_home_override_is_sensitive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_home: Path
) -> None:
    agent_home = tmp_path / "agent-home"
    monkeypatch.setenv("IAC_CODE_HOME", os.fspath(agent_home))
    assert is_sensitive(agent_home / "config.toml")
