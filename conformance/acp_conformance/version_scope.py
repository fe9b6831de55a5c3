"""Which connections of a run a rule's run-wide judge sees: those of the rule's versions.

A rule names the protocol versions it is judged on (``Requirement.versions``). A scenario
check drives connections of one version (the protocol-v2 scenario's agents negotiate 2, every
other scenario's 1; ``tests/checker/checks/test_conformance_rule_versions.py`` holds that to
the data), but a run-wide judge reads every connection the run recorded, so the runner hands
it only the connections that negotiated one of its rule's versions: a v1 rule is never
judged on v2 traffic, whatever its judge forgets to skip. A connection whose version has no
name in the rules (an agent that answered 65535 back) is handed to every judge, which treats
it as before (``versions.schema_version``). When the run had connections but none of the
rule's versions, the rule is not applicable, and the reason names the version: out of scope
(not counted among the rules the agent could have been judged on) when the agent was asked for
that version and answered another, since an agent that speaks v1 only has no v2 rules; merely
not applicable when the run never asked for it (``--only``, say), which says nothing about
the agent.
"""

from __future__ import annotations

from typing import Any

from .outcomes import Outcome, not_applicable, out_of_scope
from .requirements import PROTOCOL_VERSIONS, Requirement
from .scenarios.agent_run import AgentRun, RunRecord
from .versions import negotiated_version

#: The number of each protocol version the rules name (``v1`` -> 1), the other way round.
VERSION_NAMES = {int(name.removeprefix("v")): name for name in PROTOCOL_VERSIONS}


def version_name(run: AgentRun) -> str | None:
    """``v1`` or ``v2``: the version ``run`` negotiated, as the rules name it (None: another)."""
    return VERSION_NAMES.get(negotiated_version(run))


def asked_version(run: AgentRun) -> str | None:
    """The version the run's last ``initialize`` asked for, as the rules name it."""
    asked: Any = None
    for frame in run.frames:
        msg = frame.message
        if isinstance(msg, dict) and frame.direction == "c2a" and msg.get("method") == "initialize":
            params = msg.get("params")
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
    if isinstance(asked, bool) or not isinstance(asked, int):
        return None
    return VERSION_NAMES.get(asked)


class VersionViews:
    """The run's record as each set of versions sees it (one view per set, so judges of
    rules with the same versions share a view and its cache)."""

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        self._names = [version_name(run) for run in record.runs]
        #: Versions some connection asked for and the agent answered with another.
        self._declined = {
            asked
            for run, name in zip(record.runs, self._names, strict=True)
            if (asked := asked_version(run)) is not None and asked != name
        } - set(self._names)
        self._views: dict[tuple[str, ...], RunRecord] = {}

    def for_rule(self, requirement: Requirement) -> RunRecord | Outcome:
        """The record ``requirement``'s judges see, or why the rule is not applicable."""
        versions = requirement.versions
        if versions == PROTOCOL_VERSIONS:
            return self.record
        names = self._names
        if self.record.runs and not any(name in versions for name in names):
            if set(versions) <= self._declined:
                return out_of_scope(
                    f"the agent was asked for protocol {' and '.join(versions)} and answered "
                    "another version: the rule does not apply to an agent that does not "
                    "speak it"
                )
            return not_applicable(
                f"no connection of this run negotiated protocol {' or '.join(versions)}: "
                f"the rule is judged on {requirement.versions_text} connections only"
            )
        view = self._views.get(versions)
        if view is None:
            kept = [
                run
                for run, name in zip(self.record.runs, names, strict=True)
                if name in (*versions, None)
            ]
            view = RunRecord(
                self.record.config, kept, self.record.backend, self.record.backend_error
            )
            self._views[versions] = view
        return view
