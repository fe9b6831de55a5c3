"""The proxy's judge reads any agent in bounded memory and survives hostile bytes, and the
proxy exits as soon as the agent does (issue 34, items 1, 2 and 15)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from acp_conformance.harness.limits import MAX_LINE_BYTES
from acp_conformance.proxy.judge import HEADER, Judge, ThenSpill, record
from acp_conformance.proxy.monitor import LiveMonitor

MiB = 1024 * 1024
TIMEOUT = 60.0


def judge() -> Judge:
    return Judge(LiveMonitor(), io.StringIO())


def test_a_line_of_100_mib_without_a_newline_is_judged_in_bounded_memory() -> None:
    subject = judge()
    chunk = b"y" * (64 * 1024)
    tracemalloc.start()
    try:
        for _ in range(100 * 16):
            subject.chunk("a2c", b"d", chunk)
        subject.chunk("a2c", b"e", b"")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_LINE_BYTES + 8 * MiB, peak
    [finding] = subject.monitor.findings
    assert finding.rule.id == "transport.output-bounded"
    assert "line cap" in finding.reason


def test_hostile_lines_are_findings_not_crashes() -> None:
    subject = judge()
    deep = b"[" * 200_000 + b"]" * 200_000 + b"\n"
    surrogate = b'{"jsonrpc":"2.0","method":"session/update","params":{"t":"\\ud800"}}\n'
    subject.chunk("a2c", b"d", deep + surrogate)
    reasons = [f.reason for f in subject.monitor.findings]
    assert len(reasons) == 2, reasons
    assert "nested deeper" in reasons[0] and "lone surrogate" in reasons[1]


def test_a_record_split_between_the_pipe_and_the_spill_file_reads_as_one(tmp_path: Path) -> None:
    data = record("a2c", b"d", b"hello\n") + record("c2a", b"x", b"{}")
    spill = tmp_path / "rest"
    spill.write_bytes(data[5:])
    stream = ThenSpill(io.BytesIO(data[:5]), spill)
    assert stream.read(HEADER.size + 6) == data[: HEADER.size + 6]
    assert not spill.exists()  # removed once opened
    assert stream.read(1000) == data[HEADER.size + 6 :]


@pytest.mark.subprocess
def test_the_proxy_exits_with_the_agent_and_the_judge_finishes_in_the_background(
    tmp_path: Path,
) -> None:
    # An agent that writes 200 MiB of lines and exits 7: the editor reads them all, then the
    # proxy exits with 7 without waiting for the judge (--judge-wait 0), which still writes
    # the report.
    agent = (
        'import sys; line = b\'{"jsonrpc":"2.0","method":"_x","params":{"p":"\''
        " + b'a' * 100_000 + b'\"}}\\n'\n"
        "for _ in range(200 * 1024 * 1024 // len(line)): sys.stdout.buffer.write(line)\n"
        "sys.stdout.flush(); sys.exit(7)"
    )
    report = tmp_path / "report.json"
    argv = [sys.executable, "-m", "acp_conformance.cli", "proxy", "--judge-wait", "0"]
    argv += ["--report-json", str(report), "--", sys.executable, "-c", agent]
    proxy = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proxy.stdout is not None and proxy.stdin is not None
    received = 0
    while data := proxy.stdout.read(1024 * 1024):
        received += len(data)
    agent_done = time.monotonic()
    assert proxy.wait(timeout=TIMEOUT) == 7
    exited_after = time.monotonic() - agent_done
    proxy.stdin.close()
    assert received >= 200 * 1024 * 1024 - 200_000
    print(f"proxy exited {exited_after:.2f} s after the agent's stdout closed")
    deadline = time.monotonic() + TIMEOUT
    while not report.exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # bounded poll: the background judge is no child of this test
    data = json.loads(report.read_text())
    assert data["agent"]["exitCode"] == 7


#: Runs the judge in a process that prints its own peak resident set (KiB, ``VmHWM``) when
#: done. Not ``ru_maxrss``: Linux keeps that across ``execve``, so it reported the size of the
#: pytest worker that started the judge (up to 690 MiB in the full suite), not the judge's.
JUDGE_WITH_PEAK = (
    "import sys\n"
    "from acp_conformance.proxy.judge import main\n"
    "code = main(sys.argv[1:])\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
    "print(hwm[0].split()[1], file=sys.stderr)\n"
    "sys.exit(code)\n"
)


@pytest.mark.subprocess
def test_the_judge_process_stays_small_for_a_200_mib_line(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    argv = [sys.executable, "-c", JUDGE_WITH_PEAK, "--agent-json", '["agent"]']
    argv += ["--report-json", str(report), "--log", str(tmp_path / "log")]
    judge = subprocess.Popen(argv, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert judge.stdin is not None
    chunk = record("a2c", b"d", b"y" * (1024 * 1024))
    for _ in range(200):
        judge.stdin.write(chunk)
    end = record("a2c", b"e", b"") + record("c2a", b"x", b'{"exitCode": 0}')
    _, err = judge.communicate(end, timeout=TIMEOUT)
    assert judge.returncode == 0
    peak_kib = int(err.split()[-1])
    print(f"judge peak RSS {peak_kib / 1024:.0f} MiB")
    assert peak_kib <= 300 * 1024
    rules = {f["rule"] for f in json.loads(report.read_text())["findings"]}
    assert rules == {"transport.output-bounded"}
