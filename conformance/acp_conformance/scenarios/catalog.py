"""Every scenario the checks run in, in one place: its name, what it sets up, whether it
needs the scripted model, and its rough cost (the runner starts costly ones first).

A scenario gets its own sandbox and agent processes (:mod:`.check_context`); the checks of
:mod:`acp_conformance.checks` name the scenario they run in on their ``@check``.
"""

from __future__ import annotations

from .check_context import scenario

ENVELOPE = scenario("envelope", "JSON-RPC envelope, error codes and extension methods")


#: Cheap once its draws are cached, but the first run on a machine generates them (about 10 s
#: of the checker's own CPU): started first, that overlaps with the other slot's agents.
FUZZ = scenario("fuzz", "schema-generated and mutated params for every advertised method", weight=2)


BASELINE = scenario(
    "baseline",
    "one prompt turn from a client without fs or terminal capabilities",
    llm=True,
    weight=3,
)


HTTP = scenario("http-transport", "Streamable HTTP status codes, headers, streams and resume")


INIT = scenario(
    "initialize", "initialize, version negotiation and authentication surface", weight=4
)


MODES = scenario("modes", "session/set_mode and session/set_config_option")


SESSIONS = scenario("sessions", "session/new and the capability-gated session methods", weight=9)


#: Everything that runs whole turns shares one warmed-up agent process per scenario (see
#: ``ScenarioRuntime.turn_agent``): starting an LLM-backed agent costs far more than a turn.
TURNS = scenario(
    "turns",
    "prompt turns: each kind of content block, then scripted text, tools and permissions",
    llm=True,
    weight=5,
)


CANCEL = scenario(
    "cancel",
    "running turns: session/cancel, $/cancel_request, session/close and a second prompt",
    llm=True,
    weight=4,
)


#: The version.v2-* checks: run when the agent answers 2 to a v2 initialize.
PROTOCOL_V2 = scenario("protocol-v2", "protocol version 2 beside v1", weight=10)


ROBUSTNESS = scenario("robustness", "oversized and non-UTF-8 lines")


WS = scenario("ws-transport", "WebSocket upgrade, its connection id and text frames")
