"""The REPL on a terminal that cannot move its cursor (`TERM=dumb`: an editor's shell buffer,
a serial console): the same session, commands and questions, written as plain lines.

Nothing is drawn again, so nothing is live: what the view finishes is written as it finishes,
no colour and no escape sequence ever. A question is its numbered options and a line to type
the number on. Ctrl+C stops a run; twice within a second at the prompt, or end of input,
leaves. Input is read from the terminal without a thread (the event loop watches it), so
leaving never waits for a line.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from stayer._version import __version__
from stayer.driver import Answer, Close, Driver, Operation, Submit
from stayer.errors import StayerError
from stayer.events import Event, Finished, McpServerStatus, PermissionRequested
from stayer.exec.attached import editor_command, run_attached
from stayer.loop.abort import AbortSignal
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from stayer.ui.wording import question_in

from .commands import Commands
from .commands_custom import CatalogCommands, catalog_of
from .commands_mcp import ask_approval
from .dialogs import Dialog, decision_for, keeper, permission_dialog
from .entry import entered
from .mcp_watch import McpWatch
from .shell import bang_prompt, run_in_session
from .surface import Totals
from .terminal import printable
from .tracking import Tracker
from .view import View

DOUBLE_PRESS_S = 1.0


class LineReader:
    """Lines typed on standard input, read as the event loop sees them arrive."""

    def __init__(self) -> None:
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._pending = b""
        self._fd = sys.stdin.fileno()
        asyncio.get_running_loop().add_reader(self._fd, self._readable)

    def _readable(self) -> None:
        try:
            chunk = os.read(self._fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            self.close()
            return
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            self._lines.put_nowait(line.decode("utf-8", errors="replace").rstrip("\r"))

    def drain(self) -> list[str]:
        """The lines typed and not read yet, taken."""
        lines: list[str] = []
        while not self._lines.empty():
            line = self._lines.get_nowait()
            if line is None:  # end of input stays for the next reader
                self._lines.put_nowait(None)
                break
            lines.append(line)
        return lines

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self._fd)
        self._lines.put_nowait(None)

    async def line(self) -> str | None:
        """The next line; None at end of input."""
        return await self._lines.get()


class PlainRepl:
    """The REPL in plain lines (implements `surface.Repl`)."""

    def __init__(self, options: QueryOptions, *, prompt: str | None, env: Mapping[str, str]):
        self._options = options
        self._first_prompt = prompt
        self._env = dict(env)
        self._cwd = Path(options.cwd or os.getcwd()).resolve()
        self.view = View(width=lambda: shutil.get_terminal_size().columns, color=False)
        self.commands = Commands()
        self.mcp = McpWatch(self.commands, say=self.say, warn=self.say)
        self._catalog = CatalogCommands()
        self._tracker = Tracker(options.permission_mode or "default")
        self._driver: Driver | None = None
        self._driver_task: asyncio.Task[None] | None = None
        self._reader: LineReader | None = None
        self._leaving = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._last_ctrl_c = 0.0

    @property
    def session(self) -> Session:
        if self._driver is None:
            raise StayerError("no session is open")
        return self._driver.session

    @property
    def totals(self) -> Totals:
        return self._tracker.totals

    @property
    def running(self) -> bool:
        return self._tracker.running

    async def settle(self) -> None:
        """Nothing to wait for: `running` here is what the person sees, and an operation sent
        while the driver tidies up waits its turn in the driver."""

    def send(self, operation: Operation) -> None:
        if self._driver is not None:
            if isinstance(operation, Submit):
                self._idle.clear()
            self._driver.send(operation)

    def say(self, text: str) -> None:
        self._write(self.view.notice(text))

    async def pick(self, title: str, choices: Sequence[str]) -> int | None:
        self._write([f"{title}\n", *(f"{n}. {c}\n" for n, c in enumerate(choices, start=1))])
        answer = await self._ask_line(f"Choose 1-{len(choices)} (Enter for none): ")
        if answer is None or not answer.strip().isdigit():
            return None
        index = int(answer.strip()) - 1
        return index if 0 <= index < len(choices) else None

    async def edit(self, path: Path) -> None:
        status, problem = await run_attached(
            editor_command(self._env, path), cwd=self._cwd, env=self._env
        )
        if problem or status:
            self.say(problem or f"the editor exited with status {status}")

    async def resume(self, session_id: str) -> None:
        await self._stop_driver()
        await self._start_driver(replace(self._options, resume=session_id, continue_session=False))

    def exit(self) -> None:
        self._leaving.set()

    async def run(self) -> int:
        self.say(f"stayer {__version__} · /help for commands · {self._cwd}")
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._ctrl_c)
        self._reader = LineReader()
        try:
            await self._start_driver(self._options)
            await ask_approval(self)  # a project's MCP servers waiting to be approved
            if self._first_prompt:
                await self._take(self._first_prompt)
            while not self._leaving.is_set():
                await self._wait_idle()
                line = await self._ask_line("> ")
                if line is None:
                    break
                if line.strip():
                    await self._take(line)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            self._reader.close()
            self.mcp.close()
            await self._stop_driver()
        return 0

    async def _take(self, text: str) -> None:
        match entered(text):
            case "command":
                await self.commands.run(self, text)
            case "shell":
                command = text.strip()[1:].strip()
                abort = AbortSignal()
                result = await run_in_session(command, self.session, cwd=self._cwd, abort=abort)
                self.send(Submit(bang_prompt(result)))
            case "prompt":
                self.send(Submit(text))

    async def _wait_idle(self) -> None:
        leaving = asyncio.ensure_future(self._leaving.wait())
        idle = asyncio.ensure_future(self._idle.wait())
        await asyncio.wait({leaving, idle}, return_when="FIRST_COMPLETED")
        for waiting in (leaving, idle):
            waiting.cancel()

    async def _ask_line(self, prompt: str) -> str | None:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        if self._reader is None:
            return None
        return await self._reader.line()

    def _ctrl_c(self) -> None:
        if self.running and self._driver is not None:
            self._driver.interrupt()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= DOUBLE_PRESS_S:
            self.exit()
            if self._reader is not None:
                self._reader.close()
            return
        self._last_ctrl_c = now
        self._write(["\nPress Ctrl-C again to exit\n"])

    async def _start_driver(self, options: QueryOptions) -> None:
        self._driver = await Driver.open(options, self._sink, answers=True, on_error=self.say)
        self._driver.session.start_mcp()  # the servers connect while the person types
        for warning in self._driver.session.warnings:
            self.say(warning)
        self.mcp.attach(self._driver.session)
        for problem in self._catalog.offer(self.commands, catalog_of(self._driver.session)):
            self.say(problem)
        if self._driver.session.history:
            self._write(self.view.replay(self._driver.session.history))
        self._driver_task = asyncio.create_task(self._driver.run())

    async def _stop_driver(self) -> None:
        if self._driver is None or self._driver_task is None:
            return
        if self.running:
            self._driver.interrupt("the session was closed")
        self._driver.send(Close())
        await self._driver_task
        self._driver = self._driver_task = None

    async def _sink(self, event: Event) -> None:
        self._tracker.take(event)
        if isinstance(event, McpServerStatus) and self.mcp.told(event):
            return  # said as it happened (`mcp_watch`)
        if isinstance(event, Finished):
            self._write(self.view.flush())
        self._write(self.view.feed(event))
        request = question_in(event)  # a subagent's is put as the session's own is
        if request is not None:
            await self._question(request)
        waiting = self._driver is not None and self._driver.session.queued
        if isinstance(event, Finished) and not self.running and not waiting:
            self._idle.set()

    async def _question(self, request: PermissionRequested) -> None:
        shown = self.view.describe_call(request.name, request.input)
        dialog = permission_dialog(request, shown, self._cwd)
        self._write([dialog.heading.rstrip("\n") + "\n"])
        self._write([f"{label}\n" for _, label in dialog.option_lines()])
        self._spawn(self._answer(request, dialog))

    async def _answer(self, request: PermissionRequested, dialog: Dialog) -> None:
        """The typed answer. Lines typed before the question was written are messages, not
        answers: they are sent after it (as queued messages are)."""
        early = self._reader.drain() if self._reader is not None else []
        answer = await self._ask_line(f"Answer 1-{len(dialog.options)}: ")
        number = answer.strip() if answer is not None else ""
        index = int(number) - 1 if number.isdigit() else len(dialog.options) - 1
        if not dialog.choose(min(max(index, 0), len(dialog.options) - 1)):
            note = await self._ask_line("What should the model do instead? ")
            dialog.give_note(note or "")
        chosen = await dialog.answer
        decision = decision_for(chosen, dialog, request, keeper(self.session, self.say))
        if decision is not None and self._driver is not None:
            self._driver.send(Answer(request.tool_use_id, decision))
        for line in early:
            if line.strip():
                await self._take(line)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        task.add_done_callback(lambda done: done.cancelled() or done.exception())

    def _write(self, chunks: Sequence[str]) -> None:
        text = printable("".join(chunks), styled=False)
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
