"""The checks, one module per requirement area; importing this package registers every
requirement with its check, and the run-wide judges of :mod:`acp_conformance.judges`.

Each check carries its requirement (``@requirement(id, tier, statement, citation,
scenario=...)``, see :mod:`acp_conformance.requirements`); the scenarios and the helpers the
checks drive are fixtures in :mod:`acp_conformance.scenarios`.

The checks of one scenario run in the order they register: the order of the imports below,
then the order within each module. Checks that leave state behind in the scenario's shared
agent come last in it (``cancel.during-tool-call`` in the cancel scenario, the restart and
allow-always checks at the end of ``turns``), so the modules holding them come last here.
"""

# isort: off
from .. import judges
from ..judges import wire, consistency
from ..scenarios import catalog  # first: it fixes the order of the scenarios
from . import jsonrpc, extensibility, initialize, modes, sessions, prompt, turns, cancel
from . import gating, robustness, http, websocket
from ..scenarios import (
    protocol_v2,
    protocol_v2_basics,
    protocol_v2_cancel,
    protocol_v2_client,
    protocol_v2_prompts,
    protocol_v2_sessions,
    protocol_v2_resume_kit,
    protocol_v2_config,
    protocol_v2_auth,
    protocol_v2_patches,
)
# isort: on

__all__ = [
    "cancel",
    "catalog",
    "consistency",
    "extensibility",
    "gating",
    "http",
    "initialize",
    "jsonrpc",
    "judges",
    "modes",
    "prompt",
    "protocol_v2",
    "protocol_v2_auth",
    "protocol_v2_basics",
    "protocol_v2_cancel",
    "protocol_v2_client",
    "protocol_v2_config",
    "protocol_v2_patches",
    "protocol_v2_prompts",
    "protocol_v2_resume_kit",
    "protocol_v2_sessions",
    "robustness",
    "sessions",
    "turns",
    "websocket",
    "wire",
]
