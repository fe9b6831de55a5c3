"""SSRF guard for ``web_fetch``: which URLs reach the user's private network.

A fetch of a public address is harmless enough to run without asking; a fetch that lands on
loopback, a private LAN, link-local (cloud metadata at 169.254.169.254 lives there) or
similar can read internal services with the agent's network position, so it needs the
user's permission.

Against DNS rebinding the fetch *connects to the address that was checked*: the host name is
resolved once per hop, the addresses are classified, and the HTTP request is sent to that IP
(with the original ``Host`` header and TLS server name), so a second, different DNS answer
cannot slip in between the check and the connection. Every redirect hop is resolved and
checked again in the same way.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def address_category(address: IPAddress) -> str | None:
    """Name the non-public class of ``address``, or ``None`` when it is publicly routable."""
    if isinstance(address, ipaddress.IPv6Address):
        # Addresses that carry an IPv4 address inside are judged by that IPv4 address.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return address_category(embedded)
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "carrier-grade NAT"
    if address.is_private:
        return "private"
    if address.is_reserved or not address.is_global:
        return "reserved"
    return None


@dataclass(frozen=True)
class UrlCheck:
    """The result of checking one URL (one hop of a fetch)."""

    url: str
    host: str
    port: int
    addresses: tuple[str, ...] = ()
    # Non-public classes found among the addresses, e.g. ("loopback",).
    categories: tuple[str, ...] = field(default_factory=tuple)
    error: str | None = None

    @property
    def private_network(self) -> bool:
        return bool(self.categories)

    def describe(self) -> str:
        if self.error:
            return self.error
        if self.categories:
            kinds = ", ".join(self.categories)
            return f"{self.host} resolves to a {kinds} address ({', '.join(self.addresses)})"
        return f"{self.host} resolves to a public address"


def split_url(url: str) -> tuple[str, str, int]:
    """Return (scheme, host, port) for an http(s) URL, or raise ValueError saying why not."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"invalid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError("only http:// and https:// URLs can be fetched")
    host = parts.hostname
    if not host:
        raise ValueError("the URL has no host")
    return scheme, host, port or (443 if scheme == "https" else 80)


async def check_url(url: str) -> UrlCheck:
    """Resolve the URL's host and classify every address it resolves to.

    One non-public address is enough to classify the host as private-network: a name with
    both a public and a loopback record could be steered to either.
    """
    try:
        _scheme, host, port = split_url(url)
    except ValueError as exc:
        return UrlCheck(url=url, host="", port=0, error=str(exc))
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses: list[IPAddress] = [literal]
    else:
        try:
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            return UrlCheck(url=url, host=host, port=port, error=f"cannot resolve {host}: {exc}")
        addresses = []
        for info in infos:
            # Strip an IPv6 zone id ("fe80::1%eth0") before parsing.
            text = str(info[4][0]).split("%", 1)[0]
            parsed = ipaddress.ip_address(text)
            if parsed not in addresses:
                addresses.append(parsed)
        if not addresses:
            return UrlCheck(url=url, host=host, port=port, error=f"{host} has no addresses")
    categories: list[str] = []
    for address in addresses:
        category = address_category(address)
        if category is not None and category not in categories:
            categories.append(category)
    return UrlCheck(
        url=url,
        host=host,
        port=port,
        addresses=tuple(str(address) for address in addresses),
        categories=tuple(categories),
    )
