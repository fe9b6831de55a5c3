"""What a check sees while it runs: the scenario's sandbox, agents and helpers.

A scenario groups checks that can share one agent process; every scenario gets a fresh
temporary HOME and work directory, and its own agent processes. A check asks for the shared,
initialized agent (``await ctx.agent()``, respawned if an earlier check killed it), for the
scenario's turn agent (``await ctx.turn_agent(...)``: one warmed-up process whose scripted
model and permission answers are set anew for each check, replaced after any check that
left it in doubt) or for a fresh one with its own client policy (``await ctx.spawn(...)``;
with ``for_this_check=True`` it is stopped as soon as the check ends, not with the scenario).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import tempfile
from dataclasses import dataclass, field, replace
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
from ..harness.limits import Budgets, OutputBudget, run_budget
from ..harness.process import AgentProcess, ExitRecord, Rung
from ..harness.quiet_budget import QuietBudget
from ..harness.recorder import Frame, Recorder
from ..harness.remote import AccessDenied, RemoteConnection, RemoteTarget
from ..harness.served import free_port, start_server, with_port
from ..requirements import Requirement
from ..vocabularies import Vocabulary, get_vocabulary

#: Least time an agent process gets to answer its first initialize (a cold start of a
#: Python or Node agent on a loaded machine can take many seconds).
STARTUP_WAIT = 15.0


#: Under ``--llm none``, once a prompt of the run went unanswered for a full ``--timeout``,
#: the bound on other prompts whose turns would run on the same unreachable model.
HUNG_TURN_BOUND = 5.0
#: Once a process of the run did not exit within the full shutdown grace after its stdin
#: closed, how long later processes of the run are given before SIGTERM.
EOF_GRACE_AFTER_EVIDENCE = 1.0


class SetupError(Exception):
    """The agent could not be brought into the state a check needs (harness-level)."""


@dataclass
class RunEvidence:
    """What one scenario learnt about the agent that lets the others wait less (shared by
    every scenario of one run)."""

    #: Under ``--llm none``: a prompt the agent left unanswered for a full ``--timeout``
    #: (its turn keeps retrying the unreachable model), as "check: why".
    hung_turn: str | None = None
    #: Set with ``hung_turn``: prompts already waiting in other scenarios then wait less.
    turn_hung_seen: anyio.Event = field(default_factory=anyio.Event)
    #: A process that did not exit within the full shutdown grace after its stdin closed
    #: (its run id): later processes get ``EOF_GRACE_AFTER_EVIDENCE`` before SIGTERM.
    no_eof_exit: str | None = None
    #: The output every agent process of the run may keep, all together (see
    #: :mod:`..harness.limits`).
    output: OutputBudget = field(default_factory=run_budget)
    #: The waits all connections of the run may still spend on a quiet agent.
    quiet: QuietBudget = field(default_factory=QuietBudget)


@dataclass
class AgentRun:
    """One agent process: its transcript, its client policy and how it ended."""

    id: str
    scenario: str
    recorder: Recorder
    client: ClientSide
    conn: AgentConnection | None = None
    process: AgentProcess | None = None
    init_params: dict[str, Any] | None = None
    init_result: dict[str, Any] | None = None
    exit: ExitRecord | None = None
    start_error: str | None = None
    #: Set by checks that stop the agent themselves (the shutdown checks read it).
    custom_shutdown: bool = False
    llm: ScriptedLLMServer | None = None
    #: False once a check left this process in a state the next check must not inherit
    #: (a failed check, a request left unanswered on purpose, a stopped process).
    reusable: bool = True
    #: Set when a check found that the version this run negotiated means nothing (an agent
    #: that echoes any version): its messages are then not judged by any version's schemas.
    version_unknown: bool = False

    @property
    def frames(self) -> list[Frame]:
        return self.recorder.frames

    @property
    def live(self) -> AgentConnection:
        if self.conn is None:
            raise SetupError(self.start_error or "agent not started")
        return self.conn


def surface_value(surface: dict[str, Any], path: str) -> Any:
    node: Any = surface
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def advertised(value: Any) -> bool:
    """ACP advertises capabilities as ``true`` or as an object (``{}`` counts)."""
    if value is None or value is False:
        return False
    return not (isinstance(value, list | str) and not value)


@dataclass
class Scenario:
    name: str
    description: str
    llm: bool = False
    #: Rough relative cost: about the seconds it takes against a quick agent (an agent that
    #: pays for a model turn pays it once per process). The runner starts the costly
    #: scenarios first so that ``--jobs N`` is not left waiting on one long scenario at the end.
    weight: int = 1


SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str, description: str, *, llm: bool = False, weight: int = 1) -> str:
    SCENARIOS[name] = Scenario(name, description, llm, weight)
    return name


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


@dataclass
class CheckContext:
    """Passed to every scenario check."""

    runtime: ScenarioRuntime
    requirement: Requirement
    #: The run the check used last; outcomes are attributed to it for transcripts.
    current: AgentRun | None = None
    #: Runs this check started for itself alone (``spawn(for_this_check=True)``): the runner
    #: releases them when the check ends.
    own_runs: list[AgentRun] = field(default_factory=list)

    @property
    def config(self) -> RunConfig:
        return self.runtime.config

    @property
    def work(self) -> Path:
        return self.runtime.work

    @property
    def timeout(self) -> float:
        return self.runtime.config.timeout

    @property
    def tools(self) -> Vocabulary:
        """The agent's tool vocabulary (``--tools``) for scripted tool calls."""
        return get_vocabulary(self.runtime.config.tools)

    async def agent(self) -> AgentRun:
        self.current = await self.runtime.shared()
        return self.current

    async def spawn(self, *, for_this_check: bool = False, **kwargs: Any) -> AgentRun:
        """A new agent process (``ScenarioRuntime.spawn``'s options). ``for_this_check``: no
        other check uses it, so it is stopped when this check ends (see
        ``ScenarioRuntime.release``) rather than kept until the scenario's end."""
        run = await self.runtime.spawn(**kwargs)
        if for_this_check:
            self.own_runs.append(run)
        self.current = run
        return run

    async def turn_agent(
        self, *, permission: PermissionMode = "allow", llm_script: Any = None
    ) -> AgentRun:
        self.current = await self.runtime.turn_agent(permission=permission, llm_script=llm_script)
        return self.current

    async def surface(self) -> dict[str, Any]:
        return await self.runtime.surface()

    async def prompt_turn(self, run: AgentRun, params: dict[str, Any]) -> Response:
        """Send a prompt whose turn runs on the agent's model and wait for its answer.

        Under ``--llm none`` such a prompt that is not answered is not judged (the model is
        unreachable). Once one of them went unanswered for a full ``--timeout``, the others
        would too: they wait ``HUNG_TURN_BOUND`` (an agent whose model call fails at once
        still answers within it), not one more full ``--timeout`` each; a prompt already
        waiting when that is learnt (in another scenario) stops at that bound too.
        """
        conn = run.live
        pending = await conn.start_request("session/prompt", params)
        if self.config.llm != "none":
            return await pending.wait()
        evidence = self.runtime.evidence
        short = min(self.timeout, HUNG_TURN_BOUND)
        if evidence.hung_turn is not None:
            return await pending.wait(short)
        began = anyio.current_time()
        with anyio.move_on_after(self.timeout):
            async with anyio.create_task_group() as tg:

                async def until(event: anyio.Event) -> None:
                    await event.wait()
                    tg.cancel_scope.cancel()

                for event in (pending.arrived, conn.eof, evidence.turn_hung_seen):
                    tg.start_soon(until, event)
        waited = anyio.current_time() - began
        # Learnt meanwhile that turns hang (or the full bound ran out): wait out the rest of
        # the short bound at most.
        rest = max(short - waited, 0.0) if waited < self.timeout else 0.0
        return await pending.wait(rest, reported=max(waited + rest, short))

    def turn_hung(self, exc: AgentTimeout) -> str:
        """Record that a prompt's turn went unanswered under ``--llm none``; the reason for
        its not-applicable verdict."""
        evidence = self.runtime.evidence
        if evidence.hung_turn is None:
            evidence.hung_turn = f"{self.requirement.id}: {exc}"
            evidence.turn_hung_seen.set()
            return str(exc)
        return f"{exc}, as an earlier prompt of this run ({evidence.hung_turn})"

    async def new_session(self, run: AgentRun, **extra: Any) -> str:
        """Create a session in the work dir; a failure here is a setup error."""
        params: dict[str, Any] = {"cwd": str(self.work), "mcpServers": [], **extra}
        response = await run.live.request("session/new", params)
        session_id = response.result.get("sessionId") if isinstance(response.result, dict) else None
        if not isinstance(session_id, str) or not session_id:
            raise SetupError(f"session/new gave no session id: {response.frame.text(300)}")
        bind_script(run, session_id)
        return session_id

    async def new_session_result(self, run: AgentRun) -> tuple[str, dict[str, Any]]:
        params: dict[str, Any] = {"cwd": str(self.work), "mcpServers": []}
        response = await run.live.request("session/new", params)
        result = response.result if isinstance(response.result, dict) else {}
        session_id = result.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            raise SetupError(f"session/new gave no session id: {response.frame.text(300)}")
        bind_script(run, session_id)
        return session_id, result


@dataclass
class RunRecord:
    """Everything recorded in one checker run, for the run-wide checks."""

    config: RunConfig
    runs: list[AgentRun]
    backend: Any = None
    backend_error: str | None = None
    #: Memo for expensive derived data shared by several run-wide checks.
    cache: dict[str, Any] = field(default_factory=dict)


#: Put in every prompt the checker sends, so the scripted LLM can tell the agent's main
#: model call (which carries the prompt) from side calls (see ``Script.route_to``).
PROMPT_MARKER = "[acp-conformance]"


def session_tag(session_id: str) -> str:
    """Ends every prompt of one session, so the scripted LLM can tell that session's calls
    from those an agent still makes for another one (see ``Script.serve_only``)."""
    digest = hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:10]
    return f"(acp-conformance session {digest})"


def bind_script(run: AgentRun, session_id: str) -> None:
    """From now on the run's scripted model serves the turns of ``session_id`` only."""
    if run.llm is not None:
        run.llm.script.serve_only(session_tag(session_id))


def text_prompt(session_id: str, text: str) -> dict[str, Any]:
    marked = f"{PROMPT_MARKER} {text} {session_tag(session_id)}"
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": marked}]}
