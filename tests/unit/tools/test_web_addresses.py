"""WebFetch reaches only public addresses unless a rule names the host exactly: every spelling
of a local address is caught, names are resolved and checked before connecting, the connection
goes to the address checked (never by name again), and the rule's subject is the host in one
canonical form. Against a real HTTP server on 127.0.0.1, which a refusal never reaches."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from stayer.permissions import Rule
from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin import web_address
from stayer.tools.builtin.web_address import FetchError, Route, check_peer, host_of, non_public
from stayer.tools.builtin.web_page import checked_url
from stayer.tools.builtin.webfetch import WebFetchInput, WebFetchTool
from tests.fakes.web_server import WebPage, WebServer
from tests.unit.tools.helpers import run_tool, text_of


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer({"/page": WebPage(b"hello", "text/plain")}) as server:
        yield server


def context(tmp_path: Path, *hosts: str) -> ToolContext:
    return ToolContext(cwd=tmp_path, web_hosts=frozenset(hosts))


class Resolver:
    """A DNS that answers from a table, one answer per lookup in turn, counting lookups."""

    def __init__(self, **answers: list[list[str]]) -> None:
        self.answers = {name.replace("_", "."): list(seq) for name, seq in answers.items()}
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        return self.answers[host].pop(0)


# --- the host in one form ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "host"),
    [
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://[::ffff:127.0.0.1]/", "127.0.0.1"),
        ("http://[::FFFF:7f00:1]/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://0/", "0.0.0.0"),
        ("http://[0:0:0:0:0:0:0:1]/", "::1"),
        ("https://DOCS.Python.ORG./3/", "docs.python.org"),
        ("https://docs.python.org:8443/", "docs.python.org"),
        ("https://exämple.com/", "xn--exmple-cua.com"),
        ("https://docs。python。org/", "docs.python.org"),
        ("https://cafe.example/", "cafe.example"),
    ],
)
def test_the_subject_is_the_host_in_one_form_however_the_url_spells_it(
    given: str, host: str
) -> None:
    assert WebFetchTool().permission_subject(WebFetchInput(url=given, prompt="?")) == host
    assert host_of(checked_url(given)) == host  # and the fetch uses that same form


@pytest.mark.parametrize(
    "given",
    [
        "http://docs.python.org@evil.test/",  # userinfo: the host is evil.test, and it is refused
        "http://docs%2epython%2eorg/",
        "http://[fe80::1%25eth0]/",
        "http://exa mple.com/",
        "http://-bad-.example/",
    ],
)
def test_hosts_no_rule_could_judge_plainly_are_refused(given: str, tmp_path: Path) -> None:
    tool = WebFetchTool()
    assert tool.permission_subject(WebFetchInput(url=given, prompt="?")) is None


def test_a_rule_for_the_host_is_not_fooled_by_userinfo() -> None:
    subject = checked_url("http://evil.test/").host
    rule = Rule.parse("WebFetch(domain:docs.python.org)")
    assert not rule.matches("WebFetch", subject, Path("/"), kind="domain")
    with pytest.raises(FetchError, match="user name or password"):
        checked_url("http://docs.python.org@evil.test/")


@pytest.mark.parametrize(
    ("rule", "subject"),
    [
        ("WebFetch(domain:DOCS.python.org.)", "docs.python.org"),
        ("WebFetch(domain:exämple.com)", "xn--exmple-cua.com"),
        ("WebFetch(domain:*.exämple.com)", "api.xn--exmple-cua.com"),
        ("WebFetch(domain:[::1])", "::1"),
        ("WebFetch(domain:::ffff:127.0.0.1)", "127.0.0.1"),
    ],
)
def test_rules_are_matched_in_the_form_subjects_have(rule: str, subject: str) -> None:
    assert Rule.parse(rule).matches("WebFetch", subject, Path("/"), kind="domain")


# --- which addresses are public ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("fec0::1", "private"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("192.0.2.1", "reserved"),
        ("0.1.2.3", "reserved"),
        ("::ffff:10.0.0.1", "private"),
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
        ("64:ff9b:1::1", "private"),
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("::7f00:1", "reserved"),  # IPv4-compatible
        ("2001:db8::1", "reserved"),
    ],
)
def test_non_public_addresses_are_named_by_kind(address: str, kind: str) -> None:
    assert non_public(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert non_public(ipaddress.ip_address(address)) is None


# --- refusals, against a real local server ----------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    ["127.0.0.1", "0x7f.1", "2130706433", "017700000001", "127.1", "[::ffff:127.0.0.1]"],
)
async def test_loopback_in_any_spelling_is_refused_without_a_rule_naming_it(
    web: WebServer, tmp_path: Path, spelling: str
) -> None:
    url = f"http://{spelling}:{web.port}/page"
    with pytest.raises(ToolFailure) as failure:
        await run_tool(WebFetchTool(), context(tmp_path), url=url, prompt="?")
    assert str(failure.value) == (
        "WebFetch does not connect to 127.0.0.1, a loopback address; local and private "
        'networks are reached only when the user allows that host by name (--allowedTools "'
        'WebFetch(domain:127.0.0.1)"). Fetch a public URL instead.'
    )
    assert web.hits["/page"] == 0


async def test_a_name_that_resolves_to_loopback_is_refused(web: WebServer, tmp_path: Path) -> None:
    # localhost is a name: the resolver's answer is what is checked
    with pytest.raises(ToolFailure, match=r"^WebFetch does not connect to localhost: it resolves"):
        await run_tool(
            WebFetchTool(), context(tmp_path), url=web.url("/page", "localhost"), prompt="?"
        )
    assert web.hits["/page"] == 0


@pytest.mark.parametrize(
    ("answers", "refused"),
    [
        (["10.0.0.7"], "it resolves to 10.0.0.7, a private address"),
        (["93.184.216.34", "127.0.0.1"], "it resolves to 127.0.0.1, a loopback address"),
        (["169.254.169.254"], "it resolves to 169.254.169.254, a link-local address"),
        (["::ffff:192.168.0.1"], "it resolves to 192.168.0.1, a private address"),
    ],
)
async def test_every_address_a_name_resolves_to_is_checked(
    tmp_path: Path, answers: list[str], refused: str
) -> None:
    resolver = Resolver(intranet_test=[answers])
    tool = WebFetchTool(resolve=resolver)
    with pytest.raises(ToolFailure) as failure:
        await run_tool(tool, context(tmp_path), url="https://intranet.test/", prompt="?")
    assert f"WebFetch does not connect to intranet.test: {refused};" in str(failure.value)


async def test_the_connection_goes_to_the_address_checked_not_to_a_second_answer(
    web: WebServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DNS rebinding: a public answer for the check, then loopback for the connection. The name
    # is looked up once, and the connection goes to the public address checked (which the
    # test guard refuses, as no test may leave the machine), so the local server is never hit.
    attempts: list[object] = []
    guarded = socket.socket.connect

    def recording(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        guarded(self, address)

    monkeypatch.setattr(socket.socket, "connect", recording)
    resolver = Resolver(rebind_test=[["93.184.216.34"], ["127.0.0.1"]])
    tool = WebFetchTool(resolve=resolver)
    url = f"http://rebind.test:{web.port}/page"
    with pytest.raises(ToolFailure, match=r"^Could not fetch https://rebind\.test:"):
        await run_tool(tool, context(tmp_path), url=url, prompt="?")
    assert resolver.asked == ["rebind.test"]
    assert attempts == [("93.184.216.34", web.port)]
    assert web.hits["/page"] == 0


async def test_a_host_no_resolver_knows_is_refused_with_the_rule_that_names_it(
    tmp_path: Path,
) -> None:
    async def unknown(host: str, port: int) -> Sequence[str]:
        raise OSError(f"no such host {host}")

    tool = WebFetchTool(resolve=unknown)
    with pytest.raises(ToolFailure) as failure:
        await run_tool(tool, context(tmp_path), url="https://nowhere.test/", prompt="?")
    assert str(failure.value).startswith(
        "Could not resolve nowhere.test to check that it is a public address (no such host "
        "nowhere.test); check the URL."
    )
    assert '--allowedTools "WebFetch(domain:nowhere.test)"' in str(failure.value)


def test_the_peer_reached_must_be_the_address_checked() -> None:
    route = Route(httpx.URL("https://93.184.216.34/"), pinned=ipaddress.ip_address("93.184.216.34"))
    check_peer(route, ("93.184.216.34", 443))
    check_peer(route, ("::ffff:93.184.216.34", 443, 0, 0))
    for peer in (("127.0.0.1", 443), None, ("not an address", 1)):
        with pytest.raises(FetchError, match=r"instead of the checked address 93\.184\.216\.34"):
            check_peer(route, peer)
    check_peer(Route(httpx.URL("https://named.test/")), ("10.0.0.1", 443))  # by name: not pinned


# --- a rule naming the host exactly -----------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "named"), [("127.0.0.1", "127.0.0.1"), ("localhost", "localhost")]
)
async def test_a_host_a_rule_names_exactly_is_reached_at_a_local_address(
    web: WebServer, tmp_path: Path, host: str, named: str
) -> None:
    output = await run_tool(
        WebFetchTool(), context(tmp_path, named), url=web.url("/page", host), prompt="?"
    )
    assert "hello" in text_of(output) and web.hits["/page"] == 1


async def test_naming_one_local_host_does_not_open_another_spelling_of_a_name(
    web: WebServer, tmp_path: Path
) -> None:
    # 127.0.0.1 named: localhost is another host, even though it resolves there
    with pytest.raises(ToolFailure, match="does not connect to localhost"):
        await run_tool(
            WebFetchTool(),
            context(tmp_path, "127.0.0.1"),
            url=web.url("/page", "localhost"),
            prompt="?",
        )
    # while an odd spelling of the named address is that address
    output = await run_tool(
        WebFetchTool(),
        context(tmp_path, "127.0.0.1"),
        url=f"http://0x7f.1:{web.port}/page",
        prompt="?",
    )
    assert "hello" in text_of(output)


async def test_a_same_site_redirect_is_checked_like_the_first_request(tmp_path: Path) -> None:
    with WebServer({}) as web:
        web.routes["/hop"] = WebPage(status=302, headers={"Location": "/page"})
        web.routes["/page"] = WebPage(b"after the hop", "text/plain")
        output = await run_tool(
            WebFetchTool(), context(tmp_path, "127.0.0.1"), url=web.url("/hop"), prompt="?"
        )
    assert "after the hop" in text_of(output)


# --- TLS to a pinned address ------------------------------------------------------------------


@pytest.fixture
def tls_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """An https server on 127.0.0.1 whose certificate names `pinned.test`, trusted through
    SSL_CERT_FILE as a CA bundle from the environment is; yields its port."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed, so no test certificate can be made")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=pinned.test",
         "-addext", "subjectAltName=DNS:pinned.test"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with WebServer({}) as web:
        web.routes["/page"] = WebPage(b"over tls", "text/plain")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        web.wrap_tls(context)
        yield web.port


async def test_a_pinned_connection_still_verifies_tls_for_the_name(
    tls_server: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only here is loopback let through as if it were public, so the connection is pinned to
    # the address the name resolved to, as for any public site.
    monkeypatch.setattr(web_address, "non_public", lambda address: None)
    resolver = Resolver(pinned_test=[["127.0.0.1"]], other_test=[["127.0.0.1"]])
    tool = WebFetchTool(resolve=resolver)
    output = await run_tool(
        tool, context(tmp_path), url=f"https://pinned.test:{tls_server}/page", prompt="?"
    )
    assert "over tls" in text_of(output)
    assert output.data["url"] == f"https://pinned.test:{tls_server}/page"
    # the certificate is checked against the name asked for, not the address connected to
    with pytest.raises(ToolFailure, match="certificate verify failed"):
        await run_tool(
            tool, context(tmp_path), url=f"https://other.test:{tls_server}/page", prompt="?"
        )
