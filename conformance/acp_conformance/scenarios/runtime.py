"""The scenario runtime: the sandbox, the agent processes and their reader tasks of one
scenario, the shared and warmed-up agents the checks ask for, and how each process stops."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
from acp_scripted_llm import ScriptedLLMServer
from acp_scripted_llm.script import Script
from anyio.abc import TaskGroup

from .. import __version__
from ..config import RunConfig, agent_command, agent_environment
from ..harness.agent_client import (
    NO_ANSWER,
    AgentConnection,
    AgentExited,
    AgentTimeout,
    Response,
)
from ..harness.client_side import ClientSide, PermissionMode
from ..harness.limits import Budgets
from ..harness.process import AgentProcess, ExitRecord, Rung
from ..harness.recorder import Recorder
from ..harness.remote import RemoteConnection
from ..harness.remote_http import AccessDenied, RemoteTarget
from ..harness.served import free_port, start_server, with_port
from .agent_run import (
    PROMPT_MARKER,
    AgentRun,
    RunEvidence,
    Scenario,
    SetupError,
    text_prompt,
)

#: Least time an agent process gets to answer its first initialize (a cold start of a
#: Python or Node agent on a loaded machine can take many seconds).
STARTUP_WAIT = 15.0


#: Once a process of the run did not exit within the full shutdown grace after its stdin
#: closed, how long later processes of the run are given before SIGTERM.
EOF_GRACE_AFTER_EVIDENCE = 1.0


class ScenarioRuntime:
    """Owns the sandbox, the agent processes and their reader tasks for one scenario."""

    def __init__(
        self,
        config: RunConfig,
        scenario: Scenario,
        tg: TaskGroup,
        evidence: RunEvidence | None = None,
    ) -> None:
        self.config = config
        self.evidence = evidence or RunEvidence()
        self.scenario = scenario
        self.tg = tg
        self.root = Path(tempfile.mkdtemp(prefix=f"acp-conformance-{scenario.name}-"))
        self.home = self.root / "home"
        self.work = self.root / "work"
        self.tmp = self.root / "tmp"
        for folder in (self.home, self.work, self.tmp):
            folder.mkdir()
        self.runs: list[AgentRun] = []
        self._shared: AgentRun | None = None
        self._shared_surface: dict[str, Any] | None = None
        self._turn_run: AgentRun | None = None
        #: Set once a warm-up turn went wrong: later turn agents skip it (it would only
        #: double the time each check waits on an agent whose turns do not work).
        self._warm_up_failed = False
        self.exit_stack = contextlib.ExitStack()
        #: Observations shared between the checks of this scenario.
        self.memo: dict[str, Any] = {}
        #: Runs stopped before the scenario ends (see `release`): set once each has stopped.
        self._released: dict[str, anyio.Event] = {}

    async def spawn(
        self,
        *,
        client: ClientSide | None = None,
        initialize: bool = True,
        llm_script: Any = None,
        protocol_version: Any = 1,
    ) -> AgentRun:
        """Start an agent; with an LLM API configured, a scripted LLM server of its own
        (``llm_script`` turns, then echo) is started first and named in its environment."""
        run = AgentRun(
            id=f"{self.scenario.name}#{len(self.runs) + 1}",
            scenario=self.scenario.name,
            recorder=Recorder(budgets=Budgets(run=self.evidence.output)),
            client=client or ClientSide(self.work),
        )
        self.runs.append(run)
        if self.config.remote is not None:
            return await self._open_remote(run, initialize, protocol_version, llm_script)
        llm_url = self._start_model(run, llm_script)
        env = agent_environment(self.config, home=self.home, tmp=self.tmp, llm_url=llm_url)
        argv = agent_command(self.config, home=self.home, tmp=self.tmp, llm_url=llm_url)
        cwd = self.config.agent_cwd or self.work
        try:
            run.process = await AgentProcess.start(argv, env=env, cwd=cwd)
        except Exception as exc:
            run.start_error = str(exc)
            raise SetupError(run.start_error) from exc
        run.conn = AgentConnection(
            run.process,
            run.recorder,
            run.client,
            timeout=self.config.timeout,
            quiet=self.evidence.quiet,
        )
        run.conn.trace_prompts = self.config.trace_receiver is not None
        run.conn.attach(self.tg)
        if initialize:
            await self.initialize(run, protocol_version=protocol_version)
        return run

    async def _open_remote(
        self, run: AgentRun, initialize: bool, protocol_version: Any, llm_script: Any
    ) -> AgentRun:
        """``--url`` runs: a new ACP connection to the remote agent stands in for a process
        (with a server command, a fresh server process on a free port is started first)."""
        target = self.config.remote
        assert target is not None
        if self.config.argv:
            target = await self._serve(run, target, llm_script)
        run.conn = RemoteConnection(target, run.recorder, run.client, timeout=self.config.timeout)
        run.conn.attach(self.tg)
        if initialize:
            await self.initialize(run, protocol_version=protocol_version)
        return run

    def _start_model(self, run: AgentRun, llm_script: Any) -> str | None:
        """With an LLM API configured: start the run's scripted model (``llm_script`` turns
        for the main calls, then echo) and return its URL for the agent's environment."""
        if self.config.llm == "none":
            return None
        script = Script.coerce(llm_script)
        script.route_to(PROMPT_MARKER)
        run.llm = self.exit_stack.enter_context(ScriptedLLMServer(script))
        return run.llm.url

    async def _serve(self, run: AgentRun, target: RemoteTarget, llm_script: Any) -> RemoteTarget:
        llm_url = self._start_model(run, llm_script)
        env = agent_environment(self.config, home=self.home, tmp=self.tmp, llm_url=llm_url)
        port = free_port()
        try:
            run.process = await start_server(
                agent_command(self.config, home=self.home, tmp=self.tmp, llm_url=llm_url),
                port=port,
                env=env,
                cwd=self.config.agent_cwd or self.work,
                tg=self.tg,
                recorder=run.recorder,
                bound=self.config.timeout * 3,
            )
        except Exception as exc:
            run.start_error = str(exc)
            raise SetupError(run.start_error) from exc
        return replace(target, url=with_port([target.url], port)[0])

    def initialize_params(self, run: AgentRun, protocol_version: Any = 1) -> dict[str, Any]:
        return {
            "protocolVersion": protocol_version,
            "clientCapabilities": run.client.capabilities(),
            "clientInfo": {"name": "acp-conformance", "version": __version__},
        }

    async def initialize(
        self, run: AgentRun, *, protocol_version: Any = 1, authenticate: bool = True
    ) -> dict[str, Any]:
        params = self.initialize_params(run, protocol_version)
        try:
            # Start-up may be slow on a loaded machine; the preflight has already shown that
            # the agent answers at all, so this wait is generous rather than --timeout.
            bound = max(self.config.timeout, STARTUP_WAIT)
            response = await run.live.request("initialize", params, timeout=bound)
        except (AgentTimeout, AgentExited) as exc:
            raise SetupError(f"agent did not answer initialize: {exc}") from exc
        if response.is_error or not isinstance(response.result, dict):
            raise SetupError(f"initialize failed: {response.frame.text(300)}")
        run.init_params, run.init_result = params, response.result
        if authenticate and self.config.auth_method:
            await run.live.request("authenticate", {"methodId": self.config.auth_method})
        return response.result

    async def shared(self) -> AgentRun:
        """The scenario's shared initialized agent, restarted if it is no longer alive."""
        if self._shared is None or self._shared.conn is None or not self._shared.conn.alive:
            self._shared = None
            self._shared_surface = None
            self._shared = await self.spawn()
        return self._shared

    def adopt_as_shared(self, run: AgentRun, params: dict[str, Any], response: Response) -> bool:
        """Make ``run``, which a check started and sent its first ``initialize`` (``params``,
        answered by ``response``), the scenario's shared agent, sparing a process; only when
        there is none yet and the run is what `shared` would have started: answered with a
        result, and no authenticate is due."""
        if self._shared is not None or self.config.auth_method:
            return False
        if response.is_error or not isinstance(response.result, dict):
            return False
        run.init_params, run.init_result = params, response.result
        self._shared = run
        return True

    async def turn_agent(
        self, *, permission: PermissionMode = "allow", llm_script: Any = None
    ) -> AgentRun:
        """The scenario's turn agent, ready for one more check's turns.

        Starting an agent is the costly part of a turn check (an LLM SDK alone can take
        seconds to import), so turn checks share one process: each gets its own session, its
        own scripted model turns (``llm_script``) and its own permission answers. The process
        is replaced whenever the previous check might have left something behind: it failed,
        it left a request of the checker unanswered, or it marked the run not reusable.
        """
        run = self._turn_run
        if run is None or not self.reusable(run):
            run = await self.spawn(client=ClientSide(self.work))
            await self._warm_up(run)
            self._turn_run = run
        run.client.permission = permission
        if run.llm is not None:
            # Nothing is scripted for this check until it creates its session (see
            # CheckContext.new_session): calls the agent still makes for an earlier check's
            # session are side calls.
            run.llm.next_script(llm_script).await_session()
        return run

    def retire(self, run_id: str | None) -> None:
        """No later check reuses the run ``run_id`` (see `reusable`)."""
        for run in self.runs:
            if run.id == run_id:
                run.reusable = False

    @staticmethod
    def reusable(run: AgentRun) -> bool:
        """Whether a later check may go on with ``run``: it is alive, no request of the
        checker or of the agent waits for an answer, and no check has retired it."""
        conn = run.conn
        return (
            run.reusable
            and not run.custom_shutdown
            and conn is not None
            and conn.alive
            and not conn.outstanding
            and not any(call.answer is NO_ANSWER for call in run.client.calls)
        )

    async def _warm_up(self, run: AgentRun) -> None:
        """One echo turn before the first check: the agent loads its model client, and the
        scripted model learns whether the agent offers tools, so that a side call of a later
        check's first turn (a title, say) cannot take that check's scripted turn. A warm-up
        that goes wrong is not judged: the checks see for themselves (a turn that hangs leaves
        its request unanswered, so the next check gets a new process)."""
        if run.llm is None or self._warm_up_failed:
            return
        try:
            session = await run.live.request(
                "session/new", {"cwd": str(self.work), "mcpServers": []}
            )
            result = session.result if isinstance(session.result, dict) else {}
            session_id = result.get("sessionId")
            if not isinstance(session_id, str):
                self._warm_up_failed = True
                return
            prompt = text_prompt(session_id, "Warm-up turn: reply with anything.")
            turn = await run.live.request("session/prompt", prompt, timeout=self.config.timeout * 3)
        except (AgentTimeout, AgentExited):
            self._warm_up_failed = True
            return
        if turn.is_error:
            self._warm_up_failed = True

    async def surface(self) -> dict[str, Any]:
        """What the agent advertises: initialize result plus a session/new result (asked of
        the turn agent when one is running, so that no process is started just to ask)."""
        if self._shared_surface is None:
            turn_run = self._turn_run
            if self.scenario.llm and (turn_run is None or not self.reusable(turn_run)):
                # The checks of a turn scenario run on the turn agent: asking it (started
                # now rather than at the first turn check) spares a process kept only for
                # this question.
                turn_run = await self.turn_agent()
            run = turn_run if turn_run and self.reusable(turn_run) else await self.shared()
            assert run.init_result is not None
            surface = dict(run.init_result)
            response = await run.live.request(
                "session/new", {"cwd": str(self.work), "mcpServers": []}
            )
            surface["session"] = response.result if isinstance(response.result, dict) else {}
            self._shared_surface = surface
        return self._shared_surface

    def release(self, run: AgentRun) -> None:
        """Stop ``run`` now, in the background: its check is done with it.

        Without this a one-question process (a fresh ``initialize``, say) lives until the
        scenario's last check, and an agent that keeps working after start-up (indexing,
        fetching model lists) spends CPU all that time that the other scenarios and, in the
        peers matrix, another agent's run wait for.
        """
        if run.id in self._released:
            return
        stopped = self._released[run.id] = anyio.Event()

        async def stop() -> None:
            try:
                with anyio.CancelScope(shield=True):
                    await self._stop_run(run, self.config.shutdown_grace)
            finally:
                stopped.set()

        self.tg.start_soon(stop)

    async def close(self, grace: float | None = None) -> None:
        """Stop every agent process (each rung of the ladder waits ``grace``, by default the
        config's shutdown grace) and remove the sandbox."""
        grace = self.config.shutdown_grace if grace is None else grace
        with anyio.CancelScope(shield=True):
            for stopped in self._released.values():
                await stopped.wait()
            async with anyio.create_task_group() as tg:
                for run in self.runs:
                    if run.id not in self._released:
                        tg.start_soon(self._stop_run, run, grace)
        for run in self.runs:
            run.client.close()
        self.exit_stack.close()
        shutil.rmtree(self.root, ignore_errors=True)

    async def _stop_run(self, run: AgentRun, grace: float) -> None:
        """Stop ``run`` if it still runs: its remote connection, then its process."""
        if isinstance(run.conn, RemoteConnection):
            await self._stop_remote(run, run.conn)
        elif run.process is not None and run.exit is None:
            await self._stop(run, grace)

    async def shutdown(self, run: AgentRun, grace: float | None = None) -> ExitRecord:
        """Stop ``run``'s process with the shutdown ladder (each rung waits ``grace``, by
        default the config's). Once a process of this run did not exit on stdin EOF within
        the full grace, the others are given ``EOF_GRACE_AFTER_EVIDENCE`` for that rung: the
        shutdown requirement has its failure, and a server or an agent that ignores EOF
        would cost every scenario one more full grace."""
        assert run.process is not None
        grace = self.config.shutdown_grace if grace is None else grace
        evidence = self.evidence
        eof_grace = None if evidence.no_eof_exit is None else EOF_GRACE_AFTER_EVIDENCE
        record = await run.process.shutdown(grace, eof_grace=eof_grace)
        if (
            eof_grace is None
            and evidence.no_eof_exit is None
            and record.rung not in (Rung.STDIN_EOF, Rung.ALREADY_EXITED)
        ):
            evidence.no_eof_exit = run.id
        return record

    async def _stop_remote(self, run: AgentRun, conn: RemoteConnection) -> None:
        if conn.alive and conn.opened:
            try:
                await conn.barrier(timeout=self.config.shutdown_grace)
            except (AgentTimeout, AgentExited, AccessDenied):
                pass
        await conn.close()
        if run.process is not None and run.exit is None:
            run.exit = await self.shutdown(run)

    async def _stop(self, run: AgentRun, grace: float) -> None:
        assert run.process is not None
        if run.conn is not None and run.conn.alive:
            # A last round trip collects anything the agent still had to say (e.g. an update
            # written after its response), so run-wide checks judge complete transcripts.
            try:
                await run.conn.barrier(timeout=grace)
            except (AgentTimeout, AgentExited):
                pass
        if run.conn is not None and run.conn.eof.is_set():
            # stdout already closed: the agent ended (or crashed) on its own; reap it so the
            # ladder records "already-exited" rather than crediting the stdin close.
            with anyio.move_on_after(grace):
                await run.process.process.wait()
        run.exit = await self.shutdown(run, grace)
        if run.conn is not None:
            with anyio.move_on_after(grace):
                await run.conn.eof.wait()
