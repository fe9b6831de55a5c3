"""Issue 19 item 1: ``edit_file`` of a large, sparse or binary file cannot exhaust memory.

Above ``ToolLimits.edit_max_bytes`` the edit is refused before the file is read; binary files
are refused; a diff larger than ``diff_max_chars`` goes out as a bounded excerpt. Peak memory
is measured in a child process (its VmHWM), never by timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from iac_code.tools.contract import ToolContext
from iac_code.tools.edit_file import EditFileTool
from iac_code.tools.write_file import WriteFileTool

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024


def _sparse(path: Path, size: int, head: bytes = b"needle\n") -> None:
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)


async def test_a_file_over_the_cap_is_refused_and_left_alone(workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace).with_limits(edit_max_bytes=64 * 1024)
    big = workspace / "big.txt"
    big.write_text("needle\n" + "x" * 100_000)
    before = big.read_bytes()
    outcome = await EditFileTool().run(
        {"path": "big.txt", "old_string": "needle", "new_string": "pin"}, ctx
    )
    assert outcome.is_error
    assert "too large to edit" in outcome.model_content
    assert big.read_bytes() == before


async def test_a_sparse_gibibyte_is_refused_and_stays_sparse(workspace: Path) -> None:
    sparse = workspace / "sparse.bin"
    _sparse(sparse, 1024 * MIB)
    blocks = os.stat(sparse).st_blocks
    outcome = await EditFileTool().run(
        {"path": "sparse.bin", "old_string": "needle", "new_string": "pin"},
        ToolContext.for_session(workspace),
    )
    assert outcome.is_error and "too large to edit" in outcome.model_content
    assert os.stat(sparse).st_blocks == blocks
    assert os.stat(sparse).st_size == 1024 * MIB


class _RecordingClientFs:
    """A client that can read and write files; it records what it was asked."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.reads: list[str] = []
        self.writes: list[str] = []

    async def read_text_file(self, path: str, line: int | None, limit: int | None) -> str:
        self.reads.append(path)
        return self.text

    async def write_text_file(self, path: str, content: str) -> None:
        self.writes.append(path)


async def test_a_huge_file_is_refused_before_the_client_is_asked_for_it(workspace: Path) -> None:
    _sparse(workspace / "sparse.log", 1024 * MIB)
    client = _RecordingClientFs("needle\n")
    ctx = ToolContext.for_session(workspace, fs_read=client, fs_write=client)
    outcome = await EditFileTool().run(
        {"path": "sparse.log", "old_string": "needle", "new_string": "pin"}, ctx
    )
    assert outcome.is_error and "too large to edit" in outcome.model_content
    assert client.reads == [] and client.writes == []


async def test_a_large_or_binary_text_from_the_client_is_refused(workspace: Path) -> None:
    (workspace / "a.txt").write_text("small on disk\n")
    for text, word in (("needle\n" + "y" * 70_000, "too large"), ("needle\x00\n", "binary")):
        client = _RecordingClientFs(text)
        ctx = ToolContext.for_session(workspace, fs_read=client, fs_write=client).with_limits(
            edit_max_bytes=64 * 1024
        )
        outcome = await EditFileTool().run(
            {"path": "a.txt", "old_string": "needle", "new_string": "pin"}, ctx
        )
        assert outcome.is_error and word in outcome.model_content
        assert client.writes == []


async def test_binary_files_are_refused(workspace: Path) -> None:
    blob = workspace / "blob.dat"
    blob.write_bytes(b"needle\n" + b"\x00" * 20_000 + b"tail")
    outcome = await EditFileTool().run(
        {"path": "blob.dat", "old_string": "tail", "new_string": "TAIL"},
        ToolContext.for_session(workspace),
    )
    assert outcome.is_error and "binary" in outcome.model_content
    assert blob.read_bytes().endswith(b"tail")


async def test_an_edit_that_would_grow_past_the_cap_is_refused(workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace).with_limits(edit_max_bytes=64 * 1024)
    target = workspace / "a.txt"
    target.write_text("a\n" * 1000)
    outcome = await EditFileTool().run(
        {"path": "a.txt", "old_string": "a", "new_string": "a" * 100, "replace_all": True}, ctx
    )
    assert outcome.is_error and "edit limit" in outcome.model_content
    assert target.read_text() == "a\n" * 1000


async def test_the_diff_of_a_large_file_is_a_bounded_excerpt(workspace: Path) -> None:
    lines = [f"line {number}\n" for number in range(200_000)]
    target = workspace / "long.txt"
    target.write_text("".join(lines))
    ctx = ToolContext.for_session(workspace)
    outcome = await EditFileTool().run(
        {"path": "long.txt", "old_string": "line 100000\n", "new_string": "changed\n"}, ctx
    )
    assert not outcome.is_error, outcome.model_content
    (diff,) = outcome.content
    assert diff["type"] == "diff"
    size = len(json.dumps(diff))
    assert size < ctx.limits.diff_max_chars
    assert "line 100000\n" in diff["oldText"] and "changed\n" in diff["newText"]
    assert diff["oldText"].startswith("line 99997\n")
    assert diff["newText"].endswith("line 100003\n")
    assert outcome.raw_output["diffExcerptFirstLine"] == 99_998
    assert "changed\n" in target.read_text()


async def test_write_file_over_a_huge_file_does_not_read_it_back(workspace: Path) -> None:
    sparse = workspace / "huge.log"
    _sparse(sparse, 512 * MIB, head=b"")
    outcome = await WriteFileTool().run(
        {"path": "huge.log", "content": "small\n"}, ToolContext.for_session(workspace)
    )
    assert not outcome.is_error, outcome.model_content
    assert outcome.content[0]["type"] == "content"
    assert outcome.raw_output["created"] is False
    assert sparse.read_text() == "small\n"


_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    # Without the caps the 1 GiB file took tens of GiB: fail with MemoryError instead.
    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, 3 * 1024**3))
    import anyio
    from iac_code.tools.contract import ToolContext
    from iac_code.tools.edit_file import EditFileTool

    def hwm_kib():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        raise SystemExit("no VmHWM")

    async def main():
        ctx = ToolContext.for_session(sys.argv[1])
        tool = EditFileTool()
        await tool.run({"path": "warm.txt", "old_string": "a", "new_string": "b"}, ctx)
        base = hwm_kib()
        results = {}
        for name in sys.argv[2:]:
            outcome = await tool.run(
                {"path": name, "old_string": "needle", "new_string": "pin"}, ctx
            )
            results[name] = {"error": outcome.is_error, "text": outcome.model_content[:200]}
        print(json.dumps({"base_kib": base, "peak_kib": hwm_kib(), "results": results}))

    anyio.run(main)
    """
)


def test_peak_memory_of_edits_stays_within_a_few_times_the_cap(workspace: Path) -> None:
    (workspace / "warm.txt").write_text("a\n")
    with open(workspace / "dense.txt", "wb") as handle:
        handle.write(b"needle\n")
        chunk = b"0123456789abcde\n" * (MIB // 16)
        for _ in range(128):
            handle.write(chunk)
    with open(workspace / "sparse.txt", "wb") as handle:
        handle.write(b"needle\n")
        handle.truncate(1024 * MIB)
    # Just under the cap: accepted, and the largest memory use an edit may have.
    near_cap = ToolContext.for_session(workspace).limits.edit_max_bytes - MIB
    with open(workspace / "near.txt", "wb") as handle:
        handle.write(b"needle\n" + b"z" * near_cap)
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD, str(workspace), "dense.txt", "sparse.txt", "near.txt"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(completed.stdout)
    results = report["results"]
    assert results["dense.txt"]["error"] and "too large" in results["dense.txt"]["text"]
    assert results["sparse.txt"]["error"] and "too large" in results["sparse.txt"]["text"]
    assert not results["near.txt"]["error"], results["near.txt"]["text"]
    cap_kib = ToolContext.for_session(workspace).limits.edit_max_bytes // 1024
    growth_kib = report["peak_kib"] - report["base_kib"]
    assert growth_kib <= 5 * cap_kib, report
