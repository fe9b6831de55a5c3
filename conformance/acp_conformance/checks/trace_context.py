"""ext.traceparent-continued: does the agent continue the trace context a prompt carries?

ACP keeps the root ``_meta`` keys ``traceparent``/``tracestate`` for W3C trace context.
With ``--traceparent`` the run starts an OTLP receiver and names it in every agent's
``OTEL_EXPORTER_OTLP_ENDPOINT`` (see :func:`acp_conformance.config.otel_environment`); this
check sends one prompt with a fresh ``traceparent``, stops the agent (an exporter flushes at
exit at the latest) and looks for spans of that trace whose parent is the span it named.
Every other prompt the run sends carries a fresh ``traceparent`` too
(:mod:`acp_conformance.trace_stamps`), and a run-wide judge
(:mod:`acp_conformance.judges.trace_continuation`) checks, once every agent has
exited, that each prompt the agent answered with a result was continued the same way.
INFO only: tracing is optional, the report shows other agents' maintainers where they stand.
"""

from __future__ import annotations

import secrets

import anyio

from ..harness.agent_client import AgentExited, AgentTimeout
from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import check
from ..scenarios.catalog import BASELINE
from ..scenarios.check_context import CheckContext, text_prompt


@check("ext.traceparent-continued", scenario=BASELINE)
async def prompt_trace_is_continued(ctx: CheckContext) -> Outcome:
    receiver = ctx.config.trace_receiver
    if receiver is None:
        return not_applicable("run with --traceparent to check trace propagation")
    if ctx.config.remote is not None:
        return not_applicable("a remote agent's environment is not the checker's to set")
    run = await ctx.spawn(
        for_this_check=True, llm_script=[{"content": [{"type": "text", "text": "Traced."}]}]
    )
    session_id = await ctx.new_session(run)
    trace_id, parent_id = secrets.token_hex(16), secrets.token_hex(8)
    params = text_prompt(session_id, "Say hello.")
    params["_meta"] = {
        "traceparent": f"00-{trace_id}-{parent_id}-01",
        "tracestate": "acp-conformance=probe",
    }
    frames: list[int] = []
    try:
        frames.append((await ctx.prompt_turn(run, params)).frame.seq)
    except (AgentTimeout, AgentExited):
        pass  # an unanswered turn may still have started its span; the export tells
    if run.process is not None and run.exit is None:
        run.exit = await ctx.runtime.shutdown(run)
    spans = await anyio.to_thread.run_sync(receiver.wait_for_trace, trace_id, ctx.timeout)
    if not spans:
        if receiver.spans():
            return failed(
                "the agent exported spans, none in the prompt's trace (it starts traces of "
                "its own)",
                frames=frames,
            )
        return failed(
            "no span reached the OTLP receiver named in OTEL_EXPORTER_OTLP_ENDPOINT (the "
            "agent exports no traces over OTLP/HTTP)",
            frames=frames,
        )
    children = sorted({span.name for span in spans if span.parent_span_id == parent_id})
    if not children:
        return failed(
            f"{len(spans)} span(s) of the prompt's trace arrived, none a child of its span",
            frames=frames,
        )
    return passed(
        f"the turn continued the prompt's trace: {', '.join(children)} "
        f"({len(spans)} span(s) in the trace)",
        frames=frames,
    )
