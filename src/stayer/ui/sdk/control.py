"""The control protocol of claude-agent-sdk's stream-json input, both directions, over one pair of
line streams (reference: protocols.md §1.5).

The SDK sends `control_request`s (`initialize`, `interrupt`, `set_model`, ...); each handler
registered for its `subtype` runs as a task of its own, so one that waits (a permission asked
back) never holds up the reading of the next line, and its reply (or its failure, as an error
reply naming the request) goes out as a `control_response` with the request's id. A subtype
with no handler gets an error reply, never silence. stayer's own requests to the SDK
(`can_use_tool`, `hook_callback`, `mcp_message`) are numbered `stayer_<n>`; `request` waits for
the matching `control_response` and returns its `response` object, or raises `ControlError`
with the SDK's error text. A request whose caller gives up (cancelled: the turn was
interrupted) is withdrawn with a `control_cancel_request`, as Claude Code does; and a
`control_cancel_request` from the SDK cancels the handler it names, which then sends nothing.
A request whose id is one still being answered gets an error reply (a cancel names one).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from stayer.errors import StayerError

Frame = dict[str, Any]
Handler = Callable[[Mapping[str, Any]], Awaitable[Mapping[str, Any] | None]]
"""Answers one SDK request (the `request` object, `subtype` included); what it returns is the
success reply's `response` (None: `{}`); a `StayerError` it raises is the error reply's text."""

CONTROL_TYPES = frozenset({"control_request", "control_response", "control_cancel_request"})


class ControlError(StayerError):
    """A control request failed: the SDK answered it with an error, or the channel closed."""


class ControlChannel:
    """The control protocol over `write` (one frame per call, written as one line); see the
    module. The reader of standard input hands every control frame to `dispatch`."""

    def __init__(self, write: Callable[[Frame], None]) -> None:
        self._write = write
        self._handlers: dict[str, Handler] = {}
        self._waiting: dict[str, asyncio.Future[Mapping[str, Any]]] = {}
        self._serving: dict[str, asyncio.Task[None]] = {}
        self._numbers = itertools.count(1)
        self._closed: str | None = None

    def handle(self, subtype: str, handler: Handler) -> None:
        """Answer the SDK's `subtype` requests with `handler` (replacing any earlier one)."""
        self._handlers[subtype] = handler

    def dispatch(self, frame: Mapping[str, Any]) -> bool:
        """Take one frame read from standard input; False when it is not a control frame (a
        user message, say), which is then the caller's."""
        kind = frame.get("type")
        if kind == "control_request":
            self._serve(frame)
        elif kind == "control_response":
            self._answered(frame.get("response"))
        elif kind == "control_cancel_request":
            serving = self._serving.pop(str(frame.get("request_id")), None)
            if serving is not None:  # withdrawn: its id is free at once
                serving.cancel()
        else:
            return False
        return True

    async def request(self, subtype: str, fields: Mapping[str, Any]) -> Mapping[str, Any]:
        """Ask the SDK (`can_use_tool`, `hook_callback`, `mcp_message`) and return its reply's
        `response`; raises `ControlError` for an error reply or a closed channel."""
        if self._closed is not None:
            raise ControlError(f"cannot ask the SDK ({subtype}): {self._closed}")
        request_id = f"stayer_{next(self._numbers)}"
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._write(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {"subtype": subtype, **fields},
            }
        )
        try:
            return await future
        except asyncio.CancelledError:
            if self._closed is None:
                self._write({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._waiting.pop(request_id, None)

    def close(self, reason: str) -> None:
        """Nobody will answer any more (standard input ended): every waiting request fails
        with `reason`, and later ones at once."""
        self._closed = reason
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ControlError(f"the SDK did not answer: {reason}"))
        self._waiting.clear()

    async def aclose(self) -> None:
        """Stop the handlers still running (their requests go unanswered: the SDK is gone)."""
        for task in list(self._serving.values()):
            task.cancel()
        for task in list(self._serving.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _answered(self, response: object) -> None:
        if not isinstance(response, Mapping):
            return
        future = self._waiting.get(str(response.get("request_id")))
        if future is None or future.done():
            return  # late, or for a request withdrawn: nothing waits for it
        if response.get("subtype") == "success":
            reply = response.get("response")
            future.set_result(reply if isinstance(reply, Mapping) else {})
        else:
            error = response.get("error")
            future.set_exception(ControlError(str(error or "the SDK answered with an error")))

    def _serve(self, frame: Mapping[str, Any]) -> None:
        request_id = str(frame.get("request_id") or "")
        request = frame.get("request")
        if not isinstance(request, Mapping) or not request_id:
            self._reply_error(request_id, "a control_request needs a request_id and a request")
            return
        if request_id in self._serving:  # its cancel would reach only one of the two
            self._reply_error(
                request_id,
                f"a control_request with request_id {request_id[:80]!r} is still being "
                "answered; give each request an id of its own",
            )
            return
        task = asyncio.ensure_future(self._answer(request_id, request))
        self._serving[request_id] = task
        task.add_done_callback(lambda done: self._served(request_id, done))

    def _served(self, request_id: str, task: asyncio.Future[None]) -> None:
        if self._serving.get(request_id) is task:
            del self._serving[request_id]

    async def _answer(self, request_id: str, request: Mapping[str, Any]) -> None:
        subtype = str(request.get("subtype"))
        handler = self._handlers.get(subtype)
        if handler is None:
            self._reply_error(request_id, f"stayer does not support the control request {subtype}")
            return
        try:
            reply = await handler(request)
        except StayerError as error:
            self._reply_error(request_id, str(error))
            return
        except Exception as error:  # a fault of ours: the SDK still gets its answer
            self._reply_error(request_id, f"{subtype} failed in stayer: {error!r}")
            return
        self._write(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": request_id,
                    "response": dict(reply or {}),
                },
            }
        )

    def _reply_error(self, request_id: str, error: str) -> None:
        self._write(
            {
                "type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": error},
            }
        )
