"""One agent process answers initialize before any scenario runs.

Its wait is at least ``STARTUP_WAIT`` (a cold start on a loaded machine may be slow), even
under a short ``--timeout``.

When the agent cannot be started, exits at once, never answers or answers under another id,
every scenario would fail the same way, each after waiting its full ``--timeout``. The
preflight finds that in one wait and the run stops with a single verdict that shows the
agent's stderr: a harness error (exit 3) for an agent that cannot be talked to, or an agent
failure of ``jsonrpc.id-echo`` (exit 1) for a mangled response id.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from .config import RunConfig
from .harness.agent_client import AgentExited, AgentOverflow, AgentTimeout, id_key
from .harness.recorder import Frame
from .outcomes import Outcome, Verdict, failed, harness_error
from .scenarios.agent_run import AgentRun, RunEvidence, Scenario, SetupError
from .scenarios.runtime import STARTUP_WAIT, ScenarioRuntime

PREFLIGHT = Scenario("preflight", "one initialize before the scenarios run")
#: Each shutdown rung's wait for an agent the preflight gave up on.
FAILED_AGENT_GRACE = 1.0
#: Lines of the agent's stderr shown with a preflight failure.
STDERR_TAIL_LINES = 15


@dataclass
class PreflightFailure:
    outcome: Outcome
    #: The requirement the failure is charged to (None: a harness verdict for the run).
    requirement: str | None
    run: AgentRun | None

    @property
    def verdict(self) -> Verdict:
        return self.outcome.verdict


def stderr_tail(run: AgentRun | None, lines: int = STDERR_TAIL_LINES) -> str:
    if run is None:
        return ""
    text = run.recorder.stderr_text().strip()
    return "\n".join(text.splitlines()[-lines:])


def _is_response(frame: Frame) -> bool:
    msg = frame.message
    return isinstance(msg, dict) and "method" not in msg and "id" in msg


async def preflight(
    config: RunConfig, evidence: RunEvidence | None = None
) -> PreflightFailure | None:
    """None when the agent answers initialize under the right id; else why the run stops
    (``evidence``: the run's, which the preflight's shutdown may add to)."""
    async with anyio.create_task_group() as tg:
        runtime = ScenarioRuntime(config, PREFLIGHT, tg, evidence)
        failure: PreflightFailure | None = None
        try:
            failure = await _initialize_once(runtime, config)
        finally:
            # An agent that never answered is not judged on its shutdown: a short ladder.
            await runtime.close(grace=None if failure is None else FAILED_AGENT_GRACE)
            tg.cancel_scope.cancel()
    if failure is not None and failure.run is not None:
        # Read after the process ended, so the tail includes its last words.
        failure.outcome.evidence["stderr"] = stderr_tail(failure.run)
    return failure


async def _initialize_once(runtime: ScenarioRuntime, config: RunConfig) -> PreflightFailure | None:
    try:
        run = await runtime.spawn(initialize=False)
    except SetupError as exc:
        return PreflightFailure(harness_error(f"the agent could not be started: {exc}"), None, None)
    conn = run.live
    try:
        # An agent that exits at once (`/bin/true`) may have closed its stdin before the
        # request is written: that is the same verdict as an agent that never answers.
        pending = await conn.start_request("initialize", runtime.initialize_params(run))
    except (AgentExited, AgentTimeout) as exc:
        why = f"initialize could not be sent: {exc}"
        if isinstance(exc, AgentExited):
            why = "the agent closed its stdin (or exited) before initialize could be sent"
        return PreflightFailure(await _no_answer(run, why, gone=True), None, run)
    sent = id_key(pending.request.message["id"])
    try:
        frame = await conn.wait_for(
            _is_response,
            since=pending.request.seq,
            timeout=max(config.timeout, STARTUP_WAIT),
            what="a response to initialize",
        )
    except AgentOverflow as exc:
        # The agent's own transport failure (a line over the cap, a flood), not the harness's.
        outcome = failed(str(exc), frames=[conn.agent_frames()[-1].seq])
        outcome.run_id = run.id
        return PreflightFailure(outcome, "transport.output-bounded", run)
    except Exception as exc:  # AgentTimeout or AgentExited: the message says which
        return PreflightFailure(await _no_answer(run, str(exc)), None, run)
    if id_key(frame.message["id"]) != sent:
        outcome = failed(
            f"initialize (id {pending.request.message['id']!r}) was answered with id "
            f"{frame.message['id']!r}: every response must carry its request's id",
            frames=[pending.request.seq, frame.seq],
        )
        outcome.run_id = run.id
        return PreflightFailure(outcome, "jsonrpc.id-echo", run)
    if "error" in frame.message or not isinstance(frame.message.get("result"), dict):
        outcome = harness_error(f"initialize failed, so no scenario can run: {frame.text(300)}")
        return PreflightFailure(outcome, None, run)
    return None


async def _no_answer(run: AgentRun, why: str, *, gone: bool = False) -> Outcome:
    process = run.process
    code = None
    if process is not None and (gone or run.live.eof.is_set()):
        # Give an agent that closed stdin or stdout a moment to be reaped, for its exit code.
        with anyio.move_on_after(1.0):
            await process.process.wait()
        code = process.returncode
    exited = f" (exit code {code})" if code is not None else ""
    outcome = harness_error(f"{why}{exited}; no scenario can run", exit_code=code)
    outcome.run_id = run.id
    return outcome
