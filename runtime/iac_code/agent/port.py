"""The narrow port through which a turn and its helpers reach outside the session.

Turns, the tool runner, compaction and the client delegates need a handful of things the
agent owns: append an event to the session's history, send a ``session/update``, send a
request to the client, read what the client advertised, and use the model. ``IacAgent``
builds one ``AgentPort`` holding exactly those operations and hands it down, so these modules
never import the agent server and nothing calls back up into it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iac_code.agent.model_access import ModelAccess
    from iac_code.agent.session import Session
    from iac_code.settings import Settings


@dataclass(frozen=True, slots=True)
class AgentPort:
    settings: Settings
    #: Append one event to the session, in memory and on disk (a disk failure is logged).
    persist: Callable[[Session, dict[str, Any]], None]
    #: Append a streamed delta's partial to memory now and to disk before its chunk is
    #: written to the client (batched with the other chunks of one write).
    persist_ahead: Callable[[Session, dict[str, Any]], None]
    #: Send one ``session/update`` (session id, update object).
    notify: Callable[[str, dict[str, Any]], Awaitable[None]]
    #: Send an agent→client request and wait for its result (raises ``RpcError`` on error).
    request_client: Callable[[str, dict[str, Any]], Awaitable[Any]]
    #: The ``clientCapabilities`` of ``initialize`` (read at call time: they may arrive late).
    client_capabilities: Callable[[], Mapping[str, Any]]
    model: ModelAccess
    #: The environment for child processes (bash, MCP servers): credentials stripped.
    child_environment: Callable[[], dict[str, str]]
