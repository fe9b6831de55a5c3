"""ext.traceparent-continued, run-wide: was every answered prompt's trace continued?

With ``--traceparent`` each prompt the checker sends carries a fresh ``traceparent``
(:mod:`acp_conformance.trace_stamps`). Once every agent of the run has exited (exporters
flush at exit at the latest), this judge reads the trace and parent ids back from the recorded
requests and looks, for each prompt answered with a result, for a span of that trace whose
parent is the span the prompt named. The probe of :mod:`acp_conformance.checks.trace_context`
says why when nothing arrives at all; this says on how many turns continuation held.
"""

from __future__ import annotations

from collections import defaultdict

from ..harness.agent_client import id_key
from ..outcomes import Outcome, failed, not_applicable, passed
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import AgentRun, RunRecord
from ..trace_stamps import trace_ids

#: A prompt the agent answered with a result: (run, request frame seq, trace id, parent id).
_Stamped = tuple[AgentRun, int, str, str]


def _answered_traced_prompts(run: AgentRun) -> list[_Stamped]:
    """The run's prompts that carried a ``traceparent`` and got a result (a prompt refused
    with an error may fairly end before any turn, so it starts no span)."""
    sent: dict[str, tuple[int, str, str]] = {}
    answered: list[_Stamped] = []
    for frame in run.recorder.frames:
        msg = frame.message
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        if frame.direction == "c2a" and msg.get("method") == "session/prompt":
            ids = trace_ids(msg.get("params"))
            if ids is not None:
                sent[id_key(msg["id"])] = (frame.seq, *ids)
        elif frame.direction == "a2c" and "method" not in msg and "result" in msg:
            stamped = sent.pop(id_key(msg["id"]), None)
            if stamped is not None:
                answered.append((run, *stamped))
    return answered


@check("ext.traceparent-continued", scenario=RUN_WIDE)
def every_prompt_trace_is_continued(record: RunRecord) -> Outcome:
    """Every answered prompt of the run (each sent with its own ``traceparent``) continued."""
    config = record.config
    receiver = config.trace_receiver
    if receiver is None:
        return not_applicable("run with --traceparent to check trace propagation")
    if config.remote is not None:
        return not_applicable("a remote agent's environment is not the checker's to set")
    prompts = [p for run in record.runs for p in _answered_traced_prompts(run)]
    if not prompts:
        return not_applicable("no prompt of the run was answered with a result")
    # Every agent of the run has exited by now, so whatever it exported has arrived.
    children: dict[str, set[str]] = defaultdict(set)
    for span in receiver.spans():
        children[span.trace_id].add(span.parent_span_id)
    missed = [p for p in prompts if p[3] not in children.get(p[2], set())]
    if not missed:
        return passed(f"every answered prompt's trace was continued ({len(prompts)} prompts)")
    run, seq, *_ = missed[0]
    scenarios = sorted({p[0].scenario for p in missed})
    outcome = failed(
        f"{len(missed)} of {len(prompts)} answered prompts' traces were not continued "
        f"(scenarios: {', '.join(scenarios)}; the first in {run.id} at #{seq})",
        frames=[seq],
        missed=len(missed),
        prompts=len(prompts),
    )
    outcome.run_id = run.id
    return outcome
