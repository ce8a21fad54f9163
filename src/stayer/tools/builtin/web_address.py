"""Which host a WebFetch URL names, and which addresses WebFetch may connect to.

A host is put in one form before any rule sees it and before any connection, so the way a URL
spells it cannot fool a rule: lower case, no trailing dot, a non-ASCII name in its IDNA form
(``xn--…``), and an address literal in its standard form however it was written (``0x7f.1``,
``2130706433`` and ``017700000001`` are all ``127.0.0.1``, as the system's own resolver reads
them; ``[::ffff:127.0.0.1]`` is ``127.0.0.1`` too). The fetch then uses that same form.

WebFetch reaches only public addresses (`non_public` names the others: loopback, private,
shared, link-local, multicast, unspecified and reserved ranges, in IPv4 and IPv6, IPv4 inside
IPv6 as mapped, 6to4 and NAT64 forms included), unless an allow rule names the host exactly
(the session's `ToolContext.web_hosts`). A name is resolved here and every address it has is
checked; the connection then goes to an address that passed, never by name again, so a DNS
server cannot answer differently the second time (DNS rebinding), and the address actually
connected to is checked once more before the body is read (`web_page`).

Through a proxy from the environment (``HTTPS_PROXY`` and the like, ``NO_PROXY`` honoured) the
proxy makes the connection by name: the name's addresses are still checked here first, but
what the proxy resolves is the proxy's affair.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import urllib.request
from collections.abc import Awaitable, Callable, Sequence

import httpx
from msgspec import Struct, field

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolve = Callable[[str, int], Awaitable[Sequence[str]]]
"""Resolve a host name and port to its addresses (as text), as the system would."""

_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_NUMERIC = re.compile(r"[0-9a-fx.]+")
"""What the system's resolver may read as an IPv4 address (octal, hex, fewer parts)."""
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")
_PRIVATE_V4 = tuple(
    ipaddress.IPv4Network(net) for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class FetchError(Exception):
    """A fetch that failed in a way the model should read (one line, what to do next)."""


def canonical_host(host: str) -> str:
    """`host` (as httpx gives a URL's ASCII host) in the one form rules and fetches use;
    `FetchError` for a host no fetch should try (a zone index, stray characters)."""
    name = host.lower().removesuffix(".")
    if "%" in name:  # a zone index, or an escape the resolver would read otherwise
        raise FetchError(f"{host!r} is not a host WebFetch can fetch from; give a plain name.")
    if ":" in name:  # an IPv6 literal, without its brackets
        try:
            address = ipaddress.IPv6Address(name)
        except ValueError:
            raise FetchError(f"{host!r} is not an address WebFetch can fetch from.") from None
        return str(address.ipv4_mapped or address)
    if _NUMERIC.fullmatch(name):
        try:
            return socket.inet_ntoa(socket.inet_aton(name))
        except OSError:
            pass  # not an address after all: judged as a name below
    if not _NAME.fullmatch(name) or len(name) > 253:
        raise FetchError(f"{host!r} is not a host name WebFetch can fetch from.")
    return name


def host_of(url: httpx.URL) -> str:
    """The URL's host as rules, the resolver and TLS take it: ASCII, IDNA names in ``xn--``
    form (httpx's `URL.host` gives them decoded)."""
    return url.raw_host.decode("ascii")


def address_of(host: str) -> IPAddress | None:
    """The address a canonical host is, if it is an address literal."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def non_public(address: IPAddress) -> str | None:
    """What kind of non-public address `address` is ("loopback", "private", …); None for a
    public one."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            return non_public(inner)
        if address in _NAT64_LOCAL or address.is_site_local:
            return "private"
        if address in _IPV4_COMPATIBLE and not (address.is_loopback or address.is_unspecified):
            return "reserved"
    for kind, test in (
        ("loopback", address.is_loopback),
        ("unspecified", address.is_unspecified),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("shared (carrier-grade NAT)", address in _SHARED),
        ("private", address.is_private and _private_range(address)),
    ):
        if test:
            return kind
    return "reserved" if address.is_reserved or not address.is_global else None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, 6to4, NAT64), which it reaches."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


def _private_range(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return any(address in net for net in _PRIVATE_V4)
    return address in ipaddress.IPv6Network("fc00::/7")


async def system_resolve(host: str, port: int) -> Sequence[str]:
    """The addresses the system's resolver gives `host`, in its order of preference."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).partition("%")[0] for info in infos))


class Route(Struct, frozen=True):
    """How a request for a URL goes out: the URL sent (its host replaced by the address that
    passed the checks, when the connection is made here), the headers and extensions that keep
    the name for the server and for TLS, and the proxy, if any."""

    url: httpx.URL
    pinned: IPAddress | None = None
    """The address the connection must reach; None when it is made by name (a host a rule
    names exactly, or through a proxy)."""
    proxy: str | None = None
    headers: dict[str, str] = field(default_factory=dict[str, str])
    extensions: dict[str, object] = field(default_factory=dict[str, object])


async def routes(url: httpx.URL, *, reachable: frozenset[str], resolve: Resolve) -> list[Route]:
    """The ways to send a request for `url` (one per address that passed, in order), or
    `FetchError` saying which address is off limits."""
    host = host_of(url)
    proxy = proxy_for(url)
    if host in reachable:  # named exactly by an allow rule: any address, by name
        return [Route(url, proxy=proxy)]
    literal = address_of(host)
    if literal is not None:
        _refuse_if_not_public(host, literal, named=None)
        return [Route(url, pinned=None if proxy else literal, proxy=proxy)]
    port = url.port or _DEFAULT_PORTS[url.scheme]
    try:
        found = [ipaddress.ip_address(text) for text in await resolve(host, port)]
    except (OSError, ValueError) as exc:
        raise FetchError(
            f"Could not resolve {host} to check that it is a public address ({exc}); check "
            f'the URL. If the host is right and the user trusts it, --allowedTools "WebFetch('
            f'domain:{host})" lets WebFetch reach it by name.'
        ) from None
    if not found:
        raise FetchError(f"{host} has no address; check the URL.")
    for address in found:
        _refuse_if_not_public(host, address, named=host)
    if proxy is not None:
        return [Route(url, proxy=proxy)]
    return [_pinned(url, address) for address in found]


def _pinned(url: httpx.URL, address: IPAddress) -> Route:
    """A route that connects to `address` while the server and TLS still see the name."""
    host = host_of(url)
    return Route(
        url.copy_with(host=str(address)),
        pinned=address,
        headers={"Host": host if url.port is None else f"{host}:{url.port}"},
        extensions={"sni_hostname": host},
    )


def _refuse_if_not_public(host: str, address: IPAddress, *, named: str | None) -> None:
    kind = non_public(address)
    if kind is None:
        return
    what = f"{host}: it resolves to {_unmapped(address)}" if named else str(address)
    raise FetchError(
        f"WebFetch does not connect to {what}, a {kind} address; local and private networks "
        "are reached only when the user allows that host by name "
        f'(--allowedTools "WebFetch(domain:{host})"). Fetch a public URL instead.'
    )


def check_peer(route: Route, peer: object) -> None:
    """Refuse (`FetchError`) a connection that reached another address than the one checked
    (`peer` is the stream's ``server_addr``)."""
    if route.pinned is None:
        return
    reached: IPAddress | None = None
    if isinstance(peer, tuple) and peer and isinstance(peer[0], str):
        reached = address_of(peer[0].partition("%")[0])
    if reached is None or _unmapped(reached) != _unmapped(route.pinned):
        host = route.headers.get("Host", route.url.host)
        raise FetchError(
            f"The connection for {host} reached {reached or 'an unknown address'} instead of "
            f"the checked address {route.pinned}, so nothing was read from it."
        )


def _unmapped(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def proxy_for(url: httpx.URL) -> str | None:
    """The proxy the environment names for `url` (``HTTPS_PROXY``, ``ALL_PROXY``, …), unless
    ``NO_PROXY`` leaves the host out."""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(host_of(url)):
        return None
    return proxy
