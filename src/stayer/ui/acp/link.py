"""One ACP session: a `Driver` over a stayer `Session`, its events sent to the editor as
`session/update`s, its permission questions put to the editor, one prompt at a time.

`prompt` submits and waits for the run's `Finished`, whose terminal reason is the stop reason;
a prompt sent while one runs is refused (the editor sends the next once the last has ended,
or cancels it first). `cancel` interrupts the run at once: running tools die, a question still
open is denied, and the prompt ends `cancelled`. A question the editor fails to answer (an
error, or it went away) is a denial. `close` stops what runs and closes the session, leaving its
transcript valid; the agent closes every link when the editor disconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from acp import Client, RequestError
from acp.schema import CurrentModeUpdate, PromptResponse
from acp.schema import Usage as AcpUsage

from stayer.driver import Answer, Close, Driver
from stayer.errors import StayerError
from stayer.events import Event, Finished, PermissionRequested
from stayer.messages import ContentBlock
from stayer.permissions import Decision
from stayer.session.options import QueryOptions
from stayer.ui.wording import question_in

from .permission import ask
from .updates import Translator, Update, stop_reason

log = logging.getLogger(__name__)


class Link:
    """One ACP session's driver and what is in flight on it; see the module."""

    def __init__(self, client: Client, cwd: Path) -> None:
        self._client = client
        self.translator = Translator(cwd)
        self.driver: Driver | None = None
        self._task: asyncio.Task[None] | None = None
        self._finished: asyncio.Future[Finished] | None = None
        self._cancelled = False
        self._asking: set[asyncio.Task[None]] = set()
        self._mode = ""

    @classmethod
    async def open(cls, client: Client, options: QueryOptions) -> Link:
        """A link over a session opened from `options` (its `cwd` set); raises `StayerError`
        when the session cannot open."""
        link = cls(client, Path(str(options.cwd)))
        driver = await Driver.open(options, link._sink, answers=True, on_error=link._failed)
        link.driver = driver
        link._mode = driver.session.permission_mode
        link.translator.take(driver.session.announce())
        link._task = asyncio.create_task(driver.run())
        return link

    @property
    def session_id(self) -> str:
        return self._driver.session.session_id

    @property
    def _driver(self) -> Driver:
        assert self.driver is not None, "a link is used only once open"
        return self.driver

    async def prompt(self, prompt: tuple[ContentBlock, ...]) -> PromptResponse:
        """Run `prompt` and answer with how the run ended; see the module."""
        if self._finished is not None:
            raise RequestError.invalid_request(
                {"details": "a prompt is already running in this session; cancel it first"}
            )
        self._finished = asyncio.get_running_loop().create_future()
        self._cancelled = False
        try:
            self._driver.submit(prompt)
            finished = await self._finished
        except StayerError as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        finally:
            self._finished = None
        return self._response(finished)

    def cancel(self) -> None:
        """Stop the running run now (`session/cancel`); its prompt ends `cancelled`."""
        if self._finished is None:
            return
        self._cancelled = True
        self._driver.interrupt("the editor cancelled the prompt")
        for asking in self._asking:
            asking.cancel()

    async def close(self) -> None:
        """Stop what runs and close the session (its transcript stays valid)."""
        if self.driver is None or self._task is None:
            return
        self.cancel()
        self.driver.send(Close())
        with contextlib.suppress(Exception):
            await self._task

    def _response(self, finished: Finished) -> PromptResponse:
        reason = "cancelled" if self._cancelled else stop_reason(finished.terminal)
        if reason is None:
            raise RequestError.internal_error({"details": finished.message})
        usage = finished.usage
        return PromptResponse(
            stop_reason=reason,
            usage=AcpUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_tokens=usage.total_input_tokens + usage.output_tokens,
                cached_read_tokens=usage.cache_read_input_tokens,
                cached_write_tokens=usage.cache_creation_input_tokens,
            ),
        )

    async def _sink(self, event: Event) -> None:
        for update in self.translator.take(event):
            await self._send(update)
        request = question_in(event)
        if request is not None:
            self._spawn(self._question(request))
        mode = self._driver.session.permission_mode
        if mode != self._mode:  # a plan accepted, or a mode an answer chose
            self._mode = mode
            await self._send(
                CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode)
            )
        waiting = self._finished
        if isinstance(event, Finished) and waiting is not None and not waiting.done():
            waiting.set_result(event)

    async def send_update(self, update: Update) -> None:
        """Send one update for this session (what a replay sends too)."""
        await self._send(update)

    async def _send(self, update: Update) -> None:
        try:
            await self._client.session_update(session_id=self.session_id, update=update)
        except Exception as error:  # the editor is gone: the run goes on to its end unseen
            log.debug("update not sent: %r", error)

    async def _question(self, request: PermissionRequested) -> None:
        """Ask the editor; whatever goes wrong while asking is a denial, never a call left
        waiting."""
        decision = Decision(
            "deny", "the editor gave no answer to the permission question", by="user"
        )
        try:
            if self.translator.call(request.tool_use_id) is None:  # a subagent's call
                await self._send(
                    self.translator.announce(
                        request.tool_use_id, request.name, request.input, "pending"
                    )
                )
            decision = await ask(self._client, self._driver.session, request, self.translator)
        except Exception as error:  # an error reply, a broken answer, the editor gone
            log.debug("permission question failed: %r", error)
        finally:
            self._driver.send(Answer(request.tool_use_id, decision))

    def _failed(self, line: str) -> None:
        """An operation the driver could not carry out: a waiting prompt ends with it as its
        error (no run began, so no `Finished` will come)."""
        if self._finished is not None and not self._finished.done() and not self._driver.busy:
            self._finished.set_exception(RequestError.invalid_params({"details": line}))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)
