"""Which ACP protocol versions this agent speaks, and the answer to a requested version.

Standard library only: the start-up fast path (:mod:`iac_code.prelude`) negotiates with it
before the runtime is loaded, and the full runtime uses the same function, so both answer a
given ``initialize`` alike.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the start-up path (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


#: Versions with handlers, oldest first. v1 is the full protocol (SPEC §2); v2 is the
#: upstream draft, served by :mod:`iac_code.v2` over the same agent.
HANDLED_VERSIONS: tuple[int, ...] = (1, 2)


def negotiate(requested: int, handled: tuple[int, ...] = HANDLED_VERSIONS) -> int:
    """The version to answer ``initialize`` with.

    A handled version is accepted as asked. A newer one gets the newest we handle (ACP: the
    agent answers with the latest version it supports and the client decides whether it can
    go on). 0, the pre-release numbering, and anything older get v1 (SPEC §2).
    """
    if requested in handled:
        return requested
    if requested > handled[-1]:
        return handled[-1]
    return handled[0]


def negotiate_initialize(params: Mapping[str, Any]) -> int:
    """The version to answer a whole ``initialize`` request with (its params as sent).

    As :func:`negotiate`, except for a client asking for a version newer than any we handle
    while writing v1 shapes (``clientInfo``/``clientCapabilities``, no v2 ``info``): it can
    only read v1, so it gets 1 rather than a v2 answer it cannot parse.
    """
    requested = params["protocolVersion"]
    version = negotiate(requested)
    if version >= 2 and requested not in HANDLED_VERSIONS and "info" not in params:
        return 1
    return version
