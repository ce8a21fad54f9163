"""The REPL's live view of subagents: each running one under the call that started it, with
its type and task, its latest action and a count of its tool calls, updated as its events come.

A subagent that ends leaves one line (done or why not, its tool calls, its time): under its
call, printed with the call's result, or for a background one (its call returned at once) as
an item of its own when it ends. A subagent of a subagent shows under its parent, indented.
Nothing here prints: `Subagents` keeps what is live and says what to print; the view lays it
out. Only running subagents and ended ones whose call has not finished are kept, so nothing
grows with the conversation.
"""

from __future__ import annotations

from collections.abc import Callable

from msgspec import Struct
from rich.text import Text

from stayer.events import (
    BlockStarted,
    Finished,
    PermissionRequested,
    PermissionResolved,
    SubagentEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
)
from stayer.ui.live_output import safe
from stayer.ui.wording import UNFINISHED, agent_label, subagent_outcome, task_status, unwrapped

from .tool_lines import key_argument

INDENT = "    "
"""How much deeper a subagent of a subagent is drawn."""


class _Agent(Struct):
    """One subagent the view has heard of."""

    label: str
    call: str
    """The tool call that started it."""
    parent: str
    """The subagent that made that call ("" for the session's own call)."""
    depth: int
    started: float
    background: bool = False
    tool_calls: int = 0
    action: str = "starting"
    waiting: bool = False
    ended: str = ""
    """How it ended ("" while it runs)."""
    failed: bool = False


class Subagents:
    """The subagents running now, and those ended whose call is still running."""

    def __init__(self, *, now: Callable[[], float], cwd: Callable[[], str | None]) -> None:
        self._now = now
        self._cwd = cwd
        self._agents: dict[str, _Agent] = {}

    def __bool__(self) -> bool:
        return bool(self._agents)

    def take(self, wrapped: SubagentEvent) -> _Agent | None:
        """Note a nested run's event; the subagent when this event ended a background one
        whose call is no longer live (its line is then to be printed), else None."""
        agent = self._note_chain(wrapped)
        inner = unwrapped(wrapped)[0].event
        match inner:
            case ToolCallStarted(name=name, input=tool_input):
                agent.tool_calls += 1
                argument = key_argument(name, tool_input, self._cwd())
                agent.action = f"{safe(name)}({argument})" if argument else safe(name)
            case BlockStarted(block_type="thinking") | ThinkingDelta():
                agent.action = "thinking"
            case BlockStarted(block_type="text") | TextDelta():
                agent.action = "writing"
            case PermissionRequested():
                agent.waiting = True
            case PermissionResolved():
                agent.waiting = False
            case Finished():
                agent.ended = subagent_outcome(inner, agent.tool_calls)
                agent.failed = task_status(inner.terminal) != "completed"
                return agent if agent.background else None
            case _:
                pass
        return None

    def _note_chain(self, wrapped: SubagentEvent) -> _Agent:
        """Every subagent along the chain of wrappers known (the outer ones too, should their
        own start have been missed); the innermost, whose event this is."""
        parent, depth, level = "", 1, wrapped
        while True:
            key = level.agent_id or f"call:{level.parent_tool_use_id}"
            agent = self._agents.get(key)
            if agent is None:
                label = safe(agent_label(level.agent_type, level.description))
                agent = _Agent(label, level.parent_tool_use_id, parent, depth, self._now())
                self._agents[key] = agent
            agent.background = agent.background or level.background
            if not isinstance(level.event, SubagentEvent):
                return agent
            parent, depth, level = key, depth + 1, level.event

    def unfinished(self) -> list[Text]:
        """The run ended: a line for each subagent still live (a background one whose end
        never came), and none is live any more."""
        left = [agent for agent in self._agents.values() if agent.parent == "" and not agent.ended]
        for agent in left:
            agent.ended, agent.failed = UNFINISHED, True
        self._agents.clear()
        return [self._ended_line(agent, prefix="", background=agent.background) for agent in left]

    def forget(self, agent: _Agent) -> None:
        """A background subagent's end is printed: it and what it ran are no longer live."""
        keys = [key for key, kept in self._agents.items() if kept is agent]
        for key in keys:
            keys += [k for k, child in self._agents.items() if child.parent == key]
        for key in keys:
            self._agents.pop(key, None)

    def finished_under(self, call: str) -> list[Text]:
        """The call `call` finished: the lines of the subagents it ran (each one's end), to
        print with its result; those it runs in the background stay live."""
        keys = self._tree(call)
        lines = [
            self._ended_line(self._agents[key])
            for key in keys
            if self._agents[key].parent == "" and not self._running_on(self._agents[key])
        ]
        for key in keys:
            if not self._running_on(self._agents[key]):
                del self._agents[key]
        return lines

    def drop_under(self, calls: set[str]) -> None:
        """These calls were interrupted: what ran under them in the foreground is gone."""
        for call in calls:
            for key in self._tree(call):
                if not self._agents[key].background:
                    self._agents.pop(key, None)

    def rows_under(self, call: str, width: int) -> list[Text]:
        """The live lines of the subagents a running call started."""
        return self._rows(self._tops(lambda agent: agent.call == call), width)

    def detached_rows(self, running: set[str], width: int) -> list[Text]:
        """The live lines of background subagents whose call has returned."""
        return self._rows(self._tops(lambda agent: agent.call not in running), width)

    def ended_line(self, agent: _Agent) -> Text:
        """A background subagent's end, as an item of its own."""
        return self._ended_line(agent, prefix="", background=True)

    # --- layout ------------------------------------------------------------------------

    def _tops(self, belongs: Callable[[_Agent], bool]) -> list[str]:
        return [key for key, agent in self._agents.items() if agent.parent == "" and belongs(agent)]

    def _tree(self, call: str) -> list[str]:
        """The subagents `call` started and theirs, outermost first."""
        found = [key for key, agent in self._agents.items() if agent.call == call]
        for key in found:
            found += [k for k, agent in self._agents.items() if agent.parent == key]
        return found

    def _running_on(self, agent: _Agent) -> bool:
        return agent.background and not agent.ended

    def _rows(self, keys: list[str], width: int) -> list[Text]:
        rows: list[Text] = []
        for key in keys:
            agent = self._agents[key]
            rows += self._agent_rows(agent, width)
            children = [k for k, child in self._agents.items() if child.parent == key]
            rows += self._rows(children, width)
        return rows

    def _agent_rows(self, agent: _Agent, width: int) -> list[Text]:
        indent = "  " + INDENT * (agent.depth - 1)
        if agent.ended:
            return [self._ended_line(agent, prefix=indent)]
        elapsed = max(self._now() - agent.started, 0.0)
        calls = f"{agent.tool_calls} tool call" + ("" if agent.tool_calls == 1 else "s")
        head = Text(f"{indent}↳ ", style="dim")
        head.append(agent.label, style="bold")
        head.append(f" · {calls} · {elapsed:.0f}s", style="dim")
        if agent.waiting:
            action = Text(f"{indent}    ? waiting for your answer", style="yellow")
        else:
            action = Text(f"{indent}    {agent.action}", style="dim")
        return [_cut(head, width), _cut(action, width)]

    def _ended_line(self, agent: _Agent, *, prefix: str = "  ", background: bool = False) -> Text:
        mark = Text("✗ " if agent.failed else "✓ ", style="red" if agent.failed else "green")
        line = Text(prefix) + mark
        line.append(agent.label, style="bold")
        where = " (in the background)" if background else ""
        line.append(f"{where} · {agent.ended}", style="dim")
        return line


def _cut(text: Text, width: int) -> Text:
    text.no_wrap = True
    text.overflow = "ellipsis"
    text.truncate(max(width, 4), overflow="ellipsis")
    return text
