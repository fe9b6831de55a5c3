"""SSRF classification and web_fetch against a local HTTP server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest
from iac_code.tools.contract import ToolContext
from iac_code.tools.html_text import html_to_text
from iac_code.tools.ssrf import UrlCheck, check_url
from iac_code.tools.web_fetch import WebFetchTool

PAGE = (
    "<html><head><title>Provider docs</title><style>body{color:red}</style>"
    "<script>var secret = 'do not show';</script></head><body>"
    "<h1>aws_s3_bucket</h1><p>Provides an   S3\nbucket resource.</p>"
    "<ul><li>bucket</li><li>acl</li></ul>"
    '<p>See <a href="https://example.com/ref">the reference</a>.</p>'
    '<pre>resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}</pre></body></html>'
)


class _Server:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.release = threading.Event()
        server_ref = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                server_ref.requests.append(self.path)
                port = server_ref.port
                if self.path == "/page.html":
                    self._send(200, PAGE.encode(), "text/html; charset=utf-8")
                elif self.path == "/to-localhost":
                    target = f"http://localhost:{port}/page.html"
                    self._send(302, b"", "text/plain", Location=target)
                elif self.path == "/to-same-host":
                    self._send(301, b"", "text/plain", Location="/page.html")
                elif self.path == "/loop":
                    self._send(302, b"", "text/plain", Location="/loop")
                elif self.path == "/big":
                    self._send(200, b"y" * 10_000, "text/plain")
                elif self.path == "/binary":
                    self._send(200, b"\x89PNG\x00\x00\x01" * 50, "image/png")
                elif self.path == "/json":
                    self._send(200, b'{"version": "5.0.0"}', "application/json")
                elif self.path == "/host":
                    self._send(200, self.headers.get("Host", "").encode(), "text/plain")
                elif self.path == "/missing":
                    self._send(404, b"not here", "text/plain")
                elif self.path == "/slow":
                    server_ref.release.wait(10)
                    self._send(200, b"late", "text/plain")
                else:
                    self._send(500, b"unknown route", "text/plain")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
def server() -> Iterator[_Server]:
    instance = _Server()
    instance.thread.start()
    try:
        yield instance
    finally:
        instance.release.set()
        instance.httpd.shutdown()
        instance.httpd.server_close()
        instance.thread.join(5)


def _first_hop_public() -> tuple[list[str], object]:
    """A checker that calls the first check public (a hostile DNS answer), later ones real."""
    seen: list[str] = []

    async def checker(url: str) -> UrlCheck:
        real = await check_url(url)
        seen.append(url)
        if len(seen) == 1:
            return dataclasses.replace(real, categories=())
        return real

    return seen, checker


# --- classification --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("url", "category"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.10:8080/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::1]:9000/", "loopback"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fd00::5]/", "private"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://localhost:1234/", "loopback"),
    ],
)
async def test_private_targets(url: str, category: str) -> None:
    check = await check_url(url)
    assert check.private_network
    assert category in check.categories


@pytest.mark.anyio
async def test_public_literal_and_bad_urls() -> None:
    public = await check_url("https://8.8.8.8/dns-query")
    assert not public.private_network and public.error is None
    assert (await check_url("ftp://example.com/")).error
    assert (await check_url("file:///etc/passwd")).error
    assert (await check_url("http:///nohost")).error


@pytest.mark.anyio
async def test_access_of_web_fetch(ctx: ToolContext) -> None:
    tool = WebFetchTool()
    private = await tool.access({"url": "http://169.254.169.254/latest"}, ctx)
    assert private.private_network and private.reasons
    public = await tool.access({"url": "http://1.1.1.1/"}, ctx)
    assert not public.restricted and public.kind == "fetch"
    bad = await tool.access({"url": "gopher://x"}, ctx)
    assert bad.input_error


def test_html_to_text() -> None:
    text = html_to_text(PAGE)
    assert text.startswith("Provider docs")
    assert "# aws_s3_bucket" in text
    assert "Provides an S3 bucket resource." in text
    assert "\n- bucket\n- acl\n" in text
    assert "the reference (https://example.com/ref)" in text
    assert '  bucket = "x"' in text  # preformatted text keeps its layout
    assert "secret" not in text and "color" not in text


# --- fetching --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_fetch_local_html_with_permission(server: _Server, ctx: ToolContext) -> None:
    tool = WebFetchTool()
    tool_input = {"url": server.url("/page.html")}
    access = await tool.access(tool_input, ctx)
    assert access.private_network  # the user would have been asked
    with anyio.fail_after(60):
        outcome = await tool.run(tool_input, ctx, access=access)
    assert not outcome.is_error, outcome.model_content
    assert "Status: 200" in outcome.model_content
    assert "Provides an S3 bucket resource." in outcome.model_content
    assert "do not show" not in outcome.model_content
    assert outcome.raw_output["status"] == 200


@pytest.mark.anyio
async def test_private_target_without_a_permission_decision_is_blocked(
    server: _Server, ctx: ToolContext
) -> None:
    outcome = await WebFetchTool().run({"url": server.url("/page.html")}, ctx)
    assert outcome.is_error and "Blocked" in outcome.model_content
    assert server.requests == []


@pytest.mark.anyio
async def test_redirect_to_loopback_is_rechecked(server: _Server, ctx: ToolContext) -> None:
    _seen, checker = _first_hop_public()
    tool = WebFetchTool(checker=checker)  # type: ignore[arg-type]
    tool_input = {"url": server.url("/to-localhost")}
    access = await tool.access(tool_input, ctx)
    assert not access.private_network  # the first hop looked public: no question asked

    # run() checks the first hop again (real answer: loopback) — a rebinding DNS answer
    # between the check and the connection is caught before anything is sent.
    with anyio.fail_after(60):
        outcome = await tool.run(tool_input, ctx, access=access)
    assert outcome.is_error and "Blocked" in outcome.model_content
    assert server.requests == []

    # Now let both the access check and the run's first hop look public: the redirect
    # target (localhost) is resolved and checked on its own and blocked.
    calls: list[str] = []

    async def public_for_first_url(url: str) -> UrlCheck:
        real = await check_url(url)
        calls.append(url)
        if url == tool_input["url"]:
            return dataclasses.replace(real, categories=())
        return real

    tool = WebFetchTool(checker=public_for_first_url)
    access = await tool.access(tool_input, ctx)
    with anyio.fail_after(60):
        outcome = await tool.run(tool_input, ctx, access=access)
    assert outcome.is_error
    assert "Blocked a redirect to" in outcome.model_content and "loopback" in outcome.model_content
    assert server.requests == ["/to-localhost"]  # the redirect target was never requested
    assert calls[-1] == server.url("/page.html", host="localhost")


@pytest.mark.anyio
async def test_redirect_within_the_approved_host_is_followed(
    server: _Server, ctx: ToolContext
) -> None:
    tool = WebFetchTool()
    tool_input = {"url": server.url("/to-same-host")}
    with anyio.fail_after(60):
        outcome = await tool.run(tool_input, ctx, access=await tool.access(tool_input, ctx))
    assert not outcome.is_error
    assert "Redirected from:" in outcome.model_content
    assert server.requests == ["/to-same-host", "/page.html"]


@pytest.mark.anyio
async def test_connection_keeps_the_original_host_header(server: _Server, ctx: ToolContext) -> None:
    tool = WebFetchTool()
    tool_input = {"url": server.url("/host", host="localhost")}
    with anyio.fail_after(60):
        outcome = await tool.run(tool_input, ctx, access=await tool.access(tool_input, ctx))
    assert outcome.model_content.endswith(f"localhost:{server.port}")


@pytest.mark.anyio
async def test_fetch_limits_and_content_types(server: _Server, workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace).with_limits(
        web_fetch_max_bytes=1000, web_fetch_max_redirects=3
    )
    tool = WebFetchTool()

    async def fetch(path: str) -> tuple[str, bool]:
        tool_input = {"url": server.url(path)}
        with anyio.fail_after(60):
            outcome = await tool.run(tool_input, ctx, access=await tool.access(tool_input, ctx))
        return outcome.model_content, outcome.is_error

    big, _ = await fetch("/big")
    assert "[content cut at 1,000 bytes]" in big
    binary, _ = await fetch("/binary")
    assert "binary content (image/png" in binary
    as_json, _ = await fetch("/json")
    assert as_json.endswith('{"version": "5.0.0"}')
    loop, loop_error = await fetch("/loop")
    assert loop_error and "Too many redirects" in loop
    missing, missing_error = await fetch("/missing")
    assert missing_error and "Status: 404" in missing


@pytest.mark.anyio
async def test_fetch_timeout(server: _Server, workspace: Path) -> None:
    ctx = ToolContext.for_session(workspace).with_limits(web_fetch_timeout_s=0.3)
    tool = WebFetchTool()
    tool_input = {"url": server.url("/slow")}
    with anyio.fail_after(60):
        outcome = await tool.run(tool_input, ctx, access=await tool.access(tool_input, ctx))
    assert outcome.is_error and "timed out" in outcome.model_content


@pytest.mark.anyio
async def test_unresolvable_host_is_an_error(ctx: ToolContext) -> None:
    tool = WebFetchTool()
    tool_input = {"url": "http://no-such-host.invalid/"}
    access = await tool.access(tool_input, ctx)
    assert not access.restricted
    outcome = await tool.run(tool_input, ctx, access=access)
    assert outcome.is_error and "cannot resolve" in outcome.model_content
