"""The checker's HTML report of a failing run, rendered by a real browser (issue 36, item 5):
headless Chromium dumps the DOM after the page's script ran and takes a screenshot.

The DOM is dumped from a copy of the report with a probe script in front of the page's own:
it records script errors and, once the page loaded, runs the page's filter function and
writes where each highlighted (decisive) frame landed and how it is painted. The screenshot is
of the report itself, read back with :mod:`png_pixels`: a real picture of the asked size, with
the highlight's colour on it. Without Chromium the test skips; ``IAC_CODE_REQUIRE_CHROMIUM=1``
(set by CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from acp_conformance.outcomes import Verdict
from acp_conformance.report import html_report
from acp_conformance.run_result import RunResult

from tests.agent.store.postgres_server import skip_or_fail
from tests.checker.checks import png_pixels
from tests.checker.checks.conformance_checker_support import raw_agent, run_checker

REQUIRE_VARIABLE = "IAC_CODE_REQUIRE_CHROMIUM"
WIDTH, HEIGHT = 1280, 2000
#: The report's highlight of a decisive frame (``.decisive`` in its style), as CSS and RGB.
HIGHLIGHT_CSS = "rgb(255, 224, 138)"
HIGHLIGHT_RGB = (255, 224, 138)
#: A real browser start on a loaded 2-CPU machine can take long; a bound, never a sleep.
BROWSER_BOUND_S = 120.0
RULE = "jsonrpc.id-echo"

#: Runs before the page's own script: errors anywhere on the page are kept, and once the page
#: loaded its filter function runs and each decisive frame's box and paint are written down.
PROBE = """<script>
(function(){
  var errors=[];
  function keep(){document.documentElement.setAttribute('data-script-errors',
    JSON.stringify(errors));}
  window.addEventListener('error',function(e){errors.push(String(e.message));keep();});
  window.addEventListener('load',function(){
    try{applyFilters();}catch(e){errors.push('applyFilters: '+e);}
    var boxes=[].map.call(document.querySelectorAll('.decisive'),function(el){
      var r=el.getBoundingClientRect(),s=getComputedStyle(el);
      var box=el.closest('pre').getBoundingClientRect();
      return {seq:el.getAttribute('data-seq'),width:r.width,height:r.height,
        top:r.top+window.scrollY,background:s.backgroundColor,visibility:s.visibility,
        display:s.display,unscrolled:r.top>=box.top&&r.bottom<=box.bottom};});
    document.documentElement.setAttribute('data-decisive',JSON.stringify(boxes));
    document.documentElement.setAttribute('data-probe','done');
    keep();
  });
  keep();
})();
</script>"""


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        skip_or_fail("chromium is not installed (Debian package `chromium`)", REQUIRE_VARIABLE)
    return found


def _browse(chromium: str, profile: Path, *args: str) -> str:
    """Run headless Chromium once (its own process group, killed whole on timeout)."""
    argv = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        *args,
    ]
    with subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "HOME": str(profile)},
    ) as process:
        try:
            out, err = process.communicate(timeout=BROWSER_BOUND_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            pytest.fail(f"chromium did not finish within {BROWSER_BOUND_S} s: {argv}")
    assert process.returncode == 0, err.decode(errors="replace")[-2000:]
    return out.decode("utf-8", errors="replace")


class _Page(HTMLParser):
    """The probe's attributes, the report's rows and the decisive frames of the dumped DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.root: dict[str, str | None] = {}
        self.rows: list[dict[str, str | None]] = []
        self.open_details = 0
        self.decisive: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "html":
            self.root = values
        elif tag == "tr" and values.get("class") == "req":
            self.rows.append(values)
        elif tag == "details" and "open" in values:
            self.open_details += 1
        elif tag == "span" and "decisive" in (values.get("class") or "").split():
            self.decisive.append(values.get("data-seq"))


@pytest.fixture(scope="module")
def failing_report() -> RunResult:
    # An error answer echoes the integer id 1 as "1": jsonrpc.id-echo blocks, on one frame.
    result = run_checker(raw_agent("--defect", "string-id-errors"), only=[RULE])
    assert result.results[RULE].verdict is Verdict.FAIL, result.results[RULE].reason
    return result


@pytest.mark.subprocess
def test_the_failing_report_renders_in_chromium_with_its_decisive_frames_visible(
    failing_report: RunResult, tmp_path: Path
) -> None:
    chromium = _chromium()
    page = html_report.render(failing_report)
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    dom = _browse(chromium, tmp_path / "profile-dom", "--dump-dom", probed.as_uri())

    parsed = _Page()
    parsed.feed(dom)
    assert parsed.root.get("data-probe") == "done", dom[:2000]
    assert json.loads(parsed.root.get("data-script-errors") or "null") == []
    blocking = [r for r in parsed.rows if r.get("data-blocking") == "yes"]
    assert [r.get("data-verdict") for r in blocking] == ["fail"]
    assert parsed.open_details >= 1  # the blocking row's exchange is shown unfolded
    assert parsed.decisive, "no highlighted frame in the DOM"
    boxes = json.loads(parsed.root.get("data-decisive") or "[]")
    assert [b["seq"] for b in boxes] == parsed.decisive
    for box in boxes:
        assert box["width"] > 0 and box["height"] > 0, box
        assert box["visibility"] == "visible" and box["display"] != "none", box
        assert box["background"] == HIGHLIGHT_CSS, box
    # Each cited frame can be seen without scrolling anything: whole inside its text box
    # (the cited list above the exchange) and inside the screenshot's height.
    seen = {b["seq"] for b in boxes if b["unscrolled"] and b["top"] + b["height"] < HEIGHT}
    assert seen == set(parsed.decisive), boxes
    assert len(set(parsed.decisive)) >= 2  # the request and the answer that mangled its id


@pytest.mark.subprocess
def test_the_screenshot_of_the_failing_report_is_a_real_picture_with_the_highlight(
    failing_report: RunResult, tmp_path: Path
) -> None:
    chromium = _chromium()
    report = tmp_path / "report.html"
    html_report.write(failing_report, report)
    shot = tmp_path / "report.png"
    _browse(chromium, tmp_path / "profile-shot", f"--screenshot={shot}", report.as_uri())

    image = png_pixels.read(shot)
    assert (image.width, image.height) == (WIDTH, HEIGHT)
    colours = set(image.pixels)
    assert len(colours) > 20, f"a near-blank picture: {len(colours)} colours"
    # The page's white background dominates; text and the verdict banner are on it.
    white = sum(1 for p in image.pixels if p == (255, 255, 255))
    assert 0.3 * len(image.pixels) < white < 0.99 * len(image.pixels)
    assert HIGHLIGHT_RGB in colours, "the decisive frame's highlight is not on the picture"
    keep = os.environ.get("IAC_CODE_KEEP_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)
