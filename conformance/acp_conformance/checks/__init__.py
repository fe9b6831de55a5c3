"""The checks, one module per requirement area; importing this package registers every
requirement with its check, and the run-wide judges of :mod:`acp_conformance.judges`.

Each check carries its requirement (``@requirement(id, tier, statement, citation,
scenario=...)``, see :mod:`acp_conformance.requirements`); the scenarios and the helpers the
checks drive are fixtures in :mod:`acp_conformance.scenarios`.

The checks of one scenario run in the order they register: the order of the imports below,
then the order within each module. Checks that leave state behind in the scenario's shared
agent come last in it (``cancel.during-tool-call`` in the cancel scenario, the restart and
allow-always checks at the end of ``turns``), so the modules holding them come last here.

The ``version.v2-*`` checks (modules ``v2_*``) all run in the protocol-v2 scenario, on the v2
agents of :mod:`acp_conformance.scenarios.v2_agent`, in the order imported below: the shared
v2 agent's negotiation checks first, then the kit's turns (cancel, close, the user message
echo), batches and the other checks outside a turn, the check that judges every update sent
(keyed updates), then the resumes of the echo turn, and the checks that start agents of their
own (auth, elicitation) last. The resumes stop the shared v2 turn agent (a session is resumed
after a restart), so every turn check comes before them: after them a new turn agent would
have to load its model SDK again (one process and ~2 CPU-s less per run). An area can appear
twice (``v2_turns`` then ``v2_cancel``, ``v2_resume`` then ``v2_resume_kit``) because each
module's checks run together and this order is kept.
"""

# isort: off
from .. import judges
from ..judges import wire, consistency, output, tool_calls
from ..scenarios import catalog  # first: it fixes the order of the scenarios
from . import jsonrpc, extensibility, initialize, modes, sessions, session_paging
from . import prompt, turns, cancel
from . import gating, robustness, http, websocket, trace_context
from ..judges import trace_continuation, foreground_state

# the protocol-v2 scenario's checks; they share its agents, so this order is theirs
from . import v2_negotiation, v2_turns, v2_batches, v2_basics, v2_cancel
from . import v2_client, v2_prompts, v2_sessions, v2_config, v2_keyed_updates
from . import v2_resume, v2_resume_kit, v2_auth, v2_elicitation
# isort: on

__all__ = [
    "cancel",
    "catalog",
    "consistency",
    "extensibility",
    "foreground_state",
    "gating",
    "http",
    "initialize",
    "jsonrpc",
    "judges",
    "modes",
    "output",
    "prompt",
    "robustness",
    "session_paging",
    "sessions",
    "tool_calls",
    "trace_context",
    "trace_continuation",
    "turns",
    "v2_auth",
    "v2_basics",
    "v2_batches",
    "v2_cancel",
    "v2_client",
    "v2_config",
    "v2_elicitation",
    "v2_keyed_updates",
    "v2_negotiation",
    "v2_prompts",
    "v2_resume",
    "v2_resume_kit",
    "v2_sessions",
    "v2_turns",
    "websocket",
    "wire",
]
