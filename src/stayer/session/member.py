"""What a session is to the subagent machinery (`spawn`, `subagents`): a member of a tree.

`spawn` and `subagents` make and run children of a session, and read a few things of the
session that asks. They name it by this protocol rather than by `Session`, so that `session`,
which starts them, is not imported back by them: the import runs one way, and what the
subagent code may touch of a session is written down here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from stayer.events import Event, SessionStarted
from stayer.loop.abort import AbortSignal
from stayer.messages import ContentBlock
from stayer.permissions import PermissionMode

from .assemble import Setup
from .children import Account, Background, Tree
from .transcript import TranscriptWriter

if TYPE_CHECKING:
    from stayer.tools.base import ToolSource

    from .hook_points import SessionHooks


class Member(Protocol):
    """A session of a tree: the top one, or a subagent's."""

    setup: Setup
    tree: Tree
    depth: int
    account: Account

    @property
    def session_id(self) -> str: ...

    @property
    def permission_mode(self) -> PermissionMode: ...

    @property
    def transcript_path(self) -> Path | None: ...

    @property
    def transcript_writer(self) -> TranscriptWriter | None: ...

    @property
    def env(self) -> dict[str, str]: ...

    @property
    def hooks(self) -> SessionHooks | None: ...

    @property
    def background(self) -> Background: ...

    @property
    def abort_signal(self) -> AbortSignal | None: ...

    def mcp_source(self) -> ToolSource | None: ...

    def derive(
        self,
        *,
        system_prompt: str | None = None,
        tools: str | Sequence[str] | None = None,
        model: str | None = None,
        permission_mode: str | None = None,
        cwd: Path | None = None,
    ) -> Member: ...

    def adopt(self, writer: TranscriptWriter | None, *, depth: int, account: Account) -> None: ...

    def announce(self) -> SessionStarted: ...

    def submit(
        self, prompt: str | Sequence[ContentBlock], *, abort: AbortSignal | None = None
    ) -> AsyncGenerator[Event, None]: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Member: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...
