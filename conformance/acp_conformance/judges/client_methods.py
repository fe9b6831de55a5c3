"""Run-wide check: the agent calls only the client methods the client advertised."""

from __future__ import annotations

from collections.abc import Iterator

from ..outcomes import (
    Outcome,
)
from ..requirements import RUN_WIDE, check
from ..scenarios.check_context import AgentRun, RunRecord, advertised, surface_value
from ..validation import method_index
from .run_walk import Offence, agent_frames, client_caps, per_run


@check("gating.no-unadvertised-client-methods", scenario=RUN_WIDE)
def no_unadvertised_client_methods(record: RunRecord) -> list[Outcome]:
    index = method_index()

    def find(run: AgentRun) -> Iterator[Offence]:
        caps = client_caps(run) or {"clientCapabilities": {}}
        for frame in agent_frames(run):
            msg = frame.message
            if not (isinstance(msg, dict) and isinstance(msg.get("method"), str)):
                continue
            entry = index.get(msg["method"])
            gate = entry.get("capability") if entry else None
            if (
                entry
                and entry.get("side") == "client"
                and gate
                and not advertised(surface_value(caps, gate))
            ):
                yield frame, f"called {msg['method']} although {gate} was not advertised"

    return per_run(record, find, "calls to client methods that were not advertised")
