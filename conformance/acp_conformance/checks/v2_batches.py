"""version.v2-* (batches): the v2 drafts up to alpha.8 allow a non-empty array of JSON-RPC
messages on a line, so a v2 agent answers batches as JSON-RPC 2.0 §6 says — an empty array
gets one -32600, a batch of notifications no reply, a batch of requests one array of responses
by id, and each invalid entry its own -32600. They run on the shared v2 agent of
:mod:`..scenarios.v2_agent`. The newest draft says ACP uses no batches, so they apply only
with ``--v2-draft`` alpha.3 to alpha.8 (:data:`..v2_drafts.BATCH_DRAFTS`).
"""

from __future__ import annotations

import json
from typing import Any

from ..harness.agent_client import AgentExited, AgentTimeout
from ..harness.recorder import Frame
from ..outcomes import Outcome, failed, passed
from ..scenarios._expect import brief
from ..scenarios.check_context import AgentRun, CheckContext
from ..scenarios.v2_agent import v2_check


def _is_reply(frame: Frame) -> bool:
    msg = frame.message
    if isinstance(msg, list):
        return True
    return isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg)


async def _send_batch(run: AgentRun, entries: list[Any]) -> Frame:
    data = json.dumps(entries, separators=(",", ":")).encode("utf-8")
    frame: Frame = await run.live.send_line(data, deliberate=True)
    return frame


@v2_check("version.v2-batch-basics")
async def v2_batch_basics(ctx: CheckContext, run: AgentRun) -> Outcome:
    sent = await _send_batch(run, [])
    try:
        reply = await run.live.wait_for(
            lambda f: f.seq > sent.seq and _is_reply(f), since=sent.seq, what="a reply to []"
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"an empty batch was not answered: {exc}", frames=[sent.seq])
    msg = reply.message
    error = msg.get("error") if isinstance(msg, dict) else None
    if not isinstance(error, dict) or error.get("code") != -32600 or msg.get("id") is not None:
        return failed(
            f"an empty batch must get one -32600 object with id null, got {brief(reply)}",
            frames=[sent.seq, reply.seq],
        )
    note = await _send_batch(run, [{"jsonrpc": "2.0", "method": "_acp_conformance/note"}])
    barrier = await run.live.barrier()
    replies = [
        f.seq
        for f in run.frames[note.seq + 1 : barrier.frame.seq]
        if f.direction == "a2c" and _is_reply(f)
    ]
    if replies:
        return failed("a batch of notifications was answered", frames=[note.seq, *replies[:3]])
    return passed(
        "[] got one -32600; a notification batch got no reply", frames=[sent.seq, reply.seq]
    )


@v2_check("version.v2-batch-requests")
async def v2_batch_requests(ctx: CheckContext, run: AgentRun) -> Outcome:
    ids = ["acp-conformance-batch-a", "acp-conformance-batch-b"]
    sent = await _send_batch(
        run, [{"jsonrpc": "2.0", "id": rid, "method": "session/list", "params": {}} for rid in ids]
    )
    try:
        reply = await run.live.wait_for(
            lambda f: _is_reply(f), since=sent.seq + 1, what="the batch's response array"
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"a batch of requests was not answered: {exc}", frames=[sent.seq])
    answered = reply.message
    if not isinstance(answered, list) or sorted(
        str(item.get("id")) for item in answered if isinstance(item, dict)
    ) != sorted(ids):
        return failed(
            f"a batch of two requests must get one array with both ids, got {brief(reply)}",
            frames=[sent.seq, reply.seq],
        )
    invalid = await _send_batch(run, [17, True, None])
    try:
        errors = await run.live.wait_for(
            lambda f: _is_reply(f), since=invalid.seq + 1, what="answers to invalid entries"
        )
    except (AgentTimeout, AgentExited) as exc:
        return failed(f"a batch of invalid entries was not answered: {exc}", frames=[invalid.seq])
    items = errors.message if isinstance(errors.message, list) else [errors.message]
    codes = [item.get("error", {}).get("code") for item in items if isinstance(item, dict)]
    if codes != [-32600, -32600, -32600]:
        return failed(
            f"three invalid entries must get three -32600 answers, got {brief(errors)}",
            frames=[invalid.seq, errors.seq],
        )
    return passed(
        "requests answered in one array by id; invalid entries one -32600 each",
        frames=[sent.seq, reply.seq, invalid.seq, errors.seq],
    )
