"""``acp-conformance client``: real client processes against the agent double, each seeded
defect caught under its requirement id, and bad client commands reported without a traceback."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from acp_conformance.cli import main
from acp_conformance.client.command import check_client
from acp_conformance.config import absolutize
from acp_conformance.outcomes import Verdict

pytestmark = pytest.mark.subprocess

HERE = Path(__file__).parent
DEFECT = [sys.executable, str(HERE / "defect_client.py"), "--agent", "{agent}"]
RECIPE = [
    sys.executable,
    "-m",
    "acp_conformance.client.recipes.python_sdk_client",
    "--scenario",
    "{scenario}",
    "--agent",
    "{agent}",
]
TS_RECIPE = Path(__file__).parents[3] / "conformance/acp_conformance/client/recipes/ts"


def verdicts(argv: list[str], tmp_path: Path, *scenarios: str) -> dict[str, Verdict]:
    result = check_client(argv, list(scenarios), timeout=5, scenario_timeout=30, workdir=tmp_path)
    return {rid: item.verdict for rid, item in result.results.items()} | {
        "_exit": result.exit_code  # type: ignore[dict-item]
    }


def test_python_sdk_recipe_is_conformant(tmp_path: Path) -> None:
    found = verdicts(RECIPE, tmp_path, "baseline", "tolerance", "prompt-error", "cancel", "load")
    assert found["_exit"] == 0
    for rid in (
        "client.load.replay",
        "client.init.first",
        "client.fs.read",
        "client.fs.write",
        "client.permission.option",
        "client.permission.cancelled",
        "client.tolerance.unknown-update",
        "client.jsonrpc.id-echo",
    ):
        assert found[rid] is Verdict.PASS, rid
    assert found["client.terminal.create"] is Verdict.NOT_APPLICABLE


def test_a_plain_raw_client_passes(tmp_path: Path) -> None:
    found = verdicts(DEFECT, tmp_path, "baseline", "tolerance")
    assert found["_exit"] == 0
    assert found["client.permission.option"] is Verdict.PASS


@pytest.mark.parametrize(
    ("defect", "scenario", "requirement", "exit_code"),
    [
        ("before-init", "baseline", "client.init.first", 1),
        ("bad-option", "baseline", "client.permission.option", 0),  # a SHOULD
        ("no-echo", "baseline", "client.jsonrpc.id-echo", 1),
        ("crash-unknown", "tolerance", "client.tolerance.unknown-update", 1),
        ("garbage", "baseline", "client.wire.json", 1),
        # Hostile bytes are the client's wire defect, never a crash of the checker (issue 34).
        ("huge-line", "baseline", "client.wire.json", 1),
        ("deep", "baseline", "client.wire.json", 1),
        ("surrogate", "baseline", "client.wire.json", 1),
    ],
)
def test_seeded_defect_is_caught(
    tmp_path: Path, defect: str, scenario: str, requirement: str, exit_code: int
) -> None:
    found = verdicts([*DEFECT, "--defect", defect], tmp_path, scenario)
    assert found[requirement] is Verdict.FAIL
    assert found["_exit"] == exit_code


def test_client_that_exits_at_once_is_inconclusive_with_its_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["client", "--scenario", "baseline", "--", *DEFECT, "--defect", "exit-at-once"])
    out = capsys.readouterr().out
    assert code == 3
    assert "giving up at once" in out and "Traceback" not in out


def test_a_hanging_client_is_killed_at_the_scenario_deadline(tmp_path: Path) -> None:
    result = check_client(
        [*DEFECT, "--defect", "hang"],
        ["baseline"],
        timeout=30,
        scenario_timeout=3,
        workdir=tmp_path,
    )
    assert result.notes == ["scenario baseline: still running at the deadline (killed)"]
    assert result.results["client.init.first"].verdict is Verdict.PASS


def test_client_command_not_found_is_inconclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    code = main(["client", "--report-json", str(report), "--", "no-such-client-xyz", "{agent}"])
    assert code == 3
    assert "could not be started" in capsys.readouterr().out
    assert '"status": "inconclusive"' in report.read_text()


def test_client_command_without_agent_placeholder_is_a_usage_error() -> None:
    assert main(["client", "--", "true"]) == 2


def test_typescript_sdk_recipe(tmp_path: Path) -> None:
    if not (TS_RECIPE / "node_modules").is_dir() or shutil.which("node") is None:
        pytest.skip(f"npm install in {TS_RECIPE} (and node on PATH) to run the TypeScript recipe")
    argv = [
        "node",
        str(TS_RECIPE / "ts_sdk_client.mjs"),
        "--scenario",
        "{scenario}",
        "--agent",
        "{agent}",
    ]
    found = verdicts(argv, tmp_path, "baseline", "tolerance", "load")
    assert found["client.init.first"] is Verdict.PASS
    assert found["client.load.replay"] is Verdict.PASS
    assert found["client.jsonrpc.id-echo"] is Verdict.PASS


def test_a_relative_client_command_is_found_from_the_callers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each scenario runs the client in its own folder; `python defect_client.py` typed in
    # the caller's folder must still find the script there.
    monkeypatch.chdir(HERE)
    client = [sys.executable, "defect_client.py", "--agent", "{agent}"]
    code = main(["client", "--scenario", "baseline", "--workdir", str(tmp_path), "--", *client])
    assert code == 0, capsys.readouterr().out


def test_a_relative_venv_interpreter_keeps_its_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A venv's bin/python is a symlink to the base interpreter: resolving it would drop the
    # venv's packages, so relative paths become absolute without following links.
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    assert absolutize(["venv/bin/python", "-m", "x"]) == [
        str(tmp_path / "venv" / "bin" / "python"),
        "-m",
        "x",
    ]


def test_the_agent_words_placeholder_passes_the_double_as_separate_arguments(
    tmp_path: Path,
) -> None:
    # The Python SDK's example client takes the agent as PROGRAM ARGS...; a small stand-in
    # joins its arguments back into one command for the raw defect client.
    shim = tmp_path / "words_client.py"
    shim.write_text(
        "import shlex, subprocess, sys\n"
        "sys.exit(subprocess.call([*sys.argv[1:3], '--agent', shlex.join(sys.argv[3:])]))\n"
    )
    found = verdicts(
        [
            sys.executable,
            str(shim),
            sys.executable,
            str(HERE / "defect_client.py"),
            "{agent-words}",
        ],
        tmp_path / "runs",
        "baseline",
    )
    assert found["_exit"] == 0
    assert found["client.init.first"] is Verdict.PASS


def test_input_is_written_to_the_clients_standard_input(tmp_path: Path) -> None:
    # A console client: it talks to the agent only once it has read a line of input.
    shim = tmp_path / "console_client.py"
    shim.write_text(
        "import os, sys\n"
        "if sys.stdin.readline() != 'go\\n':\n"
        "    sys.exit(3)\n"
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
    )
    argv = [sys.executable, str(shim), str(HERE / "defect_client.py"), "--agent", "{agent}"]
    fed = check_client(
        argv,
        ["baseline"],
        timeout=5,
        scenario_timeout=30,
        workdir=tmp_path / "a",
        stdin_text="go\n",
    )
    assert fed.results["client.init.first"].verdict is Verdict.PASS
    unfed = check_client(argv, ["baseline"], timeout=5, scenario_timeout=30, workdir=tmp_path / "b")
    assert unfed.exit_code == 3


def test_a_huge_client_line_keeps_the_record_small(tmp_path: Path) -> None:
    found = verdicts([*DEFECT, "--defect", "huge-line"], tmp_path, "baseline")
    assert found["client.wire.json"] is Verdict.FAIL
    records = list(tmp_path.rglob("acp-conformance-record.ndjson"))
    assert records and all(r.stat().st_size < 1024 * 1024 for r in records)
