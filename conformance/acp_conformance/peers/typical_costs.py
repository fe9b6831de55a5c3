"""What each peer's check typically costs, for the scheduler's first run in a new folder.

The scheduler (``schedule.py``) pairs checks by what they cost the last time, read from the
earlier reports in ``--out``. A first run into an empty folder has none, and without them
the table's order decides: the CPU-hungry opencode then ran beside claude-agent-acp and
both took ~110 s instead of ~55-70 s alone. These figures stand in until a report exists
(an earlier report always wins). They are a 2-CPU machine's (2026-12-06, ``--jobs 2``):
wall seconds, and CPU seconds of the agents and the checker together, the helpers an agent
leaves behind included (``harness/group_cpu.py``; claude-agent-acp read 31 CPU-s without
them, 100 with). Refresh them from a matrix run's reports when a peer's version or the
checker's load changes much.
"""

from __future__ import annotations

from .schedule import PastCheck

TYPICAL_COSTS: dict[str, PastCheck] = {
    "iac-code": PastCheck(21.0, 22.0),
    "iac-code-0.16.0": PastCheck(58.0, 86.0),
    "sdk-echo": PastCheck(10.0, 10.0),
    "ts-sdk-echo": PastCheck(1.0, 2.0),
    "gemini-cli": PastCheck(63.0, 32.0),  # --llm gemini (was 64 s, 24 CPU-s on --llm none)
    "qwen-code": PastCheck(54.0, 72.0),
    "claude-agent-acp": PastCheck(61.0, 100.0),
    "codex-acp": PastCheck(51.0, 6.0),  # --llm openai-responses (was 20 s on --llm none)
    "opencode": PastCheck(57.0, 101.0),
    "ts-sdk-http": PastCheck(9.0, 10.0),
    "ts-sdk-ws": PastCheck(3.0, 4.0),
    "iac-code-http": PastCheck(30.0, 26.0),
    "iac-code-ws": PastCheck(22.0, 15.0),
}
