"""One driver for every front end: operations in, events out (Codex's submission/event seam).

A front end (headless `-p`, the REPL, stream-json input, ACP, a batch worker) does not drive a
`Session` itself: it opens a `Driver` with a *sink* (an async callable each event is handed to,
in order) and sends it *operations*: `Submit` a prompt, `Interrupt` the run, `SetMode`,
`SetModel`, `Clear`, `Compact`, `Answer` a permission question, `Close`. `run()` carries them
out until `Close` and returns; every event of every run, and the session's last ones (its
SessionEnd hooks), reach the sink before it does.

- One run at a time. A prompt submitted while one runs joins it at its next model call, as
  Claude Code's queued input does (`Session.queue`); one the run ends without taking starts
  the next run.
- `Clear` and `Compact` sent while a run goes are carried out after it, in the order sent;
  prompts sent after them wait for a run of their own. `Compact` summarises the conversation
  (`Session.compact`): its events reach the sink as a run's do, and a compaction that ends
  without a summary (stopped, the model gave none, nothing to compact) is one line in
  `errors`. Prompts sent while it goes run once it is done.
- One abort path: `Interrupt` (or `interrupt()`, safe from a signal handler through
  `call_soon_threadsafe`) stops the running run, which still ends with its `Finished`, even
  one that has not begun, or the running compaction, leaving the conversation as it was. The
  driver installs no signal handler: its owner wires signals to `interrupt`. Prompts queued
  for the interrupted run move to `unsent`, and compactions waiting for it are dropped (one
  line in `errors`); later ones run.
- Permission questions: with `answers=True`, a call the policy asks about is handed to the
  sink as the run's `PermissionRequested` event and waits for the `Answer` naming its
  tool_use_id; an `Interrupt` or `Close` denies what is still waiting, and after `Close`
  every question is denied (nobody is left to answer). Without `answers`, the session's own
  decider (the options' `can_use_tool`, or none: denied) answers.
- `Close` lets the running run and what is queued finish (end of input is not an abort), then
  runs the session's end and closes it. Send `Interrupt` first to stop at once.
- An operation that cannot be carried out (an empty prompt, an unknown mode or model) is one
  line in `errors` (and to `on_error`), and the driver goes on; a sink that raises ends it.
  A run a fault of stayer's own stops (an exception that is no `StayerError`) still ends
  with a `Finished` (`model_error`, saying what broke), its conversation repaired, and is one
  line in `errors`; the session goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import Any, assert_never

from msgspec import Struct
from msgspec.structs import replace

from stayer.errors import StayerError
from stayer.events import Compacted, Event, Finished, PermissionRequested, Terminal
from stayer.loop.abort import AbortSignal
from stayer.messages import ContentBlock
from stayer.permissions import Decision
from stayer.session.assemble import prompt_blocks
from stayer.session.options import QueryOptions
from stayer.session.session import Prompt, Session

Sink = Callable[[Event], Awaitable[None]]
"""Where the driver hands each event, in order; a slow sink holds the run back."""


class Submit(Struct, frozen=True):
    """Run this prompt (or add it to the running run)."""

    prompt: str | tuple[ContentBlock, ...]


class Interrupt(Struct, frozen=True):
    """Stop the running run; it ends with `Finished` (aborted)."""

    reason: str = "interrupted by the user"


class SetMode(Struct, frozen=True):
    """Switch the permission mode, for the running run's next calls too."""

    mode: str


class SetModel(Struct, frozen=True):
    """Answer with another model from the next run on."""

    model: str


class Clear(Struct, frozen=True):
    """Start the conversation over (after the running run, if one is going)."""


class Compact(Struct, frozen=True):
    """Summarise the conversation now, keeping `instructions` in view (`/compact`); after the
    running run, if one is going."""

    instructions: str | None = None


class Answer(Struct, frozen=True):
    """The answer to the permission question asked for `tool_use_id`."""

    tool_use_id: str
    decision: Decision


class Close(Struct, frozen=True):
    """Finish what is running and queued, end the session, and return from `run()`."""


Operation = Submit | Interrupt | SetMode | SetModel | Clear | Compact | Answer | Close
Between = Clear | Compact
"""What waits for the running run to end before it is carried out."""


class Driver:
    """Drives one Session from an inbox of operations into a sink; see the module."""

    def __init__(
        self, session: Session, sink: Sink, *, on_error: Callable[[str], None] | None = None
    ) -> None:
        self.session = session
        self._sink = sink
        self._on_error = on_error
        self._inbox: asyncio.Queue[Operation] = asyncio.Queue()
        self._run: asyncio.Task[None] | None = None
        self._abort = AbortSignal()
        self._next: list[Prompt] = []
        self._between: list[Between] = []
        self._compacting = False
        self._closing = False
        self._waiting: dict[str, asyncio.Future[Decision]] = {}
        self._started = asyncio.Event()
        self.unsent: list[Prompt] = []
        """Prompts queued for a run that was interrupted: never sent, kept for the front end
        to offer back (Claude Code puts them back in the input box)."""
        self.errors: list[str] = []
        """Operations that could not be carried out, one line each (also given to
        `on_error`): the driver goes on with the next."""

    @classmethod
    async def open(
        cls,
        options: QueryOptions,
        sink: Sink,
        *,
        answers: bool = False,
        on_error: Callable[[str], None] | None = None,
    ) -> Driver:
        """A driver over a session opened from `options` (see `Session.open`); with
        `answers`, permission questions are answered by `Answer` operations."""
        holder: list[Driver] = []

        async def decide(request: PermissionRequested) -> Decision:
            return await holder[0]._question(request)

        if answers:
            options = replace(options, can_use_tool=decide)
        driver = cls(await Session.open(options, busy="queue"), sink, on_error=on_error)
        holder.append(driver)
        return driver

    def submit(self, prompt: Prompt) -> None:
        """What `Submit(prompt)` does, done now rather than in turn (from the event loop's
        thread): a front end learns at once whether the prompt waits (`waiting`) or began a
        run. Raises `StayerError` for an empty prompt."""
        self._submit(prompt)

    def send(self, operation: Operation) -> None:
        """Put `operation` in the inbox (from the event loop's thread)."""
        self._inbox.put_nowait(operation)

    async def carry_out(self, operation: Operation) -> None:
        """What `send(operation)` does, done now from the caller's task rather than in turn
        (a front end that waits for it: stream-json input's `/clear`); what cannot be done is
        one line in `errors`, as ever. A `Compact` is under way on return (`settled`)."""
        await self._apply(operation)

    def interrupt(self, reason: str = "interrupted by the user") -> None:
        """Stop the running run now (what `Interrupt` does, without waiting its turn), even one
        that has not begun. What was queued for it moves to `unsent`; prompts submitted after
        this run once it has ended."""
        self._abort.abort(reason)
        self.session.interrupt()
        self.unsent.extend([*self.session.leftover(), *self._next])
        self._next.clear()
        self._deny_waiting(reason)
        if any(isinstance(waiting, Compact) for waiting in self._between):
            self._between = [op for op in self._between if not isinstance(op, Compact)]
            self._failed("the compaction waiting for the run was dropped, as the run was stopped")

    async def run(self) -> None:
        """Carry out operations until `Close` and the work before it are done; returns once
        the session is closed. Operations keep being taken while a closing run finishes (an
        interrupt still works). A sink that raises ends the driver with its exception."""
        try:
            while not (self._closing and self._idle()):
                taking = asyncio.ensure_future(self._inbox.get())
                self._started.clear()  # `submit()` sets it: a run begun meanwhile is watched
                started = asyncio.ensure_future(self._started.wait())
                waits: set[asyncio.Future[Any]] = {taking, started}
                if self._run is not None and not self._run.done():
                    waits.add(self._run)
                done, _ = await asyncio.wait(waits, return_when="FIRST_COMPLETED")
                started.cancel()
                if taking in done:
                    await self._apply(taking.result())
                else:
                    taking.cancel()
                if self._run is not None and self._run.done():
                    self._run.result()  # a sink's failure is the driver's owner's to see
            async with aclosing(self.session.end()) as ending:
                async for event in ending:
                    await self._sink(event)
        finally:
            if self._run is not None and not self._run.done():
                self.interrupt("the driver stopped")
                await asyncio.gather(self._run, return_exceptions=True)
            await self.session.aclose()

    @property
    def waiting(self) -> tuple[Prompt, ...]:
        """Prompts sent during a run and not taken yet: those queued to join it at its next
        model call (`Session.queued`), then those that wait for a run of their own."""
        return (*self.session.queued, *self._next)

    async def settled(self) -> None:
        """Return once no run or compaction is going, tidying included (its background work
        stopped after its `Finished`); at once when none is. A front end that runs each prompt
        on its own (stream-json input: one `result` per message) waits here before it submits
        the next."""
        while self._run is not None and not self._run.done():
            await asyncio.wait({self._run})

    @property
    def busy(self) -> bool:
        """Whether a run or a compaction is going (an `Interrupt` would stop it)."""
        return not self._idle()

    def _idle(self) -> bool:
        return self._run is None or self._run.done()

    async def _apply(self, operation: Operation) -> None:
        try:
            await self._carry_out(operation)
        except StayerError as error:  # one line for the front end; the session goes on
            self._failed(str(error))

    async def _carry_out(self, operation: Operation) -> None:
        match operation:
            case Submit(prompt=prompt):
                self._submit(prompt)
            case Interrupt(reason=reason):
                self.interrupt(reason)
            case SetMode(mode=mode):
                self.session.set_permission_mode(mode)
            case SetModel(model=model):
                await self.session.set_model(model)
            case Clear():
                if self._idle():
                    await self.session.clear()
                else:
                    self._between.append(operation)
            case Compact():
                if self._idle():
                    self._abort = AbortSignal()
                    self._run = asyncio.create_task(self._runs(operation))
                else:
                    self._between.append(operation)
            case Answer(tool_use_id=tool_use_id, decision=decision):
                waiting = self._waiting.pop(tool_use_id, None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(decision)
            case Close():
                self._closing = True
                self._deny_waiting("the front end closed: nobody is left to answer")
            case _ as unreachable:
                assert_never(unreachable)

    def _submit(self, prompt: Prompt) -> None:
        prompt_blocks(prompt)  # an empty one is one line in `errors`, no run
        if not self._idle():
            if self._between or self._compacting or not self.session.queue(prompt):
                # after a clear or a compaction, or its hooks first: a run of its own
                self._next.append(prompt)
            return
        self._abort = AbortSignal()  # armed now: an interrupt before the run begins counts
        self._run = asyncio.create_task(self._runs(prompt))
        self._started.set()

    async def _runs(self, job: Prompt | Compact) -> None:
        """Carry out `job`, then the clears and compactions sent meanwhile, then run the
        prompts that came too late for it, one run for them all, and so on."""
        following: Prompt | Compact | None = job
        while following is not None:
            if isinstance(following, Compact):
                await self._compact(following.instructions)
            else:
                await self._submission(following)
            await self._between_runs()
            waiting = [*self.session.leftover(), *self._next]
            self._next.clear()
            self._abort = AbortSignal()
            following = _joined(waiting) if waiting else None

    async def _submission(self, prompt: Prompt) -> None:
        """Run `prompt`, its events to the sink. A fault of stayer's own escaping the run (not
        the sink's: that ends the driver) ends it as the loop would: the session keeps what it
        did, repaired, the sink gets a `Finished` saying what broke, and `errors` a line."""
        finished = False
        try:
            submission = self.session.submit(prompt, abort=self._abort)
            async with aclosing(submission) as events:
                async for event in events:
                    finished = finished or isinstance(event, Finished)
                    try:
                        await self._sink(event)
                    except Exception as error:
                        raise _SinkFailed from error
        except StayerError as error:
            self._failed(str(error))
        except _SinkFailed as failed:
            raise failed.__cause__ or failed from None
        except Exception as error:  # a bug of stayer's: the session goes on, said in one line
            line = f"the run stopped on an internal error: {error!r}"
            if not finished:
                await self._sink(
                    Finished.without_a_call(Terminal.MODEL_ERROR, line, self.session.history)
                )
            self._failed(line)

    async def _between_runs(self) -> None:
        while self._between:
            operation = self._between.pop(0)
            try:
                if isinstance(operation, Clear):
                    await self.session.clear()
                else:
                    self._abort = AbortSignal()
                    await self._compact(operation.instructions)
            except StayerError as error:
                self._failed(str(error))

    async def _compact(self, instructions: str | None) -> None:
        """Summarise the conversation, its events to the sink; one line in `errors` when it
        ends without a summary."""
        if not self.session.history:
            self._failed("there is nothing to compact yet: the conversation is empty")
            return
        compacted = False
        self._compacting = True
        try:
            compaction = self.session.compact(instructions, abort=self._abort)
            async with aclosing(compaction) as events:
                async for event in events:
                    compacted = compacted or isinstance(event, Compacted)
                    await self._sink(event)
        except StayerError as error:
            self._failed(str(error))
            return
        finally:
            self._compacting = False
        if not compacted:
            self._failed(
                "the compaction was stopped; the conversation goes on as it was"
                if self._abort.aborted
                else "the conversation was not compacted: no summary came back, so it goes on "
                "as it was"
            )

    def _failed(self, line: str) -> None:
        self.errors.append(line)
        if self._on_error is not None:
            self._on_error(line)

    async def _question(self, request: PermissionRequested) -> Decision:
        if self._closing:
            return Decision("deny", "the front end closed: nobody is left to answer")
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._waiting[request.tool_use_id] = future
        try:
            return await future
        finally:
            self._waiting.pop(request.tool_use_id, None)

    def _deny_waiting(self, reason: str) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_result(Decision("deny", reason))
        self._waiting.clear()


def _joined(prompts: Sequence[Prompt]) -> Prompt:
    """Several prompts as one: a lone one as it is, several as their blocks in order."""
    if len(prompts) == 1:
        return prompts[0]
    return tuple(block for prompt in prompts for block in prompt_blocks(prompt))


class _SinkFailed(Exception):
    """The sink raised (its error the cause): the driver's owner's to see, not a run's fault."""
