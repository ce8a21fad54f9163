"""A bare Messages endpoint for loading a client: `python -m benchmarks.sse_server --delay-ms 150`.

The fake model server of the tests checks each request's history and renders its answer in
Python, about a millisecond a request, which at hundreds of requests in flight would be what a
client's figures measure. This one answers every POST, on keep-alive HTTP/1.1 connections, with
one short Anthropic text stream rendered once at start, `--delay-ms` after the request's body
has arrived: what is left to measure is the client. It prints `PORT <n>` once it listens, and
`DONE <json>` (requests answered, connections accepted) when its standard input closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys

from tests.fakes.sse import anthropic_text

_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
    b"cache-control: no-cache\r\ncontent-length: %d\r\n\r\n"
)


def _answer() -> bytes:
    body = b"".join(frame.encode() for frame in anthropic_text("hello there").frames)
    return _HEAD % len(body) + body


class Counts:
    def __init__(self) -> None:
        self.requests = 0
        self.connections = 0


async def _serve_one(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float, counts: Counts
) -> None:
    answer = _answer()
    counts.connections += 1
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            if delay_s:
                await asyncio.sleep(delay_s)
            writer.write(answer)
            await writer.drain()
            counts.requests += 1
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        pass  # the client left, or the server is closing
    finally:
        writer.close()


async def _main(delay_s: float) -> None:
    counts = Counts()
    server = await asyncio.start_server(
        lambda r, w: _serve_one(r, w, delay_s, counts), "127.0.0.1", 0, backlog=4096
    )
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    await asyncio.to_thread(sys.stdin.read)
    server.close()
    print(f"DONE {json.dumps(vars(counts))}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--delay-ms", type=float, default=150.0)
    asyncio.run(_main(parser.parse_args().delay_ms / 1e3))


if __name__ == "__main__":
    main()
