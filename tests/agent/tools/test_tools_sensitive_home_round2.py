"""Issue 19 item 3: credentials and code-running files below HOME, and system secrets.

With the session cwd at HOME (or at ``/``) these sit inside the workspace; every read or
write of them must ask, whatever the mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from iac_code.tools.contract import AccessKind, ToolContext
from iac_code.tools.grep_search import GrepTool
from iac_code.tools.paths import is_sensitive
from iac_code.tools.permissions import MODE_ACCEPT_EDITS, MODE_DEFAULT, decide
from iac_code.tools.read_file import ReadFileTool
from iac_code.tools.write_file import WriteFileTool

pytestmark = pytest.mark.anyio

READ_WITHOUT_ASKING_BEFORE = [
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".pulumi/credentials.json",
    ".aliyun/config.json",
    ".alibabacloud/credentials",
    ".vault-token",
    ".cargo/credentials.toml",
    ".config/containers/auth.json",
    ".m2/settings.xml",
    ".gem/credentials",
    ".terraform.d/credentials.tfrc.json",
    ".tofurc",
    ".oci/config",
    ".docker/cli-plugins/x",
    ".kube/cache/token",
    ".bash_history",
    ".s3cfg",
]

WRITTEN_WITHOUT_ASKING_BEFORE = [
    ".gitconfig",
    ".config/git/config",
    ".vimrc",
    ".config/nvim/init.lua",
    ".config/nvim/init.vim",
    ".config/fish/conf.d/x.fish",
    "bin/ls",
    ".config/environment.d/10-path.conf",
    ".local/lib/python3.11/site-packages/evil.pth",
    ".emacs",
    ".emacs.d/init.el",
    ".tmux.conf",
    ".inputrc",
    ".xprofile",
    ".pam_environment",
    ".ipython/profile_default/startup/x.py",
    ".config/pip/pip.conf",
    ".yarnrc",
    ".curlrc",
    ".wgetrc",
    ".hgrc",
]


@pytest.mark.parametrize("relative", READ_WITHOUT_ASKING_BEFORE)
async def test_reading_credentials_below_home_asks(fake_home: Path, relative: str) -> None:
    target = fake_home / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("token=secret\n")
    ctx = ToolContext.for_session(fake_home)
    access = await ReadFileTool().access({"path": relative}, ctx)
    assert access.sensitive
    assert decide("read_file", access, MODE_DEFAULT).needs_asking


@pytest.mark.parametrize("relative", WRITTEN_WITHOUT_ASKING_BEFORE)
async def test_writing_code_below_home_asks_in_accept_edits(fake_home: Path, relative: str) -> None:
    ctx = ToolContext.for_session(fake_home)
    access = await WriteFileTool().access({"path": relative, "content": "x"}, ctx)
    assert access.kind is AccessKind.WRITE
    assert access.sensitive
    assert decide("write_file", access, MODE_ACCEPT_EDITS).needs_asking


@pytest.mark.parametrize(
    "path",
    [
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/sudoers",
        "/etc/ssh/ssh_host_ed25519_key",
        "/root/.bashrc",
        "/proc/1/environ",
        "/var/run/secrets/kubernetes.io/token",
        "/home/someone/.aws/credentials",
        "/home/someone/.config/gh/hosts.yml",
    ],
)
async def test_system_secrets_ask_with_cwd_root(fake_home: Path, path: str) -> None:
    ctx = ToolContext.for_session("/")
    access = await ReadFileTool().access({"path": path}, ctx)
    assert not access.outside_workspace
    assert access.sensitive
    assert decide("read_file", access, MODE_DEFAULT).needs_asking


@pytest.mark.parametrize("relative", ["project/main.tf", "notes.txt", "src/app/.gitignore"])
def test_ordinary_files_below_home_stay_ordinary(fake_home: Path, relative: str) -> None:
    assert not is_sensitive(fake_home / relative)


async def test_grep_at_home_does_not_read_credentials(fake_home: Path) -> None:
    (fake_home / ".config" / "gh").mkdir(parents=True)
    (fake_home / ".config" / "gh" / "hosts.yml").write_text("oauth_token: ghp_SECRET\n")
    (fake_home / ".git-credentials").write_text("https://u:ghp_SECRET@github.com\n")
    (fake_home / "notes.txt").write_text("nothing here\n")
    ctx = ToolContext.for_session(fake_home)
    outcome = await GrepTool().run({"pattern": "ghp_SECRET", "path": "."}, ctx)
    assert "ghp_SECRET" not in outcome.model_content
