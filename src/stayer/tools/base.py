"""The tool contract: a name, a description, an input schema, `parse_input`, one async `call`.

Each is the instance's: built-in tools keep them as class-level defaults and derive the schema
and the parsing from a pydantic model (`input_model`); a tool that brings its own JSON Schema
(an MCP server's, an agent's) overrides `input_schema` and `parse_input`. Nothing outside
`stayer.tools` reaches for a tool's class attributes, and nobody but the tool validates its
input: every caller hands the raw JSON to `parse_input`, which raises `ToolInputError` with a
one-line reason.

Defaults fail closed (SPEC §7.2, DESIGN "one tool contract"): a tool is assumed to change
things, to be unsafe to run beside others, and to need permission, unless it says otherwise.
Tools never render anything and never print; they return a `ToolOutput` and may report live
progress through `ToolContext.emit` (a `ToolCallProgress`, which the printers and stream-json
show as it comes, or a nested run's events wrapped in a `SubagentEvent`). A tool that runs a
subagent does so through `ToolContext.spawn_subagent`, which the Session supplies. A tool
that asks a model something of its own (WebFetch) does so through `ToolContext.ask_model` and
returns what it spent in `ToolOutput.spent`, so the run bills it.

The size of a result is part of the contract too: what is longer than the tool's
`max_result_chars` is saved whole to the session's folder and the model gets a preview and the
path (`saved`), or, with no folder, the executor cuts it, unless the tool bounds its own results
(see `Tool.bounds_own_results`).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar, cast

from msgspec import Struct, field

from stayer.events import Event, ToolCallProgress, ToolReport
from stayer.exec import BackgroundShells, Sandbox
from stayer.messages import JSON, ModelSpend, ToolResultContent, ToolSpec

if TYPE_CHECKING:  # pydantic loads with the first tool, not at start-up
    from pydantic import BaseModel, ValidationError


MAX_RESULT_CHARS = 100_000
"""The most text one tool result may put in front of the model (about 25k tokens)."""

DEFAULT_RESULT_CHARS = 50_000
"""A tool's own limit unless it sets another (Claude Code's default); Bash's is 30,000."""


DEFAULT_TIMEOUT_S = 900.0
"""How long one call of a tool may run unless the tool says otherwise (`Tool.timeout_s`)."""


def _no_progress(_event: ToolReport) -> None:
    return None


class ModelAnswer(Struct, frozen=True):
    """A model's answer to a tool's own question, and what it cost."""

    text: str
    spent: ModelSpend


class AskModel(Protocol):
    """Ask a model one question outside the conversation (no tools, no history).

    `purpose` names the call on the wire (`x-stayer-purpose`), as the loop's own are named
    `main` and `compact`. Raises `stayer.errors.ModelError` when the call fails for good."""

    async def __call__(
        self, prompt: str, *, system: str, purpose: str, max_tokens: int = 1024
    ) -> ModelAnswer: ...


HISTORY_READ = "git-history:"
"""Marks a read of every file a repository's history holds (a git call that prints what files
hold or held), followed by the folder the call runs in; the session settles it against the read
rules (`stayer.session.git_history`)."""

SubjectKind = Literal["none", "path", "command", "domain"]
"""What a tool's permission subject is, so the permission layer can judge it without knowing
the tool: nothing, a file path (resolved before rules match), a shell command line (judged per
simple command), or a network host."""

TodoStatus = Literal["pending", "in_progress", "completed"]


class TodoItem(Struct, frozen=True):
    """One task of the model's todo list (the `TodoWrite` tool)."""

    content: str
    """The task in the imperative ("Run the tests")."""
    status: TodoStatus
    active_form: str
    """The task as it is being done ("Running the tests"), shown while it is in progress."""

    @property
    def is_open(self) -> bool:
        """Whether the task still has to be done."""
        return self.status != "completed"


class SubagentRequest(Struct, frozen=True):
    """What a tool asks of `ToolContext.spawn_subagent`: a nested run of `prompt`.

    `description` is the few words a printer shows for it; `subagent_type` names the kind of
    agent (its prompt and tools: a built-in, a custom agent's file, a plugin's), `model` the
    model it should use (an alias, an id, or None: its agent's, else the session's), `effort`
    how hard it should think, and `tools` the tools it may use (None: what its type allows;
    never more than the parent's). With `background`, the call that asked gets only the
    child's `SessionStarted` and the run goes on in the session's keeping; its result reaches
    the parent's model at its next call. `isolation` is `"worktree"` (the child works in a git
    worktree of its own) or None. `system_prompt`, when set, replaces the agent type's (a
    skill forked into a subagent brings its own)."""

    prompt: str
    description: str
    subagent_type: str = "general-purpose"
    model: str | None = None
    tools: tuple[str, ...] | None = None
    effort: str | None = None
    background: bool = False
    isolation: str | None = None
    system_prompt: str | None = None
    tool_use_id: str = ""
    """The call that asks (its id wraps the child's events: `SubagentEvent.parent_tool_use_id`)."""


SpawnSubagent = Callable[[SubagentRequest], AsyncIterator[Event]]
"""Start a nested run: its events as they come, each wrapped in a `SubagentEvent` (the call's
id, the agent's id, type and description), the first wrapping its `SessionStarted`, the last
its `Finished` (only the first with `background`).
Raises `ToolFailure` with one line for a request that cannot run: an unknown agent type, the
depth cap reached, the budget spent."""


def subagent_transcript(session_dir: Path, agent_id: str) -> Path:
    """Where a subagent's transcript is written: under its parent session's folder, as Claude
    Code keeps them (`subagents/agent-<id>.jsonl`); a background child's output file too."""
    return session_dir / "subagents" / f"agent-{agent_id}.jsonl"


class LoadedSkill(Struct, frozen=True):
    """A skill made ready for the conversation (`SkillHost.load`).

    `result` is the short text the Skill call returns; `followup` the skill's instructions,
    which join the conversation after the round's results ("" when they are already in it and
    `result` says so). `fork`, when set, is the subagent the skill runs as instead
    (`context: fork`): the tool runs it and returns its answer."""

    name: str
    result: str
    followup: str = ""
    fork: SubagentRequest | None = None
    data: dict[str, JSON] = field(default_factory=dict[str, JSON])


class SkillHost(Protocol):
    """The session's skills, as the Skill tool reaches them (`ToolContext.skills`)."""

    async def load(self, name: str, args: str, tool_use_id: str | None) -> LoadedSkill:
        """Render skill `name` with `args` for the model: its body with the arguments put in
        and its `!` commands run (each through the permission policy); its `allowed-tools`
        granted for the rest of this turn. Raises `ToolFailure` in one line for a skill that
        does not exist, may not be invoked by the model, or whose commands could not run."""
        ...


class EditorFiles(Protocol):
    """An editor's view of the files it has open (ACP's `fs/read_text_file` and
    `fs/write_text_file`), so the model reads a buffer's unsaved text and its writes land in
    the buffer the person sees (`ToolContext.editor`). Either raises `ToolFailure` in one line
    when the editor cannot do it."""

    async def read_text(self, path: Path) -> str:
        """The text of `path` as the editor has it (its buffer, else the file)."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Make `path` hold `text`, through the editor."""
        ...


class SessionState(Struct):
    """The mutable part of what tools see, one per session and shared on purpose by every copy
    of the `ToolContext` (each call gets a copy with its own `tool_use_id` and `emit`).

    `read_files` maps each file the model has read (resolved path) to its modification time
    (ns) at that moment, so Edit and Write can refuse to overwrite what the model never saw or
    what changed since; `buffer_reads` does the same for the files read through an editor
    (`ToolContext.editor`), keeping a digest of the buffer's text as it was read, since an
    unsaved buffer has no modification time. `pins` are the notes the model pinned (the `Pin`
    tool), which every compaction keeps word for word. `todos` is the model's task list (the
    `TodoWrite` tool), replaced in place by each call. `shells` are the commands Bash left
    running in the background (``run_in_background``), which BashOutput reads and KillShell
    stops; whoever owns the session closes them."""

    read_files: dict[Path, int] = field(default_factory=dict[Path, int])
    buffer_reads: dict[Path, str] = field(default_factory=dict[Path, str])
    pins: list[str] = field(default_factory=list[str])
    todos: list[TodoItem] = field(default_factory=list[TodoItem])
    shells: BackgroundShells = field(default_factory=BackgroundShells)


class ToolContext(Struct):
    """What a running tool may see and touch.

    `session_state` is the session's mutable state (files read, pins, todos, background
    shells), shared by every copy of the context; `read_files`, `pins`, `todos` and `shells`
    read it. The rest is fixed for the session, except `tool_use_id` and `emit`, which the
    executor sets for each call.
    `session_dir` is the session's folder, where results too long for the model are saved
    (None when the session is not kept); `tool_use_id` is the call being run, set by the
    executor for each call, and `emit` reports its live progress or a nested run's events.
    `ask_model` asks a small, fast model a question of the tool's own (None where no model can
    be reached); `spawn_subagent` starts a nested run (None where the session offers none), and
    `skills` renders a skill (the same).
    `sandbox`, when set, is where Bash runs its commands (`--sandbox`). `web_hosts` are
    the hosts an allow rule names exactly (``WebFetch(domain:127.0.0.1)``, canonical form), the
    only ones WebFetch may reach at a loopback, private or other non-public address.
    """

    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    session_state: SessionState = field(default_factory=SessionState)
    emit: Callable[[ToolReport], None] = _no_progress
    ask_model: AskModel | None = None
    spawn_subagent: SpawnSubagent | None = None
    skills: SkillHost | None = None
    """The session's skills (the Skill tool's way to them); None where the session offers
    none."""
    denied_reads: tuple[str, ...] = ()
    """Absolute path patterns deny rules forbid reading (gitignore-style, as the permission
    rules read them): a search of a folder that holds such files leaves them out."""
    session_dir: Path | None = None
    tool_use_id: str | None = None
    sandbox: Sandbox | None = None
    web_hosts: frozenset[str] = frozenset()
    editor: EditorFiles | None = None
    """Where Read, Write and Edit read and write text files when an editor drives the session
    (ACP); None: the disk."""

    @property
    def read_files(self) -> dict[Path, int]:
        """The files the model has read, with their modification times (the session's)."""
        return self.session_state.read_files

    @property
    def pins(self) -> list[str]:
        """The notes the model pinned (the session's)."""
        return self.session_state.pins

    @property
    def todos(self) -> list[TodoItem]:
        """The model's task list (the session's)."""
        return self.session_state.todos

    @property
    def shells(self) -> BackgroundShells:
        """The commands running in the background (the session's)."""
        return self.session_state.shells

    def progress(self, text: str) -> None:
        """Report live output of the running call (a `ToolCallProgress` through `emit`)."""
        self.emit(ToolCallProgress(self.tool_use_id or "", text))

    def resolve(self, path: str) -> Path:
        """A path from the model, made absolute against the working directory."""
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else self.cwd / candidate


class ToolOutput(Struct, frozen=True):
    """What a tool returns: the content the model sees, and structured data for programs.

    `data` is reported to headless consumers (stream-json's ``tool_use_result``), never to the
    model; `followup` is read by the model after the round's results. `spent` lists the model
    calls the tool made of its own (`ToolContext.ask_model`, a subagent's), which the run adds
    to its usage and cost.
    """

    content: str | tuple[ToolResultContent, ...]
    is_error: bool = False
    data: dict[str, JSON] = field(default_factory=dict[str, JSON])
    spent: tuple[ModelSpend, ...] = ()
    followup: str = ""
    """Text the model reads after the round's results, outside this call's own (a skill's
    instructions after the Skill call's short result); "" for none."""


class ToolFailure(Exception):
    """Raised by a tool for an error the model should read and act on (not a bug)."""


class ToolInputError(ValueError):
    """Raised by `Tool.parse_input` for input that does not fit the tool's schema; its text is
    one line saying what is wrong (``todos.0.status: Input should be 'pending', ...``)."""


InputT = TypeVar("InputT")


class Written(Struct, frozen=True):
    """What one call writes besides its subject, for the protected-path check: `paths` it is
    known to write, as written or absolute; `mentioned`, paths its words name that it may
    write (a program that may write anything); and `unknown`, the destinations known only when
    it runs, as written (`"$f"`, names `xargs` is fed), each joined to its folder."""

    paths: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    mentioned: tuple[str, ...] = ()


class Tool(ABC, Generic[InputT]):
    """One capability the model can call.

    Every declaration below (`name`, `description`, `timeout_s`, `read_only`, `subject_kind`,
    ...) is the instance's; the built-ins set them as class-level defaults. `input_model` is
    only the built-ins' way to derive `input_schema` and `parse_input`, and nobody outside
    `stayer.tools` reads it."""

    name: str
    description: str
    input_model: ClassVar[type[BaseModel]]
    aliases: tuple[str, ...] = ()
    """Other names a call may use for this tool (its names before a rename: `Task` for
    `Agent`); the toolbox finds it by them, and rules written with them apply to it."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """How long one call may run before the executor stops it (a subagent may need an hour)."""
    read_only: bool = False
    subject_kind: SubjectKind = "none"
    """What `permission_subject` is: a path (rules match the resolved path), a command (rules
    judge each simple command of it), a domain, or none."""
    max_result_chars: int = DEFAULT_RESULT_CHARS
    """The longest text one result of this tool may have; never more than `MAX_RESULT_CHARS`.
    A longer one is saved to the session's folder and the model sees a preview."""
    bounds_own_results: bool = False
    """Whether the tool keeps every result within `max_result_chars` itself and says in it
    what it left out (Read's pages, Bash's omission marker).

    The executor then never cuts such a result in its middle, where a cut could hide lines
    between a page's start and the offset it says to continue from (one that still overflows
    is saved whole when there is a session folder, else keeps its start). By default (fail
    closed) the executor does not trust the tool: a longer result is saved with a preview, or
    with no folder loses its middle, with a note.
    """

    def is_read_only(self, tool_input: InputT) -> bool:
        """Whether this call only looks and never changes anything."""
        return self.read_only

    def is_concurrency_safe(self, tool_input: InputT) -> bool:
        """Whether this call may run beside other concurrency-safe calls."""
        return False

    def permission_subject(self, tool_input: InputT) -> str | None:
        """The part of the input permission rules match on (a command, a path), if any."""
        return None

    exits_plan: bool = False
    """Whether calling this tool asks the user to accept a plan and leave plan mode (the
    permission layer asks for it; accepted, the session's mode changes)."""

    reads_under: str | None = None
    """The tool whose deny rules also judge the files this call reads (`read_paths`): Bash's
    are judged as Read's, so a rule denying `Read(.env)` stops `cat .env` as well."""

    writes_under: str | None = None
    """The tool whose rules also judge the files this call writes (its path subject, and
    `write_paths`): Write's, NotebookEdit's and Bash's writes are judged as Edit's, so a rule
    denying `Edit(.env)` stops `Write .env` and `ls > .env` as well (as in Claude Code, whose
    Edit rules apply to every tool that edits files)."""

    def read_paths(self, tool_input: InputT, cwd: Path) -> tuple[str, ...] | None:
        """The files this call, run from the session's `cwd`, reads besides its subject (as
        written, or absolute); None when it cannot tell (then every deny rule of
        `reads_under` with a pattern applies)."""
        return ()

    def write_paths(self, tool_input: InputT, cwd: Path) -> Written:
        """The files and folders this call, run from the session's `cwd`, writes besides its
        subject (a shell command's redirections and the operands its programs write), which
        the permission layer judges as it judges a file tool's path."""
        return Written()

    @abstractmethod
    async def call(self, tool_input: InputT, ctx: ToolContext) -> ToolOutput:
        """Run the tool. Raise `ToolFailure` for errors the model should see."""

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        """The JSON Schema of the input, as the model is shown it."""
        schema = self.input_model.model_json_schema(by_alias=True)
        schema.pop("title", None)
        return cast(Mapping[str, JSON], schema)

    def parse_input(self, raw: Mapping[str, JSON]) -> InputT:
        """The input the model (or a hook, or an approval) gave, as this tool's own; raises
        `ToolInputError` with one line of what does not fit."""
        from pydantic import ValidationError  # loaded with the tools, not at start-up

        try:
            return cast(InputT, self.input_model.model_validate(dict(raw)))
        except ValidationError as exc:
            raise ToolInputError(_problems(exc)) from None
        except Exception as exc:  # a validator that raised something other than a ValueError
            raise ToolInputError(f"{type(exc).__name__}: {exc}") from None

    def input_json(self, tool_input: InputT) -> dict[str, JSON]:
        """A parsed input as JSON again, with what the caller set under its own names (what
        hooks are shown). A tool whose input is the JSON itself (an MCP server's) gives it back
        as it is."""
        if isinstance(tool_input, Mapping):
            return dict(tool_input)
        dumped = cast(Any, tool_input).model_dump(mode="json", by_alias=True, exclude_unset=True)
        return cast(dict[str, JSON], dumped)

    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(self.name, self.description, self.input_schema)


def _problems(exc: ValidationError) -> str:
    """Each problem pydantic found, where it is and what it is, on one line."""
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "input"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)


class ToolSource(Protocol):
    """Tools that come and go while a session runs (an MCP server's, once it is up).

    The toolbox asks at each model call, so a tool that joins is offered from the next call on.
    `specs` are the tools the model is shown now; `tools` are those a call may reach now, by
    name, which may hold more than `specs` (a tool whose schema is deferred until the model
    searches for it is still callable)."""

    def specs(self) -> tuple[ToolSpec, ...]: ...

    def tools(self) -> Mapping[str, Tool[Any]]: ...

    def begin(self) -> None:
        """A run's first request is on its way: what the source does to get its tools (start
        servers, say) no longer competes with it for the processor."""


class Toolbox:
    """The tools of one run: their specs at once, their implementations on first use.

    The model must see every tool's spec in the first request, but the implementations (and
    pydantic, which their input models need) can wait until the model actually calls one. Start-up
    then costs only the specs. `sources` add tools that change while the session runs; they are
    asked afresh each time `specs` or `tools()` is read.
    """

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        load: Callable[[], Sequence[Tool[Any]]],
        sources: Sequence[ToolSource] = (),
    ) -> None:
        self._specs = tuple(specs)
        self._load = load
        self._tools: dict[str, Tool[Any]] | None = None
        self._lock = threading.Lock()
        self.sources = tuple(sources)

    @classmethod
    def of(cls, tools: Sequence[Tool[Any]]) -> Toolbox:
        """A toolbox of tools already made."""
        made = tuple(tools)
        return cls(tuple(tool.spec() for tool in made), lambda: made)

    def with_tools(self, tools: Sequence[Tool[Any]]) -> Toolbox:
        """This toolbox with `tools`, already made, after its own (the caller's tools)."""
        if not tools:
            return self
        made = tuple(tools)
        load = self._load
        specs = (*self._specs, *(tool.spec() for tool in made))
        return Toolbox(specs, lambda: (*load(), *made), self.sources)

    def with_source(self, source: ToolSource) -> Toolbox:
        """This toolbox with the tools of `source` after its own, as they are at each call."""
        box = Toolbox(self._specs, self._load, (*self.sources, source))
        box._tools = self._tools
        return box

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools the model is shown now: the fixed ones, then each source's."""
        if not self.sources:
            return self._specs
        return (*self._specs, *(spec for source in self.sources for spec in source.specs()))

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in the order the model sees them."""
        return tuple(spec.name for spec in self.specs)

    def tools(self) -> dict[str, Tool[Any]]:
        """The implementations by name, loading the fixed ones the first time; a source's
        tool never shadows a fixed one."""
        with self._lock:
            if self._tools is None:
                self._tools = {tool.name: tool for tool in self._load()}
            fixed = self._tools
        if not self.sources:
            return fixed
        found: dict[str, Tool[Any]] = {}
        for source in self.sources:
            found.update(source.tools())
        return {**found, **fixed}

    def find(self, name: str) -> Tool[Any] | None:
        """The tool a call named `name` reaches: by its name, else by one of its `aliases`."""
        tools = self.tools()
        found = tools.get(name)
        if found is None:
            found = next((tool for tool in tools.values() if name in tool.aliases), None)
        return found

    @property
    def loaded(self) -> bool:
        """Whether the implementations are in memory."""
        return self._tools is not None

    def preload(self) -> None:
        """Load the implementations in a background thread, if nobody has yet.

        Called once the first request is on its way: the import runs while the model thinks,
        so the first tool call does not wait for it. Each source is told the same (`begin`).
        """
        for source in self.sources:
            source.begin()
        if self._tools is None and not self._lock.locked():
            threading.Thread(target=self.tools, name="stayer-tools", daemon=True).start()
