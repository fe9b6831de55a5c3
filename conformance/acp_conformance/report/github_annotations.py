"""``--format github``: failures as GitHub Actions workflow commands.

A runner turns each ``::error``/``::warning`` line on stdout into an annotation on the job's
summary page, so a maintainer sees which requirement broke without opening the log. MUST and
CAPABILITY failures (and stale baseline entries, which fail the run) are errors; SHOULD/INFO
failures and checker errors are warnings; baseline-expected failures are left out, as they do
not fail the run. The last line is a notice with the verdict.
"""

from __future__ import annotations

from ..outcomes import Verdict
from ..requirements import Tier
from ..run_result import RunResult

_BLOCKING_TIERS = {Tier.MUST, Tier.CAPABILITY}


def _escape_data(text: str) -> str:
    # The workflow-command syntax: a message may not hold a raw newline, and % starts an escape.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, title: str, message: str) -> str:
    return f"::{kind} title={_escape_property(title)}::{_escape_data(message)}"


def render(result: RunResult) -> str:
    lines: list[str] = []
    for item in result.results.values():
        req = item.requirement
        title = f"{req.id} [{req.tier.value}]"
        where = f" ({req.reference})" if req.reference else ""
        if item.baseline == "stale":
            reason = f"stale baseline entry, the requirement now passes: {item.baseline_reason}"
            lines.append(_command("error", title, reason))
        elif item.baseline == "expected":
            continue
        elif item.verdict is Verdict.FAIL:
            kind = "error" if req.tier in _BLOCKING_TIERS else "warning"
            lines.append(_command(kind, title, f"{item.reason}{where}"))
        elif item.verdict is Verdict.HARNESS_ERROR:
            lines.append(_command("warning", title, f"checker error: {item.reason}"))
    lines.append(_command("notice", "acp-conformance", result.verdict_line()))
    return "\n".join(lines)
