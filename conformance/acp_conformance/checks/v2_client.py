"""version.v2-* (client): protocol version 2's client surface as the agent uses it: the
checker's v2 client advertises no capabilities, so during a v2 turn the agent may only call the
client methods v2 defines that need none (``session/request_permission``) — no
``elicitation/*``, and none of v1's ``fs/*`` or ``terminal/*``, which v2 removed."""

from __future__ import annotations

from ..harness.recorder import Frame
from ..judges.run_walk import agent_messages
from ..outcomes import Outcome, failed, passed
from ..scenarios.check_context import CheckContext
from ..scenarios.observed_checks import check_given
from ..scenarios.v2_agent import V2_SCENARIO, EchoTurn, echo_turn

#: Client methods of v2 that need no client capability.
_UNGATED = frozenset({"session/request_permission", "session/update"})


def _v2_client_methods() -> frozenset[str]:
    import acp_schema  # lazily: the schema loader is only needed once this check runs

    index = acp_schema.load_index(version=2)
    return frozenset(m for m, spec in index["methods"].items() if spec["side"] == "client")


def _agent_requests(frames: list[Frame]) -> list[tuple[int, str]]:
    found = []
    for frame, msg in agent_messages(frames):
        method = msg.get("method")
        if isinstance(method, str) and not method.startswith("_"):
            found.append((frame.seq, method))
    return found


@check_given("version.v2-no-unadvertised-client-methods", V2_SCENARIO, echo_turn)
async def v2_agent_calls_only_advertised_client_methods(
    ctx: CheckContext, obs: EchoTurn
) -> Outcome:
    # The memoised turn's agent may be gone by now: judge what it sent up to then.
    run, _, answer, idle = obs
    defined = _v2_client_methods()
    for seq, method in _agent_requests(run.frames):
        if method not in defined:
            return failed(f"the agent called {method}, which v2 does not define", frames=[seq])
        if method not in _UNGATED:
            return failed(
                f"the agent called {method}, which the client did not advertise", frames=[seq]
            )
    return passed(
        "only session/update and permission requests went to the client",
        frames=[answer.frame.seq, idle.seq],
    )
