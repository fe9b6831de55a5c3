"""``acp-conformance validate`` reads any transcript in bounded memory and judges hostile
lines as problems of the transcript (issue 34, items 1 and 2)."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from acp_conformance.cli import main
from acp_conformance.harness.limits import MAX_LINE_BYTES
from acp_conformance.transcript import validate_transcript_file

MiB = 1024 * 1024
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'


def test_a_64_mib_line_without_a_newline_is_one_problem_in_bounded_memory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "flood.jsonl"
    with path.open("wb") as out:
        out.write(INITIALIZE)
        for _ in range(64):
            out.write(b"z" * MiB)
    tracemalloc.start()
    try:
        report, ok = validate_transcript_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not ok
    assert "2 messages, 1 problems" in report and "line cap" in report
    assert peak < 2 * MAX_LINE_BYTES + 16 * MiB, peak


def test_hostile_lines_are_problems_and_the_report_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(
        INITIALIZE
        + b"[" * 200_000
        + b"]" * 200_000
        + b"\n"
        + b'{"jsonrpc":"2.0","method":"session/update","params":{"x":"\\ud800"}}\n'
        + b'{"jsonrpc":"2.0","method":"x\\u001b]0;pwned\\u0007"}\n'
    )
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "nested deeper" in out and "lone surrogate" in out
    assert "\x1b" not in out and "\x07" not in out


def test_problems_past_the_listed_ones_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_bytes(b"not json\n" * 1500)
    report, ok = validate_transcript_file(path)
    assert not ok
    assert "1500 problems" in report and "... and 500 more" in report


@pytest.mark.subprocess
def test_validate_as_a_process_stays_small_for_a_128_mib_line(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("wb") as out:
        out.write(INITIALIZE)
        for _ in range(128):
            out.write(b"z" * MiB)
    rss = tmp_path / "rss"
    probe = Path(__file__).parent / "fixtures" / "rss_probe.py"
    done = subprocess.run(
        [sys.executable, str(probe), "validate", str(path)],
        env={**os.environ, "RSS_PROBE_OUT": str(rss)},
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert b"line cap" in done.stdout
    peak_kib = int(rss.read_text())
    print(f"validate peak RSS {peak_kib / 1024:.0f} MiB")
    assert peak_kib <= 300 * 1024
