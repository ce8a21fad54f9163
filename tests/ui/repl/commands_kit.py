"""What the slash-command tests share: a REPL that records what commands do through the
surface, over a real Session opened against the fake model server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from stayer.driver import Operation
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from stayer.ui.repl.commands import Commands
from stayer.ui.repl.surface import Totals
from tests.fakes.model_server import FakeModelServer


class RecordingRepl:
    """The `Repl` surface, recording each call; `picks` are the answers `pick` gives in turn
    (None: the person pressed Escape), `on_edit` plays the person in their editor."""

    def __init__(
        self,
        session: Session,
        *,
        totals: Totals | None = None,
        running: bool = False,
        finishing: bool = False,
        picks: Sequence[int | None] = (),
        on_edit: Callable[[Path], object] | None = None,
    ) -> None:
        self._session = session
        self._totals = totals or Totals()
        self._running = running
        self._finishing = finishing
        self.settled = 0
        self._picks = list(picks)
        self._on_edit = on_edit
        self.said: list[str] = []
        self.sent: list[Operation] = []
        self.picked: list[tuple[str, list[str]]] = []
        self.edited: list[Path] = []
        self.resumed: list[str] = []
        self.exited = False

    @property
    def session(self) -> Session:
        return self._session

    @property
    def totals(self) -> Totals:
        return self._totals

    @property
    def running(self) -> bool:
        return self._running

    async def settle(self) -> None:
        self.settled += 1
        if self._finishing:  # the run shown ended was only stopping its background work
            self._running = False

    def send(self, operation: Operation) -> None:
        self.sent.append(operation)

    def say(self, text: str) -> None:
        self.said.append(text)

    async def pick(self, title: str, choices: Sequence[str]) -> int | None:
        self.picked.append((title, list(choices)))
        return self._picks.pop(0) if self._picks else None

    async def edit(self, path: Path) -> None:
        self.edited.append(path)
        if self._on_edit is not None:
            self._on_edit(path)

    async def resume(self, session_id: str) -> None:
        self.resumed.append(session_id)

    def exit(self) -> None:
        self.exited = True


def options(server: FakeModelServer, cwd: Path, **more: Any) -> QueryOptions:
    """A session in `cwd` against `server`, with user folders of its own (`config/` and
    `claude/` in `cwd`), so nothing one test saves there reaches another."""
    env = {
        **server.env(),
        "STAYER_CONFIG_DIR": str(cwd / "config"),
        "CLAUDE_CONFIG_DIR": str(cwd / "claude"),
        **more.pop("env", {}),
    }
    return QueryOptions(cwd=cwd, env=env, **more)


@asynccontextmanager
async def opened(server: FakeModelServer, cwd: Path, **more: Any) -> AsyncIterator[Session]:
    """A real session, closed after the test; its MCP servers start as it opens, as the
    REPL has them start."""
    session = await Session.open(options(server, cwd, **more))
    session.start_mcp()
    try:
        yield session
    finally:
        await session.aclose()


async def run(repl: RecordingRepl, line: str, table: Commands | None = None) -> list[str]:
    """Type `line` at the prompt; what the person reads because of it."""
    before = len(repl.said)
    await (table or Commands()).run(repl, line)
    return repl.said[before:]
