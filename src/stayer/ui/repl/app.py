"""The REPL: a person at a terminal, a Session driven through the driver, inline.

`stayer` on a terminal with no `-p` opens this. It is a thin front end over `stayer.driver`: it
submits what is typed, hands every event to the `View`, answers permission questions with a
dialog, and owns nothing a Session owns. prompt_toolkit reads the keys and draws the live tail
(the streaming block, running tools, queued messages, the input box or a dialog, the footer)
in place; rich renders what the view gives it; what is finished goes into the terminal's own
scrollback once (`terminal.commit`). No alternate screen: the conversation stays in the
terminal's history after stayer exits.

Keys are in `keys`; what each slash command does is in `commands`, acting through the surface
in `surface`.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import signal
import sys
import time
from collections.abc import Coroutine, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from msgspec.structs import replace
from prompt_toolkit.application import in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import create_input
from prompt_toolkit.output import ColorDepth

from stayer._version import __version__
from stayer.driver import (
    Answer,
    Close,
    Compact,
    Driver,
    Operation,
    SetMode,
    Submit,
)
from stayer.errors import StayerError
from stayer.events import (
    Compacted,
    Event,
    Finished,
    McpServerStatus,
    MessageCompleted,
    PermissionRequested,
    SessionStarted,
)
from stayer.exec.attached import editor_command, run_attached
from stayer.loop.abort import AbortSignal
from stayer.messages import Usage
from stayer.permissions import Decision
from stayer.providers.prices import listed_cost
from stayer.session.options import QueryOptions
from stayer.session.session import Prompt, Session
from stayer.ui.wording import question_in

from .commands import Commands
from .commands_custom import CatalogCommands, catalog_of
from .commands_mcp import ask_approval
from .completion import FileIndex, ReplCompleter
from .dialogs import Chosen, Dialog, Option, decision_for, keeper, permission_dialog
from .entry import entered
from .footer import Footer
from .input import ProjectHistory, history_file
from .keys import key_bindings
from .layout import build_layout, build_style
from .mcp_watch import McpWatch
from .paste import Pastes
from .questions import Questions
from .shell import bang_prompt, run_in_session, shown
from .surface import Totals
from .terminal import InlineApplication, commit, framed_output, printable, terminal_reflows
from .tracking import Tracker
from .view import LIVE_ROWS, View

MODE_CYCLE = ("default", "acceptEdits", "plan")
"""What Shift+Tab steps through, as Claude Code's does (a session started in another mode has
it in the cycle too, after these, and bypassPermissions is there when the session may switch
to it: `--allow-dangerously-skip-permissions`)."""
BYPASS = "bypassPermissions"

WARM_MODULES = ("rich.markdown", "rich.syntax")
"""Loaded in a thread as the REPL opens (see `ReplApp._warm`)."""

TICK_S = 0.1
"""How often the live tail is drawn again while something in it moves (spinners, elapsed
time); nothing is drawn while the REPL waits for the person."""

DOUBLE_PRESS_S = 1.0


TAIL_CHROME_ROWS = 10
"""Rows of the tail that are not the view's live text: the rules, the input box, the footer,
a queued line or two; the live text gets what is left of the screen, up to `LIVE_ROWS`."""
"""Ctrl+C twice within this on an empty prompt exits."""


def wants_color(env: Mapping[str, str]) -> bool:
    """Colour unless the person said no (`NO_COLOR`, any value) or the terminal cannot."""
    return "NO_COLOR" not in env and env.get("TERM", "") != "dumb"


class ReplApp:
    """One interactive session on this terminal (implements `surface.Repl`)."""

    def __init__(self, options: QueryOptions, *, prompt: str | None, env: Mapping[str, str]):
        self._options = options
        self._first_prompt = prompt
        self._env = dict(env)
        self._cwd = Path(options.cwd or os.getcwd()).resolve()
        self.output = framed_output(sys.stdout, env)
        self._colour = wants_color(env)
        rows = self.output.get_size().rows
        self.view = View(
            width=self._width,
            color=wants_color(env),
            live_rows=min(LIVE_ROWS, max(rows - TAIL_CHROME_ROWS, 6)),
            truecolor=env.get("COLORTERM", "") in ("truecolor", "24bit"),
            cwd=str(self._cwd),
        )
        self.commands = Commands()
        self.mcp = McpWatch(
            self.commands, say=self.say, warn=self._warn, changed=self._commands_changed
        )
        self.pastes = Pastes()
        self._catalog = CatalogCommands()
        self._tracker = Tracker(options.permission_mode or "default")
        self._driver: Driver | None = None
        self._driver_task: asyncio.Task[None] | None = None
        self.questions = Questions()
        self._queued: list[tuple[Prompt, str]] = []
        """Prompts typed while a run went on and not yet taken (what was sent, what was typed)."""
        self.footer = Footer(self._redraw)
        self._last_ctrl_c = 0.0
        self._ticker: asyncio.Task[None] | None = None
        self._bang_abort: AbortSignal | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._set_aside = ""
        """A message half-typed when a question came, put back once it is answered."""
        self._leaving_because = "the person left stayer"
        self._tasks: set[asyncio.Task[object]] = set()
        self._command: asyncio.Task[object] | None = None
        """The slash command entered last, while it is carried out: what is entered after it
        waits for it, in the order entered."""
        self._files = FileIndex(self._cwd, self._env, on_update=self._paths_listed)
        self.buffer = Buffer(
            multiline=True,
            history=ProjectHistory(history_file(self._cwd, self._env), expand=self.pastes.expand),
            completer=ReplCompleter(self._command_names, self._files),
            complete_while_typing=True,
        )
        self.note = Buffer(multiline=False)
        self.buffer.on_text_changed += lambda _: self.questions.typed()
        self.app = InlineApplication(
            layout=build_layout(self),
            key_bindings=key_bindings(self),
            style=build_style(),
            full_screen=False,
            mouse_support=False,
            erase_when_done=True,
            color_depth=None if wants_color(env) else ColorDepth.DEPTH_1_BIT,
            output=self.output,
            input=create_input(sys.stdin),
        )
        self.app.reflows = terminal_reflows(env)
        # a lone Escape is an interrupt, not the start of Alt+Enter or of a key's sequence:
        # waited for this long (a terminal sends a sequence's bytes together)
        self.app.ttimeoutlen = 0.015
        self.app.timeoutlen = 0.015
        self.live_text = ""
        """The view's live text, taken once per frame (the layout reads it twice)."""
        self.app.before_render += self._refresh_live
        self.app.after_render += lambda _: self.questions.drawn()
        # a key that a question did not take (it was not ready) counts as typing: the next
        # may answer only 0.4 s later (Enter sending a message, then Up Up Enter, is history)
        self._key_was_ready = False
        self.app.key_processor.before_key_press += self._before_key
        self.app.key_processor.after_key_press += self._after_key

    # --- the surface commands act through (surface.Repl) ---

    @property
    def session(self) -> Session:
        return self._driving().session

    @property
    def totals(self) -> Totals:
        return self._tracker.totals

    @property
    def running(self) -> bool:
        driver = self._driver
        busy = driver is not None and driver.busy
        return self._tracker.running or busy or self._bang_abort is not None

    async def settle(self) -> None:
        driver = self._driver
        if driver is not None and not self._tracker.running and self._bang_abort is None:
            await driver.settled()

    def send(self, operation: Operation) -> None:
        self._driving().send(operation)
        if isinstance(operation, Compact):
            self._running_changed()  # Escape stops it; the footer says so

    def say(self, text: str) -> None:
        self.show(self.view.notice(text))

    async def pick(self, title: str, choices: Sequence[str]) -> int | None:
        options = [Option(choice) for choice in choices]
        dialog = Dialog(title, options, footnote="Esc to cancel", dismiss_is_last=False)
        return (await self._open(dialog)).index

    async def edit(self, path: Path) -> None:
        argv = editor_command(self._env, path)
        async with in_terminal():
            status, problem = await run_attached(argv, cwd=self._cwd, env=self._env)
        if problem:
            self.say(problem)
        elif status:
            self.say(f"the editor exited with status {status}")

    async def resume(self, session_id: str) -> None:
        await self._stop_driver()
        options = replace(self._options, resume=session_id, continue_session=False)
        await self._start_driver(options)

    def exit(self) -> None:
        future = self.app.future
        if self.app.is_running and future is not None and not future.done():
            self.app.exit()

    # --- running ---

    async def run(self) -> int:
        """Open the session, take input until the person leaves, then end the session."""
        self._loop = asyncio.get_running_loop()
        self.show(self.view.notice(f"✻ stayer {__version__} · /help for commands · {self._cwd}"))
        await self._start_driver(self._options)
        loop = asyncio.get_running_loop()
        ended_by: list[int] = []
        for number in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(number, self._ended_by, number, ended_by)
        try:
            await self.app.run_async(pre_run=self._begin)
        except EOFError:  # the terminal's input closed (it hung up): leave as on Ctrl+D
            pass
        finally:
            for number in (signal.SIGTERM, signal.SIGHUP):
                loop.remove_signal_handler(number)
            self.mcp.close()
            await self._stop_driver()
            for task in list(self._tasks):
                task.cancel()
        return 128 + ended_by[0] if ended_by else 0

    def _ended_by(self, number: int, ended_by: list[int]) -> None:
        """SIGTERM or SIGHUP: leave as on Ctrl+D (the terminal restored, the session ended),
        with the exit status a signal gives."""
        ended_by.append(number)
        self._leaving_because = f"stayer was stopped ({signal.Signals(number).name})"
        self.exit()

    async def _warm(self) -> None:
        """Load now, off the event loop, what the first answer would otherwise load on it:
        markdown and syntax rendering, and the price table (a few milliseconds, but in the
        middle of the first streamed answer otherwise)."""
        for module in WARM_MODULES:
            await asyncio.to_thread(importlib.import_module, module)
        await asyncio.to_thread(listed_cost, self.model, "anthropic", Usage(1, 1))  # the table

    def _begin(self) -> None:
        """The prompt given on the command line goes once the tail is on screen (a commit
        before the first frame would leave prompt_toolkit unsure where the tail starts)."""
        self._spawn(self._warm())
        self._spawn(ask_approval(self))  # a project's MCP servers waiting to be approved
        self._files.refresh()  # listed by the time someone types `@`
        if self._first_prompt:
            self.app.after_render += self._first_frame

    def _first_frame(self, _: object) -> None:
        self.app.after_render -= self._first_frame
        if self._first_prompt:
            prompt, self._first_prompt = self._first_prompt, None
            self.app.create_background_task(self._take_later(prompt))

    async def _take_later(self, prompt: str) -> None:
        self.take(prompt)

    async def _start_driver(self, options: QueryOptions) -> None:
        driver = await Driver.open(options, self._sink, answers=True, on_error=self._failed)
        self._driver = driver
        session = driver.session
        session.start_mcp()  # the servers connect while the person types
        for warning in session.warnings:
            self.show(self.view.notice(warning, level="warning"))
        if session.history:
            self.show(self.view.replay(session.history))
        started = session.setup.started
        self._tracker.totals.context_window = started.context_window
        self._tracker.mode = session.permission_mode
        self.mcp.attach(session)
        for problem in self._catalog.offer(self.commands, catalog_of(session)):
            self._warn(problem)
        refused = self.footer.attach(session, self._cwd)
        if refused is not None:
            self.show(self.view.notice(refused, level="warning"))
        self._driver_task = asyncio.create_task(driver.run())
        self._status_changed()

    async def _stop_driver(self) -> None:
        driver, task = self._driver, self._driver_task
        if driver is None or task is None:
            return
        if self.running:
            driver.interrupt(self._leaving_because)
        self.questions.cancel_all()
        driver.send(Close())
        await self.footer.detach()
        try:
            await task
        except StayerError as error:
            self.show(self.view.notice(str(error), level="error"))
        self._driver = self._driver_task = None
        self._set_running(False)

    def _driving(self) -> Driver:
        if self._driver is None:
            raise StayerError("no session is open")
        return self._driver

    # --- input ---

    def take(self, typed: str) -> None:
        """What the person entered: a slash command, a `!` command, or a prompt."""
        text = self.pastes.expand(typed)
        self.pastes.clear()
        command = self._command
        if command is not None and not command.done():
            # what follows a command waits for it: a prompt typed right after /clear would
            # otherwise reach the old conversation ahead of the clear
            self._command = self._spawn(self._after(command, text, typed))
            return
        self._enter(text, typed)

    async def _after(self, command: asyncio.Task[object], text: str, typed: str) -> None:
        await asyncio.wait({command})
        entered_command = self._enter(text, typed)
        if entered_command is not None:  # what was entered after this waits for it too
            await asyncio.wait({entered_command})

    def _enter(self, text: str, typed: str) -> asyncio.Task[object] | None:
        """Carry out what was entered; a slash command's task, which is also `_command`
        unless a later entry already waits on this one."""
        match entered(text):
            case "command":
                self.show(self.view.user_prompt(typed))
                task = self._spawn(self.commands.run(self, text.strip()))
                if self._command is None or self._command.done():
                    self._command = task
                return task
            case "shell":
                self._spawn(self._bang(text.strip()[1:].strip()))
            case "prompt":
                self._prompt(text, typed)
        return None

    def _prompt(self, text: str, typed: str, *, echo: bool = True) -> None:
        driver = self._driving()
        if self.running:
            try:
                driver.submit(text)  # at once: whether it waits is known before any event
            except StayerError as error:
                self._failed(str(error))
                return
            if any(text is waiting for waiting in driver.waiting):
                self._queued.append((text, typed))
                self.app.invalidate()
                return
            if echo:  # the driver was idle (a `!command` ran): the prompt began a run
                self.show(self.view.user_prompt(typed))
            self._set_running(True)
            return
        if echo:
            self.show(self.view.user_prompt(typed))
        self._set_running(True)
        self.send(Submit(text))

    async def _bang(self, command: str) -> None:
        """`!command`: run it here, show what it printed, and give both to the model (which
        answers it, as Claude Code's does since 2.1.186)."""
        self.show(self.view.user_prompt(f"!{command}"))
        driver, abort = self._driving(), AbortSignal()
        self._bang_abort = abort
        self._running_changed()
        try:
            result = await run_in_session(command, driver.session, cwd=self._cwd, abort=abort)
        finally:
            self._bang_abort = None
            self._running_changed()
        self.show(self.view.notice(shown(result)))
        if self._driver is driver and not result.interrupted:
            self._prompt(bang_prompt(result), f"!{command}", echo=False)

    def interrupt(self) -> None:
        """Escape or Ctrl+C during a run: stop it now; what was queued for it comes back to
        the input box."""
        if self._bang_abort is not None:
            self._bang_abort.abort("interrupted by the user")
        driver = self._driver
        if driver is None or not (self._tracker.running or driver.busy):
            return
        driver.interrupt()
        self.questions.cancel_all()
        back = [typed for _, typed in self._queued]
        self._queued.clear()
        driver.unsent.clear()
        if back:
            self.buffer.text = "\n".join([*back, self.buffer.text]).strip("\n")
            self.buffer.cursor_position = len(self.buffer.text)
        self.app.invalidate()

    def ctrl_c_idle(self) -> None:
        """Ctrl+C with no run going: clear the input, or exit when pressed twice on nothing."""
        if self.buffer.text:
            self.buffer.reset()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= DOUBLE_PRESS_S:
            self.exit()
            return
        self._last_ctrl_c = now
        self.footer.hint("Press Ctrl-C again to exit")

    def cycle_mode(self) -> None:
        """Shift+Tab: the next permission mode, for the running run's next calls too."""
        cycle = list(MODE_CYCLE)
        start = self._options.permission_mode
        if start and start not in cycle:
            cycle.append(start)
        driver = self._driver
        if BYPASS not in cycle and driver is not None and driver.session.bypass_allowed:
            cycle.append(BYPASS)  # the session's one rule for the switch, as every front end's
        now = self.mode
        mode = cycle[(cycle.index(now) + 1) % len(cycle)] if now in cycle else "default"
        self._tracker.mode = mode
        self.send(SetMode(mode))
        self._status_changed()
        self.app.invalidate()

    def show_question(self) -> None:
        dialog = self.dialog
        if dialog is not None:
            self.show([dialog.heading.rstrip("\n") + "\n"])

    def expand_last(self) -> None:
        self.show(self.view.expand_last())

    # --- events ---

    async def _sink(self, event: Event) -> None:
        self._track(event)
        if isinstance(event, McpServerStatus) and self.mcp.told(event):
            return  # said as it happened (`mcp_watch`)
        request = question_in(event)  # a subagent's too: answered by its call's id
        if request is not None:
            self._spawn(self._question(request))
        ended = self.view.flush() if isinstance(event, Finished) else []
        self.show([*ended, *self.view.feed(event)])

    def _track(self, event: Event) -> None:
        was_running = self._tracker.running
        self._tracker.take(event)
        if isinstance(event, SessionStarted | MessageCompleted | Compacted | Finished):
            self._status_changed()
        if not was_running and self._queued and not isinstance(event, Finished):
            self._tracker.running = True  # a run of its own for what came too late
        self._echo_taken()
        if self._tracker.running != was_running:
            self._running_changed()

    def _echo_taken(self) -> None:
        """Queued prompts a run has taken now go into the conversation, where the model read
        them (no event says when one joins a tool round's results: the driver's waiting list
        does)."""
        if not self._queued:
            return
        waiting = self._driver.waiting if self._driver is not None else ()
        taken = [pair for pair in self._queued if not any(pair[0] is q for q in waiting)]
        self._queued = [pair for pair in self._queued if all(pair is not t for t in taken)]
        for _, typed in taken:
            self.show(self.view.user_prompt(typed))

    # --- permission questions ---

    async def _question(self, request: PermissionRequested) -> None:
        """Ask, and answer the driver; a question that fails to be asked or answered is a
        denial, never a call left waiting."""
        decision: Decision | None = Decision("deny", "the question could not be put", by="user")
        try:
            shown = self.view.describe_call(request.name, request.input)
            dialog = permission_dialog(request, shown, self._cwd)
            chosen = await self._open(dialog)
            decision = decision_for(chosen, dialog, request, keeper(self.session, self.say))
        finally:
            if decision is not None and self._driver is not None:
                self._driver.send(Answer(request.tool_use_id, decision))

    async def _open(self, dialog: Dialog) -> Chosen:
        """Ask `dialog`. A message half-typed in the input box is set aside meanwhile and put
        back after the last question: a question takes an answer only while the box is empty."""
        if not self.questions and self.buffer.text:
            self._set_aside = self.buffer.text
            self.buffer.reset()
        asking = asyncio.ensure_future(self.questions.ask(dialog))
        self._running_changed()  # the ticker draws it and arms it
        try:
            return await asking
        finally:
            self.note.reset()
            if not self.questions:
                self.focus_input()
                kept, self._set_aside = self._set_aside, ""
                self._put_back(kept)
            self.app.invalidate()

    def _before_key(self, _: object) -> None:
        self._key_was_ready = self.dialog_ready

    def _after_key(self, _: object) -> None:
        if self.dialog is not None and not self._key_was_ready:
            self.questions.typed()

    def _put_back(self, kept: str) -> None:
        if kept:
            typed = self.buffer.text
            self.buffer.text = f"{kept}\n{typed}" if typed else kept
            self.buffer.cursor_position = len(self.buffer.text)

    @property
    def dialog(self) -> Dialog | None:
        return self.questions.current

    def focus_input(self) -> None:
        with suppress(ValueError):
            self.app.layout.focus(self.buffer)

    def focus_note(self) -> None:
        with suppress(ValueError):
            self.app.layout.focus(self.note)
        self.app.invalidate()

    # --- drawing ---

    @property
    def dialog_ready(self) -> bool:
        """A question takes its answer: on screen long enough, no key for as long (see
        `questions`), and the input box empty (keys typed into it are a message)."""
        return self.questions.ready and not self.buffer.text

    @property
    def dialog_hint(self) -> str:
        """The line under the question's options: how to answer, once a key would."""
        dialog = self.dialog
        if dialog is None or dialog.noting:
            return ""
        if self.questions.ready and self.buffer.text:
            return "To answer, clear the input box (Ctrl+U) · Esc to say no"
        return dialog.footnote if self.dialog_ready else ""

    def _refresh_live(self, _: object) -> None:
        self.live_text = printable(self.view.live(), styled=self._colour)

    def show(self, chunks: Sequence[str]) -> None:
        """Finished output into the scrollback, once; the live tail redrawn under it."""
        text = "".join(chunks)
        if text:
            commit(self.app, self.output, text, styled=self._colour)
        elif self.app.is_running:
            self.app.invalidate()

    def _set_running(self, running: bool) -> None:
        if running != self._tracker.running:
            self._tracker.running = running
            self._running_changed()

    def _running_changed(self) -> None:
        if self._ticker is None:
            self._ticker = asyncio.create_task(self._tick())
        self.app.invalidate()

    async def _tick(self) -> None:
        """Draw the tail again while something in it moves; stops a few ticks after nothing
        does (an operation just sent may not have begun yet)."""
        still = 0
        try:
            while still < 3:
                await asyncio.sleep(TICK_S)
                self.app.invalidate()
                still = 0 if self.running or self.questions else still + 1
        finally:
            self._ticker = None

    def _width(self) -> int:
        return max(self.output.get_size().columns, 20)

    def _command_names(self) -> list[tuple[str, str, str]]:
        """What `/` completes: a custom command with its argument hint beside its name (what
        it takes is its file's to say; the built-ins' are in /help)."""
        return [
            (c.name, c.summary, c.argument_hint if c.origin else "")
            for c in self.commands.complete("")
        ]

    def _warn(self, line: str) -> None:
        self.show(self.view.notice(line, level="warning"))

    def _failed(self, line: str) -> None:
        self.show(self.view.notice(line, level="error"))

    def _spawn(self, work: Coroutine[Any, Any, object]) -> asyncio.Task[object]:
        task: asyncio.Task[object] = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._settled)
        return task

    def _settled(self, task: asyncio.Task[object]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            self._failed(str(error) if isinstance(error, StayerError) else repr(error))

    # --- what the footer and queue lines read ---

    @property
    def model(self) -> str:
        """The model answering now (a fallback's while it serves), else the session's."""
        if self._tracker.running and self._tracker.model:
            return self._tracker.model
        if self._driver is not None:
            return self._driver.session.setup.started.model
        return self._tracker.model

    @property
    def mode(self) -> str:
        """The session's permission mode now (an accepted plan changes it too)."""
        if self._driver is not None:
            return self._driver.session.permission_mode
        return self._tracker.mode

    def footer_text(self) -> StyleAndTextTuples:
        return self.footer.text(
            model=self.model,
            totals=self.totals,
            mode=self.mode,
            running=self.running,
            queued=len(self._queued),
            width=self._width(),
        )

    def _status_changed(self) -> None:
        if self._driver is not None:
            session = self._driver.session
            self.footer.changed(session, self._cwd, self.model, self.totals, self._width())

    def _paths_listed(self) -> None:
        """The project's paths are listed (in a thread): an `@path` being completed is
        completed again with them."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._complete_again)

    def _complete_again(self) -> None:
        if self.buffer.complete_state is None and "@" in self.buffer.document.text_before_cursor:
            self.buffer.start_completion(select_first=False)

    def _commands_changed(self) -> None:
        """A server's prompts came or went: a `/name` being completed is completed again."""
        text = self.buffer.document.text_before_cursor
        if text.startswith("/") and not any(char.isspace() for char in text):
            self.buffer.start_completion(select_first=False)

    def _redraw(self) -> None:
        """Draw the tail again soon (safe from another thread)."""
        self.app.invalidate()

    @property
    def queued_texts(self) -> list[str]:
        return [typed for _, typed in self._queued]


async def run_repl(options: QueryOptions, prompt: str | None) -> int:
    """The REPL until the person leaves; the exit status. On a terminal that cannot move its
    cursor (`TERM=dumb`) it is written as plain lines (`plain`)."""
    if os.environ.get("TERM", "") == "dumb":
        from .plain import PlainRepl

        return await PlainRepl(options, prompt=prompt, env=os.environ).run()
    return await ReplApp(options, prompt=prompt, env=os.environ).run()
