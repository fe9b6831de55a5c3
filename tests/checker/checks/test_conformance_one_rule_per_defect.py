"""Each seeded defect is charged to the rule written for it, once (issue 36, item 3): the
rules whose probes merely meet the defect on their way stay green."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict

from tests.checker.checks.conformance_checker_support import LLM, raw_agent, run_checker

#: The rules a notification probe judges: each ends in a barrier request answered with an
#: error, which the defect below sends with its id retyped.
QUIET_PROBES = [
    "jsonrpc.notification-not-answered",
    "ext.unknown-notification-ignored",
    "cancel.cancel-request-unknown-ignored",
]


@pytest.mark.subprocess
def test_errors_that_retype_the_id_fail_id_echo_and_nothing_else() -> None:
    result = run_checker(
        raw_agent("--defect", "string-id-errors"),
        only=["jsonrpc.*", *QUIET_PROBES],
        profile="iac-code",
    )
    failing = {rid for rid, r in result.results.items() if r.verdict is Verdict.FAIL}
    assert failing == {"jsonrpc.id-echo"}, {r: result.results[r].reason for r in failing}
    assert "came back as '4343' (in an error)" in result.results["jsonrpc.id-echo"].reason
    assert not result.harness_errors
    for rule in QUIET_PROBES:
        assert result.results[rule].verdict is Verdict.PASS, result.results[rule].reason


@pytest.mark.subprocess
def test_a_batch_answered_line_by_line_fails_the_batch_rule_only() -> None:
    result = run_checker(
        raw_agent("--defect", "batch-line-by-line"), only=["jsonrpc.*"], profile="iac-code"
    )
    failing = {rid for rid, r in result.results.items() if r.verdict is Verdict.FAIL}
    assert failing == {"jsonrpc.batch-rejected"}, {r: result.results[r].reason for r in failing}
    assert "answered line by line" in result.results["jsonrpc.batch-rejected"].reason
    assert result.results["jsonrpc.one-response-per-request"].verdict is Verdict.PASS


@pytest.mark.subprocess
def test_pretty_printed_output_is_newline_terminated_alone_and_costs_no_waits() -> None:
    result = run_checker(raw_agent("--defect", "pretty-print"))
    failing = {rid for rid, r in result.results.items() if r.verdict is Verdict.FAIL}
    assert failing == {"transport.newline-terminated"}, {
        r: result.results[r].reason for r in failing
    }
    item = result.results["transport.newline-terminated"]
    assert "one message written over" in item.reason and "not JSON on their own" in item.reason
    # The lines it split into are folded under it, and no check waited in vain for an answer.
    assert result.results["transport.stdout-only-json"].verdict is Verdict.PASS
    assert not result.harness_errors, [r.reason for r in result.harness_errors]
    assert not any(
        "within" in r.reason for r in result.results.values() if r.verdict.value == "fail"
    )


def test_split_lines_are_joined_into_the_message_they_make() -> None:
    import json

    from acp_conformance.harness.recorder import Recorder

    message = {"jsonrpc": "2.0", "id": 7, "result": {"items": [{}, [], 1], "text": "a\nb"}}
    recorder = Recorder()
    recorder.add("a2c", b"{ this is a log line, never completed")
    recorder.add("a2c", b'{"jsonrpc":"2.0","method":"session/update","params":{}}')
    recorder.add("a2c", b"[another log line")
    lines = json.dumps(message, indent=2).encode().split(b"\n")
    for line in lines:
        recorder.add("a2c", line)
    frames = recorder.frames
    last = frames[-1]
    assert last.message == message and last.split_from == 3
    assert [f.part_of for f in frames[3:-1]] == [last.seq] * (len(lines) - 1)
    # The log line before the whole message stays what it is: not JSON, part of nothing.
    assert not frames[0].is_json and frames[0].part_of is None
    assert not frames[2].is_json and frames[2].part_of is None
    assert frames[1].split_from is None and last.to_json()["splitFrom"] == 3


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("args", "verdict", "words"),
    [
        (("--quirk", "paged-list"), Verdict.PASS, "ended"),
        (("--defect", "list-cursor-loop"), Verdict.FAIL, "the listing loops"),
        (("--defect", "list-dead-cursor"), Verdict.FAIL, "was refused"),
    ],
)
def test_session_list_cursors_are_followed_to_the_end(
    args: tuple[str, str], verdict: Verdict, words: str
) -> None:
    result = run_checker(raw_agent(*args), only=["session.list-*"])
    item = result.results["session.list-cursor-followed"]
    assert item.verdict is verdict and words in item.reason, item.reason
    # The other listing rules keep judging what they judge.
    assert result.results["session.list-shape"].verdict is Verdict.PASS


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("defect", "verdict"), [(None, Verdict.PASS), ("unknown-tool-update", Verdict.FAIL)]
)
def test_a_tool_call_update_names_an_announced_tool_call(
    defect: str | None, verdict: Verdict
) -> None:
    args = ("--defect", defect) if defect else ()
    result = run_checker(
        raw_agent(*args),
        only=["prompt.tool-update-known-id", "turn.tool-call-lifecycle"],
        **LLM,  # type: ignore[arg-type]
    )
    item = result.results["prompt.tool-update-known-id"]
    assert item.verdict is verdict, item.reason
    if defect:
        assert "'never-announced'" in item.reason


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("defect", "verdict"), [(None, Verdict.PASS), ("late-permission", Verdict.FAIL)]
)
def test_permission_is_asked_within_the_turn(defect: str | None, verdict: Verdict) -> None:
    args = ("--defect", defect) if defect else ()
    result = run_checker(
        raw_agent(*args),
        only=["prompt.permission-within-turn", "turn.tool-call-lifecycle"],
        profile="iac-code",
        **LLM,  # type: ignore[arg-type]
    )
    item = result.results["prompt.permission-within-turn"]
    assert item.verdict is verdict, item.reason
    if defect:
        assert "after its prompt was answered" in item.reason
