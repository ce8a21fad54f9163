"""What reaches the `acp` package from standard input: only lines that are JSON-RPC messages.

The package parses and answers well-formed messages (a bad method is `-32601`, bad params
`-32602`), but skips a line that is not JSON and would stop reading at JSON that is not an
object. This filter sits in front of it: such a line is answered with the package's own error
(`-32700` parse error, `-32600` invalid request, with a null id as JSON-RPC wants when the
request's id cannot be known), written as one line like every other, and the session goes on.
The package's log lines reach standard error as one line each, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from acp import RequestError

METHOD_NOT_FOUND = -32601

LINE_LIMIT = 50 * 1024 * 1024
"""The longest line taken (the package's own default)."""


def filtered(source: asyncio.StreamReader, writer: asyncio.StreamWriter) -> asyncio.StreamReader:
    """A reader with the lines of `source` that are JSON-RPC messages; every other line is
    answered on `writer` with an error. The copying runs until `source` ends."""
    passed = asyncio.StreamReader(limit=LINE_LIMIT)
    task = asyncio.get_running_loop().create_task(_copy(source, passed, writer))
    _running.add(task)
    task.add_done_callback(_running.discard)
    return passed


_running: set[asyncio.Task[None]] = set()

TOO_LONG = f"the line is longer than {LINE_LIMIT // (1024 * 1024)} MiB; it was dropped, unread"


async def _skip_line(source: asyncio.StreamReader, buffered: int) -> None:
    """Drop the rest of an over-long line, its newline included (`buffered`: what of it is
    read already), so its tail is not taken for a line of its own."""
    while True:
        try:
            await source.readexactly(buffered)
            await source.readuntil(b"\n")
            return
        except asyncio.IncompleteReadError:  # the input ended inside it
            return
        except asyncio.LimitOverrunError as over:
            buffered = over.consumed


async def _copy(
    source: asyncio.StreamReader, passed: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while True:
            try:
                line = await source.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:  # the last line, unended; or nothing
                line = end.partial
            except asyncio.LimitOverrunError as over:  # longer than the limit: all of it dropped
                _answer(writer, RequestError.invalid_request({"details": TOO_LONG}))
                await _skip_line(source, over.consumed)
                continue
            if not line:
                break
            error = _problem(line)
            if error is None:
                passed.feed_data(line)
            else:
                _answer(writer, error)
    finally:
        passed.feed_eof()


def _problem(line: bytes) -> RequestError | None:
    """Why `line` is no JSON-RPC message, or None when it is one (a blank line is nothing)."""
    if not line.strip():
        return None
    try:
        message: Any = json.loads(line)
    except ValueError as error:
        return RequestError.parse_error({"details": f"not JSON: {error}"})
    if not isinstance(message, dict):
        return RequestError.invalid_request({"details": "a message must be a JSON object"})
    method = message.get("method")
    if method is None and "id" not in message:
        return RequestError.invalid_request({"details": "a message needs a method or an id"})
    if method is not None and not isinstance(method, str):
        return RequestError.invalid_request({"details": "method must be a string"})
    if not _plain_id(message.get("id")):
        return RequestError.invalid_request(
            {"details": "an id must be a string, an integer or null"}
        )
    return None


def _plain_id(number: object) -> bool:
    """Whether `number` is an id JSON-RPC allows (no fraction; booleans are no numbers)."""
    return number is None or isinstance(number, str) or type(number) is int


def _answer(writer: asyncio.StreamWriter, error: RequestError) -> None:
    reply = {"jsonrpc": "2.0", "id": None, "error": error.to_error_obj()}
    writer.write((json.dumps(reply, separators=(",", ":")) + "\n").encode())


class OneLine(logging.Formatter):
    """A log record as one line on standard error: `stayer acp: message: the error`."""

    def format(self, record: logging.LogRecord) -> str:
        error = record.exc_info[1] if record.exc_info else None
        if record.msg == _NOTIFICATION_FAILED and isinstance(record.args, tuple) and record.args:
            return f"stayer acp: {_notification_note(str(record.args[0]), error)}"
        line = f"stayer acp: {record.getMessage()}"
        if error is not None:
            line += f": {error!r}"
        return line


_NOTIFICATION_FAILED = "Unhandled error while handling notification method=%s"
"""What the package logs when a notification cannot be carried out (it has no reply)."""


def _notification_note(method: str, error: BaseException | None) -> str:
    """A notification that could not be carried out, as a plain note: nothing crashed, and
    a notification gets no answer."""
    if isinstance(error, RequestError) and error.code == METHOD_NOT_FOUND:
        return f"ignored the notification {method!r}, which stayer does not know"
    return f"ignored the notification {method!r}: {str(error).splitlines()[0] if error else ''}"
