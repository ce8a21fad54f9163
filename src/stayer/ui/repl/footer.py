"""The line under the input box: a passing hint ("Press Ctrl-C again to exit") when there is
one, else the `statusLine` command's line when the settings give one, else `status.footer`
(model, context, cost, mode, what Escape does now)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples

from stayer._version import __version__
from stayer.session.session import Session

from .status import StatusLine, footer, status_input
from .surface import Totals
from .terminal import printable

HINT_S = 1.0
"""How long a hint stays (as long as Ctrl+C's second press may take)."""


class Footer:
    """What the footer shows; `redraw` draws the tail again (safe from any thread)."""

    def __init__(self, redraw: Callable[[], None]) -> None:
        self._redraw = redraw
        self._hint = ""
        self._hint_timer: asyncio.TimerHandle | None = None
        self._line: StatusLine | None = None

    def hint(self, text: str) -> None:
        """Show `text` for `HINT_S`, then the footer again."""
        if self._hint_timer is not None:
            self._hint_timer.cancel()
        self._hint = text
        self._hint_timer = asyncio.get_running_loop().call_later(HINT_S, self._unhint)
        self._redraw()

    def _unhint(self) -> None:
        self._hint, self._hint_timer = "", None
        self._redraw()

    def attach(self, session: Session, cwd: Path) -> str | None:
        """Take `session`'s `statusLine` setting, if it has one; what to warn of, if any.

        Only the user's own settings and `--settings` may name the command: a project's
        files come with the repository, and a cloned one would run its command the moment
        stayer opens there, with no one asked. Such a setting is not run, and said so."""
        resolved = session.setup.resolved
        self._line = None
        if resolved is None:
            return None
        trusted, refused = None, []
        for source in resolved.settled.loaded.sources:
            setting = source.settings.status_line if source.settings is not None else None
            if setting is None:
                continue
            if source.level in ("user", "flag"):
                trusted = setting
            else:
                refused.append(source.origin)
        if trusted is not None:
            self._line = StatusLine(trusted, cwd=cwd, env=resolved.env, on_change=self._redraw)
        if not refused:
            return None
        return (
            f"statusLine in {', '.join(refused)} is not run: a project's settings could run "
            "any command as stayer opens; set it in your own ~/.stayer/settings.json"
        )

    async def detach(self) -> None:
        """Stop the statusLine command (the session is closing)."""
        if self._line is not None:
            await self._line.close()
            self._line = None

    def changed(self, session: Session, cwd: Path, model: str, totals: Totals, width: int) -> None:
        """Run the statusLine command again (it debounces), on what Claude Code runs it on:
        the session starting, each answer, a compaction, a mode switch."""
        if self._line is None:
            return
        status = status_input(
            session_id=session.session_id,
            cwd=cwd,
            project_dir=cwd,
            transcript_path=session.transcript_path,
            model_id=model,
            model_name=model,
            totals=totals,
            version=__version__,
        )
        self._line.trigger(status, width)

    def text(
        self, *, model: str, totals: Totals, mode: str, running: bool, queued: int, width: int
    ) -> StyleAndTextTuples:
        if self._hint:
            return [("class:hint", f"  {self._hint}")]
        if self._line is not None and self._line.text:
            return ANSI(printable(self._line.text)).__pt_formatted_text__()
        return footer(
            model=model, totals=totals, mode=mode, running=running, queued=queued, width=width
        )
