"""The checks ``iac_check`` runs, each turning a tool's output into :class:`Diagnostic` rows.

Every external tool runs only when installed, in its own process group with a deadline, and
without network: its environment points the HTTP(S) proxies at a closed local port, so a
download fails at once instead of reaching the internet (Terraform, cfn-lint, kubeconform
and checkov all honour the proxy variables). ``terraform init`` writes its data to a
temporary directory (``TF_DATA_DIR``), never into the user's module.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from iac_code.tools.process_group import run_in_process_group

_OUTPUT_CAP = 2 * 1024 * 1024
_NO_NETWORK = "http://127.0.0.1:9"  # the discard port: nothing listens, connections fail fast


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int | None
    severity: str  # "error" | "warning" | "info"
    rule: str
    message: str
    tool: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line_text(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where} {self.severity} [{self.tool} {self.rule}] {self.message}"


@dataclass
class CheckReport:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Runner:
    """How checks run: environment, deadline per process, and how paths are shown."""

    env: Mapping[str, str]
    cwd: Path
    timeout_s: float
    grace_s: float = 2.0

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self.env.get("PATH"))

    def shown(self, path: Path | str) -> str:
        try:
            return os.fspath(Path(path).relative_to(self.cwd))
        except ValueError:
            return os.fspath(path)

    async def run(
        self, argv: Sequence[str], cwd: Path, extra_env: Mapping[str, str] | None = None
    ) -> tuple[int | None, str, bool]:
        """``(exit code, combined output, timed out)``."""
        result = await run_in_process_group(
            argv,
            cwd=cwd,
            env={**self.env, **(extra_env or {})},
            timeout_s=self.timeout_s,
            output_cap=_OUTPUT_CAP,
            grace_s=self.grace_s,
        )
        return result.exit_code, result.output, result.timed_out


def offline_environment(base: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[name] = _NO_NETWORK
    env["NO_PROXY"] = env["no_proxy"] = ""
    env.update(CHECKPOINT_DISABLE="1", TF_IN_AUTOMATION="1", TF_INPUT="0")
    return env


def _json_in(output: str) -> Any:
    """The first JSON document in ``output`` that starts a line (tools print warnings too)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"^[\[{]", output, re.MULTILINE):
        try:
            return decoder.raw_decode(output, match.start())[0]
        except json.JSONDecodeError:
            continue
    return None


# --- Terraform / OpenTofu --------------------------------------------------------------------

_TF_ERROR = re.compile(r"Error: (?P<summary>[^\n]+)\n\n\s*on (?P<file>\S+) line (?P<line>\d+)")


async def check_terraform(runner: Runner, module: Path, report: CheckReport) -> None:
    binary = runner.which("terraform") or runner.which("tofu")
    if binary is None:
        report.skipped.append("terraform/tofu (not installed: HCL parsed with python-hcl2)")
        await check_hcl_files(runner, _hcl_files(module), report)
        check_variable_references(runner, module, report)
        return
    tool = Path(binary).name
    await _terraform_fmt(runner, binary, tool, module, report)
    with tempfile.TemporaryDirectory(prefix="iac-check-") as data_dir:
        data = _isolated_terraform(Path(data_dir))
        code, output, _ = await runner.run(
            [binary, "init", "-backend=false", "-input=false", "-no-color", "-lockfile=readonly"],
            module,
            data,
        )
        if code != 0:
            report.diagnostics.append(
                Diagnostic(
                    runner.shown(module),
                    None,
                    "info",
                    "init",
                    f"{tool} validate skipped: init -backend=false could not install the "
                    "providers without network; the files were parsed instead.",
                    tool,
                )
            )
            await check_hcl_files(runner, _hcl_files(module), report)
            check_variable_references(runner, module, report)
            return
        code, output, timed_out = await runner.run(
            [binary, "validate", "-json", "-no-color"], module, data
        )
    report.ran.append(f"{tool} validate")
    if timed_out:
        report.diagnostics.append(_timeout(runner, module, tool, "validate"))
        return
    document = _json_in(output)
    if not isinstance(document, dict):
        return
    for item in document.get("diagnostics") or []:
        where = item.get("range") or {}
        filename = where.get("filename")
        file = runner.shown(module / filename) if filename else runner.shown(module)
        message = item.get("summary", "")
        if item.get("detail"):
            message = f"{message}: {item['detail']}"
        report.diagnostics.append(
            Diagnostic(
                file,
                (where.get("start") or {}).get("line"),
                "error" if item.get("severity") == "error" else "warning",
                "validate",
                message,
                tool,
            )
        )


def _isolated_terraform(data_dir: Path) -> dict[str, str]:
    """Environment that keeps init and validate from running anything the repository ships.

    validate starts provider plugins, and init would take them from the module's own
    ``.terraform`` or from a ``terraform.d/plugins`` folder in the repository (an implied
    local mirror). iac_check runs without asking, so providers may only come from a
    registry download (which the proxy settings block): the data directory is a fresh
    temporary one and the CLI configuration lists direct installation alone."""
    config = data_dir / "cli.tfrc"
    config.write_text("provider_installation {\n  direct {}\n}\n")
    return {"TF_DATA_DIR": os.fspath(data_dir / "data"), "TF_CLI_CONFIG_FILE": os.fspath(config)}


async def _terraform_fmt(
    runner: Runner, binary: str, tool: str, module: Path, report: CheckReport
) -> None:
    code, output, timed_out = await runner.run(
        [binary, "fmt", "-check", "-list=true", "-no-color"], module
    )
    report.ran.append(f"{tool} fmt")
    if timed_out:
        report.diagnostics.append(_timeout(runner, module, tool, "fmt"))
    elif code == 3:
        for line in output.splitlines():
            name = line.strip()
            if name.endswith(TERRAFORM_FILE_SUFFIXES) and (module / name).is_file():
                report.diagnostics.append(
                    Diagnostic(
                        runner.shown(module / name),
                        None,
                        "warning",
                        "fmt",
                        f"not in canonical format ({tool} fmt would rewrite it)",
                        tool,
                    )
                )
    elif code not in (0, None):
        for match in _TF_ERROR.finditer(output):
            report.diagnostics.append(
                Diagnostic(
                    runner.shown(module / match["file"]),
                    int(match["line"]),
                    "error",
                    "fmt",
                    match["summary"],
                    tool,
                )
            )


TERRAFORM_FILE_SUFFIXES = (".tf", ".tofu", ".tf.json", ".tfvars")


def _hcl_files(module: Path) -> list[Path]:
    return sorted(p for p in module.iterdir() if p.name.endswith((".tf", ".tofu", ".tfvars")))


def _timeout(runner: Runner, path: Path, tool: str, step: str) -> Diagnostic:
    return Diagnostic(
        runner.shown(path),
        None,
        "info",
        step,
        f"{tool} {step} did not finish within {runner.timeout_s:g} s and was stopped",
        tool,
    )


async def check_hcl_files(runner: Runner, files: Sequence[Path], report: CheckReport) -> None:
    """Parse HCL with python-hcl2 (imported lazily: only this fallback needs it)."""
    if not files:
        return
    import anyio

    report.ran.append("python-hcl2 parse")
    for path in files:
        problem = await anyio.to_thread.run_sync(_hcl_problem, path)
        if problem is not None:
            line, message = problem
            report.diagnostics.append(
                Diagnostic(runner.shown(path), line, "error", "syntax", message, "python-hcl2")
            )


_VARIABLE_BLOCK = re.compile(r'^\s*variable\s+"([^"]+)"', re.MULTILINE)
_VARIABLE_REFERENCE = re.compile(r"\bvar\.([A-Za-z_][A-Za-z0-9_\-]*)")
_COMMENT = re.compile(r"/\*.*?\*/|(?:#|//)[^\n]*", re.DOTALL)


def check_variable_references(runner: Runner, module: Path, report: CheckReport) -> None:
    """What ``validate`` would say first about a module it cannot validate: a ``var.X``
    that no ``variable "X"`` block of the module declares."""
    texts: dict[Path, str] = {}
    for path in _hcl_files(module):
        if path.suffix != ".tfvars":
            try:
                # Comments are blanked (newlines kept) so line numbers stay right.
                texts[path] = _COMMENT.sub(
                    lambda m: "\n" * m.group(0).count("\n"), path.read_text(encoding="utf-8")
                )
            except (OSError, UnicodeDecodeError):
                continue
    declared = {name for text in texts.values() for name in _VARIABLE_BLOCK.findall(text)}
    report.ran.append("variable references")
    for path, text in texts.items():
        for match in _VARIABLE_REFERENCE.finditer(text):
            name = match.group(1)
            if name not in declared:
                report.diagnostics.append(
                    Diagnostic(
                        runner.shown(path),
                        text.count("\n", 0, match.start()) + 1,
                        "error",
                        "undeclared-variable",
                        f'Reference to undeclared input variable "{name}": declare it with '
                        f'a variable "{name}" {{}} block',
                        "iac_check",
                    )
                )


def _hcl_problem(path: Path) -> tuple[int | None, str] | None:
    import hcl2

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot be read: {exc}"
    try:
        hcl2.loads(text)
    except Exception as exc:  # lark raises several exception types, all with line/column
        line = getattr(exc, "line", None)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return (line if isinstance(line, int) and line > 0 else None), first
    return None


async def _run_installed(
    runner: Runner, name: str, args: Sequence[str], report: CheckReport, subject: Path, step: str
) -> str | None:
    """The output of the installed ``name`` run with ``args``; None when it is not installed
    (noted in the report) or did not finish in time (reported as a finding).

    It runs in an empty temporary directory (paths in ``args`` are absolute): linters read
    their configuration from the working directory, and a repository's ``.cfnlintrc`` or
    ``.checkov.yaml`` can name rule and check code to load, which must not run unasked."""
    binary = runner.which(name)
    if binary is None:
        report.skipped.append(f"{name} (not installed)")
        return None
    with tempfile.TemporaryDirectory(prefix="iac-check-") as neutral:
        _, output, timed_out = await runner.run([binary, *args], Path(neutral))
    report.ran.append(name)
    if timed_out:
        report.diagnostics.append(_timeout(runner, subject, name, step))
        return None
    return output


# --- CloudFormation / ROS --------------------------------------------------------------------


async def check_cloudformation(
    runner: Runner, templates: Sequence[Path], report: CheckReport
) -> None:
    if not templates:
        return
    if runner.which("cfn-lint") is None:
        check_json_templates(runner, templates, report)
    args = ["--format", "json", "--", *map(os.fspath, templates)]
    output = await _run_installed(runner, "cfn-lint", args, report, templates[0], "lint")
    if output is None:
        return
    for item in _json_in(output) or []:
        if not isinstance(item, dict):
            continue
        level = str(item.get("Level", "")).lower()
        start = ((item.get("Location") or {}).get("Start")) or {}
        report.diagnostics.append(
            Diagnostic(
                runner.shown(item.get("Filename", "")),
                start.get("LineNumber"),
                level if level in ("error", "warning") else "info",
                str((item.get("Rule") or {}).get("Id", "")),
                str(item.get("Message", "")),
                "cfn-lint",
            )
        )


def check_json_templates(runner: Runner, templates: Sequence[Path], report: CheckReport) -> None:
    """Without a linter, JSON templates are at least parsed (YAML needs a YAML linter)."""
    checked = False
    for path in templates:
        if path.suffix != ".json":
            continue
        checked = True
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            report.diagnostics.append(
                Diagnostic(runner.shown(path), None, "error", "read", str(exc), "json")
            )
        except json.JSONDecodeError as exc:
            report.diagnostics.append(
                Diagnostic(runner.shown(path), exc.lineno, "error", "syntax", exc.msg, "json")
            )
    if checked:
        report.ran.append("json parse")


# --- YAML / Kubernetes -----------------------------------------------------------------------

_YAMLLINT_LINE = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):\d+: \[(?P<level>\w+)\] "
    r"(?P<message>.*?)(?: \((?P<rule>[\w-]+)\))?$"
)


async def check_yaml(runner: Runner, files: Sequence[Path], report: CheckReport) -> None:
    if not files:
        return
    args = ["-f", "parsable", "--", *map(os.fspath, files)]
    output = await _run_installed(runner, "yamllint", args, report, files[0], "lint")
    if output is None:
        return
    for line in output.splitlines():
        match = _YAMLLINT_LINE.match(line)
        if match:
            report.diagnostics.append(
                Diagnostic(
                    runner.shown(match["file"]),
                    int(match["line"]),
                    "error" if match["level"] == "error" else "warning",
                    match["rule"] or "yaml",
                    match["message"],
                    "yamllint",
                )
            )


async def check_kubernetes(runner: Runner, manifests: Sequence[Path], report: CheckReport) -> None:
    if not manifests:
        return
    args = ["-output", "json", "-summary=false", "-ignore-missing-schemas"]
    args += [os.fspath(m) for m in manifests]
    output = await _run_installed(runner, "kubeconform", args, report, manifests[0], "validate")
    if output is None:
        return
    document = _json_in(output)
    resources = document.get("resources", []) if isinstance(document, dict) else []
    for item in resources or []:
        if item.get("status") in ("statusInvalid", "statusError"):
            report.diagnostics.append(
                Diagnostic(
                    runner.shown(item.get("filename", "")),
                    None,
                    "error",
                    str(item.get("kind") or "schema"),
                    str(item.get("msg", "")),
                    "kubeconform",
                )
            )


# --- checkov ---------------------------------------------------------------------------------


async def check_checkov(
    runner: Runner, root: Path, root_is_file: bool, report: CheckReport
) -> None:
    args = ["-f" if root_is_file else "-d", os.fspath(root)]
    args += ["-o", "json", "--quiet", "--compact", "--skip-download"]
    output = await _run_installed(runner, "checkov", args, report, root, "scan")
    if output is None:
        return
    document = _json_in(output)
    for block in document if isinstance(document, list) else [document]:
        if not isinstance(block, dict):
            continue
        for item in (block.get("results") or {}).get("failed_checks") or []:
            lines = item.get("file_line_range") or [None]
            report.diagnostics.append(
                Diagnostic(
                    runner.shown(item.get("file_abs_path") or item.get("file_path", "")),
                    lines[0],
                    "warning",
                    str(item.get("check_id", "")),
                    str(item.get("check_name", "")),
                    "checkov",
                )
            )
