"""Runs the model's tool calls with the ACP tool-call lifecycle on the wire (SPEC §5, §6).

Per call: ``tool_call`` (pending, title, kind, rawInput, locations) → permission decision
(and ``session/request_permission`` with the *same* toolCallId when the policy asks) →
``tool_call_update in_progress`` → the tool → ``tool_call_update completed|failed`` with its
content and rawOutput. The announcement and the result are persisted as events, so
``session/load`` replays the same lifecycle and the model sees every result again.

While a tool runs (from ``in_progress`` to its final update) it can be stopped on its own,
without ending the turn: :meth:`ToolRunner.stop_call` (v2 ``tool_call/cancel``) cancels that
call's scope, which ends the tool the way a turn cancel does (a command's whole process
group), and the model is told the user stopped it. Such a result is marked
``stoppedByClient``: v1 has no ``cancelled`` tool status, so it stays ``failed`` there and
the v2 translation turns the mark into ``cancelled``.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.lowlevel
from acp_bindings.errors import RpcError

from iac_code import telemetry
from iac_code.agent.client_delegates import client_accepts_forms, client_delegates
from iac_code.agent.history import interrupted_result_event
from iac_code.agent.permission_rules import memory_for, rule_key
from iac_code.llm.contract import ModelRequest, ModelResponse, Usage
from iac_code.rpc.errors import ConnectionClosedError
from iac_code.tools.ask_user import AskUserTool
from iac_code.tools.background_jobs import BackgroundJobs
from iac_code.tools.contract import Tool, ToolContext, ToolOutcome
from iac_code.tools.iac_check import auto_check_path
from iac_code.tools.permissions import (
    CLIENT_NOT_ASKED,
    Verdict,
    decide,
    declined_outcome,
    interpret_permission_response,
    permission_options,
)
from iac_code.tools.registry import default_tools, tool_specs_for_model

if TYPE_CHECKING:
    from iac_code.agent.port import AgentPort
    from iac_code.agent.session import Session

log = logging.getLogger(__name__)

SUBAGENT_MAX_REQUESTS = 20
# Bound for the final update of an interrupted call (sent while its turn is being cancelled).
_FINAL_UPDATE_S = 2.0
#: What the model is told about a call the client stopped with ``tool_call/cancel``.
STOPPED_RESULT = "stopped: the user stopped this tool call before it finished"
#: The mark (in ``_meta.iac_code``) of a final update whose call the client stopped.
STOPPED_MARK = "stoppedByClient"
# Bound for computing an edit's diff before announcing it (the client may be reading the file).
_PREVIEW_S = 10.0
_SUBAGENT_SYSTEM = (
    "You are a sub-agent of iac-code, an infrastructure-as-code coding agent. Complete the task"
    " you are given with the tools available, then answer with a concise report of what you"
    " found or changed (file paths, commands run, results). Do not ask the user questions."
)


class TurnHandle(Protocol):
    """What tool calls need of the turn they run in (``agent.turn.Turn``)."""

    session: Session
    #: Tokens used so far; a sub-agent's model requests are added to it.
    usage: Usage

    def cancel(self) -> None: ...


@dataclass(frozen=True)
class _CallScope:
    """Which tool set a call uses and which agent tool call (if any) it is nested in."""

    tools: dict[str, Tool]
    parent_tool_call_id: str | None = None


class ToolRunner:
    def __init__(self, port: AgentPort) -> None:
        self.port = port
        self.tools = default_tools()
        self.subagent_tools = default_tools(include_agent=False)
        self.ask_tool = AskUserTool()
        #: ``bash`` jobs left running after their call (``background: true``), by session.
        self.background = BackgroundJobs()
        #: (session id, tool call id) → the scope of a call whose tool is running now.
        self._running: dict[tuple[str, str], anyio.CancelScope] = {}
        # Files each running turn changed since its last iac_check (for the automatic check).
        self._edited: weakref.WeakKeyDictionary[TurnHandle, list[str]] = weakref.WeakKeyDictionary()

    def stop_call(self, session_id: str, tool_call_id: str) -> bool:
        """Stop one running tool call; False when no such call is running now."""
        scope = self._running.get((session_id, tool_call_id))
        if scope is None:
            return False
        scope.cancel()
        return True

    def is_running(self, session_id: str, tool_call_id: str) -> bool:
        return (session_id, tool_call_id) in self._running

    def tools_for(self, session: Session) -> dict[str, Tool]:
        """The built-in tools, ``ask_user`` when the client can show forms, plus the
        session's MCP tools (all named ``mcp__...``)."""
        tools = self.tools
        if client_accepts_forms(self.port.client_capabilities()):
            tools = {**tools, self.ask_tool.name: self.ask_tool}
        if session.mcp is None:
            return tools
        return {**tools, **session.mcp.tools()}

    def specs(self, session: Session) -> list[dict[str, Any]]:
        return tool_specs_for_model(self.tools_for(session))

    # ------------------------------------------------------------------ main loop

    async def run(self, turn: TurnHandle, response: ModelResponse) -> None:
        """Run one model response's tool calls; read-only neighbours run concurrently."""
        scope = _CallScope(self.tools_for(turn.session))
        for read_only, batch in self._batches(response.tool_uses, scope.tools):
            if read_only and len(batch) > 1:
                async with anyio.create_task_group() as group:
                    for use in batch:
                        group.start_soon(self.run_call, turn, use, scope)
            else:
                for use in batch:
                    await self.run_call(turn, use, scope)

    @staticmethod
    def _batches(
        uses: list[dict[str, Any]], tools: dict[str, Tool]
    ) -> list[tuple[bool, list[dict[str, Any]]]]:
        batches: list[tuple[bool, list[dict[str, Any]]]] = []
        for use in uses:
            tool = tools.get(use.get("name", ""))
            read_only = tool is not None and tool.read_only
            if read_only and batches and batches[-1][0]:
                batches[-1][1].append(use)
            else:
                batches.append((read_only, [use]))
        return batches

    def _context(self, turn: TurnHandle, tool_call_id: str) -> ToolContext:
        session = turn.session
        port = self.port
        delegates = client_delegates(
            port.request_client, port.client_capabilities(), session.session_id
        )
        return ToolContext.for_session(
            session.cwd,
            session.additional_directories,
            fs_read=delegates.fs_read,
            fs_write=delegates.fs_write,
            terminal=delegates.terminal,
            run_subagent=partial(self._run_subagent, turn, tool_call_id),
            report_content=partial(self._report_content, session, tool_call_id),
            report_plan=partial(self._report_plan, session),
            ask_user=(
                partial(delegates.elicitation.ask, tool_call_id)
                if delegates.elicitation is not None
                else None
            ),
            env=self.port.child_environment(),
            start_background=partial(self.background.start, session.session_id, tool_call_id),
        )

    async def run_call(
        self, turn: TurnHandle, use: dict[str, Any], scope: _CallScope
    ) -> ToolOutcome:
        """The whole lifecycle of one tool call; returns what the model gets back."""
        with telemetry.tool_call(
            str(use.get("name", "")), str(use["id"]), use.get("input")
        ) as span:
            return span.outcome(await self._run_call(turn, use, scope))

    async def _run_call(
        self, turn: TurnHandle, use: dict[str, Any], scope: _CallScope
    ) -> ToolOutcome:
        session = turn.session
        port = self.port
        tool_call_id = str(use["id"])
        tool_input = use.get("input", {})
        tool = scope.tools.get(use.get("name", ""))
        ctx = self._context(turn, tool_call_id)
        announced = {
            "toolCallId": tool_call_id,
            # The tool's own name (ACP 1.22+ ``ToolCall.name``): the title is prose for people,
            # the name lets a client tell the tools apart (``bash``, ``mcp__git__log``, ...).
            "name": str(use.get("name", "")),
            "title": tool.title(tool_input) if tool else f"Unknown tool {use.get('name')}",
            "kind": tool.kind if tool else "other",
            "rawInput": tool_input,
            "locations": tool.locations(tool_input, ctx) if tool else [],
        }
        if tool is not None:
            # An edit's diff goes on the tool_call itself, so the user sees it before approving.
            with anyio.move_on_after(_PREVIEW_S):
                if preview := await tool.preview(tool_input, ctx):
                    announced["content"] = preview
        port.persist(session, {"type": "tool_call", **announced, **self._nesting(scope)})
        try:
            await port.notify(session.session_id, self._tool_call_update(announced, scope))
            if tool is None:
                outcome = ToolOutcome.error(
                    f"There is no tool named {use.get('name')!r}. "
                    f"Available: {', '.join(scope.tools)}."
                )
            else:
                outcome = await self._decide_and_run(turn, tool, tool_input, ctx, announced, scope)
        except BaseException:
            # Cancelled (or the connection went away) before the call ended. The turn's own
            # repair only sees the tool_use blocks of the main conversation, so a sub-agent's
            # nested call would stay open for ever: close every announced call here.
            result_event = interrupted_result_event(tool_call_id)
            port.persist(session, result_event)
            await self._send_final(session, result_event)
            raise
        result_event = self._result_event(tool_call_id, outcome)
        port.persist(session, result_event)
        await self._send_final(session, result_event)
        self._note_edit(turn, tool, outcome)
        return outcome

    # ------------------------------------------------------------------ IaC checks

    def _note_edit(self, turn: TurnHandle, tool: Tool | None, outcome: ToolOutcome) -> None:
        if tool is None or outcome.is_error:
            return
        if tool.name in ("write_file", "edit_file"):
            path = outcome.raw_output.get("path")
            if isinstance(path, str):
                self._edited.setdefault(turn, []).append(path)
        elif tool.name == "iac_check":
            self._edited.pop(turn, None)  # checked since: nothing left to check

    async def check_edits(self, turn: TurnHandle) -> bool:
        """At the end of a turn that edited IaC files, run ``iac_check`` on them as a tool
        call of its own. When it found problems, the call is added to the conversation as
        if the model had made it and True is returned: the model then gets one more step to
        fix or report them. A clean check is only shown to the client."""
        edited = self._edited.pop(turn, [])
        path = auto_check_path(edited, turn.session.cwd)
        tools = self.tools_for(turn.session)
        if path is None or "iac_check" not in tools:
            return False
        use: dict[str, Any] = {
            "id": f"toolu_iac_check_{uuid.uuid4().hex[:16]}",
            "name": "iac_check",
            "input": {"path": path},
        }
        outcome = await self.run_call(turn, use, _CallScope(tools))
        findings = outcome.raw_output.get("diagnostics") or []
        if outcome.is_error or not any(d.get("severity") in ("error", "warning") for d in findings):
            return False
        self.port.persist(
            turn.session,
            {
                "type": "assistant_message",
                "messageId": uuid.uuid4().hex,
                "blocks": [{"type": "tool_use", **use}],
                "stopReason": "tool_use",
                "automatic": True,
            },
        )
        return True

    @staticmethod
    def _result_event(tool_call_id: str, outcome: ToolOutcome) -> dict[str, Any]:
        event = {
            "type": "tool_result",
            "toolCallId": tool_call_id,
            "status": "failed" if outcome.is_error else "completed",
            "modelContent": outcome.model_content,
            "isError": outcome.is_error,
            "content": outcome.content,
            "rawOutput": outcome.raw_output,
        }
        if outcome.raw_output.get(STOPPED_MARK):
            event[STOPPED_MARK] = True
        return event

    async def _send_final(self, session: Session, result_event: dict[str, Any]) -> None:
        """The ``tool_call_update`` with the final status, content and rawOutput.

        Sent even inside a cancelled scope (an interrupted call, or a cancel arriving just
        as the call ended: the result is persisted, so nothing else would report it), best
        effort and bounded. The prompt has not answered yet, so the update still comes first.
        """
        final: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": result_event["toolCallId"],
            "status": result_event["status"],
            "rawOutput": result_event["rawOutput"],
        }
        if result_event["content"]:
            final["content"] = result_event["content"]
        if result_event.get(STOPPED_MARK):
            final["_meta"] = {"iac_code": {STOPPED_MARK: True}}
        with anyio.CancelScope(shield=True), anyio.move_on_after(_FINAL_UPDATE_S):
            try:
                await self.port.notify(session.session_id, final)
            except (ConnectionClosedError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                log.debug("final update of %s dropped: output closed", result_event["toolCallId"])

    async def _decide_and_run(
        self,
        turn: TurnHandle,
        tool: Tool,
        tool_input: Any,
        ctx: ToolContext,
        announced: dict[str, Any],
        scope: _CallScope,
    ) -> ToolOutcome:
        session = turn.session
        access = await tool.access(tool_input, ctx)
        decision = decide(tool, access, session.mode, memory_for(tool, session.permission_rules))
        if decision.denied:
            return declined_outcome(tool, decision.reason, access)
        if decision.needs_asking:
            with telemetry.permission_wait(tool.name, announced["toolCallId"]) as waiting:
                verdict = waiting.verdict(
                    await self._ask(turn, announced, access, decision.reason, scope)
                )
            if verdict.remember is not None:
                self.port.persist(
                    session,
                    {"type": "permission_rule", "tool": rule_key(tool), "choice": verdict.remember},
                )
            if not verdict.allowed:
                return declined_outcome(tool, verdict.reason, access)
            # The mode may have changed while the question was open (say, to read_only):
            # an answer never allows what the session's current mode forbids.
            now = decide(tool, access, session.mode, memory_for(tool, session.permission_rules))
            if now.denied:
                return declined_outcome(tool, now.reason, access)
        key = (session.session_id, announced["toolCallId"])
        # Registered before ``in_progress`` goes out, so a client that stops the call as soon
        # as it sees it running always finds it.
        self._running[key] = stoppable = anyio.CancelScope()
        try:
            await self.port.notify(
                session.session_id,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": announced["toolCallId"],
                    "status": "in_progress",
                },
            )
            with stoppable:
                return await tool.run(tool_input, ctx, access=access)
        finally:
            del self._running[key]
        # Only reached when ``stoppable`` was cancelled: the client stopped this call alone.
        log.info("tool call %s stopped by the client", announced["toolCallId"])
        return ToolOutcome.error(STOPPED_RESULT, raw_output={STOPPED_MARK: True})

    async def _ask(
        self,
        turn: TurnHandle,
        announced: dict[str, Any],
        access: Any,
        reason: str,
        scope: _CallScope,
    ) -> Verdict:
        session = turn.session
        options = permission_options(access)
        tool_call = {key: value for key, value in announced.items() if value != []}
        params: dict[str, Any] = {
            "sessionId": session.session_id,
            # A sub-agent's call names its parent here too, so the prompt can show where the
            # request comes from.
            "toolCall": {**tool_call, "status": "pending", **self._nesting(scope)},
            "options": options,
        }
        if reason:
            params["_meta"] = {"iac_code": {"reason": reason}}
        try:
            result = await self.port.request_client("session/request_permission", params)
        except RpcError as exc:
            log.warning("permission request failed: %.200s", exc)
            return Verdict(False, reason=CLIENT_NOT_ASKED)
        except ConnectionClosedError:
            # Nobody is left to answer. Telling the model "the user declined" would be
            # untrue and would let the turn go on; end it as cancelled instead, so the call
            # is recorded as interrupted (SPEC §4.3).
            log.info("the client went away during a permission request; ending the turn")
            turn.cancel()
            await anyio.lowlevel.checkpoint()
            return Verdict(False, cancelled=True, reason="the client went away")
        return interpret_permission_response(result, options)

    @staticmethod
    def _nesting(scope: _CallScope) -> dict[str, Any]:
        if scope.parent_tool_call_id is None:
            return {}
        return {"_meta": {"iac_code": {"parentToolCallId": scope.parent_tool_call_id}}}

    def _tool_call_update(self, announced: dict[str, Any], scope: _CallScope) -> dict[str, Any]:
        update = {
            "sessionUpdate": "tool_call",
            **announced,
            "status": "pending",
            **self._nesting(scope),
        }
        if not update["locations"]:
            del update["locations"]
        return update

    async def _report_plan(self, session: Session, entries: list[dict[str, Any]]) -> None:
        self.port.persist(session, {"type": "plan", "entries": entries})
        await self.port.notify(session.session_id, {"sessionUpdate": "plan", "entries": entries})

    async def _report_content(
        self, session: Session, tool_call_id: str, content: list[dict[str, Any]]
    ) -> None:
        await self.port.notify(
            session.session_id,
            {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, "content": content},
        )

    # ------------------------------------------------------------------ sub-agent

    async def _run_subagent(
        self, turn: TurnHandle, parent_id: str, task: str, description: str
    ) -> str:
        """A nested model ↔ tools loop; its tool calls are visible and ask like any other."""
        client = self.port.model.client()
        if client is None:
            return "The sub-agent could not start: no model is configured."
        scope = _CallScope(self.subagent_tools, parent_tool_call_id=parent_id)
        messages: list[dict[str, Any]] = [
            {
                "role": "user",
                "content": [{"type": "text", "text": f"{description}\n\n{task}".strip()}],
            }
        ]
        session = turn.session
        for _ in range(SUBAGENT_MAX_REQUESTS):
            request = ModelRequest(
                model=session.config.model,
                system=_SUBAGENT_SYSTEM + f"\nWorking directory: {session.cwd}",
                messages=messages,
                tools=tool_specs_for_model(self.subagent_tools),
                max_tokens=self.port.settings.max_tokens,
            )
            response = await self.port.model.complete(client, request)
            turn.usage = turn.usage + response.usage
            messages.append(response.as_message())
            if response.stop_reason != "tool_use":
                return response.text or "(the sub-agent finished without a report)"
            results = []
            for use in response.tool_uses:
                outcome = await self.run_call(turn, use, scope)
                block: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": use["id"],
                    "content": outcome.model_content,
                }
                if outcome.is_error:
                    block["is_error"] = True
                results.append(block)
            messages.append({"role": "user", "content": results})
        return (
            f"The sub-agent stopped after {SUBAGENT_MAX_REQUESTS} model requests without finishing."
        )
