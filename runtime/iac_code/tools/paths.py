"""Workspace path rules: resolving model paths, containment in the roots, sensitive paths.

Two views of a path are used on purpose:

* the *lexical* absolute path (``resolve_path``): the model's path joined to the session cwd,
  ``~`` expanded and ``..`` collapsed. The tools operate on this path, and it is what the
  client is shown.
* the *real* path (``real_path``): every symlink resolved, also for paths that do not exist
  yet (the nearest existing ancestor is resolved and the rest appended). Containment and the
  sensitive-path test use it, so that ``link -> /etc`` or ``link/..`` tricks count as what
  they really touch.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path


def resolve_path(raw: str, cwd: Path) -> Path:
    """Turn a path from the model into an absolute, normalised path (relative to ``cwd``)."""
    expanded = os.path.expanduser(raw.strip())
    joined = os.path.join(os.fspath(cwd), expanded)
    return Path(os.path.normpath(joined))


def real_path(path: Path) -> Path:
    """Resolve symlinks in ``path``; for a missing path, resolve its nearest existing parent."""
    missing: list[str] = []
    current = Path(os.path.normpath(os.fspath(path)))
    while not os.path.lexists(current):
        parent = current.parent
        if parent == current:
            break
        missing.append(current.name)
        current = parent
    resolved = Path(os.path.realpath(current))
    for name in reversed(missing):
        resolved = resolved / name
    return resolved


def resolve_roots(cwd: Path, additional: Iterable[Path | str] = ()) -> list[Path]:
    """The workspace roots of a session: its cwd plus ``additionalDirectories``, resolved."""
    roots: list[Path] = []
    for candidate in (cwd, *additional):
        resolved = real_path(Path(candidate))
        if resolved not in roots:
            roots.append(resolved)
    return roots


def is_within(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or below it (both taken as given, no resolving)."""
    return path == root or root in path.parents


def is_inside_roots(path: Path, roots: Sequence[Path]) -> bool:
    """True when the real location of ``path`` lies inside one of the (resolved) ``roots``."""
    resolved = real_path(path)
    return any(is_within(resolved, real_path(root)) for root in roots)


# --- Sensitive paths -------------------------------------------------------------------------
#
# Reading or writing these can leak or damage credentials and repository internals even when
# they sit inside the workspace, so every access to them asks the user, whatever the mode and
# whatever was remembered. Keep the whole list here so it is reviewed in one place.

# Every name and location below is compared case-insensitively: on case-insensitive file
# systems (macOS, Windows) ".ENV" *is* ".env", and elsewhere a differently cased spelling is
# still what a user would not expect the agent to touch silently.

# Any path with one of these directory names among its components.
#   .git      - repository internals (hooks are code execution, config may hold tokens).
#   .vscode   - editor tasks, launch configurations and settings run code when opened.
_SENSITIVE_DIR_NAMES = frozenset({".git", ".vscode"})

# Consecutive directory names that make everything below them sensitive.
#   .github/workflows - CI definitions run with the repository's secrets on every push.
_SENSITIVE_DIR_SEQUENCES = ((".github", "workflows"),)

# File-name patterns (matched against the last component).
#   .env, .env.*          - dotenv files usually hold API keys and passwords.
#   .netrc, _netrc        - plain-text login credentials for curl/git/ftp.
#   *.pem, *.key, *.p12, *.pfx - private keys and certificate bundles.
#   id_rsa*, id_ed25519*, id_ecdsa*, id_dsa* - SSH private keys (and their .pub twins, harmless
#                           but cheap to include).
#   .terraformrc, terraform.rc, credentials.tfrc.json - Terraform Cloud / registry tokens.
#   *.tfstate, *.tfstate.backup - Terraform state stores resource secrets in plain text.
#   kubeconfig, *.kubeconfig - cluster credentials.
#   .pgpass, .npmrc, .pypirc - database and package-registry tokens.
#   .envrc                - direnv runs it in the user's shell on entering the directory.
#   shell start-up files  - run by every new shell (.bashrc, .zshrc, .profile, ...).
_SENSITIVE_NAME_PATTERNS = (
    ".env",
    ".env.*",
    ".netrc",
    "_netrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "id_dsa*",
    ".terraformrc",
    "terraform.rc",
    "credentials.tfrc.json",
    "*.tfstate",
    "*.tfstate.backup",
    "kubeconfig",
    "*.kubeconfig",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".envrc",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    "config.fish",
    # Credentials files of the clouds and IaC tools, wherever they are.
    ".git-credentials",
    ".vault-token",
    ".tofurc",
    "credentials.toml",
    ".s3cfg",
    ".boto",
    ".my.cnf",
    # Python runs every ``.pth`` file on a site directory at interpreter start.
    "*.pth",
    # Shell histories routinely hold pasted tokens.
    ".*_history",
    ".histfile",
)

# Locations relative to the user's home directory; everything below them is sensitive.
#   .ssh                 - keys and known hosts.
#   .aws                 - credentials and SSO caches (config can name credential processes).
#   .config/gcloud       - Google Cloud credentials.
#   .azure               - Azure CLI tokens.
#   .kube/config         - the default kubeconfig.
#   .docker/config.json  - registry auth.
#   .gnupg               - private keys.
#   .terraform.d/credentials.tfrc.json - Terraform CLI login tokens.
#   .iac-code            - this agent's own sessions and configuration (API keys).
#   .config/autostart, .config/systemd/user - programs started at the next login.
#   .local/bin           - usually early on PATH: a file there shadows real commands.
#   bin                  - ~/bin is on PATH in many default profiles, like .local/bin.
# Beyond this list, *every* entry of the home directory whose name starts with a dot is
# sensitive (see :func:`_home_dot_entry`): dot-folders and dot-files there are where tools keep
# credentials (.git-credentials, .config/gh, .pulumi, .aliyun, .vault-token, .m2/settings.xml,
# .gem/credentials, .cargo/credentials.toml, .config/containers/auth.json, ...) and what runs
# code later (.gitconfig hooks and aliases, .vimrc, nvim init, fish conf.d,
# .config/environment.d, ...). The list stays as documentation of the worst ones.
# (These matter most when the session's cwd is the home directory itself: then they sit
# inside the workspace and would otherwise be read and written without asking.)
_SENSITIVE_HOME_PATHS = (
    ".ssh",
    ".aws",
    ".config/gcloud",
    ".azure",
    ".kube/config",
    ".docker/config.json",
    ".gnupg",
    ".terraform.d/credentials.tfrc.json",
    ".iac-code",
    ".config/autostart",
    ".config/systemd/user",
    ".local/bin",
    "bin",
    ".git-credentials",
    ".gitconfig",
    ".config/git",
    ".config/gh",
    ".config/hub",
    ".pulumi",
    ".aliyun",
    ".alibabacloud",
    ".vault-token",
    ".terraform.d",
    ".docker",
    ".kube",
    ".oci",
    ".cargo",
    ".m2",
    ".gem",
    ".config/containers",
    ".config/environment.d",
    ".config/nvim",
    ".config/fish",
)

# Absolute locations outside any home directory that hold secrets of the machine or of other
# users: with a session cwd of ``/`` they sit inside the workspace.
_SENSITIVE_SYSTEM_PATHS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
    "/etc/krb5.keytab",
    "/root",
    "/proc",
    "/run/secrets",
    "/var/run/secrets",
    "/var/lib/kubelet",
)

# Parents of the users' home directories: a dot-entry right below ``/home/<user>`` is treated
# like one below our own HOME (another user's credentials are no less sensitive).
_HOME_PARENTS = ("/home", "/Users")


def _sensitive_bases() -> tuple[Path, ...]:
    """Absolute sensitive locations; recomputed when HOME or IAC_CODE_HOME change."""
    return _sensitive_bases_for(os.path.expanduser("~"), os.environ.get("IAC_CODE_HOME"))


@functools.lru_cache(maxsize=8)
def _sensitive_bases_for(home_text: str, agent_home: str | None) -> tuple[Path, ...]:
    # Cached because grep asks about every file it visits. Kept case-folded (see above).
    home = Path(home_text)
    bases = [home / relative for relative in _SENSITIVE_HOME_PATHS]
    bases.extend(Path(location) for location in _SENSITIVE_SYSTEM_PATHS)
    if agent_home:
        bases.append(Path(agent_home))
    every = [*bases, *(real_path(base) for base in bases)]
    return tuple(dict.fromkeys(_folded(base) for base in every))


def _folded(path: Path) -> Path:
    return Path(os.fspath(path).casefold())


def _has_sequence(parts: Sequence[str], sequence: Sequence[str]) -> bool:
    width = len(sequence)
    return any(tuple(parts[i : i + width]) == tuple(sequence) for i in range(len(parts)))


@functools.lru_cache(maxsize=8)
def _folded_homes(home_text: str) -> tuple[Path, ...]:
    """HOME itself, case-folded, and its real location (for the dot-entry rule)."""
    home = Path(home_text)
    return tuple(dict.fromkeys(_folded(candidate) for candidate in (home, real_path(home))))


def _home_dot_entry(folded: Path) -> bool:
    """True for anything at or below a dot-entry of HOME (or of ``/home/<user>``)."""
    for home in _folded_homes(os.path.expanduser("~")):
        if home.parent == home:
            continue  # HOME=/ would make every dot-folder of the machine sensitive
        if folded.parent == home or home in folded.parents:
            first = folded.parts[len(home.parts)]
            if first.startswith("."):
                return True
    parts = folded.parts
    for parent in _HOME_PARENTS:
        parent_parts = Path(parent.casefold()).parts
        width = len(parent_parts)
        if (
            len(parts) > width + 1
            and parts[:width] == parent_parts
            and parts[width + 1].startswith(".")
        ):
            return True
    return False


def _path_is_sensitive(path: Path) -> bool:
    folded = _folded(path)
    if _home_dot_entry(folded):
        return True
    parts = folded.parts
    if any(part in _SENSITIVE_DIR_NAMES for part in parts):
        return True
    if any(_has_sequence(parts, sequence) for sequence in _SENSITIVE_DIR_SEQUENCES):
        return True
    if any(fnmatch.fnmatchcase(folded.name, pattern) for pattern in _SENSITIVE_NAME_PATTERNS):
        return True
    return any(is_within(folded, base) for base in _sensitive_bases())


def is_sensitive(path: Path) -> bool:
    """True when ``path`` (absolute) or the file it really points at is a sensitive location."""
    absolute = Path(os.path.normpath(os.fspath(path)))
    return _path_is_sensitive(absolute) or _path_is_sensitive(real_path(absolute))


def sensitive_reason(path: Path | str) -> str:
    """A short explanation for permission prompts and refusals."""
    return f"{path} is a sensitive location (credentials or repository internals)"
