"""Benchmarks for the two store operations with performance targets (SPEC §11).

``python -m iac_code_dev.store_bench [--sessions N] [--events N]`` builds the data in a temporary
directory, times the operations and prints one JSON object. The functions are importable so
the project's benchmark command can call them too.

* ``bench_list``: N sessions on disk, then the first page of ``list()`` from a *new*
  SessionStore (as a freshly started server would do), and a second, warm call.
* ``bench_load``: one session with N events shaped like a real conversation, then
  ``load_events`` from a new SessionStore.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from iac_code.store.ids import new_session_id
from iac_code.store.session_store import SessionStore

_REPEATS = 5


def bench_list(tmpdir: Path, n: int = 10_000) -> dict[str, Any]:
    """Create ``n`` sessions under ``tmpdir`` and time the first page of ``list``."""
    home = Path(tmpdir)
    store = SessionStore(home)
    started = time.perf_counter()
    for number in range(n):
        store.create(new_session_id(), f"/work/project-{number % 20}", title=f"session {number}")
    create_seconds = time.perf_counter() - started

    cold: list[float] = []
    warm: list[float] = []
    filtered: list[float] = []
    for _ in range(_REPEATS):
        fresh = SessionStore(home)
        started = time.perf_counter()
        page, cursor = fresh.list()
        cold.append(time.perf_counter() - started)
        if len(page) != min(n, 50) or (cursor is not None) != (n > 50):
            raise RuntimeError("list() returned a wrong first page")
        started = time.perf_counter()
        fresh.list()
        warm.append(time.perf_counter() - started)
        started = time.perf_counter()
        fresh.list(cwd="/work/project-7")
        filtered.append(time.perf_counter() - started)
    return {
        "sessions": n,
        "create_ms_per_session": round(create_seconds / max(n, 1) * 1000, 3),
        "first_page_new_store_ms": _median_ms(cold),
        "first_page_warm_ms": _median_ms(warm),
        "first_page_cwd_filter_warm_ms": _median_ms(filtered),
    }


def bench_load(tmpdir: Path, n_events: int = 10_000) -> dict[str, Any]:
    """Create one session of ``n_events`` events under ``tmpdir`` and time ``load_events``."""
    home = Path(tmpdir)
    store = SessionStore(home)
    session_id = new_session_id()
    store.create(session_id, "/work/project")
    store.append_many(session_id, (_conversation_event(i) for i in range(n_events)))
    size = (store.sessions_dir / session_id / "events.jsonl").stat().st_size

    timings: list[float] = []
    for _ in range(_REPEATS):
        fresh = SessionStore(home)
        started = time.perf_counter()
        events = fresh.load_events(session_id)
        timings.append(time.perf_counter() - started)
        if len(events) != n_events:
            raise RuntimeError("load_events() lost events")

    started = time.perf_counter()
    for number in range(1000):
        store.append(session_id, _conversation_event(number))
    append_seconds = time.perf_counter() - started
    return {
        "events": n_events,
        "file_mib": round(size / 2**20, 2),
        "load_events_ms": _median_ms(timings),
        "append_us_per_event": round(append_seconds / 1000 * 1e6, 1),
    }


def _conversation_event(number: int) -> dict[str, Any]:
    """Roughly what the agent stores: user turns, assistant text, tool calls and results."""
    kind = number % 4
    if kind == 0:
        return {"type": "user_message", "content": [{"type": "text", "text": "Please " * 30}]}
    if kind == 1:
        return {
            "type": "assistant_message",
            "content": [
                {"type": "text", "text": "Let me look at the Terraform module. " * 8},
                {
                    "type": "tool_use",
                    "id": f"toolu_{number:08d}",
                    "name": "read_file",
                    "input": {"path": f"/work/project/modules/m{number}.tf"},
                },
            ],
        }
    if kind == 2:
        return {
            "type": "tool_result",
            "tool_use_id": f"toolu_{number - 1:08d}",
            "content": 'resource "aws_s3_bucket" "b" { bucket = "x" }\n' * 10,
            "is_error": False,
        }
    return {"type": "config", "option": "model", "value": "claude-sonnet-4-6"}


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="iac-store-bench-") as tmp:
        results = {
            "list": bench_list(Path(tmp) / "list", args.sessions),
            "load": bench_load(Path(tmp) / "load", args.events),
        }
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
