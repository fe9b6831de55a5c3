"""What each peer's check typically costs, for the scheduler's first run in a new folder.

The scheduler (``schedule.py``) pairs checks by what they cost the last time, read from the
earlier reports in ``--out``. A first run into an empty folder has none, and without them
the table's order decides: the CPU-hungry opencode then ran beside claude-agent-acp and
both took ~110 s instead of ~55-70 s alone. These figures stand in until a report exists
(an earlier report always wins). They are a 2-CPU machine's (2026-12-06, a matrix run
with the checker's ``--jobs 1``): wall seconds, and CPU seconds of the agents and the checker
together, the helpers an agent leaves behind included (``harness/group_cpu.py``). Refresh
them from a matrix run's reports when a peer's version or the checker's load changes much.
"""

from __future__ import annotations

from .schedule import PastCheck

TYPICAL_COSTS: dict[str, PastCheck] = {
    "iac-code": PastCheck(25.0, 23.0),
    "iac-code-0.16.0": PastCheck(92.0, 93.0),
    "sdk-echo": PastCheck(10.0, 10.0),
    "ts-sdk-echo": PastCheck(2.0, 3.0),
    "gemini-cli": PastCheck(40.0, 27.0),  # --llm gemini
    "qwen-code": PastCheck(68.0, 72.0),
    "claude-agent-acp": PastCheck(100.0, 100.0),
    "codex-acp": PastCheck(61.0, 6.0),  # --llm openai-responses
    "opencode": PastCheck(76.0, 102.0),
    "ts-sdk-http": PastCheck(12.0, 11.0),
    "ts-sdk-ws": PastCheck(5.0, 5.0),
    "iac-code-http": PastCheck(39.0, 30.0),
    "iac-code-ws": PastCheck(24.0, 16.0),
}
