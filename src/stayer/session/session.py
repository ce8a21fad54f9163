"""`Session`: one conversation across prompts, with its transcript on disk.

A Session owns what outlives one run: the model client and its connection, the toolbox and
tool context (files read, the shell's working directory, background shells, pinned notes), the
permission policy (its mode is live: an accepted plan leaves plan mode, and
`set_permission_mode` switches it) with the caller's decider, the history, the session id and
the transcript. `submit(prompt)` runs one
prompt through the loop and keeps the conversation; `interrupt()` stops the submission that is
running, leaving the conversation valid. Every front end drives Sessions; `stayer.query()` is
one submission.

A session can go on from a saved one (`resume`, `continue_session`): the conversation the model
last saw is read back and repaired rather than trimmed (`repair`), and the next prompt is told
when the last turn never finished. A Claude Code transcript is imported the same way, under a
new stayer session.
"""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import aclosing
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from msgspec import Struct
from msgspec.structs import replace

from stayer.agents.model import Catalog, Skill
from stayer.config.sources import parse_levels
from stayer.errors import ConfigError, StayerError
from stayer.events import (
    Event,
    Finished,
    MessageCompleted,
    Terminal,
)
from stayer.exec import close_sandbox
from stayer.loop.abort import AbortSignal, until_aborted
from stayer.loop.recovery import append_user
from stayer.loop.run import query as loop_query
from stayer.loop.state import LoopParams
from stayer.messages import ContentBlock, Message, TextBlock, UserMessage
from stayer.permissions import PermissionMode, parse_mode
from stayer.providers.base import Provider, Thinking
from stayer.tools.base import SubagentRequest, Tool
from stayer.tools.names import EXIT_PLAN_MODE

from .assemble import Setup, prompt_blocks, user_message
from .children import Account, Background, Tree, priced
from .listings import with_listing
from .mode_bounds import BYPASS, BYPASS_REFUSED, may_bypass
from .mode_reminder import ModeReminder
from .options import QueryOptions
from .paths import session_folder
from .reasoning import budget_thinking
from .recording import record, session_writer
from .repair import INTERRUPTED_NOTE, repair
from .resolve import token_budget
from .resuming import saved_to_resume
from .session_mcp import McpFacet
from .session_tree import TreeFacet
from .settings import bypass_disabled_by
from .setup import prepare
from .skill_host import SessionSkills
from .transcript import Loaded, TranscriptWriter

if TYPE_CHECKING:
    from stayer.events import SessionStarted

    from .hook_points import SessionHooks
    from .mcp_link import McpLink
    from .permission_request import PermissionHost
    from .rule_edits import RuleEdits, RulesView
    from .skill_render import Places

Busy = Literal["refuse", "queue"]
Prompt = str | Sequence[ContentBlock]
"""What a user says: text, or content blocks (text and images)."""
StartSource = Literal["startup", "resume", "clear"]
"""How the conversation began, as SessionStart hooks are told."""


class SessionBusy(StayerError):
    """A prompt was submitted while another ran, and the session refuses to queue it."""


class Session(McpFacet, TreeFacet):
    """One conversation: submit prompts one after another; use as `async with`."""

    _source: StartSource

    def __init__(self, options: QueryOptions | None = None, *, busy: Busy = "refuse") -> None:
        """Resolve the model, tools and options, and load a session to resume if asked;
        raises `ConfigError` with one line when something is unusable."""
        options = options or QueryOptions()
        env = os.environ if options.env is None else options.env
        resumed, options = saved_to_resume(options, env)
        setup = prepare(options)
        try:
            writer = session_writer(options, setup, env)
        except ConfigError:
            sandbox = setup.params.tool_context.sandbox
            if sandbox is not None:
                close_sandbox(sandbox)
            raise
        self._begin(options, setup, busy, writer)
        if resumed is not None:
            self._take(resumed)
            self._source = "resume"

    def _begin(
        self,
        options: QueryOptions,
        setup: Setup,
        busy: Busy,
        writer: TranscriptWriter | None,
        *,
        parent: Session | None = None,
    ) -> None:
        self.options = options
        self.busy: Busy = busy
        self.setup: Setup = setup
        self.parent = parent
        """The session this one was derived from, if any (it owns what the two share)."""
        self.history: tuple[Message, ...] = tuple(options.history)
        self.warnings: tuple[str, ...] = setup.warnings
        self._started_mode: PermissionMode = setup.permissions.mode
        self._interrupted = False
        self._announced = False
        self._ending = parent is None  # SessionEnd's hooks are still to run (never a child's)
        self._lock = asyncio.Lock()
        self._abort: AbortSignal | None = None
        self._seen: tuple[Message, ...] = ()
        self._transcript = writer
        self._queued: list[Prompt] = []
        self._made: list[Provider] = []
        """Clients `set_model` made, closed as the session closes (a child's too: it closes
        only what it shares with nobody)."""
        self._source: StartSource = "startup"
        self._rule_edits: RuleEdits | None = None
        self._turn_model: tuple[str, str] | None = None
        """(the session's model, a command's) while a command's `model` answers its turn."""
        self._thinking: Thinking | None = setup.params.thinking
        """The thinking its own turns ask for, as it is now (`set_thinking` changes it)."""
        self._turn_thinking = self._thinking
        """The thinking of the assistant turn going on (kept through its tool rounds)."""
        env = os.environ if options.env is None else options.env
        self._mcp: McpLink | None = parent._mcp if parent is not None else self._link(setup)
        if self._mcp is not None and parent is None:
            tools = setup.params.tools.with_source(self._mcp.catalog)
            self.setup = setup = replace(setup, params=replace(setup.params, tools=tools))
        self._hooks = self._hooks_for(env) if setup.hooks else None
        params = setup.params
        can_ask = params.decide is not None and EXIT_PLAN_MODE in params.tools.names
        self._reminder = ModeReminder(setup.permissions, can_ask=can_ask)
        if self._hooks is not None:
            self.setup = replace(self.setup, params=self._hooks.wire(self.setup.params))
        self.tree: Tree = Tree(env) if parent is None else parent.tree
        """The bounds and the spend ledger this session's tree of subagents shares."""
        self.depth = 0
        """How deep this session is among subagents (0: the top session)."""
        self.account = Account()
        """The spend of the run going on now, in the tree's ledger."""
        self._background: Background | None = None
        if parent is None:
            self.warnings = (*self.warnings, *self.tree.warnings)
        self.setup.params.tool_context.spawn_subagent = self._spawn_subagent
        self._skills = self._skill_host(env)
        self.setup.params.tool_context.skills = self._skills

    def _skill_host(self, env: Mapping[str, str]) -> SessionSkills:
        """The session's skills, read from its catalog as it is at each use."""

        def places(skill: Skill) -> Places:
            from .skill_render import Places

            cwd = self.setup.params.tool_context.cwd
            plugins = self._catalog().plugins
            root = next((p.root for p in plugins if p.name == skill.plugin), None)
            return Places(
                session_id=self.session_id,
                project_dir=cwd,
                skill_dir=skill.base_dir,
                plugin_root=root if skill.plugin is not None else None,
            )

        return SessionSkills(
            catalog=self._catalog,
            params=lambda: self.setup.params,
            permissions=self.setup.permissions,
            places=places,
            env=env,
            project_grants="project" in parse_levels(self.options.setting_sources),
        )

    def _catalog(self) -> Catalog:
        resolved = self.setup.resolved
        return Catalog() if resolved is None else resolved.catalog

    def derive(
        self,
        *,
        system_prompt: str | None = None,
        tools: str | Sequence[str] | None = None,
        extra_tools: Sequence[Tool[Any]] = (),
        model: str | None = None,
        permission_mode: str | None = None,
        cwd: Path | None = None,
        busy: Busy = "refuse",
    ) -> Session:
        """A child session (a subagent's, say), made with no file or process I/O: it shares
        this session's model client and connection pool, decider, settings and sandbox, has
        its own conversation, system prompt (`system_prompt`, else this one's), tools
        (`tools` selects built-ins as `QueryOptions.tools` does; `extra_tools` adds the
        caller's), model (one this session's client serves) and tool context, and a permission
        mode that cannot let through more than this session's now, working in `cwd` (this
        session's folder when None). It keeps no transcript and closes nothing it shares;
        raises `ConfigError` for an unknown tool or model."""
        from .derive import derived_setup

        setup = derived_setup(
            self.setup,
            system_prompt=system_prompt,
            tools=tools,
            extra_tools=extra_tools,
            model=model,
            permission_mode=permission_mode,
            cwd=cwd,
        )
        assert setup.resolved is not None
        child = Session.__new__(Session)
        child._begin(setup.resolved.options, setup, busy, None, parent=self)
        return child

    @classmethod
    async def open(cls, options: QueryOptions | None = None, *, busy: Busy = "refuse") -> Session:
        """`Session(options)` for async code: its start-up I/O (settings, memory files, the git
        snapshot, the sandbox probe, a transcript to resume) runs in a worker thread, so the
        event loop goes on meanwhile; raises what the constructor raises. Sessions opened at
        once share a few workers (`OPEN_WORKERS`): a thread each would take the GIL from the
        event loop in turns, stalling it for a quarter of a second at 50 sessions."""
        opened = _opener().submit(cls, options, busy=busy)
        try:
            return await asyncio.shield(asyncio.wrap_future(opened))
        except asyncio.CancelledError:  # a running worker cannot be stopped: tidy up after it
            if not opened.cancel():
                opened.add_done_callback(_discard)
            raise

    def _announcement(self) -> SessionStarted:
        """The session's first event: as assembled, with the MCP servers as they are now,
        what the tool definitions cost, and what the catalog holds (the agent types, the
        skills the model may load, the commands a prompt may start with, the plugins, and
        the agent the session runs as)."""
        started = replace(self.setup.started, tool_tokens=self.tool_tokens())
        resolved = self.setup.resolved
        if resolved is not None:
            catalog = resolved.catalog
            started = replace(
                started,
                agents=tuple(agent.name for agent in catalog.agents),
                skills=tuple(
                    s.name
                    for s in catalog.skills
                    if s.kind == "skill" and not s.disable_model_invocation
                ),
                slash_commands=tuple(s.name for s in catalog.skills if s.user_invocable),
                plugins=tuple(plugin.name for plugin in catalog.plugins),
                plugin_roots=tuple(str(plugin.root) for plugin in catalog.plugins),
                agent=resolved.options.agent if self.parent is None else None,
            )
        if self._mcp is None:
            return started
        self._mcp.drain()  # the init line tells what happened so far
        return replace(
            started, tools=self.setup.params.tools.names, mcp_servers=self._mcp.statuses()
        )

    def _hooks_for(self, env: Mapping[str, str]) -> SessionHooks:
        # Only a session whose settings define hooks loads them (their reply models are
        # pydantic's, costly at start-up).
        from stayer.hooks import HookBase

        from .hook_points import SessionHooks

        params = self.setup.params
        base = HookBase(
            session_id=self.session_id,
            transcript_path=str(self.transcript_path or ""),
            cwd=params.tool_context.cwd,
            env={**os.environ, **params.tool_context.env},
            permission_mode=lambda: self.permission_mode,  # live: hooks see a switch at once
        )
        hooks = SessionHooks(self.setup.hooks, base, subagent=self.parent is not None)
        if hooks.configured("PermissionRequest"):
            hooks.host = self._permission_host()
        return hooks

    def _permission_host(self) -> PermissionHost:
        """What a PermissionRequest hook's answer acts on: this session's rules, mode and run."""
        from .permission_request import PermissionHost
        from .permission_updates import Updates

        return PermissionHost(
            apply_updates=lambda given, warn: Updates(self, warn).apply(given),
            set_mode=self.set_permission_mode,
            interrupt=self.interrupt,
        )

    def _spawn_subagent(self, request: SubagentRequest) -> AsyncIterator[Event]:
        """A tool's nested run (`ToolContext.spawn_subagent`; see `subagents.spawn`)."""
        from .subagents import spawn

        return spawn(self, request)

    def announce(self) -> SessionStarted:
        """This session's `SessionStarted`, now rather than as its first run starts."""
        self._announced = True
        return self._announcement()

    @property
    def session_id(self) -> str:
        return self.setup.started.session_id

    @property
    def permission_mode(self) -> PermissionMode:
        """The permission mode in force now: it changes when a plan is accepted."""
        return self.setup.permissions.mode

    def set_permission_mode(self, mode: str) -> None:
        """Switch the permission mode for every call checked from now on, a running
        submission's included; raises `ConfigError` for an unknown mode, or bypassPermissions
        where it is not allowed (`check_mode`)."""
        before = self.setup.permissions.mode
        self.setup.permissions.set_mode(self.check_mode(parse_mode(mode)))
        if self._transcript is not None and self.permission_mode != before:
            self._transcript.event("permission_mode")  # on record though nothing else follows

    @property
    def bypass_allowed(self) -> bool:
        """Whether this session may switch into bypassPermissions: only one started in it, or
        with `allow_dangerously_skip_permissions` (`--allow-dangerously-skip-permissions`), as
        Claude Code allows (a derived session asks the session it came from)."""
        if self.parent is not None:
            return self.parent.bypass_allowed
        resolved = self.setup.resolved
        given = resolved is not None and resolved.options.allow_dangerously_skip_permissions
        return may_bypass(self._started_mode, given)

    def check_mode(self, mode: PermissionMode) -> PermissionMode:
        """`mode`, if this session may switch to it; raises `ConfigError` in one line for
        bypassPermissions where it is not allowed (the one rule every front end keeps). A
        derived session is bounded by its parent's mode instead (never past it, whatever is
        asked), and its parent is in bypassPermissions only as this rule allowed."""
        if self.parent is not None:
            return mode
        if mode != BYPASS or mode == self.permission_mode:
            return mode
        resolved = self.setup.resolved
        disabled = None if resolved is None else bypass_disabled_by(resolved.settled.loaded)
        if disabled is not None:  # the settings rule it out, whatever the flags allow
            raise ConfigError(
                f"bypassPermissions is turned off by disableBypassPermissionsMode in "
                f"{disabled}; the mode stays {self.permission_mode}"
            )
        if not self.bypass_allowed:
            raise ConfigError(f"{BYPASS_REFUSED}; the mode stays {self.permission_mode}")
        return mode

    def add_rule(self, kind: Literal["allow", "deny", "ask"], rule: str, *, save: bool) -> None:
        """Add a permission rule (`Bash(npm test:*)`) for every call checked from now on, a
        running submission's and derived sessions' included, as "yes, and don't ask again"
        does; with `save`, also to the project's `.stayer/settings.local.json`. Deny rules
        still win. Raises `ConfigError` in one line for a malformed rule or an unusable file."""
        self._rules().add(kind, rule, save=save)

    def remove_rule(self, rule: str, *, save: bool) -> bool:
        """Stop a permission rule applying, whatever its kind, from the next check on; with
        `save`, also take it out of the project's `.stayer/settings.local.json` (other files
        that hold it keep it). Whether there was such a rule. Raises `ConfigError` as
        `add_rule` does."""
        return self._rules().remove(rule, save=save)

    def rules(self) -> RulesView:
        """The permission mode and the rules in force now, by kind, with where each came from."""
        return self._rules().view()

    def _rules(self) -> RuleEdits:
        if self._rule_edits is None:  # made on first use: most sessions never edit a rule
            from .rule_edits import RuleEdits

            self._rule_edits = RuleEdits(self.setup)
        return self._rule_edits

    async def set_model(self, model: str) -> None:
        """Answer with `model` (an alias or an id) from the next submission on, as `/model`
        does: through this session's client when its provider serves the model, else a new
        client the session closes with the others; the system prompt names the new model.
        Raises `ConfigError` in one line for a model that cannot be used."""
        resolved = self.setup.resolved
        if resolved is None:
            raise ConfigError("this session was not opened from options; open a new one")
        from .assemble import with_model
        from .resolve import model_client

        provider, choice = await asyncio.to_thread(model_client, resolved, model)
        if provider is not resolved.provider:  # a client made here: this session closes it
            self._made.append(provider)
            if self.setup.owns_provider:  # and the one it replaces, if it was this session's
                self._made.append(resolved.provider)
        permissions = self.setup.permissions
        params = with_model(self.setup.params, resolved, permissions, (provider, choice))
        started = replace(
            self.setup.started,
            model=choice.display_name,
            provider=provider.name,
            context_window=choice.context_window,
            max_output_tokens=params.max_tokens,
        )
        resolved = replace(resolved, provider=provider, choice=choice)
        render = resolved.system.render

        def system_for(budget: int | None, serving: str | None = None) -> str:
            return render(budget, serving or choice.model)

        self.setup = replace(
            self.setup, params=params, started=started, resolved=resolved, system_for=system_for
        )

    def set_thinking(self, budget: int | None) -> None:
        """Think up to `budget` tokens from the next assistant turn on, in a running run too
        (0: not at all; None: as the model does by default), as the SDK's
        `set_max_thinking_tokens` asks; a turn in its tool rounds keeps its own, as the API
        requires. Raises `ConfigError` for a negative budget."""
        self._thinking = budget_thinking(budget, self.options.thinking_display)

    def _thinking_for(self, new_turn: bool) -> Thinking | None:
        """The thinking of a call: the setting now for one that begins a turn, else its turn's."""
        if new_turn:
            self._turn_thinking = self._thinking
        return self._turn_thinking

    async def clear(self) -> None:
        """Start the conversation over, as `/clear` does: no history, no todos, no files
        counted as read, under a new session id and transcript (the old one stays on disk);
        the next submission announces the new session, and SessionStart hooks run with source
        `clear` (SessionEnd ones with reason `clear` first, for the session that ends).
        Background shells go on. Refused (`SessionBusy`) while a prompt runs."""
        if self._lock.locked():
            raise SessionBusy("a prompt is running; interrupt it or wait for its Finished event")
        started = replace(self.setup.started, session_id=str(uuid.uuid4()))
        env = os.environ if self.options.env is None else self.options.env
        writer = None
        if self._transcript is not None:  # the new file first: a failure changes nothing
            new = replace(self.setup, started=started)
            writer = await asyncio.to_thread(session_writer, self.options, new, env)
        if self._hooks is not None and self._announced:
            await self._hooks.session_ended("clear")  # the old session ends, as in Claude Code
        context = self.setup.params.tool_context
        context.read_files.clear()
        context.session_state.buffer_reads.clear()
        context.todos.clear()
        self._skills.forget()
        self.setup = replace(self.setup, started=started)
        self.history, self._seen, self._interrupted = (), (), False
        self._announced, self._source = False, "clear"
        if self._transcript is not None and writer is not None:
            self._transcript.close()
            self._transcript = writer
            context.session_dir = session_folder(
                env, Path(started.cwd), started.session_id, self.options.sessions_dir
            )
        if self._hooks is not None:  # hooks name the new session and its file from now on
            runner = self._hooks.runner
            path = str(self.transcript_path or "")
            runner.base = replace(runner.base, session_id=started.session_id, transcript_path=path)

    async def compact(
        self, instructions: str | None = None, *, abort: AbortSignal | None = None
    ) -> AsyncGenerator[Event, None]:
        """Summarise the conversation now, as `/compact [instructions]` does: `instructions`
        say what the summary should keep in view. Yields the waits (`Retrying`) and the
        `Compacted` (trigger `manual`); the session goes on from the summary, or as it was
        when none came (firing `abort`, or `interrupt()` when `abort` is given, stops it so).
        Refused (`SessionBusy`) while a prompt runs."""
        if self._lock.locked():
            raise SessionBusy("a prompt is running; compact once it has finished")
        if not self.history:
            return
        from stayer.loop.compaction import Summarised, compact_now

        async with self._lock:
            params = self._params_for("")
            if abort is not None:
                self._abort = abort
                params = replace(params, abort=abort)
            async with aclosing(compact_now(params, self.history, instructions)) as steps:
                async for step in steps:
                    if isinstance(step, Summarised):
                        self.history = step.messages
                        if self._transcript is not None:
                            self._transcript.sync(self.history)
                        continue
                    if self._transcript is not None:
                        record(self._transcript, step)
                    yield step

    @property
    def transcript_path(self) -> Path | None:
        """Where this session is written, or None when it is not kept."""
        return None if self._transcript is None else self._transcript.path

    def submit(
        self, prompt: str | Sequence[ContentBlock], *, abort: AbortSignal | None = None
    ) -> AsyncGenerator[Event, None]:
        """Run one prompt; yields its events (`SessionStarted` first, once per session) and
        ends with its `Finished`. The conversation goes on from where the run left it.

        Refused at once (`SessionBusy`) while another prompt runs, unless the session queues.
        A consumer that stops early should close the iterator (`contextlib.aclosing`): the run
        stops, and the conversation keeps what it did up to then, repaired.
        """
        prompt_blocks(prompt)  # an empty one is refused here, before anything starts
        if self._lock.locked() and self.busy == "refuse":
            raise SessionBusy(
                "a prompt is already running in this session; wait for its Finished event, "
                "or make the Session with busy='queue'"
            )
        abort = abort or AbortSignal()
        if not self._lock.locked():
            self._abort = abort  # so an interrupt before the first event still counts
        return self._submission(prompt, abort)

    async def _submission(
        self, prompt: str | Sequence[ContentBlock], abort: AbortSignal
    ) -> AsyncGenerator[Event, None]:
        async with self._lock:
            self._skills.new_prompt()  # the last turn's skills' rules end here
            finished = False
            try:
                async for event in self._run(prompt, abort):
                    finished = finished or isinstance(event, Finished)
                    yield event
            except ConfigError:  # a command that could not be expanded: nothing was sent
                finished = finished or self._seen is self.history
                raise
            finally:
                if not finished:
                    self._salvage()
                if self._background is not None:  # nothing the run launched outlives it
                    await self._background.stop()
                self._note_failure()

    async def _command(self, prompt: Prompt, abort: AbortSignal) -> Prompt:
        """A `/name args` prompt as its command's message, else the prompt as typed; the
        model a command's turn asked for gives way to the session's own at the next prompt."""
        if self._turn_model is not None:
            (before, during), self._turn_model = self._turn_model, None
            if self.setup.params.model == during:  # unless the user switched since
                await self.set_model(before)
        catalog = self._catalog()
        if not catalog.skills or self.parent is not None:
            # nothing to expand; or a child's prompt, which a model wrote: a model never runs
            # a command (one only the user may invoke above all) by writing its name
            return prompt
        from .commands import expanded

        expansion = await until_aborted(expanded(prompt, catalog, self._skills), abort)
        if abort.aborted:  # its `!` commands were stopped: what they printed is not whole
            raise ConfigError(
                "the command was interrupted while its ! commands ran; nothing was sent"
            )
        if expansion is None:
            return prompt
        if expansion.model is not None:
            before = self.setup.params.model
            await self.set_model(expansion.model)
            self._turn_model = (before, self.setup.params.model)
        return expansion.content

    def queue(self, prompt: Prompt) -> bool:
        """Add `prompt` to the running submission: it joins the conversation at the run's next
        model call, as Claude Code's queued input does. False, and nothing kept, when no
        submission runs (submit it instead), or when UserPromptSubmit hooks must see each
        prompt first (submit it once the run has finished); raises `ConfigError` for an empty
        prompt."""
        prompt_blocks(prompt)  # an empty one is refused here, before anything starts
        if not self._lock.locked():
            return False
        if self._hooks is not None and self._hooks.configured("UserPromptSubmit"):
            return False  # its hooks judge each prompt before it is sent: it waits for a run
        self._queued.append(prompt)
        return True

    @property
    def queued(self) -> tuple[Prompt, ...]:
        """What waits to join the running submission (a front end shows it as pending)."""
        return tuple(self._queued)

    def leftover(self) -> list[Prompt]:
        """What was queued and the run ended without taking (it finished, or was stopped),
        taken out of the session: the caller decides whether it runs next."""
        left, self._queued = self._queued, []
        return left

    def _take_queued(self) -> tuple[ContentBlock, ...]:
        """For the loop, at a model call: what was queued since the last, as content."""
        taken, self._queued = self._queued, []
        notes = () if self._background is None else self._background.take_notes()
        blocks = (block for prompt in taken for block in prompt_blocks(prompt))
        return (*(TextBlock(note) for note in notes), *blocks)

    def interrupt(self) -> None:
        """Stop the running submission (its run still ends with `Finished`)."""
        if self._abort is not None:
            self._abort.abort()

    async def end(self) -> AsyncGenerator[Event, None]:
        """The session's last events, for a front end to show before it closes the session:
        the runs of the SessionEnd hooks, which run now (once; `aclose` then runs none)."""
        hooks = self._hooks
        if hooks is None or not self._announced or not self._ending:
            return
        self._ending = False
        await hooks.session_ended()
        for ran in hooks.drain():
            yield ran

    async def aclose(self) -> None:
        """Run the SessionEnd hooks unless `end` did, stop the shells left running in the
        background, remove the sandbox's /tmp, and close the model clients this session made
        and the transcript."""
        if self._hooks is not None and self._announced and self._ending:
            self._ending = False
            await self._hooks.session_ended()
        if self._background is not None:
            await self._background.stop()
        context = self.setup.params.tool_context
        await context.shells.aclose()
        if self._mcp is not None and self.parent is None:  # a child shares its parent's
            await self._mcp.aclose()
        if context.sandbox is not None and self.parent is None:  # a child shares its parent's
            close_sandbox(context.sandbox)
        if self._transcript is not None:
            self._transcript.close()
        every = (*(_providers(self.setup) if self.setup.owns_provider else ()), *self._made)
        for provider in {id(provider): provider for provider in every}.values():
            await provider.aclose()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(
        self, prompt: str | Sequence[ContentBlock], abort: AbortSignal
    ) -> AsyncIterator[Event]:
        self._abort = abort
        self._seen = self.history  # before the first yield: a consumer may leave at any of them
        if self._mcp is not None:  # in the background, unless told to wait for them
            await self._mcp.ready()
        context: tuple[str, ...] = ()
        if self._hooks is not None and self.parent is None:  # a child's prompt is its parent's
            gate = _Gate()
            async for event in self._before_prompt(self._hooks, prompt, gate):
                yield event
            if gate.refused is not None:
                yield Finished.without_a_call(Terminal.HOOK_STOPPED, gate.refused, self.history)
                return
            context = gate.context
        # the hooks judge the prompt as typed before a command's `!` lines run (ConfigError:
        # one could not; nothing is sent)
        prompt = await self._command(prompt, abort)
        async for event in self._loop(prompt, abort, context):
            yield event

    async def _before_prompt(
        self, hooks: SessionHooks, prompt: str | Sequence[ContentBlock], gate: _Gate
    ) -> AsyncIterator[Event]:
        """SessionStart (before the first prompt) and UserPromptSubmit: what they add to the
        prompt, or why it is kept out, into `gate`; their runs as they end."""
        if not self._announced:
            self._announced = True
            yield self._announcement()
            gate.context = await hooks.session_started(self._source)
        hooks.begin_run()
        gate.refused, added = await hooks.prompt_submitted(_prompt_text(prompt))
        gate.context = (*gate.context, *added)
        for ran in hooks.drain():
            yield ran

    async def _loop(
        self, prompt: str | Sequence[ContentBlock], abort: AbortSignal, context: tuple[str, ...]
    ) -> AsyncIterator[Event]:
        message = user_message(prompt)
        if not self.history:  # the conversation's first message says what it can delegate to
            message = with_listing(message, self._catalog(), self.setup.params)
        if self._interrupted:  # the model is told the last turn never finished
            message = UserMessage((TextBlock(INTERRUPTED_NOTE), *message.content))
            self._interrupted = False
        if context:
            notes = tuple(TextBlock(f"{HOOK_CONTEXT_HEAD}\n{text}") for text in context)
            message = UserMessage((*message.content, *notes))
        messages = append_user(self.history, message)
        self._reminder.new_prompt()
        writer = self._transcript
        if writer is not None:
            writer.sync(messages)
        if self.parent is None:
            self.account = self.tree.open_top()
        params = replace(self._params_for(prompt), abort=abort)
        self._seen = messages  # before the first yield: a consumer may leave at any of them
        if not self._announced:
            self._announced = True
            yield self._announcement()
        if self._mcp is not None:
            params = self._mcp_params(params)
        async with aclosing(loop_query(params, messages)) as events:  # its tools stop with it
            async for event in events:
                if isinstance(event, Finished) and self._background is not None:
                    # nothing the run launched outlives it, and what it spent is billed
                    await self._background.stop()
                    event = self._background.late_spend(event, self.account)
                async for before in self._before(event, writer, params):
                    yield before
                yield event

    async def _before(
        self, event: Event, writer: TranscriptWriter | None, params: LoopParams
    ) -> AsyncIterator[Event]:
        """What goes out before the run's `event` (what the hooks did on the way to it, MCP
        servers' news, background children's events), and what the session keeps of it."""
        for ran in self._hooks.drain() if self._hooks is not None else ():
            yield ran
        for status in self._mcp.drain() if self._mcp is not None else ():
            yield status
        for nested in self._background.drain() if self._background is not None else ():
            yield nested
        if writer is not None:
            record(writer, event)
        if isinstance(event, MessageCompleted) and params.max_budget_usd is not None:
            # the ledger serves only the budget's checks, and pricing a call is not free
            self.account.own += priced(params.model, event.message.usage)
        if isinstance(event, Finished):
            self.history = event.messages

    def _note_failure(self) -> None:
        writer = self._transcript
        if writer is not None and writer.failure and writer.failure not in self.warnings:
            self.warnings = (*self.warnings, writer.failure)

    def _salvage(self) -> None:
        """A run its consumer left before it finished: keep what it did, made valid."""
        repaired = repair(self._seen)
        self.history = repaired.messages
        self._interrupted = True
        if self._transcript is not None:
            self._transcript.event("interrupted", terminalReason="abandoned")

    def _params_for(self, prompt: str | Sequence[ContentBlock]) -> LoopParams:
        params = self.setup.params
        budget = token_budget(self.options, prompt)
        if budget != params.token_budget:
            system_for = self.setup.system_for
            params = replace(
                params,
                token_budget=budget,
                system_prompt=system_for(budget),
                model_prompt=lambda serving: system_for(budget, serving),
            )
        return replace(
            params,
            observe=self._observe,
            reminder=self._reminder,
            take_queued=self._take_queued,
            live_thinking=self._thinking_for,
            skills_loaded=self._skills.renderings,
            take_spent=self._take_spent,
            background=self._waiting_on,
            cost_elsewhere=lambda: self.tree.elsewhere(self.account),
        )

    def _observe(self, messages: tuple[Message, ...]) -> None:
        """The conversation as the loop last settled it: kept, and written."""
        self._seen = messages
        if self._transcript is not None:
            self._transcript.sync(messages)

    def _take(self, loaded: Loaded) -> None:
        """Go on from a saved conversation, repaired where it needs it."""
        repaired = repair(loaded.messages)
        self.history = repaired.messages
        self._interrupted = repaired.interrupted
        notes = [*self.warnings, *loaded.warnings]
        if repaired.fixes:
            notes.append("repaired the saved conversation: " + "; ".join(repaired.fixes))
        self.warnings = tuple(notes)
        from .resume_state import recorded_todos, todos_json  # only a resume needs them

        todos = self.setup.params.tool_context.todos
        todos[:] = recorded_todos(loaded)
        if self._mcp is not None:
            self._mcp.load_used(self.history)
        writer = self._transcript
        if writer is not None and loaded.session_id == self.session_id:
            # the same session goes on in its own file: continue its chain
            writer.go_on_from(loaded.messages, loaded.chain)
        if writer is not None:
            writer.sync(self.history)
            if todos and loaded.session_id != self.session_id:  # a new file: on record there
                writer.event("todos", todos=todos_json(todos))


OPEN_WORKERS = 4
"""How many sessions open at a time: enough to overlap their waits on git and files, few
enough that their Python work leaves the event loop its turns (`benchmarks/open_stall.py`)."""
_OPENER: ThreadPoolExecutor | None = None
_OPENER_LOCK = threading.Lock()


def _opener() -> ThreadPoolExecutor:
    """The workers sessions open in; their threads are not daemons, so a process that ends
    while one opens waits for it (and `_discard` tidies up after a caller that left)."""
    global _OPENER
    with _OPENER_LOCK:
        if _OPENER is None:
            _OPENER = ThreadPoolExecutor(OPEN_WORKERS, thread_name_prefix="stayer-session-open")
        return _OPENER


def _discard(opened: Future[Session]) -> None:
    """A session opened for a caller that stopped waiting: remove its sandbox's /tmp (its
    clients go with the process)."""
    if opened.exception() is not None:
        return
    sandbox = opened.result().setup.params.tool_context.sandbox
    if sandbox is not None:
        close_sandbox(sandbox)


HOOK_CONTEXT_HEAD = "[Context a hook added to this prompt:]"


class _Gate(Struct):
    """What the hooks before a prompt decided: context to add, or why it is kept out."""

    context: tuple[str, ...] = ()
    refused: str | None = None


def _prompt_text(prompt: str | Sequence[ContentBlock]) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(block.text for block in prompt if isinstance(block, TextBlock))


def _providers(setup: Setup) -> list[Provider]:
    """Every distinct client the session may use: the main model's and its fallbacks'."""
    found = [setup.params.provider, *(fallback.provider for fallback in setup.params.fallbacks)]
    return list({id(provider): provider for provider in found}.values())
