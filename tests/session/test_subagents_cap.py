"""The cap on running subagents never deadlocks: a session waiting on its children (in a
foreground call, or at its end for its background ones) gives its place back meanwhile, and
takes one again before it goes on; and the cap still bounds the children doing work."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import stayer
from stayer.events import Finished, StreamEvent, Terminal
from stayer.messages import AssistantMessage, ToolUseBlock
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, text
from stayer.session.children import Tree

from .subagent_kit import agent, options
from .test_subagents import run

MARKERS = ("AAA", "BBB")


class Fanout:
    """The model of a tree: the lead starts `width` agents of type a, each a starts `fan` of
    type b, all at once (in the background when asked); every later call, and every b, only
    answers. It notes how many children held a place at each child's model call."""

    def __init__(self, *, width: int, fan: int, background: bool) -> None:
        self.width, self.fan, self.background = width, fan, background
        self.tree: Tree | None = None
        self.calls: Counter[str] = Counter()
        self.held: list[int] = []

    @property
    def name(self) -> str:
        return "anthropic"

    def _reply(self, who: str, request: ModelRequest) -> Reply:
        answered = any(isinstance(m, AssistantMessage) for m in request.messages)
        if who == "BBB" or answered:
            return text(f"{who} done")
        kind, count = ("b", self.fan) if who == "AAA" else ("a", self.width)
        asked = {"prompt": "go", "subagent_type": kind, "run_in_background": self.background}
        n = self.calls[who]
        return Reply(
            tuple(ToolUseBlock(id=f"{who}{n}-{i}", name="Spawn", input=asked) for i in range(count))
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        system = str(request.system)
        who = next((m for m in MARKERS if m in system), "lead")
        self.calls[who] += 1
        if who != "lead":
            assert self.tree is not None
            self.held.append(self.tree.running)
        async for event in ScriptedProvider([self._reply(who, request)]).stream(request):
            yield event

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
@pytest.mark.parametrize(("cap", "width"), [(None, 10), ("1", 1), ("2", 3)])
async def test_a_tree_wider_than_the_cap_finishes_within_the_cap(
    tmp_path: Path, cap: str | None, width: int, background: bool
) -> None:
    model = Fanout(width=width, fan=2, background=background)
    env = {} if cap is None else {"CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": cap}
    agents = {"a": agent("AAA"), "b": agent("BBB")}
    async with stayer.Session(options(tmp_path, model, agents=agents, env=env)) as session:
        model.tree = session.tree
        events = await run(session, "go")
        assert session.tree.running == 0

    finished = events[-1]
    assert isinstance(finished, Finished)
    assert finished.terminal is Terminal.COMPLETED
    answers = 2 if background else 1  # in the background, each also answers its children's news
    assert (model.calls["AAA"], model.calls["BBB"]) == (width * (1 + answers), width * 2)
    limit = 10 if cap is None else int(cap)
    assert model.held and max(model.held) <= limit
    assert min(model.held) >= 1  # a child makes a model call only in a place of its own
