"""Coverage honesty and actionable output: the verdict line says how many MUST/CAPABILITY
requirements were exercised, ``--strict-coverage`` fails a run that could not exercise one,
not-applicable rows are counted unless ``-v``, reasons are printed whole, and a run without a
model says why its prompt-turn requirements were not applicable."""

from __future__ import annotations

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.peers.retier import under_profile
from acp_conformance.report import json_report, terminal

from tests.checker.checks.conformance_checker_support import raw_agent, run_checker

#: A MUST that needs the scripted model, a MUST judged without one, and a gated one.
SELECTION = ["cancel.during-tool-call", "init.responds", "session.resume-works"]


@pytest.mark.subprocess
def test_the_verdict_line_counts_the_exercised_must_requirements() -> None:
    result = run_checker(raw_agent(), only=SELECTION)
    assert result.results["cancel.during-tool-call"].verdict is Verdict.NOT_APPLICABLE
    assert result.coverage == (2, 3)
    assert result.verdict_line() == "CONFORMANT — 2 of 3 MUST/CAPABILITY exercised"
    assert [r.requirement.id for r in result.unexercised] == ["cancel.during-tool-call"]
    assert result.exit_code == 0
    # The peers matrix re-judges reports; it must say the same under the same profile.
    report = json_report.to_data(result)
    assert report["coverage"]["exercised"] == 2 and report["coverage"]["applicable"] == 3
    assert under_profile(report, "acp")["verdictLine"] == result.verdict_line()


@pytest.mark.subprocess
def test_strict_coverage_fails_a_run_that_could_not_exercise_a_must() -> None:
    result = run_checker(raw_agent(), only=SELECTION, strict_coverage=True)
    assert result.status == "not-conformant" and result.exit_code == 1
    assert "1 MUST/CAPABILITY not exercised (--strict-coverage)" in result.verdict_line()


@pytest.mark.subprocess
def test_a_capability_the_agent_does_not_advertise_is_not_a_coverage_gap() -> None:
    result = run_checker(
        raw_agent("--quirk", "no-modes"), only=["modes.set-mode-works"], strict_coverage=True
    )
    item = result.results["modes.set-mode-works"]
    assert item.verdict is Verdict.NOT_APPLICABLE and item.out_of_scope, item.reason
    assert result.coverage == (0, 0)
    assert result.exit_code == 0


@pytest.mark.subprocess
def test_not_applicable_rows_are_counted_unless_verbose_and_a_hint_names_the_model() -> None:
    result = run_checker(raw_agent(), only=[*SELECTION, "turn.streamed-text"])
    text = terminal.render(result, width=100)
    tables = text.split("not exercised, and why:")[0]  # the summary names unexercised MUSTs
    assert "cancel.during-tool-call" not in tables and "(+1 n/a)" in text
    assert "-v lists them" in text
    assert "no model was given" in " ".join(text.split()) and "--llm anthropic" in text
    verbose = terminal.render(result, width=100, verbose=True)
    assert "cancel.during-tool-call" in verbose and "-v lists them" not in verbose


@pytest.mark.subprocess
def test_reasons_are_printed_whole_not_cut() -> None:
    result = run_checker(raw_agent(), only=["init.responds"])
    item = result.results["init.responds"]
    long_reason = "the agent answered initialize " + " ".join(f"word{i}" for i in range(60))
    item.outcomes[0].reason = long_reason
    text = terminal.render(result, width=80)
    assert "…" not in text
    assert long_reason in " ".join(line.strip() for line in text.splitlines())
    assert all(len(line) <= 80 for line in text.splitlines() if "word" in line)


@pytest.mark.subprocess
def test_a_failure_shows_the_frames_it_rests_on_and_a_hint() -> None:
    result = run_checker(
        raw_agent("--defect", "echo-version"), only=["init.unsupported-version-not-echoed"]
    )
    text = terminal.render(result, width=120)
    item = result.results["init.unsupported-version-not-echoed"]
    outcome = next(o for o in item.outcomes if o.verdict is Verdict.FAIL)
    assert f"{outcome.run_id} #{outcome.frames[0]} a2c: " in text
    assert '"id":' in text and "hint: " in text and "protocol/initialization" in text


def test_an_excerpt_keeps_every_cited_frame() -> None:
    from pathlib import Path

    from acp_conformance.harness.client_side import ClientSide
    from acp_conformance.harness.recorder import Recorder
    from acp_conformance.outcomes import failed
    from acp_conformance.report.excerpt import MAX_FRAMES, excerpt
    from acp_conformance.scenarios.check_context import AgentRun

    recorder = Recorder()
    for n in range(400):
        recorder.add("a2c", b'{"jsonrpc":"2.0","method":"x","params":{"n":%d}}' % n)
    run = AgentRun("r#1", "baseline", recorder, ClientSide(Path(".")))
    cited = list(range(0, 400, 20))  # 20 frames far apart: with context they overflow
    shown = {f["seq"] for f in excerpt(run, failed("why", frames=cited))["frames"]}
    assert set(cited) <= shown and len(shown) <= MAX_FRAMES
