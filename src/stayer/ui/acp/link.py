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
from stayer.messages import ContentBlock, Usage
from stayer.permissions import Decision
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from stayer.ui.session_commands import SessionCommand, session_command
from stayer.ui.wording import question_in

from .commands import commands_update
from .permission import ask
from .updates import StopReason, Translator, Update, stop_reason

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
        self._telling: set[asyncio.Task[None]] = set()
        self._mode = ""
        self.session_id = ""
        """The id the editor knows this session by (stayer's, as it opened)."""

    @classmethod
    async def open(cls, client: Client, options: QueryOptions) -> Link:
        """A link over a session opened from `options` (its `cwd` set); raises `StayerError`
        when the session cannot open."""
        link = cls(client, Path(str(options.cwd)))
        driver = await Driver.open(options, link._sink, answers=True, on_error=link._failed)
        link.driver = driver
        # the editor's name for it, kept when `/clear` starts a new conversation under it
        link.session_id = driver.session.session_id
        link._mode = driver.session.permission_mode
        for warning in driver.session.warnings:  # what of the settings could not be used
            log.warning("%s", warning)
        # its window known before the first run says it (a loaded session's usage can show);
        # announcing the session here instead would skip its SessionStart hooks
        link.translator.take(driver.session.setup.started)
        link._task = asyncio.create_task(driver.run())
        return link

    @property
    def session(self) -> Session:
        """The stayer session this link drives."""
        return self._driver.session

    @property
    def _running(self) -> asyncio.Task[None]:
        assert self._task is not None, "a link is used only once open"
        return self._task

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
        waiting = self._finished = asyncio.get_running_loop().create_future()
        self._cancelled = False
        try:
            # the last run's tidying done first: this prompt starts a run of its own
            await self._until(asyncio.ensure_future(self._driver.settled()))
            if not (self._stopped or self._running.done()):
                command = session_command(prompt)
                if command is not None:  # `/clear`, `/compact`: the driver's, not the model's
                    return await self._command(command, waiting)
                self._driver.submit(prompt)
                # its `Finished`, else its run's end or the driver's: nothing that cannot end
                await self._until(waiting, asyncio.ensure_future(self._driver.settled()))
        except StayerError as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        finally:
            self._finished = None
        if waiting.done():
            return self._response(waiting.result())
        if self._stopped:  # cancelled before its run began
            return self._response(None)
        running = self._running
        failure = running.exception() if running.done() and not running.cancelled() else None
        raise RequestError.internal_error(
            {
                "details": f"the session stopped: {failure!r}"
                if failure
                else "the run ended without finishing; send the prompt again"
            }
        )

    async def _command(
        self, command: SessionCommand, waiting: asyncio.Future[Any]
    ) -> PromptResponse:
        """Carry out `/clear` or `/compact` (no run is going): it ends the prompt, `end_turn`
        once done, an error saying why it could not be (nothing to compact yet, say)."""
        errors = len(self._driver.errors)
        await self._driver.carry_out(command)
        await self._until(asyncio.ensure_future(self._driver.settled()))
        if waiting.done() and not waiting.cancelled():
            waiting.exception()  # a failure's line, read below from the driver's errors
        if self._stopped:
            return self._response(None)
        failed = self._driver.errors[errors:]
        if failed:
            raise RequestError.invalid_params({"details": failed[0]})
        return PromptResponse(stop_reason="end_turn")

    def announce_commands(self) -> None:
        """Tell the editor the commands this session takes (its "/" menu), after the reply
        opening the session: a task of its own starts only once the request's task yields,
        its reply queued by then (an update naming a session the editor does not know yet
        may be dropped)."""
        task = asyncio.create_task(self._send(commands_update(self.session)))
        self._telling.add(task)  # kept until sent (a cancelled prompt leaves it be)
        task.add_done_callback(self._telling.discard)

    @property
    def _stopped(self) -> bool:
        """Whether the editor cancelled the prompt going now."""
        return self._cancelled

    async def _until(self, *ends: asyncio.Future[Any]) -> None:
        """Wait for the first of `ends`, or the driver's own end (a fault of ours)."""
        try:
            await asyncio.wait({*ends, self._running}, return_when="FIRST_COMPLETED")
        finally:
            for end in ends:
                if isinstance(end, asyncio.Task):  # a wait of ours, not the prompt's future
                    end.cancel()

    def cancel(self) -> None:
        """Stop the running run now (`session/cancel`); its prompt ends `cancelled`."""
        if self._finished is None:
            return
        self._cancelled = True
        self._driver.interrupt("the editor cancelled the prompt")
        for asking in self._asking:
            asking.cancel()

    def set_mode(self, mode: str) -> None:
        """Switch the permission mode (the editor asked: it needs no update saying so)."""
        self._driver.session.set_permission_mode(mode)
        self._mode = self._driver.session.permission_mode

    async def close(self) -> None:
        """Stop what runs and close the session (its transcript stays valid)."""
        if self.driver is None or self._task is None:
            return
        self.cancel()
        self.driver.interrupt("the editor closed the session")  # a prompt's handler may be gone
        self.driver.send(Close())
        with contextlib.suppress(Exception):
            await self._task

    def _response(self, finished: Finished | None) -> PromptResponse:
        """The prompt's answer: its run's end, or `cancelled` (`None`: it never ran)."""
        if finished is None or self._cancelled:
            reason: StopReason | None = "cancelled"
        else:
            reason = stop_reason(finished.terminal)
        if reason is None:
            assert finished is not None
            raise RequestError.internal_error({"details": finished.message})
        usage = Usage() if finished is None else finished.usage
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
                        request.tool_use_id, request.name, request.input, "pending", request.agent
                    )
                )
            decision = await ask(self._client, self._driver.session, request, self.translator)
        except Exception as error:  # an error reply, a broken answer, the editor gone
            log.debug("permission question failed: %r", error)
        finally:
            self._driver.send(Answer(request.tool_use_id, decision))

    def _failed(self, line: str) -> None:
        """A prompt the driver could not run (the only operation an ACP session's driver
        fails at: a command's refused `!` line, say): the waiting prompt ends with it as its
        error, since no `Finished` will come."""
        log.warning("%s", line)
        if self._finished is not None and not self._finished.done():
            self._finished.set_exception(RequestError.invalid_params({"details": line}))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)
