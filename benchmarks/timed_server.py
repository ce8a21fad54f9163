"""The fake Anthropic server with a clock on every request, and the answers the benchmarks script.

`TimedServer` is `tests.fakes.FakeModelServer` (a real uvicorn server on 127.0.0.1, answering
instantly) that also records, for each request, `time.perf_counter()` when the request reaches
the tenant (headers and body read) and when its response's last byte has been handed to the
socket. The server runs in a thread of the benchmark process, so these times share a clock with
the moment the benchmark spawned the client.

The history checks and the rendering of the reply happen between those two marks, so they count
as the model's time, not the client's. What still lands on the client's side of the ledger is
uvicorn parsing the request and decoding its JSON body before the tenant sees it (tens of
microseconds for stayer's ~12 kB requests).
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

from tests.fakes.model_server import FakeModelServer, Receive, RecordedRequest, Responder, Send
from tests.fakes.sse import Reply, Response, ToolCall, reply

FINAL_TEXT = "done"


@dataclass(frozen=True, slots=True)
class Timing:
    """When one request arrived and when the last byte of its answer went out (perf_counter)."""

    arrived: float
    finished: float


class TimedServer(FakeModelServer):
    """An instant `FakeModelServer` that timestamps each request and the end of each answer."""

    def __init__(self) -> None:
        super().__init__(instant=True)
        self._clock_lock = threading.Lock()
        self._timings: list[Timing] = []

    def start(self) -> TimedServer:
        """Register with the shared server, and make its connections send without delay."""
        super().start()
        _disable_nagle(self)
        return self

    def __enter__(self) -> TimedServer:
        return self.start()

    async def handle(self, request: RecordedRequest, receive: Receive, send: Send) -> None:
        """Answer as the fake does, noting the arrival and the moment the answer was sent
        (a model call's; the model list stayer refreshes on the side is answered untimed)."""
        if request.method == "GET":
            await super().handle(request, receive, send)
            return
        arrived = time.perf_counter()
        try:
            await super().handle(request, receive, send)
        finally:
            finished = time.perf_counter()
            with self._clock_lock:
                self._timings.append(Timing(arrived, finished))

    @property
    def timings(self) -> list[Timing]:
        """One `Timing` per answered request, in arrival order."""
        with self._clock_lock:
            return sorted(self._timings, key=lambda timing: timing.arrived)


def _disable_nagle(server: FakeModelServer) -> None:
    """Set TCP_NODELAY on the shared server's listening socket; accepted sockets inherit it.

    The fake binds `socket.socket(AF_INET, SOCK_STREAM)`, whose `proto` is 0, and asyncio only
    sets TCP_NODELAY on accepted sockets whose proto is IPPROTO_TCP. Without it, Nagle holds the
    response's closing chunk until the client's delayed ACK (40 ms on Linux), which would be
    billed to any client that reads a response to its end, as a keep-alive client must.
    """
    host = server._host
    listeners = [sock for srv in host.server.servers for sock in srv.sockets] if host else []
    if not listeners:
        raise RuntimeError("the fake model server has no listening socket to configure")
    for sock in listeners:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def text_reply() -> Reply:
    """The one-turn answer used for start-up runs: a short text, end_turn."""
    return reply(FINAL_TEXT)


def bash_turns(turns: int, command: str = "true") -> Responder:
    """A responder calling `Bash {"command": command}` for `turns` requests, then a final text.

    The answer depends only on how many requests came before, so a client that retries would
    show up as a wrong count rather than a silently shorter run.
    """
    lock = threading.Lock()
    served = 0

    def respond(request: RecordedRequest) -> Response:
        nonlocal served
        with lock:
            index = served
            served += 1
        if index < turns:
            call = ToolCall(f"toolu_bench_{index:05d}", "Bash", {"command": command})
            return reply(call, stop_reason="tool_use")
        return text_reply()

    return respond
