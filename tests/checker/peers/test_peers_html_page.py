"""The interop HTML page: well-formed tables, cells that link to their failure details,
client rows in a second table, and nothing from a report reaching the page unescaped."""

from __future__ import annotations

import json
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest
from acp_conformance.peers.__main__ import main
from acp_conformance.peers.agents import OWN_AGENT, PEERS_BY_NAME
from acp_conformance.peers.html_page import (
    cell_verdict,
    load_client_rows,
    render_page,
    write_page,
)
from acp_conformance.peers.matrix import AgentRun

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def runs() -> list[AgentRun]:
    return [
        AgentRun(OWN_AGENT, load("report_alpha.json"), report_path="alpha.json"),
        AgentRun(PEERS_BY_NAME["sdk-echo"], load("report_beta.json"), report_path="beta.json"),
        AgentRun(PEERS_BY_NAME["opencode"], None, error="not installed"),
    ]


class Page(HTMLParser):
    """What the tests look at: tables as rows of (class, text, href) cells, ids, tags."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, str, str | None]]]] = {}
        self.ids: set[str] = set()
        self.tags: list[str] = []
        self.external: list[str] = []
        self._table: str | None = None
        self._cell: list | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append(tag)
        if attributes.get("id"):
            self.ids.add(str(attributes["id"]))
        for key in ("src", "href"):
            value = attributes.get(key)
            if value and not value.startswith("#"):
                self.external.append(value)
        if tag == "link":
            self.external.append(str(attributes.get("href")))
        if tag == "table":
            self._table = str(attributes.get("id"))
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = [attributes.get("class") or "", None]
            self._text = []
        elif tag == "a" and self._cell is not None:
            self._cell[1] = attributes.get("href")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            css, href = self._cell
            self.tables[self._table][-1].append((css, "".join(self._text).strip(), href))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._text.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def test_agents_table_has_one_cell_per_area_and_colours_by_verdict() -> None:
    page = parse(render_page(runs()))
    header, alpha, beta, missing = page.tables["agent-table"]
    # agent column, five areas, overall.
    assert [text for _, text, _ in header] == [
        "agent",
        "init",
        "jsonrpc",
        "session",
        "transport",
        "turn",
        "overall",
    ]
    assert all(len(row) == len(header) for row in (alpha, beta, missing))
    assert alpha[0][1] == OWN_AGENT.name
    classes = {header[i][1]: alpha[i][0] for i in range(1, len(header))}
    # init: a SHOULD failure only -> partial; jsonrpc: a MUST failure -> fail;
    # session: a harness error -> partial; areas it never ran -> n/a.
    assert classes == {
        "init": "partial",
        "jsonrpc": "fail",
        "session": "partial",
        "transport": "n-a",
        "turn": "n-a",
        "overall": "fail",
    }
    assert {css for css, _, _ in missing[1:]} == {"not-run"}
    assert "not installed" in missing[-1][1]


def test_every_failure_cell_links_to_an_anchor_with_the_failure_details() -> None:
    html = render_page(runs())
    page = parse(html)
    links = [href for row in page.tables["agent-table"] for _, _, href in row if href]
    assert len(links) == 4  # alpha's init, jsonrpc and session, and its overall cell
    for href in links:
        assert href.startswith("#") and href[1:] in page.ids
    # The overall cell leads to the area with the blocking (MUST) failure.
    alpha = page.tables["agent-table"][1]
    assert alpha[-1][2] == alpha[2][2] and alpha[2][0] == "fail"
    assert "jsonrpc.parse-error" in html and "no error response to a broken line" in html
    assert "MUST" in html and "harness-error" in html
    # Passing cells have no link.
    beta = page.tables["agent-table"][2]
    assert all(href is None for _, _, href in beta)


def test_page_is_self_contained() -> None:
    page = parse(render_page(runs()))
    assert "style" in page.tags
    assert "script" not in page.tags
    assert page.external == []


def test_a_script_in_a_reason_or_evidence_is_escaped() -> None:
    report = load("report_alpha.json")
    hostile = "<script>alert(1)</script>"
    report["requirements"][1]["reason"] = hostile
    report["requirements"][2]["outcomes"][1]["evidence"] = {"line": hostile}
    peer = PEERS_BY_NAME["sdk-echo"]
    rows = [
        {"client": "<b>acpx</b>", "requirement": "client.x", "verdict": "fail", "reason": hostile}
    ]
    html = render_page([AgentRun(peer, report)], rows)
    assert "<script>" not in html and "<b>acpx" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    page = parse(html)
    assert "script" not in page.tags and "b" not in page.tags


def test_no_client_rows_says_so() -> None:
    html = render_page(runs())
    assert "no client runs" in html
    assert "client-table" not in parse(html).tables


def test_client_rows_make_a_second_table_with_linked_failures(tmp_path: Path) -> None:
    rows_file = tmp_path / "clients.json"
    rows_file.write_text(
        json.dumps(
            [
                {"client": "acpx", "requirement": "client.init.shape", "verdict": "pass"},
                {
                    "client": "acpx",
                    "requirement": "client.permission.answer",
                    "tier": "MUST",
                    "verdict": "fail",
                    "reason": "answered with an unknown option id",
                },
                {
                    "client": "ts-sdk-client",
                    "requirement": "client.permission.answer",
                    "verdict": "not-applicable",
                    "reason": "cannot be driven to prompt",
                },
            ]
        ),
        encoding="utf-8",
    )
    report_file = tmp_path / "py-client.json"
    report_file.write_text(
        json.dumps(
            {
                "client": {"name": "python-sdk-client"},
                "requirements": [
                    {"id": "client.init.shape", "tier": "MUST", "verdict": "pass"},
                ],
            }
        ),
        encoding="utf-8",
    )
    rows = load_client_rows(rows_file) + load_client_rows(report_file)
    html = render_page(runs(), rows)
    page = parse(html)
    header, *clients = page.tables["client-table"]
    # Client ids share the ``client.`` prefix; the next part is the area.
    assert [text for _, text, _ in header] == ["client", "init", "permission", "overall"]
    assert [row[0][1] for row in clients] == ["acpx", "ts-sdk-client", "python-sdk-client"]
    acpx, ts, python = clients
    assert [css for css, _, _ in acpx[1:]] == ["pass", "fail", "fail"]
    assert acpx[2][2] and acpx[2][2][1:] in page.ids
    assert "answered with an unknown option id" in html
    assert ts[2][0] == "n-a" and ts[2][2] is None
    assert python[1][0] == "pass"


def test_cell_verdict_rules() -> None:
    assert cell_verdict([{"verdict": "pass"}, {"verdict": "not-applicable"}]) == "pass"
    assert cell_verdict([{"verdict": "not-applicable"}]) == "n-a"
    assert cell_verdict([{"verdict": "pass"}, {"verdict": "fail", "tier": "SHOULD"}]) == "partial"
    assert cell_verdict([{"verdict": "fail", "tier": "CAPABILITY"}]) == "fail"


def test_matrix_command_writes_the_page_next_to_the_json(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "acp").mkdir(parents=True)
    (out / "acp" / "sdk-echo.report.json").write_text(
        json.dumps(load("report_beta.json")), encoding="utf-8"
    )
    clients = tmp_path / "clients.json"
    clients.write_text(
        json.dumps([{"client": "acpx", "requirement": "client.a", "verdict": "pass"}]),
        encoding="utf-8",
    )
    argv = ["matrix", "--out", str(out), "--profile", "acp", "--only", "sdk-echo"]
    assert main([*argv, "--clients", str(clients)]) == 0
    html = (out / "acp" / "peers-matrix.html").read_text(encoding="utf-8")
    assert (out / "acp" / "peers-matrix.json").exists()
    page = parse(html)
    assert [row[0][1] for row in page.tables["agent-table"][1:]] == ["sdk-echo"]
    assert [row[0][1] for row in page.tables["client-table"][1:]] == ["acpx"]


def test_write_page_returns_the_path(tmp_path: Path) -> None:
    path = write_page(runs(), tmp_path / "x")
    assert path.name == "peers-matrix.html" and path.read_text(encoding="utf-8").startswith(
        "<!DOCTYPE html>"
    )


def test_run_checks_two_agents_side_by_side_and_keeps_the_table_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import acp_conformance.peers.__main__ as peers_main

    # Both fakes must be inside check_peer at once to pass the barrier (bounded: 10 s).
    both_running = threading.Barrier(2, timeout=60)

    def fake_check(resolved, options) -> AgentRun:
        both_running.wait()
        return AgentRun(resolved.peer, load("report_beta.json"))

    monkeypatch.setattr(peers_main, "check_peer", fake_check)
    # Without typical costs either, nothing is known of the two, so both start at once (the
    # figures on record would have opencode run alone).
    monkeypatch.setattr(peers_main, "TYPICAL_COSTS", {})
    argv = ["run", "--out", str(tmp_path), "--profile", "acp", "--peers-at-once", "2"]
    assert main([*argv, "--only", "sdk-echo", "--only", "opencode"]) == 0
    page = parse((tmp_path / "acp" / "peers-matrix.html").read_text(encoding="utf-8"))
    assert [row[0][1] for row in page.tables["agent-table"][1:]] == ["sdk-echo", "opencode"]
