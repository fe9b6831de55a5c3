"""Which protocol version each recorded agent run speaks, and the schemas that go with it.

A run speaks the version its agent answered in its last ``initialize`` (1 when nothing was
negotiated). Run-wide checks validate a run's frames against that version's schemas and
method index, so a v2 run is judged by ``schema/v2`` and never reported for not being v1.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from acp_schema import SUPPORTED_VERSIONS, load_index

from .harness.agent_client import id_key
from .v2_drafts import NEWEST, older_draft_errors

if TYPE_CHECKING:
    from .scenarios.check_context import AgentRun
    from .validation import SchemaBackend

DEFAULT_VERSION = 1
V2 = 2


def negotiated_version(run: AgentRun) -> int:
    """The ``protocolVersion`` of the agent's answer to the run's last ``initialize``."""
    asked: set[str] = set()
    version = DEFAULT_VERSION
    for frame in run.frames:
        msg = frame.message
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        if frame.direction == "c2a" and msg.get("method") == "initialize":
            asked.add(id_key(msg["id"]))
        elif frame.direction == "a2c" and id_key(msg["id"]) in asked:
            result = msg.get("result")
            answered = result.get("protocolVersion") if isinstance(result, dict) else None
            if isinstance(answered, int) and not isinstance(answered, bool) and answered > 1:
                version = answered
            elif isinstance(answered, int) and not isinstance(answered, bool):
                version = DEFAULT_VERSION
    return version


def schema_version(run: AgentRun) -> int | None:
    """The version whose schemas judge ``run``: its negotiated version, or None when the
    checker has no schemas for it (an agent that echoed 65535 back, say) or when a check found
    the version meaningless (`AgentRun.version_unknown`). Such a run is not
    schema-checked: what it got wrong is ``init.unsupported-version-not-echoed``'s to say,
    and judging it by another version's shapes would only add false findings."""
    if run.version_unknown:
        return None
    version = negotiated_version(run)
    return version if version in SUPPORTED_VERSIONS else None


class VersionedBackend:
    """``acp_schema.validation`` bound to one protocol version (a ``SchemaBackend``).

    For v2, ``draft`` is the draft graded: the project's v2 schema follows the newest one, and
    the shapes an older draft still allows (:data:`.v2_drafts.OLDER_SHAPES`) pass under it.
    """

    def __init__(self, version: int, draft: str = NEWEST) -> None:
        self.version = version
        self.draft = draft if version == V2 else NEWEST
        from acp_schema import validation  # lazily: jsonschema loads on first validation

        self._validation = validation

    def validate_params(self, method: str, params: Any) -> list[str]:
        errors: list[str] = self._validation.validate_params(method, params, version=self.version)
        return older_draft_errors(self.draft, method, "params", errors)

    def validate_result(self, method: str, result: Any) -> list[str]:
        errors: list[str] = self._validation.validate_result(method, result, version=self.version)
        return older_draft_errors(self.draft, method, "result", errors)

    def validate_error(self, error: Any) -> list[str]:
        errors: list[str] = self._validation.validate_error(error, version=self.version)
        return errors

    def validate_definition(self, relpath: str, name: str, instance: Any) -> list[str]:
        errors: list[str] = self._validation.validate_definition(
            relpath, name, instance, version=self.version
        )
        return errors


@functools.cache
def method_index_for(version: int) -> dict[str, dict[str, Any]]:
    """Wire method name → index entry, from the schemas of ``version``."""
    return dict(load_index(version)["methods"])


def schemas_for(
    run: AgentRun,
    backend: SchemaBackend,
    index: dict[str, dict[str, Any]],
    v2_draft: str = NEWEST,
) -> tuple[SchemaBackend, dict[str, dict[str, Any]]] | None:
    """The backend and method index to judge ``run`` with (the given ones for v1), or None
    when the run negotiated a version without schemas (see `schema_version`); a v2 run is
    judged as the draft ``v2_draft`` (``--v2-draft``) has it."""
    version = schema_version(run)
    if version is None:
        return None
    if version == DEFAULT_VERSION:
        return backend, index
    return VersionedBackend(version, v2_draft), method_index_for(version)
