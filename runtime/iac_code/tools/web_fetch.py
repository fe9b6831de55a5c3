"""``web_fetch``: GET an http(s) URL and return its text, behind the SSRF guard.

Redirects are followed by hand (at most ``web_fetch_max_redirects``) so that every hop goes
through the guard: each hop's host is resolved, classified, and the connection is made to
the very address that was checked (``Host`` header and TLS SNI keep the original name), which
also defeats DNS rebinding between check and connect. A private-network hop is fetched only
when the permission decision (the ``access`` handed to ``run``) already covered that host;
otherwise the fetch stops there and says why. Environment proxies are not used
(``trust_env=False``), because a proxy would connect somewhere other than the checked address.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from email.message import Message
from types import ModuleType
from typing import Any
from urllib.parse import urljoin

import anyio

from iac_code.tools.contract import (
    Access,
    AccessKind,
    JsonDict,
    Tool,
    ToolContext,
    ToolOutcome,
    text_content,
)
from iac_code.tools.html_text import html_to_text
from iac_code.tools.ssrf import UrlCheck, check_url, split_url

UrlChecker = Callable[[str], Awaitable[UrlCheck]]

_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
    "application/hcl",
    "application/toml",
)
_USER_AGENT = "iac-code web_fetch (+https://agentclientprotocol.com)"


def _http_module() -> ModuleType:
    """The HTTP client library, imported on first use (keeps agent start-up fast)."""
    import httpx

    return httpx


def _media_type(content_type: str) -> tuple[str, str | None]:
    message = Message()
    message["content-type"] = content_type or "application/octet-stream"
    return message.get_content_type(), message.get_param("charset")  # type: ignore[return-value]


def _is_textual(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type.endswith(("+json", "+xml"))
    )


Origin = tuple[str, str, int]
"""(scheme, host, port) of a URL, as :func:`split_url` gives it."""


def _origin_text(origin: Origin) -> str:
    scheme, host, port = origin
    shown_host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown_host}:{port}"


class _FetchRefused(Exception):
    """The guard stopped the fetch; the message is for the model."""


class WebFetchTool(Tool):
    name = "web_fetch"
    kind = "fetch"
    read_only = True
    masks_output = True
    description = (
        "Fetch an http:// or https:// URL with GET and return its content as text (HTML is "
        "converted to readable text with link targets in parentheses; JSON, YAML and other "
        "text is returned as is). Useful for provider documentation and registry pages. "
        "Redirects are followed. Addresses on the local or private network need the user's "
        "permission. Large pages are cut."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "url": {
                "type": "string",
                "minLength": 1,
                "description": "The absolute http(s) URL to fetch.",
            }
        },
        "required": ["url"],
    }

    def __init__(self, checker: UrlChecker | None = None) -> None:
        """``checker`` replaces the DNS-based classification (tests)."""
        self._checker: UrlChecker = checker or check_url

    def _title(self, tool_input: JsonDict) -> str:
        return f"Fetch {tool_input['url']}"

    async def _access(self, tool_input: JsonDict, ctx: ToolContext) -> Access:
        url = tool_input["url"].strip()
        try:
            split_url(url)
        except ValueError as exc:
            return Access(kind=AccessKind.FETCH, url=url, input_error=str(exc))
        check = await self._checker(url)
        if check.error:
            # Unresolvable: nothing can be reached, run() will report the error.
            return Access(kind=AccessKind.FETCH, url=url, reasons=(check.error,))
        return Access(
            kind=AccessKind.FETCH,
            url=url,
            private_network=check.private_network,
            reasons=(check.describe(),) if check.private_network else (),
        )

    async def _run(
        self, tool_input: JsonDict, ctx: ToolContext, access: Access | None
    ) -> ToolOutcome:
        url = tool_input["url"].strip()
        try:
            split_url(url)
        except ValueError as exc:
            return ToolOutcome.error(f"Cannot fetch {url}: {exc}")
        # The user's approval of a private-network fetch covers that origin only.
        approved_origin: Origin | None = None
        if access is not None and access.private_network and access.url:
            approved_origin = split_url(access.url)
        http = _http_module()
        limits = ctx.limits
        try:
            with anyio.fail_after(limits.web_fetch_timeout_s):
                return await self._fetch(http, url, approved_origin, ctx)
        except TimeoutError:
            return ToolOutcome.error(
                f"Fetching {url} timed out after {limits.web_fetch_timeout_s:g} s."
            )
        except _FetchRefused as exc:
            return ToolOutcome.error(str(exc), raw_output={"url": url, "blocked": True})
        except http.HTTPError as exc:
            return ToolOutcome.error(f"Fetching {url} failed: {type(exc).__name__}: {exc}")

    async def _fetch(
        self, http: Any, url: str, approved_origin: Origin | None, ctx: ToolContext
    ) -> ToolOutcome:
        limits = ctx.limits
        hops: list[str] = []
        current = url
        timeout = http.Timeout(limits.web_fetch_timeout_s)
        async with http.AsyncClient(
            follow_redirects=False, trust_env=False, timeout=timeout
        ) as client:
            while True:
                check = await self._checker(current)
                self._guard(check, approved_origin, is_redirect=bool(hops))
                response = await client.send(self._pinned_request(http, client, check), stream=True)
                try:
                    location = response.headers.get("location")
                    if response.status_code in _REDIRECT_CODES and location:
                        hops.append(current)
                        if len(hops) > limits.web_fetch_max_redirects:
                            raise _FetchRefused(
                                f"Too many redirects (more than {limits.web_fetch_max_redirects}) "
                                f"starting at {url}."
                            )
                        current = urljoin(current, location)
                        try:
                            split_url(current)
                        except ValueError as exc:
                            raise _FetchRefused(f"Redirect to {current} refused: {exc}") from None
                        continue
                    body, cut = await self._read_body(response, limits.web_fetch_max_bytes)
                    return self._outcome(current, response, body, cut, hops)
                finally:
                    await response.aclose()

    @staticmethod
    def _guard(check: UrlCheck, approved_origin: Origin | None, *, is_redirect: bool) -> None:
        if check.error:
            raise _FetchRefused(f"Cannot fetch {check.url}: {check.error}")
        if not check.private_network:
            return
        origin = split_url(check.url)
        if origin == approved_origin:
            return
        what = f"a redirect to {check.url}" if is_redirect else check.url
        approved = (
            f" (permission was given for {_origin_text(approved_origin)} only: another scheme, "
            "host or port is another service)"
            if approved_origin is not None
            else ""
        )
        raise _FetchRefused(
            f"Blocked {what}: {check.describe()}{approved}. Fetching private-network addresses "
            "needs the user's permission; call web_fetch with that URL directly to ask."
        )

    @staticmethod
    def _pinned_request(http: Any, client: Any, check: UrlCheck) -> Any:
        """A GET for ``check.url`` that connects to ``check.addresses[0]`` exactly."""
        original = http.URL(check.url)
        pinned = original.copy_with(host=check.addresses[0])
        extensions: dict[str, Any] = {}
        if original.scheme == "https":
            extensions["sni_hostname"] = original.host
        headers = {
            "Host": original.netloc.decode("ascii"),
            "User-Agent": _USER_AGENT,
            "Accept": "text/html, text/plain, application/json, */*;q=0.5",
        }
        return client.build_request("GET", pinned, headers=headers, extensions=extensions)

    @staticmethod
    async def _read_body(response: Any, max_bytes: int) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                return b"".join(chunks)[:max_bytes], True
        return b"".join(chunks), False

    @staticmethod
    def _outcome(
        final_url: str, response: Any, body: bytes, cut: bool, hops: list[str]
    ) -> ToolOutcome:
        media_type, charset = _media_type(response.headers.get("content-type", ""))
        status = response.status_code
        header = f"URL: {final_url}\nStatus: {status}\nContent-Type: {media_type}"
        if hops:
            header += f"\nRedirected from: {hops[0]}"
        raw: JsonDict = {
            "url": final_url,
            "status": status,
            "contentType": media_type,
            "bytes": len(body),
            "truncated": cut,
            "redirects": len(hops),
        }
        if not _is_textual(media_type) and b"\x00" in body[:8192]:
            message = f"{header}\n\n[binary content ({media_type}, {len(body):,} bytes) not shown]"
            return ToolOutcome(
                model_content=message,
                is_error=status >= 400,
                content=[text_content(message)],
                raw_output=raw,
            )
        try:
            text = body.decode(charset or "utf-8", errors="replace")
        except LookupError:
            text = body.decode("utf-8", errors="replace")
        if media_type in ("text/html", "application/xhtml+xml"):
            text = html_to_text(text)
        note = f"\n[content cut at {len(body):,} bytes]" if cut else ""
        model_content = f"{header}\n\n{text}{note}"
        return ToolOutcome(
            model_content=model_content,
            is_error=status >= 400,
            content=[text_content(f"Fetched {final_url} ({status}, {len(body):,} bytes)")],
            raw_output=raw,
        )
