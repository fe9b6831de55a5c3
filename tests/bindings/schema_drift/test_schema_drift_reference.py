"""The drift check against the real upstream schemas in ../shared/reference."""

from __future__ import annotations

from pathlib import Path

import acp_schema
import pytest
from acp_schema import drift, reference
from acp_schema.drift import Finding

REFERENCE = reference.reference_dir()
UPSTREAM_V1_1_21 = reference.history("v1@1.21.0")
UPSTREAM_V1_2_4 = reference.newest_upstream("v1")
# The unstable schema of the 1.21.0 release: the fork shape the project follows (2.4.0's
# unstable schema has since added an unstable `systemPrompt` to ForkSessionRequest).
UPSTREAM_V1_1_21_UNSTABLE = reference.history("v1@1.21.0-unstable")
OURS = Path(acp_schema.__file__).resolve().parent

pytestmark = [pytest.mark.reference]


@pytest.fixture(autouse=True)
def _needs_newest_upstream() -> None:
    reference.require(UPSTREAM_V1_2_4)


def test_ours_matches_newest_upstream_v1_beyond_the_allowlist() -> None:
    report = drift.check(UPSTREAM_V1_2_4, OURS, drift.DEFAULT_ALLOWLIST)
    assert report.differences == [], report.to_text()
    assert report.stale == [], report.to_text()
    assert report.ok


def test_every_allowlist_entry_is_used_and_explained() -> None:
    report = drift.check(UPSTREAM_V1_2_4, OURS, drift.DEFAULT_ALLOWLIST)
    used = {id(entry) for _, entry in report.allowed}
    entries = drift.load_allowlist(drift.DEFAULT_ALLOWLIST)
    assert len(entries) == len({(e.category, e.subject) for e in entries}), "duplicate entries"
    assert len(used) == len(entries)
    assert all(len(e.reason.split()) >= 4 for e in entries)


def test_fork_definitions_follow_upstream_unstable() -> None:
    """session/fork is only in upstream's unstable schema; our shape must match that one."""
    reference.require(UPSTREAM_V1_1_21_UNSTABLE)
    upstream = drift.normalise(drift.load_schema_set(UPSTREAM_V1_1_21_UNSTABLE))
    ours = drift.normalise(drift.load_schema_set(OURS))
    for name in ("ForkSessionRequest", "ForkSessionResponse", "SessionForkCapabilities"):
        assert drift.compare_definitions(name, upstream[name], ours[name]) == [], name
    upstream_fork = drift.load_schema_set(UPSTREAM_V1_1_21_UNSTABLE).methods["session/fork"]
    assert drift.load_schema_set(OURS).methods["session/fork"] == upstream_fork


def test_release_1_21_to_2_4_reports_the_new_update_kinds_and_definitions() -> None:
    reference.require(UPSTREAM_V1_1_21)
    found = set(
        drift.compare(
            drift.load_schema_set(UPSTREAM_V1_1_21), drift.load_schema_set(UPSTREAM_V1_2_4)
        )
    )
    assert {
        Finding("update_kind_added", "notice", "-> Notice"),
        Finding("update_kind_added", "compaction_update", "-> CompactionUpdate"),
        Finding("update_kind_added", "compaction_summary_chunk", "-> CompactionSummaryChunk"),
    } <= found
    added = {f.subject for f in found if f.category == "definition_added"}
    assert added == {
        "Notice",
        "NoticeSeverity",
        "NoticeCapabilities",
        "CompactionUpdate",
        "CompactionSummaryChunk",
        "CompactionId",
        "CompactionStatus",
        "CompactionCapabilities",
    }
    assert {
        Finding(
            "property_added", "ClientSessionCapabilities.notices", "@NoticeCapabilities | null"
        ),
        Finding(
            "property_added",
            "ClientSessionCapabilities.compaction",
            "@CompactionCapabilities | null",
        ),
    } <= found
    # Nothing was removed between the two releases, and no method changed.
    assert not {
        f for f in found if f.category.endswith("_removed") or f.category.startswith("method")
    }


def test_release_comparison_in_reverse_reports_removals() -> None:
    reference.require(UPSTREAM_V1_1_21)
    report = drift.check(UPSTREAM_V1_2_4, UPSTREAM_V1_1_21)
    assert not report.ok
    removed = {f.subject for f in report.differences if f.category == "update_kind_removed"}
    assert removed == {"notice", "compaction_update", "compaction_summary_chunk"}


UPSTREAM_V2 = reference.newest_upstream("v2")  # the newest draft (npm SDK 2.4.0)
OURS_V2 = OURS / "v2"
V2_ALLOWLIST = OURS_V2 / "drift-allowlist.json"


def test_ours_v2_matches_upstream_v2_beyond_its_allowlist() -> None:
    if not UPSTREAM_V2.is_file():
        pytest.skip(f"{UPSTREAM_V2} not found")
    report = drift.check(UPSTREAM_V2, OURS_V2, V2_ALLOWLIST)
    assert report.differences == [], report.to_text()
    assert report.stale == [], report.to_text()
    used = {id(entry) for _, entry in report.allowed}
    assert len(used) == len(drift.load_allowlist(V2_ALLOWLIST))


def test_the_v1_comparison_never_reads_v2_files() -> None:
    names = set(drift.load_schema_set(OURS).definitions)
    assert "UpdateSessionNotification" not in names
    assert "UpdateSessionNotification" in drift.load_schema_set(OURS_V2).definitions
