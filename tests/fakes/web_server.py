"""A real HTTP server on 127.0.0.1 serving the pages WebFetch is tested against.

`http.server` in a daemon thread, one thread per request, so a slow page does not hold the
others. Each path is a `WebPage` (status, headers, body), a body that never ends (`ENDLESS`, to
hit the size cap), or a page that waits until the test lets it go (`HELD`, to hit the
timeout). Every request's path is counted in `hits`, so a test can tell a cached page from a
fetched one.

    with WebServer({"/a": WebPage(b"<h1>A</h1>")}) as web:
        url = web.url("/a")
"""

from __future__ import annotations

import ssl
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Literal

HELD: Literal["held"] = "held"
ENDLESS: Literal["endless"] = "endless"
ENDLESS_LIMIT = 64 * 1024 * 1024
"""An endless body stops here even if the client reads on: a broken test cannot run forever."""


@dataclass(frozen=True, slots=True)
class WebPage:
    """One response: a body, its status and headers."""

    body: bytes = b""
    content_type: str | None = "text/html; charset=utf-8"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict[str, str])


Route = WebPage | Literal["held", "endless"]


class WebServer:
    """The server; use as a context manager (it stops, and lets held pages go, on exit)."""

    def __init__(self, routes: Mapping[str, Route]) -> None:
        self.routes = dict(routes)
        self.hits: Counter[str] = Counter()
        self.release = threading.Event()
        self.endless_sent = 0
        """Bytes of the endless body written before the client hung up (or the limit)."""
        self.endless_done = threading.Event()
        self.endless_hung_up = False
        """Whether the client closed the endless body's connection (rather than the limit)."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """The http URL of `path` on this server, by `host` (``localhost`` is another host)."""
        return f"http://{host}:{self.port}{path}"

    def wrap_tls(self, context: ssl.SSLContext) -> None:
        """Serve https from now on, with `context` (call before the first request)."""
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return None

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                with server._lock:
                    server.hits[path] += 1
                route = server.routes.get(path)
                if route is None:
                    self._send(WebPage(b"<h1>Not here</h1>", status=404))
                elif route == HELD:
                    server.release.wait(30)
                elif route == ENDLESS:
                    self._endless()
                else:
                    self._send(route)

            def _send(self, page: WebPage) -> None:
                self.send_response(page.status)
                if page.content_type is not None:
                    self.send_header("Content-Type", page.content_type)
                for name, value in page.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                self.wfile.write(page.body)

            def _endless(self) -> None:
                """A text body with no length that goes on until the client hangs up."""
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                chunk = b"all work and no play " * 3_000
                try:
                    while server.endless_sent < ENDLESS_LIMIT:
                        self.wfile.write(chunk)
                        server.endless_sent += len(chunk)
                except OSError:  # the client stopped reading and closed the connection
                    server.endless_hung_up = True
                finally:
                    server.endless_done.set()

        return Handler
