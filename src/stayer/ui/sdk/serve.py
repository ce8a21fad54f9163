"""The session claude-agent-sdk drives: `stayer --input-format stream-json --output-format
stream-json`, a thin driver of `stayer.driver.Driver` (protocols.md §1.3-1.9).

Standard input is read line by line (`stdin_lines`) and never blocks the event loop:

- control frames go to the `ControlChannel`; its `initialize` handler opens the session (the
  options the command line gave, with every wiring of `wiring.WIRINGS` applied) and answers
  with what the SDK reads (`initialize.initialize_reply`); the other requests are answered by
  `requests.HANDLERS` once the session is open;
- user messages are taken in order, each in a run of its own, and each gets exactly one
  `result`; `/clear` and `/compact [instructions]` are carried out by the driver
  (`session_commands`), each with its one `result` too. One sent while a run goes waits
  for that run to end. Claude Code may fold messages that wait into one turn (its result
  then names several `user_message_uuids`); stayer does not, so a caller that counts results
  (`ClaudeSDKClient.receive_response` stops at each one) stays in step with what it sent;
- a line stayer cannot use is one line on standard error; a malformed user message also gets
  an error `result` in its place, and anything else a `system` `input_error` frame; the
  session goes on.

The session opens with `initialize`, or with the first user message when none came (a caller
that skips the handshake). The `system`/`init` line comes with the first run, before its
messages (the session announces itself as its first run starts, after its SessionStart
hooks). End of input is not an abort: the run going and those waiting finish, then the
session ends, and the exit status is 1 if the last `result` was an error, else 0. A stop
signal (the SDK's SIGTERM) or a reader of standard output gone interrupts the run going, and
the messages still waiting are dropped.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Mapping
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from stayer.driver import Close, Driver
from stayer.errors import ConfigError, StayerError
from stayer.session.options import QueryOptions
from stayer.ui.closed_output import watch_reader
from stayer.ui.headless import READER_GONE, interrupt_aborts
from stayer.ui.session_commands import session_command

from .control import ControlChannel, Handler
from .frames import BadInput, UserInput, read_frame
from .initialize import initialize_reply
from .output import SdkOutput
from .prompt_tool import prompt_for
from .requests import HANDLERS, serve_requests
from .session_commands import carry_out
from .stdin_lines import StdinLines, TooLong
from .wiring import wired

INPUT_ENDED = "standard input ended"


class SdkSettings(Struct, frozen=True):
    """What the command line asks of the session's output."""

    include_partial: bool = False
    include_hooks: bool = False
    replay_user_messages: bool = False
    api_key_source: str = "none"
    permission_prompt: str | None = None
    """`--permission-prompt-tool`: who answers what the rules would ask a person, `stdio` (the
    SDK's `can_use_tool` callback) or an MCP tool (`prompt_tool`); None: nobody (denied)."""


async def serve(options: QueryOptions, settings: SdkSettings) -> int:
    """Run the SDK's session over standard input and output; returns the exit status."""
    return await SdkSession(options, settings).serve()


class SdkSession:
    """One SDK session over this process's standard streams; see the module."""

    def __init__(self, options: QueryOptions, settings: SdkSettings) -> None:
        self.options = options
        self.settings = settings
        self.output = SdkOutput(
            include_partial=settings.include_partial,
            include_hooks=settings.include_hooks,
            api_key_source=settings.api_key_source,
            on_gone=lambda: self.stop(READER_GONE),
        )
        self.channel = ControlChannel(self.output.frame)
        self.channel.handle("initialize", self._initialize)
        for subtype in HANDLERS:  # until the session is open (`serve_requests` replaces them)
            self.channel.handle(subtype, self._once_open(subtype))
        self._messages: asyncio.Queue[UserInput | BadInput | None] = asyncio.Queue()
        self._opening: asyncio.Task[tuple[Driver, dict[str, Any]]] | None = None
        self._driving: asyncio.Task[None] | None = None
        self._reading: asyncio.Task[None] | None = None
        self._stopped = False
        self._open_failed = False
        self._initialized: asyncio.Event | None = None
        """Set once `initialize` has its answer (it is written as its handler returns)."""

    async def serve(self) -> int:
        """Read standard input until it ends, run every message, end the session; returns
        the exit status."""
        out = self.output.out
        with interrupt_aborts(self.stop) as caught, watch_reader(out, self.output.reader_gone):
            self._reading = asyncio.create_task(self._read(StdinLines()))
            try:
                await self._feed()
            finally:
                self._reading.cancel()
                self.channel.close(INPUT_ENDED)
                await self._close()
        if self.output.gone:
            return self.output.status
        if caught.signum is not None:
            return 128 + caught.signum
        return 1 if self.output.last_error or self._open_failed else 0

    def stop(self, reason: str) -> None:
        """Stop now (a stop signal, or nobody reads the output): the run going is interrupted
        and the messages waiting are dropped."""
        self._stopped = True
        if self._reading is not None:
            self._reading.cancel()
        self._messages.put_nowait(None)
        if (driver := self._opened_driver()) is not None:
            driver.interrupt(reason)

    def _opened_driver(self) -> Driver | None:
        """The session's driver once it opened; None while it opens, or when it failed to."""
        opening = self._opening
        if opening is None or not opening.done() or opening.cancelled():
            return None
        if opening.exception() is not None:
            return None
        return opening.result()[0]

    async def _read(self, lines: StdinLines) -> None:
        try:
            while (line := await lines.next()) is not None:
                try:
                    self._take(line)
                except Exception as error:  # one line's fault never ends the reading
                    _say(f"an input line could not be taken ({error!r}); it was skipped")
        finally:  # ended, or stopped: either way the end of input is seen
            self.channel.close(INPUT_ENDED)  # nobody is left to answer stayer's own requests
            self._messages.put_nowait(None)

    def _take(self, line: bytes | TooLong) -> None:
        if isinstance(line, TooLong) and (request_id := line.answered()) is not None:
            error = {"subtype": "error", "request_id": request_id, "error": line.error}
            self.channel.dispatch({"type": "control_response", "response": error})
        frame = read_frame(line) if isinstance(line, bytes) else line.bad_input()
        if isinstance(frame, UserInput):
            self._messages.put_nowait(frame)
        elif isinstance(frame, BadInput):
            self._bad_input(frame)
        elif frame is not None:
            self.channel.dispatch(frame)

    def _bad_input(self, bad: BadInput) -> None:
        print(f"stayer: {bad.error}", file=sys.stderr, flush=True)
        if bad.user:  # a user message all the same: its error result comes in its turn
            self._messages.put_nowait(bad)
            return
        self.output.frame(
            {
                "type": "system",
                "subtype": "input_error",
                "error": bad.error,
                "session_id": self.output.writer.session_id,
                "uuid": str(uuid.uuid4()),
            }
        )

    async def _feed(self) -> None:
        """Run the user messages one by one, in the order they came, until input ends."""
        while not self._stopped and (message := await self._messages.get()) is not None:
            if isinstance(message, BadInput):
                self.output.error_result(message.error)
                continue
            try:
                driver, _ = await self._open(None)
            except StayerError as error:
                self.output.error_result(str(error))
                continue
            await self._run(driver, message)

    async def _run(self, driver: Driver, message: UserInput) -> None:
        """One message in a run of its own, and its one `result`."""
        await driver.settled()
        if self._stopped:
            return
        if self.settings.replay_user_messages:
            self.output.replay(message)
        command = session_command(message.prompt)
        if command is not None:  # `/clear`, `/compact`: the driver's, with one result
            await carry_out(driver, command, self.output)
            return
        errors = len(driver.errors)
        self.output.take_finished()
        try:
            driver.submit(message.prompt)
        except StayerError as error:
            self.output.error_result(str(error))
            return
        await driver.settled()
        if self.output.take_finished() is None:  # it could not be sent (a command refused)
            failed = driver.errors[errors:]
            self.output.error_result(failed[0] if failed else self._no_run())

    def _no_run(self) -> str:
        """Why a message sent got no run and no error line: the session stopped."""
        driving = self._driving
        if driving is None or not driving.done():
            return "the message got no run"
        if driving.cancelled():
            return "the message got no run: the session was stopped"
        error = driving.exception()
        if error is None:
            return "the message got no run: the session has ended"
        return f"the message got no run: the session failed ({_reason(error)})"

    async def _initialize(self, request: Any) -> dict[str, Any]:
        if self._opening is not None:
            raise ConfigError("the session is already initialized; send initialize once")
        self._initialized = asyncio.Event()
        try:
            driver, fields = await self._open(request)
            session, source = driver.session, self.settings.api_key_source
            return initialize_reply(session, fields, api_key_source=source)
        finally:
            self._initialized.set()

    def _once_open(self, subtype: str) -> Handler:
        """A request about the session that came before it was open: answered once it is,
        refused when nothing is opening it yet."""

        async def handle(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
            if self._opening is None:
                raise ConfigError(f"{subtype} needs a session: send initialize first")
            driver, _ = await self._open(None)
            return await HANDLERS[subtype](driver, self.channel)(request)

        return handle

    async def _open(self, request: Any) -> tuple[Driver, dict[str, Any]]:
        """The session's driver, opened once: by `initialize`, or by the first message."""
        if self._opening is None:
            self._opening = asyncio.create_task(self._opened(request or {}))
        try:
            return await asyncio.shield(self._opening)
        except StayerError as error:
            if not self._open_failed:  # said once; each message owed a result still gets it
                _say(str(error))
            self._open_failed = True
            raise

    async def _opened(self, request: Any) -> tuple[Driver, dict[str, Any]]:
        try:
            return await self._opened_as_asked(request)
        except StayerError:
            raise
        except Exception as error:  # a disk full, say: said as stayer's own errors are
            raise StayerError(f"the session could not open: {_reason(error)}") from error

    async def _opened_as_asked(self, request: Any) -> tuple[Driver, dict[str, Any]]:
        options, fields = wired(self.options, request, self.channel)
        name = self.settings.permission_prompt
        prompt = None if name is None else prompt_for(name, self.channel)
        if prompt is not None:
            options = replace(options, can_use_tool=prompt)
        driver = await Driver.open(options, self.output, on_error=_say)
        if prompt is not None:
            prompt.bind(driver)
        self.output.writer.session_id = driver.session.session_id
        for warning in driver.session.warnings:
            _say(warning)
        serve_requests(driver, self.channel)
        self._driving = asyncio.create_task(driver.run())
        return driver, fields

    async def _close(self) -> None:
        """End the session once its runs are done (its SessionEnd hooks' lines go out), and
        stop what still answers the SDK. A session still opening when input ended finishes
        opening first, so `initialize` gets its answer; one stopped meanwhile does not."""
        if self._opening is not None and not self._opening.done():
            if self._stopped:
                self._opening.cancel()
            await asyncio.gather(self._opening, return_exceptions=True)
        if self._initialized is not None:
            await self._initialized.wait()  # its answer is out before the channel closes
        if self._driving is not None and (driver := self._opened_driver()) is not None:
            if self._stopped:
                driver.interrupt("stayer was stopped")
            driver.send(Close())
            [ended] = await asyncio.gather(self._driving, return_exceptions=True)
            if isinstance(ended, Exception):  # said once, not as a traceback
                _say(f"the session failed: {_reason(ended)}")
        await self.channel.aclose()


def _say(line: str) -> None:
    print(f"stayer: {line}", file=sys.stderr, flush=True)


def _reason(error: BaseException) -> str:
    return str(error) if isinstance(error, StayerError) else f"{type(error).__name__}: {error}"
