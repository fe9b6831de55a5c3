"""JUnit XML (``--junit``): one testcase per requirement, grouped by area.

Only what blocks the verdict is a ``<failure>`` (a MUST or CAPABILITY failure, a stale
baseline entry): a SHOULD/INFO failure is a ``<skipped>`` whose message starts with its tier,
with the property ``nonBlockingFailure``, so a CONFORMANT run is a green CI run.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from ..outcomes import Verdict
from ..run_result import RunResult
from .excerpt import excerpt, needs_transcript, runs_by_id


def to_xml(result: RunResult) -> ET.Element:
    runs = runs_by_id(result)
    root = ET.Element("testsuites", name="acp-conformance")
    # The v2 draft graded (--v2-draft), for every suite: a verdict is only read with it.
    graded = ET.SubElement(root, "properties")
    ET.SubElement(graded, "property", name="v2Draft", value=result.config.v2_draft)
    suites: dict[str, ET.Element] = {}
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for item in result.results.values():
        req = item.requirement
        suite = suites.get(req.area)
        if suite is None:
            suite = suites[req.area] = ET.SubElement(root, "testsuite", name=req.area)
        case = ET.SubElement(suite, "testcase", classname=f"acp.{req.area}", name=req.id, time="0")
        ET.SubElement(case, "properties").extend(
            [
                ET.Element("property", name="tier", value=req.tier.value),
                ET.Element("property", name="reference", value=req.reference),
            ]
            + (
                [ET.Element("property", name="v2Drafts", value=req.drafts.label)]
                if req.drafts is not None
                else []
            )
        )
        details = "\n".join(
            json.dumps(excerpt(runs[o.run_id], o), default=str)
            for o in item.outcomes
            if needs_transcript(o) and o.run_id in runs
        )
        totals["tests"] += 1
        if item.baseline == "expected":
            ET.SubElement(
                case, "skipped", message=f"expected failure: {item.baseline_reason}"
            ).text = item.reason
            totals["skipped"] += 1
        elif item.baseline == "stale":
            ET.SubElement(
                case,
                "failure",
                message=f"stale baseline entry: now passes ({item.baseline_reason})",
            )
            totals["failures"] += 1
        elif item.verdict is Verdict.FAIL and req.blocking:
            node = ET.SubElement(
                case, "failure", message=f"[{req.tier.value}] {item.reason}", type=req.tier.value
            )
            node.text = details
            totals["failures"] += 1
        elif item.verdict is Verdict.FAIL:
            # A SHOULD/INFO failure does not make the agent non-conformant, so it must not
            # turn CI red: it is a skip that says what failed, and a property CI can query.
            node = ET.SubElement(
                case, "skipped", message=f"[{req.tier.value}] failed, not blocking: {item.reason}"
            )
            node.text = details
            case.find("properties").append(  # type: ignore[union-attr]
                ET.Element("property", name="nonBlockingFailure", value="true")
            )
            totals["skipped"] += 1
        elif item.verdict is Verdict.HARNESS_ERROR:
            ET.SubElement(case, "error", message=item.reason).text = details
            totals["errors"] += 1
        elif item.verdict is Verdict.NOT_APPLICABLE:
            ET.SubElement(case, "skipped", message=item.reason or "not applicable")
            totals["skipped"] += 1
    for suite in suites.values():
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
        suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    for key, value in totals.items():
        root.set(key, str(value))
    return root


def write(result: RunResult, path: Path) -> None:
    tree = ET.ElementTree(to_xml(result))
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
