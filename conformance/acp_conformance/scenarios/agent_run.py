"""One agent process as the checks see it (:class:`AgentRun`), the evidence a run shares
between scenarios, the scenarios themselves, the whole run's record for the run-wide judges,
and how prompts are tagged so the scripted model serves one session's turns only."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import anyio
from acp_scripted_llm import ScriptedLLMServer

from ..config import RunConfig
from ..harness.agent_client import (
    AgentConnection,
)
from ..harness.client_side import ClientSide
from ..harness.limits import OutputBudget, run_budget
from ..harness.process import AgentProcess, ExitRecord
from ..harness.quiet_budget import QuietBudget
from ..harness.recorder import Frame, Recorder


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
