"""What a session keeps of its place in a tree of subagents (`TreeFacet`, a part of `Session`).

A session runs subagents and may be one. What the subagent machinery reads of it (its hooks,
its environment, the abort signal of its run, its transcript writer) and what it keeps for
it (the children running in the background, its depth and its account in the tree's ledger)
are here; the loop reaches the background children through `_take_spent` and `_waiting_on`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from stayer.events import Event
from stayer.loop.abort import AbortSignal
from stayer.messages import ModelSpend

from .assemble import Setup
from .children import Account, Background, Tree
from .transcript import TranscriptWriter

if TYPE_CHECKING:
    from .hook_points import SessionHooks


class TreeFacet:
    """The subagent part of a `Session` (it sets the attributes below as it begins)."""

    setup: Setup
    tree: Tree
    """The bounds and the spend ledger this session's tree of subagents shares."""
    depth: int
    """How deep this session is among subagents (0: the top session)."""
    account: Account
    """The spend of the run going on now, in the tree's ledger."""
    _background: Background | None
    _abort: AbortSignal | None
    _transcript: TranscriptWriter | None
    _hooks: SessionHooks | None

    @property
    def background(self) -> Background:
        """This session's subagents running in the background (made on first use)."""
        if self._background is None:
            self._background = Background(self.tree)
        return self._background

    def adopt(self, writer: TranscriptWriter | None, *, depth: int, account: Account) -> None:
        """Make this derived session a subagent's: its transcript, depth and ledger account."""
        self._transcript, self.depth, self.account = writer, depth, account

    @property
    def abort_signal(self) -> AbortSignal | None:
        """The signal of the run going on (or last run)."""
        return self._abort

    @property
    def transcript_writer(self) -> TranscriptWriter | None:
        return self._transcript

    @property
    def env(self) -> dict[str, str]:
        """The environment the session's commands run with (the process's, then its own)."""
        return {**os.environ, **self.setup.params.tool_context.env}

    @property
    def hooks(self) -> SessionHooks | None:
        """The session's hooks (None when its settings define none)."""
        return self._hooks

    def _take_spent(self) -> tuple[ModelSpend, ...]:
        """For the loop: what the background children that ended spent, billed to this run."""
        if self._background is None:
            return ()
        return self._background.take_spent(self.account)

    def _waiting_on(self) -> AsyncIterator[Event]:
        """For the loop when the model would stop: the background children's events until
        they have all ended (their reports then come through `_take_queued`)."""
        if self._background is None:
            return _nothing()
        return self._background.until_done(self._abort or AbortSignal(), self.account)


async def _nothing() -> AsyncIterator[Event]:
    return
    yield
