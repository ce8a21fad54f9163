"""Running a subagent (`Session._spawn_subagent`): in the call that asked, or in the background.

A foreground child runs inside the call: its events come out wrapped as the call's, and its
spend joins the parent's run with the call's result (or, when the call is left off
before it, as a background child's does). A background child gets a place in its
parent session's `Background` and the call returns at once with the child's `SessionStarted`;
its events reach the parent's stream as they come, and when it ends, a notification for the
parent model (its report, framed and escaped, and its transcript) waits for the parent's next
model call, with its spend. Every child waits for a place among the tree's running children
first, and gives it back however it ends; a parent waiting on its children gives its own place
back while it waits (`Tree.pause`), so the cap can never leave the tree waiting on itself.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, suppress

from msgspec.structs import replace

from stayer.agents.model import AgentDefinition
from stayer.events import (
    Event,
    Finished,
    MessageCompleted,
    MessageStarted,
    PermissionRequested,
    SubagentEvent,
    Terminal,
    TextDelta,
    Withdrawn,
)
from stayer.exec import truncate_middle
from stayer.loop.abort import AbortSignal
from stayer.tools.base import MAX_RESULT_CHARS, SubagentRequest, ToolFailure
from stayer.tools.builtin.agent_result import escaped, report, spends

from .member import Member
from .spawn import (
    check_allowed,
    child_writer,
    definition_for,
    derive_child,
    first_message,
    restriction_notes,
)
from .worktree import Worktree, make_worktree, settle_worktree


class _Run:
    """One subagent about to run: its session, who it is, what it is asked, where it works."""

    def __init__(
        self,
        parent: Member,
        child: Member,
        definition: AgentDefinition,
        request: SubagentRequest,
        worktree: Worktree | None,
    ) -> None:
        self.parent, self.child, self.request, self.worktree = parent, child, request, worktree
        self.agent_type = definition.name
        self.agent_id = child.session_id
        self.unfinished = ""
        """The text of the child's answer streaming now, which its history will not keep if
        the stream breaks off (`saw`)."""

    def saw(self, event: Event) -> None:
        """Keep the text of the answer streaming now (the loop drops an answer whose stream
        broke off, and the report should still carry what the child had written)."""
        if isinstance(event, MessageStarted | MessageCompleted | Withdrawn):
            self.unfinished = ""
        elif isinstance(event, TextDelta):
            self.unfinished += event.text

    def wrap(self, event: Event) -> SubagentEvent:
        """`event` of the child's, as its parent's stream carries it (a question it asks
        names it, as the question the top session's decider gets does)."""
        if isinstance(event, PermissionRequested) and not event.agent:
            event = replace(event, agent=f"{self.agent_type}: {self.request.description}")
        return SubagentEvent(
            self.request.tool_use_id,
            event,
            agent_id=self.agent_id,
            agent_type=self.agent_type,
            description=self.request.description,
            background=self.request.background,
        )

    async def discard(self) -> None:
        """The child never ran (it was stopped waiting for a place): close it, and remove its
        worktree, in which nothing was done."""
        await self.child.aclose()
        if self.worktree is not None:
            with suppress(ToolFailure):  # a worktree git cannot remove stays, as it would
                await settle_worktree(self.worktree, self.parent.env)

    async def ended(self, finished: Finished) -> Finished:
        """The child's end, once its worktree is settled: removed when it changed nothing,
        else named at the end of its report. A run that broke off while the child wrote keeps
        what it wrote as its result text (its report shows it as the last it wrote)."""
        if finished.terminal is not Terminal.COMPLETED and self.unfinished.strip():
            finished = replace(finished, result_text=self.unfinished)
        if self.worktree is None:
            return finished
        try:
            kept = await settle_worktree(self.worktree, self.parent.env)
        except ToolFailure as failure:
            note = f"[Its git worktree {self.worktree.path} could not be tidied: {failure}]"
        else:
            if not kept:
                return finished
            note = (
                f"[It changed files in its own git worktree, kept for you: "
                f"{self.worktree.path} (branch {self.worktree.branch}).]"
            )
        return replace(finished, result_text=f"{finished.result_text}\n\n{note}".lstrip())


async def spawn(parent: Member, request: SubagentRequest) -> AsyncIterator[Event]:
    """The `SpawnSubagent` contract for `parent` (see `stayer.tools.base`)."""
    run, prompt = await _prepare(parent, request)
    if request.background:
        started = run.wrap(run.child.announce())
        # launched before it is announced: a caller may stop reading at the announcement
        parent.background.launch(run.agent_id, lambda abort: _behind(run, prompt, abort))
        yield started
        return
    async with aclosing(_ahead(run, prompt)) as events:
        async for event in events:
            yield event


async def _ahead(run: _Run, prompt: str) -> AsyncGenerator[Event]:
    """A foreground child's run, its events as the call's. Its parent only waits on it, so
    gives its place back meanwhile. The child runs in a task of its own: a call left off
    before it took the child's end (the run interrupted, the call timed out) stops the child
    and waits for its end, so that what the child spent is billed to the parent's run, as a
    stopped background child's is."""
    parent, child, tree = run.parent, run.child, run.parent.tree
    outer = parent.abort_signal or AbortSignal()
    abort = AbortSignal()  # the child's: its parent's run stops it, and so does its call's end
    unlink = outer.listen(lambda: abort.abort(outer.reason or "interrupted"))
    if outer.reason is not None:
        abort.abort(outer.reason)
    tree.pause(parent.account)
    taken = False
    try:
        try:
            await tree.slot(abort, child.account)
        except ToolFailure:
            await run.discard()
            raise
        await _started(parent, run.agent_id, run.agent_type)
        pipe = _Pipe(child, prompt, abort)
        try:
            while (event := await pipe.next()) is not None:
                run.saw(event)
                if isinstance(event, Finished):
                    event = await run.ended(event)
                    tree.release(child.account)
                    taken = True  # the parent goes on: it waits for a place again
                    await tree.resume(outer, parent.account)
                yield run.wrap(event)
            tree.bill(parent.account, child.account)  # its spend is in the call's result
        except BaseException:
            abort.abort("stopped: the call that started it ended")
            finished = await pipe.end()
            if finished is not None:
                parent.background.owe(child.account, spends(finished))
            raise
    finally:
        unlink()
        tree.release(child.account)
        if not taken:  # the call is left off: the parent's run stops, and takes no place
            tree.unpause(parent.account)


class _Pipe:
    """A foreground child's run in a task of its own, its events passed on one by one (a
    cancelled reader does not cancel the run, which ends once stopped, with its spend)."""

    def __init__(self, child: Member, prompt: str, abort: AbortSignal) -> None:
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._finished: Finished | None = None
        self._task = asyncio.ensure_future(self._pump(child, prompt, abort))

    async def _pump(self, child: Member, prompt: str, abort: AbortSignal) -> None:
        try:
            async with child, aclosing(child.submit(prompt, abort=abort)) as events:
                async for event in events:
                    if isinstance(event, Finished):
                        self._finished = event
                    self._queue.put_nowait(event)
        finally:
            self._queue.put_nowait(None)

    async def next(self) -> Event | None:
        """The child's next event; None once its run is over (a failure of it is raised)."""
        event = await self._queue.get()
        if event is None:
            await self._task
        return event

    async def end(self) -> Finished | None:
        """The stopped child's end, once its run is over (what went wrong with it is lost)."""
        await asyncio.gather(self._task, return_exceptions=True)
        return self._finished


async def _prepare(parent: Member, request: SubagentRequest) -> tuple[_Run, str]:
    """The child session the request asks for, ready to run, and its first message; raises
    `ToolFailure` in one line for a request that cannot run."""
    tree = parent.tree
    if parent.depth >= tree.max_depth:
        raise ToolFailure(
            f"subagents may nest only {tree.max_depth} deep (CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH)"
            "; do this part of the task yourself"
        )
    resolved = parent.setup.resolved
    assert resolved is not None  # a session that spawns was opened from options
    definition = definition_for(resolved.catalog, request)
    isolation = request.isolation or definition.isolation
    if isolation not in (None, "worktree"):
        raise ToolFailure(f"isolation {isolation!r} is not supported; use 'worktree' or none")
    check_allowed(parent, definition, isolation)
    worktree = None
    if isolation == "worktree":
        here, name = parent.setup.params.tool_context.cwd, uuid.uuid4().hex[:12]
        worktree = await make_worktree(here, name=name, env=parent.env)
    cwd = None if worktree is None else worktree.path
    try:
        child = derive_child(parent, request, definition, cwd=cwd)
    except ToolFailure:
        if worktree is not None:  # nothing ran in it: it goes
            await settle_worktree(worktree, parent.env)
        raise
    agent_id = child.session_id
    child.adopt(child_writer(parent, agent_id, child), depth=parent.depth + 1, account=tree.open())
    if parent.hooks is not None and child.hooks is not None:
        path = str(child.transcript_path or "")
        child.hooks.as_subagent(parent.hooks.runner.base, agent_id, definition.name, path)
    notes = restriction_notes(definition, request)
    prompt = first_message(
        resolved.catalog,
        definition,
        request.prompt,
        notes=notes,
        session_id=agent_id,
        project_dir=child.setup.params.tool_context.cwd,
    )
    return _Run(parent, child, definition, request, worktree), prompt


async def _started(parent: Member, agent_id: str, agent_type: str) -> None:
    """The parent's SubagentStart hooks, as the child starts (their runs join its stream)."""
    if parent.hooks is not None:
        await parent.hooks.subagent_started(agent_id, agent_type)


class _Notice:
    """Who a background child is, for the notification its parent's model reads."""

    def __init__(self, agent_id: str, agent_type: str, description: str, child: Member) -> None:
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.description = description
        self.path = child.transcript_path

    def text(self, finished: Finished | None) -> str:
        """The `<task-notification>` for the parent's model: the model-written description is
        data, and so is the report (the agent type in its head too), whose markup (the
        notification's own fields' too) is escaped, and which is held to a tool result's
        length, its middle cut, saying where the whole is."""
        if finished is None:
            status, body = "stopped", "It was stopped before it started."
        else:
            status = _status(finished)
            said = report(finished, agent_id=self.agent_id, agent_type=self.agent_type, notice=True)
            body = self._cut(said)
        # Escaped once more after the cut, which may join what was apart into a tag.
        body = escaped(body, notice=True)[0]
        lines = [
            "<task-notification>",
            f"<task-id>{self.agent_id}</task-id>",
            f"<status>{status}</status>",
            f'<summary>Agent "{_field(self.description)}" {status}</summary>',
            f"<result>{body}</result>",
        ]
        if self.path is not None:
            lines.append(f"<output-file>{self.path}</output-file>")
        lines.append("</task-notification>")
        return "\n".join(lines)

    def _cut(self, body: str) -> str:
        """`body` held to a tool result's length, its middle cut, saying where the whole is."""
        if len(body) <= MAX_RESULT_CHARS:
            return body
        where = "is not kept (this session keeps no transcripts)"
        if self.path is not None:
            where = f"is in its transcript, {self.path}"

        def note(omitted: int) -> str:
            cut = f"{omitted} characters of this report were cut from its middle"
            return f"\n[{cut}; the whole {where}]"

        # The count has at most as many digits as the whole length: reserve that much.
        text, omitted = truncate_middle(body, MAX_RESULT_CHARS - len(note(len(body))))
        return text + note(omitted)


def _field(text: str) -> str:
    """A model's or a file's words on one line of a notification, no `<` left in them."""
    return " ".join(text.split()).replace("<", "&lt;")


def _status(finished: Finished) -> str:
    if finished.terminal is Terminal.COMPLETED:
        return "completed"
    aborted = (Terminal.ABORTED_STREAMING, Terminal.ABORTED_TOOLS)
    return "stopped" if finished.terminal in aborted else "failed"


async def _behind(run: _Run, prompt: str, abort: AbortSignal) -> None:
    """A background child's whole run, its events into the parent's stream."""
    parent, child = run.parent, run.child
    tree, work = parent.tree, parent.background
    notice = _Notice(run.agent_id, run.agent_type, run.request.description, child)
    finished: Finished | None = None
    try:
        await tree.slot(abort, child.account)
    except ToolFailure:
        await run.discard()
        work.ended(notice.text(None), child.account, ())
        return
    try:
        await _started(parent, run.agent_id, run.agent_type)
        async with child, aclosing(child.submit(prompt, abort=abort)) as events:
            async for event in events:
                run.saw(event)
                if isinstance(event, Finished):
                    finished = event = await run.ended(event)
                work.put(run.wrap(event))
    finally:
        tree.release(child.account)
        spent = () if finished is None else spends(finished)
        work.ended(notice.text(finished), child.account, spent)
