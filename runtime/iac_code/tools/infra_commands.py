"""Which shell commands change real infrastructure (SPEC §6): the classifier behind the
``bash`` tool's "always ask" rule.

The command is *parsed*, not matched as a string: the stdlib ``shlex`` lexer (POSIX mode with
``punctuation_chars``) undoes quoting and splits on ``;`` ``&&`` ``||`` ``|`` ``&``, newlines
and parentheses; this module then walks every simple command, strips assignments and
wrappers (``sudo``, ``env``, ``time``, ``timeout``, ``nohup``, ``xargs``, ``exec``, ...),
recurses into ``bash -c``/``eval``/``ssh host cmd``/``watch`` strings, ``$(…)``, backticks and
process substitutions, and asks a per-family rule about the program and its arguments.
``shlex`` was chosen over a full bash parser because the only pure-Python one on PyPI
(bashlex) is unmaintained, and what is needed here is words and command boundaries, not a
syntax tree; a few shell features ``shlex`` does not know (heredoc bodies, substitutions,
comments) are handled explicitly below.

The rule errs on the side of asking: whatever cannot be read — an unbalanced quote, a
program name that is a variable, a shell reading commands from stdin, nesting too deep —
counts as infrastructure-changing. A false alarm costs one question; a miss can cost a
production database.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Nesting (bash -c inside $(…) inside eval …) deeper than this is not read: it counts as
# changing. Real commands nest two or three levels.
_MAX_DEPTH = 8
# Longer command lines are not parsed (they would cost more than the 1 ms budget).
_MAX_CHARS = 64 * 1024


@dataclass(frozen=True)
class InfraChange:
    """Why a command counts as infrastructure-changing."""

    family: str  # "terraform", "kubectl", ..., or "unreadable"
    summary: str  # what was recognised, e.g. "terraform destroy"


class _Unreadable(Exception):
    """The command (or a part of it) cannot be read with confidence."""


def classify_command(command: str) -> InfraChange | None:
    """The first infrastructure-changing part of ``command``, or None when it has none."""
    try:
        return _classify_text(command, 0, {})
    except _Unreadable as exc:
        return InfraChange("unreadable", f"a command that cannot be read safely ({exc})")


# --- Text level: heredocs, substitutions, lexing ---------------------------------------------

_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_PUNCTUATION = "();<>|&\n"
_SEPARATORS = frozenset(";&|()\n")


def _classify_text(text: str, depth: int, aliases: dict[str, list[str]]) -> InfraChange | None:
    if depth > _MAX_DEPTH:
        raise _Unreadable("nested too deeply")
    if len(text) > _MAX_CHARS:
        raise _Unreadable("too long")
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    text, found = _strip_heredoc_bodies(text, depth, aliases)
    if found is not None:
        return found
    text, found = _replace_substitutions(text, depth, aliases)
    if found is not None:
        return found
    for words in _simple_commands(text):
        found = _classify_words(words, depth, aliases)
        if found is not None:
            return found
    return None


def _strip_heredoc_bodies(
    text: str, depth: int, aliases: dict[str, list[str]]
) -> tuple[str, InfraChange | None]:
    """Remove heredoc bodies (data, not commands); a body with an unquoted delimiter still
    expands ``$(…)``, so its substitutions are classified. Feeding a heredoc to a shell is
    caught by the shell-reading-stdin rule."""
    if "<<" not in text:
        return text, None
    lines = text.split("\n")
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        kept.append(line)
        index += 1
        for match in _HEREDOC.finditer(line.replace("<<<", "   ")):
            strip_tabs, quoted, delimiter = match.group(1), match.group(2), match.group(3)
            body: list[str] = []
            while index < len(lines):
                candidate = lines[index].lstrip("\t") if strip_tabs else lines[index]
                index += 1
                if candidate == delimiter:
                    break
                body.append(lines[index - 1])
            else:
                raise _Unreadable("a heredoc without its end line")
            if not quoted:
                _, found = _replace_substitutions("\n".join(body), depth, aliases)
                if found is not None:
                    return text, found
    return "\n".join(kept), None


def _replace_substitutions(
    text: str, depth: int, aliases: dict[str, list[str]]
) -> tuple[str, InfraChange | None]:
    """Classify every ``$(…)``, ``<(…)``, ``>(…)`` and backtick body, and replace each with a
    placeholder word that reads as dynamic (it contains ``$``)."""
    if "(" not in text and "`" not in text:
        return text, None
    out: list[str] = []
    index = 0
    in_single = in_double = False
    while index < len(text):
        char = text[index]
        if char == "\\" and not in_single:
            out.append(text[index : index + 2])
            index += 2
            continue
        if char == "'" and not in_double:
            in_single = not in_single
        elif char == '"' and not in_single:
            in_double = not in_double
        if not in_single:
            opener = text[index : index + 2]
            if opener in ("$(", "<(", ">("):
                end = _matching_paren(text, index + 1)
                found = _classify_text(text[index + 2 : end], depth + 1, aliases)
                if found is not None:
                    return text, found
                out.append("$__substituted__" if opener == "$(" else "/dev/fd/63")
                index = end + 1
                continue
            if char == "`":
                end = text.find("`", index + 1)
                if end < 0:
                    raise _Unreadable("an unclosed backtick")
                found = _classify_text(text[index + 1 : end], depth + 1, aliases)
                if found is not None:
                    return text, found
                out.append("$__substituted__")
                index = end + 1
                continue
        out.append(char)
        index += 1
    return "".join(out), None


def _matching_paren(text: str, open_index: int) -> int:
    """Index of the ``)`` closing the ``(`` at ``open_index`` (quotes respected)."""
    depth = 0
    quote: str | None = None
    index = open_index
    while index < len(text):
        char = text[index]
        if char == "\\" and quote != "'":
            index += 2
            continue
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise _Unreadable("an unclosed $( or (")


def _simple_commands(text: str) -> list[list[str]]:
    """The words of each simple command, redirections and their targets removed."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    # Comments are not stripped: shlex would also cut at a '#' inside a word, hiding what
    # follows. Read as words, a comment can only cause a needless question.
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as exc:  # an unclosed quote or a trailing escape
        raise _Unreadable(str(exc).lower()) from None
    commands: list[list[str]] = []
    current: list[str] = []
    skip_next = False
    for token in tokens:
        if token and all(char in _PUNCTUATION for char in token):
            if ("<" in token or ">" in token) and "(" not in token and ")" not in token:
                skip_next = True  # the word after a redirection is its target
                # "2>&1": the descriptor number belongs to the redirection
                if current and current[-1].isdigit():
                    current.pop()
                continue
            if any(char in _SEPARATORS for char in token):
                skip_next = False
                if current:
                    commands.append(current)
                current = []
                continue
        if skip_next:
            skip_next = False
            continue
        current.append(token)
    if current:
        commands.append(current)
    return commands


# --- Word level: assignments, wrappers, families ---------------------------------------------

# Words that start a compound command or negate one: what follows is the command.
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "coproc"}
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "busybox"})


def _program_name(word: str) -> str:
    name = os.path.basename(word.rstrip("/"))
    if name.endswith(".exe"):
        name = name[:-4]
    return name


def _classify_words(
    words: list[str], depth: int, aliases: dict[str, list[str]]
) -> InfraChange | None:
    if depth > _MAX_DEPTH:
        raise _Unreadable("nested too deeply")
    while words and (words[0] in _KEYWORDS or _ASSIGNMENT.match(words[0])):
        words = words[1:]
    if not words:
        return None
    if words[0] in ("for", "select", "case", "function"):
        return None  # the loop header or pattern list; the body is its own command
    if "$" in words[0]:
        raise _Unreadable(f"the program is chosen at run time: {words[0]}")
    program = _program_name(words[0])
    args = words[1:]
    if program in aliases:
        return _classify_words(aliases[program] + args, depth + 1, aliases)
    if program == "alias":
        _remember_aliases(args, aliases)
        return None
    unwrap = _WRAPPERS.get(program)
    if unwrap is not None:
        inner = unwrap(args)
        if isinstance(inner, str):
            return _classify_text(inner, depth + 1, aliases)
        if inner:
            return _classify_words(inner, depth + 1, aliases)
        return None
    if program in _SHELLS:
        return _classify_shell(program, args, depth, aliases)
    rule = _FAMILIES.get(program)
    if rule is None:
        return None
    family, decide = rule
    summary = decide(args)
    if summary is None:
        return None
    return InfraChange(family, f"{program} {summary}".strip())


def _remember_aliases(args: list[str], aliases: dict[str, list[str]]) -> None:
    for arg in args:
        name, sep, value = arg.partition("=")
        if sep:
            aliases[name] = value.split()


def _classify_shell(
    program: str, args: list[str], depth: int, aliases: dict[str, list[str]]
) -> InfraChange | None:
    if program == "busybox":
        if not args:
            return None
        return _classify_words(args, depth + 1, aliases)
    index = 0
    while index < len(args) and args[index].startswith(("-", "+")) and args[index] != "--":
        flags = args[index]
        if flags in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 2
            continue
        if not flags.startswith("--") and "c" in flags[1:]:
            if index + 1 >= len(args):
                raise _Unreadable(f"{program} -c without a command")
            return _classify_text(args[index + 1], depth + 1, aliases)
        if not flags.startswith("--") and "s" in flags[1:]:
            raise _Unreadable(f"{program} reads its commands from stdin")
        index += 1
    if index < len(args) and args[index] == "--":
        index += 1
    if index >= len(args):
        raise _Unreadable(f"{program} reads its commands from stdin")
    return None  # runs a script file: its content is not part of the command


# --- Wrappers: programs that run another command -----------------------------------------


def _skip_options(
    args: list[str], with_value: frozenset[str] = frozenset(), stop_at_first: bool = True
) -> list[str]:
    """``args`` after the leading options (and the values of those in ``with_value``)."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return args[index + 1 :]
        if not arg.startswith("-") or arg == "-":
            break
        if arg in with_value:
            index += 2
        else:
            index += 1
    return args[index:]


def _plain(args: list[str]) -> list[str]:
    return _skip_options(args)


def _sudo(args: list[str]) -> list[str]:
    rest = _skip_options(
        args, frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"})
    )
    while rest and _ASSIGNMENT.match(rest[0]):
        rest = rest[1:]
    return rest


def _env(args: list[str]) -> list[str] | str:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-S", "--split-string"):
            return " ".join(args[index + 1 :])
        if arg.startswith("--split-string="):
            return arg.partition("=")[2] + " " + " ".join(args[index + 1 :])
        if arg in ("-u", "--unset", "-C", "--chdir"):
            index += 2
        elif arg == "--":
            index += 1
            break
        elif arg.startswith("-") or _ASSIGNMENT.match(arg):
            index += 1
        else:
            break
    while index < len(args) and _ASSIGNMENT.match(args[index]):
        index += 1
    return args[index:]


def _timeout(args: list[str]) -> list[str]:
    rest = _skip_options(args, frozenset({"-s", "--signal", "-k", "--kill-after"}))
    return rest[1:]  # the duration


def _nice(args: list[str]) -> list[str]:
    return _skip_options(args, frozenset({"-n", "--adjustment"}))


def _ionice(args: list[str]) -> list[str]:
    return _skip_options(args, frozenset({"-c", "--class", "-n", "--classdata", "-p", "-P"}))


def _exec(args: list[str]) -> list[str]:
    return _skip_options(args, frozenset({"-a"}))


def _command(args: list[str]) -> list[str]:
    if any(arg in ("-v", "-V") for arg in args[:2]):
        return []  # looks a name up, runs nothing
    return _skip_options(args)


def _xargs(args: list[str]) -> list[str]:
    values = frozenset(
        {"-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a", "--arg-file", "--delimiter"}
    )
    return _skip_options(args, values)


def _with_command_option(option_names: Sequence[str]) -> Callable[[list[str]], list[str] | str]:
    """Wrappers such as ``su -c 'cmd'`` or ``script -c 'cmd'``: the option's value runs."""

    def unwrap(args: list[str]) -> list[str] | str:
        for index, arg in enumerate(args):
            if arg in option_names and index + 1 < len(args):
                return args[index + 1]
            for name in option_names:
                if name.startswith("--") and arg.startswith(name + "="):
                    return arg.partition("=")[2]
        return []

    return unwrap


def _watch(args: list[str]) -> str:
    rest = _skip_options(args, frozenset({"-n", "--interval", "-d", "-q"}))
    return " ".join(rest)  # watch hands its arguments to sh -c


def _ssh(args: list[str]) -> str:
    values = frozenset("bcDEeFIiJLlmOoPpQRSWw")
    index = 0
    while index < len(args) and args[index].startswith("-"):
        arg = args[index]
        index += 2 if len(arg) == 2 and arg[1] in values else 1
    if index >= len(args):
        return ""  # no host: a query such as ssh -V
    rest = args[index + 1 :]  # after the host
    if not rest:
        raise _Unreadable("ssh without a command reads commands from stdin")
    return " ".join(rest)


def _find(args: list[str]) -> list[str]:
    for index, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            inner = args[index + 1 :]
            return [word for word in inner if word not in ("{}", "+")]
    return []


def _node_runner(args: list[str]) -> list[str]:
    """``npx``/``bunx``/``pnpm dlx``…: the package name is the program (``aws-cdk@2`` → cdk)."""
    rest = _skip_options(args, frozenset({"-p", "--package", "-c", "--call"}))
    if rest and rest[0] in ("exec", "dlx", "run", "x"):
        rest = _skip_options(rest[1:], frozenset({"-p", "--package"}))
    if not rest:
        return []
    name = rest[0]
    if name.startswith("@"):
        scope, _, tail = name.partition("/")
        name = scope + "/" + tail.partition("@")[0]
    else:
        name = name.partition("@")[0]
    name = _NODE_PACKAGES.get(name, name)
    return [name, *rest[1:]]


def _cluster_wrapper(args: list[str]) -> list[str]:
    """``microk8s kubectl …``, ``k3s kubectl …``, ``minikube kubectl -- …``."""
    rest = [arg for arg in args if arg != "--"]
    return rest if rest and rest[0] in ("kubectl", "helm", "helm3") else []


_NODE_PACKAGES = {
    "aws-cdk": "cdk",
    "cdktf-cli": "cdktf",
    "@aws-cdk/cli": "cdk",
    "serverless": "serverless",
    "@pulumi/pulumi": "pulumi",
}

_WRAPPERS: dict[str, Callable[[list[str]], list[str] | str]] = {
    "sudo": _sudo,
    "doas": _sudo,
    "env": _env,
    "time": lambda args: _skip_options(args, frozenset({"-f", "-o"})),
    "timeout": _timeout,
    "nohup": _plain,
    "nice": _nice,
    "ionice": _ionice,
    "stdbuf": _plain,
    "setsid": _plain,
    "unbuffer": _plain,
    "chronic": _plain,
    "caffeinate": _plain,
    "exec": _exec,
    "command": _command,
    "builtin": _plain,
    "xargs": _xargs,
    "eval": lambda args: " ".join(args),
    "su": _with_command_option(("-c", "--command")),
    "runuser": _with_command_option(("-c", "--command")),
    "script": _with_command_option(("-c", "--command")),
    "flock": _with_command_option(("-c", "--command")),
    "watch": _watch,
    "ssh": _ssh,
    "find": _find,
    "npx": _node_runner,
    "bunx": _node_runner,
    "pnpx": _node_runner,
    "pnpm": _node_runner,
    "yarn": _node_runner,
    "npm": lambda args: _node_runner(args) if args and args[0] in ("exec", "x") else [],
    "microk8s": _cluster_wrapper,
    "k3s": _cluster_wrapper,
    "minikube": _cluster_wrapper,
    "microk8s.kubectl": lambda args: ["kubectl", *args],
}


# --- Families: which subcommands change infrastructure -------------------------------------


def _positionals(args: list[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    """Non-option words (option values of ``with_value`` options excluded)."""
    words: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            words.extend(args[index + 1 :])
            break
        if arg.startswith("-") and arg != "-":
            index += 2 if arg in with_value else 1
            continue
        words.append(arg)
        index += 1
    return words


def _check_readable(word: str, family: str) -> None:
    if "$" in word:
        raise _Unreadable(f"the {family} subcommand is chosen at run time: {word}")


_TF_CHANGES = frozenset(
    {"apply", "destroy", "import", "taint", "untaint", "force-unlock", "refresh"}
)
_TF_STATE_CHANGES = frozenset({"rm", "mv", "push", "replace-provider"})


def _terraform(args: list[str]) -> str | None:
    words = _positionals(args)
    if not words:
        return None
    _check_readable(words[0], "terraform")
    command = words[0]
    if command in _TF_CHANGES:
        return command
    if command not in ("state", "workspace"):
        return None
    second = words[1] if len(words) > 1 else ""
    _check_readable(second, "terraform")
    if command == "state" and second in _TF_STATE_CHANGES:
        return f"state {second}"
    if command == "workspace" and second == "delete":
        return "workspace delete"
    return None


_TERRAGRUNT_BATCH = frozenset({"apply-all", "destroy-all", "import-all"})


def _terragrunt(args: list[str]) -> str | None:
    words = _positionals(args, frozenset({"--terragrunt-config", "--working-dir", "--queue"}))
    for word in words[:3]:
        _check_readable(word, "terragrunt")
    if words and words[0] in _TERRAGRUNT_BATCH:
        return words[0]
    # "run-all apply", "run --all apply", "run -- apply", or plain "apply"
    inner = words[1:] if words and words[0] in ("run-all", "run", "stack") else words
    if words and words[0] == "stack" and inner and inner[0] == "run":
        inner = inner[1:]
    found = _terraform(inner)
    if found is None:
        return None
    prefix = " ".join(words[: len(words) - len(inner)])
    return f"{prefix} {found}".strip()


_PULUMI_VALUES = frozenset({"-C", "--cwd", "-s", "--stack", "--color", "--logflow", "-v"})
_PULUMI_CHANGES = frozenset({"up", "update", "destroy", "import", "watch", "cancel"})
_PULUMI_STATE_CHANGES = frozenset(
    {"delete", "move", "rename", "unprotect", "edit", "repair", "upgrade", "protect"}
)


def _pulumi(args: list[str]) -> str | None:
    words = _positionals(args, _PULUMI_VALUES)
    if not words:
        return None
    _check_readable(words[0], "pulumi")
    command, second = words[0], (words[1] if len(words) > 1 else "")
    if command in _PULUMI_CHANGES:
        return command
    if command == "refresh" and any(a in ("--yes", "-y", "--skip-preview", "-f") for a in args):
        return "refresh --yes"
    if command == "stack" and second in ("rm", "remove"):
        return f"stack {second}"
    if command == "state" and second in _PULUMI_STATE_CHANGES:
        return f"state {second}"
    return None


_KUBECTL_VALUES = frozenset(
    {
        "-n",
        "--namespace",
        "--context",
        "--kubeconfig",
        "--cluster",
        "--user",
        "-s",
        "--server",
        "--token",
        "--as",
        "--as-group",
        "-v",
        "--request-timeout",
    }
)
_KUBECTL_CHANGES = frozenset(
    {
        "apply",
        "create",
        "delete",
        "replace",
        "patch",
        "edit",
        "scale",
        "autoscale",
        "drain",
        "cordon",
        "uncordon",
        "taint",
        "label",
        "annotate",
        "set",
        "expose",
        "run",
    }
)
_ROLLOUT_CHANGES = frozenset({"restart", "undo", "pause", "resume"})


def _dry_run(args: list[str]) -> bool:
    """``--dry-run``, ``--dry-run=client|server`` or ``--dry-run client|server``."""
    for index, arg in enumerate(args):
        if arg == "--dry-run":
            following = args[index + 1] if index + 1 < len(args) else ""
            return following != "none"
        if arg in ("--dry-run=client", "--dry-run=server", "--dry-run=true"):
            return True
    return False


def _kubectl(args: list[str]) -> str | None:
    words = _positionals(args, _KUBECTL_VALUES)
    if not words:
        return None
    _check_readable(words[0], "kubectl")
    command, second = words[0], (words[1] if len(words) > 1 else "")
    if command == "rollout" and second in _ROLLOUT_CHANGES:
        summary = f"rollout {second}"
    elif command == "certificate" and second in ("approve", "deny"):
        summary = f"certificate {second}"
    elif command in _KUBECTL_CHANGES:
        summary = command
    else:
        return None
    return None if _dry_run(args) else summary


_HELM_VALUES = frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig"})
_HELM_CHANGES = frozenset(
    {"install", "upgrade", "uninstall", "delete", "del", "un", "rollback", "test"}
)


def _helm(args: list[str]) -> str | None:
    words = _positionals(args, _HELM_VALUES)
    if not words:
        return None
    _check_readable(words[0], "helm")
    if words[0] in _HELM_CHANGES and not _dry_run(args):
        return words[0]
    return None


_HELMFILE_CHANGES = frozenset({"apply", "sync", "destroy", "delete", "deps"})


def _helmfile(args: list[str]) -> str | None:
    words = _positionals(args, frozenset({"-f", "--file", "-e", "--environment", "-l"}))
    if words and words[0] in _HELMFILE_CHANGES - {"deps"}:
        return words[0]
    return None


_AWS_VALUES = frozenset(
    {
        "--profile",
        "--region",
        "--output",
        "--endpoint-url",
        "--query",
        "--color",
        "--ca-bundle",
        "--cli-read-timeout",
        "--cli-connect-timeout",
        "--cli-binary-format",
    }
)
_AWS_CFN_CHANGES = frozenset(
    {
        "create-stack",
        "update-stack",
        "delete-stack",
        "deploy",
        "execute-change-set",
        "create-stack-set",
        "update-stack-set",
        "delete-stack-set",
        "create-stack-instances",
        "update-stack-instances",
        "delete-stack-instances",
        "rollback-stack",
        "continue-update-rollback",
        "cancel-update-stack",
        "import-stacks-to-stack-set",
    }
)
# Operations that only read (everything else a cloud API offers may change something).
_AWS_READ_PREFIXES = (
    "describe-",
    "list-",
    "get-",
    "head-",
    "search-",
    "lookup-",
    "validate-",
    "estimate-",
    "batch-get-",
    "filter-",
    "simulate-",
    "wait",
    "help",
)
_AWS_READ_SERVICES = frozenset({"sts", "help", "configure", "--version"})
_S3_READS = frozenset({"ls", "presign", "help"})


def _aws(args: list[str]) -> str | None:
    words = _positionals(args, _AWS_VALUES)
    if len(words) < 2:
        return None
    service, operation = words[0], words[1]
    _check_readable(service, "aws")
    _check_readable(operation, "aws")
    if service in _AWS_READ_SERVICES:
        return None
    if service == "cloudformation":
        if operation in _AWS_CFN_CHANGES or operation.startswith(("delete-", "terminate-")):
            return f"cloudformation {operation}"
        if operation.startswith(_AWS_READ_PREFIXES) or operation in ("package", "detect-drift"):
            return None
        return f"cloudformation {operation}"
    if service == "s3":
        if operation in _S3_READS:
            return None
        if operation in ("cp", "sync"):
            destination = words[-1] if len(words) > 3 else ""
            return f"s3 {operation}" if destination.startswith("s3://") else None
        return f"s3 {operation}"
    if service == "logs" and operation == "tail":
        return None
    if operation.startswith(_AWS_READ_PREFIXES) or operation in ("scan", "query"):
        return None
    return f"{service} {operation}"


_ALIYUN_READ_PREFIXES = (
    "Describe",
    "List",
    "Get",
    "Query",
    "Check",
    "Validate",
    "Preview",
    "Search",
)
_ALIYUN_ROS_CHANGES = frozenset({"CreateStack", "UpdateStack", "DeleteStack"})
_ALIYUN_OSS_READS = frozenset({"ls", "stat", "cat", "du", "ls-bucket", "info"})


def _aliyun(args: list[str]) -> str | None:
    words = _positionals(args, frozenset({"--profile", "-p", "--region", "--RegionId"}))
    if len(words) < 2:
        return None
    product, api = words[0], words[1]
    _check_readable(product, "aliyun")
    _check_readable(api, "aliyun")
    if product in ("configure", "help", "version", "auto-completion"):
        return None
    if product == "oss":
        if api in _ALIYUN_OSS_READS:
            return None
        if api == "cp" and not (words[-1].startswith("oss://") and len(words) > 3):
            return None
        return f"oss {api}"
    if product == "ros" and api in _ALIYUN_ROS_CHANGES:
        return f"ros {api}"
    if api.startswith(_ALIYUN_READ_PREFIXES):
        return None
    return f"{product} {api}"


_CLOUD_VERBS = frozenset(
    {
        "create",
        "delete",
        "update",
        "deploy",
        "remove",
        "destroy",
        "patch",
        "apply",
        "import",
        "restart",
        "start",
        "stop",
        "reset",
        "resize",
        "scale",
        "rollback",
        "undelete",
        "purge",
        "swap",
        "rm",
        "mv",
        "upgrade",
        "set-iam-policy",
        "add-iam-policy-binding",
        "remove-iam-policy-binding",
    }
)
_GCLOUD_VALUES = frozenset(
    {"--project", "--account", "--configuration", "--format", "--verbosity", "--zone"}
)
_AZ_VALUES = frozenset(
    {
        "--subscription",
        "-g",
        "--resource-group",
        "-n",
        "--name",
        "-o",
        "--output",
        "--query",
        "-l",
        "--location",
    }
)


def _cloud_verbs(
    values: frozenset[str], local_groups: frozenset[str]
) -> Callable[[list[str]], str | None]:
    """gcloud/az: a create/delete/update… verb anywhere in the command path changes."""

    def decide(args: list[str]) -> str | None:
        words = _positionals(args, values)
        if words and words[0] in local_groups:
            return None
        for index, word in enumerate(words):
            _check_readable(word, "cloud CLI")
            if word in _CLOUD_VERBS or word.startswith(("delete-", "create-", "update-")):
                return " ".join(words[: index + 1])
        return None

    return decide


_CDK_CHANGES = frozenset({"deploy", "destroy", "bootstrap", "import", "watch", "rollback"})
_SAM_CHANGES = frozenset({"deploy", "delete", "sync"})
_SERVERLESS_CHANGES = frozenset({"deploy", "remove", "rollback"})


def _subcommand_in(
    changes: frozenset[str], family: str, values: frozenset[str] = frozenset()
) -> Callable[[list[str]], str | None]:
    def decide(args: list[str]) -> str | None:
        words = _positionals(args, values)
        if not words:
            return None
        _check_readable(words[0], family)
        return words[0] if words[0] in changes else None

    return decide


_ANSIBLE_SAFE_FLAGS = frozenset(
    {"--check", "-C", "--syntax-check", "--list-tasks", "--list-hosts", "--list-tags"}
)


def _ansible(args: list[str]) -> str | None:
    if any(arg in _ANSIBLE_SAFE_FLAGS for arg in args) or args in ([], ["--version"]):
        return None
    if any(arg in ("--help", "-h", "--version") for arg in args):
        return None
    return "without --check"


_FAMILIES: dict[str, tuple[str, Callable[[list[str]], str | None]]] = {
    "terraform": ("terraform", _terraform),
    "tofu": ("terraform", _terraform),
    "terragrunt": ("terraform", _terragrunt),
    "cdktf": ("cdk", _subcommand_in(frozenset({"deploy", "destroy"}), "cdktf")),
    "pulumi": ("pulumi", _pulumi),
    "kubectl": ("kubernetes", _kubectl),
    "oc": ("kubernetes", _kubectl),
    "kubecolor": ("kubernetes", _kubectl),
    "helm": ("kubernetes", _helm),
    "helm3": ("kubernetes", _helm),
    "helmfile": ("kubernetes", _helmfile),
    "aws": ("aws", _aws),
    "aliyun": ("aliyun", _aliyun),
    "gcloud": ("gcloud/az", _cloud_verbs(_GCLOUD_VALUES, frozenset({"config", "auth", "help"}))),
    "az": ("gcloud/az", _cloud_verbs(_AZ_VALUES, frozenset({"config", "login", "account"}))),
    "cdk": ("cdk", _subcommand_in(_CDK_CHANGES, "cdk", frozenset({"-a", "--app", "--profile"}))),
    "sam": ("sam/serverless", _subcommand_in(_SAM_CHANGES, "sam")),
    "serverless": ("sam/serverless", _subcommand_in(_SERVERLESS_CHANGES, "serverless")),
    "sls": ("sam/serverless", _subcommand_in(_SERVERLESS_CHANGES, "serverless")),
    "ansible-playbook": ("ansible", _ansible),
    "ansible": ("ansible", _ansible),
}
