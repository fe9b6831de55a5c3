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

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio

from ..config import RunConfig
from ..harness.agent_client import (
    AgentTimeout,
    Response,
)
from ..harness.client_side import PermissionMode
from ..requirements import Requirement
from ..vocabularies import Vocabulary, get_vocabulary
from .agent_run import (
    AgentRun,
    RunRecord,
    SetupError,
    advertised,
    bind_script,
    scenario,
    surface_value,
    text_prompt,
)
from .runtime import ScenarioRuntime

#: What a check sees: its context, and the agent runs and helpers it drives (defined in
#: :mod:`.agent_run` and :mod:`.runtime`, named here so a check needs one import).
__all__ = [
    "AgentRun",
    "CheckContext",
    "RunRecord",
    "ScenarioRuntime",
    "SetupError",
    "advertised",
    "bind_script",
    "scenario",
    "surface_value",
    "text_prompt",
]


#: Under ``--llm none``, once a prompt of the run went unanswered for a full ``--timeout``,
#: the bound on other prompts whose turns would run on the same unreachable model.
HUNG_TURN_BOUND = 5.0

#: What :meth:`CheckContext.once` shares.
T = TypeVar("T")


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

    async def once(self, key: str, make: Callable[[CheckContext], Awaitable[T]]) -> T:
        """What ``make`` gives, made by the first check of the scenario that asks for ``key``
        and shared with the checks after it (a turn or a resume several rules judge)."""
        memo = self.runtime.memo
        if key not in memo:
            memo[key] = await make(self)
        made: T = memo[key]
        return made

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
