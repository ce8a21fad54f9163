"""What the REPL's keys and layout reach of the app: its buffers, the question on screen, what
the tail shows, and the actions keys trigger. The app implements it; `keys` and `layout` know
only this, so neither imports the app that builds them."""

from __future__ import annotations

from typing import Protocol

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.formatted_text import StyleAndTextTuples

from .dialogs import Dialog
from .paste import Pastes


class Controls(Protocol):
    buffer: Buffer
    """The input box."""
    note: Buffer
    """The line a permission question's note is typed in."""
    pastes: Pastes
    live_text: str
    """The view's live text for this frame."""

    @property
    def dialog(self) -> Dialog | None:
        """The question on screen now."""

    @property
    def dialog_ready(self) -> bool:
        """Whether the question takes an answer now (see the app's `ARM_S`)."""

    @property
    def dialog_hint(self) -> str:
        """The line under the question's options (how to answer, once a key would)."""

    @property
    def running(self) -> bool:
        """Whether a run (or a `!command`) is going: Escape and Ctrl+C stop it."""

    @property
    def queued_texts(self) -> list[str]:
        """Prompts typed during the run and not yet taken by it."""

    def footer_text(self) -> StyleAndTextTuples: ...

    def take(self, typed: str) -> None:
        """What the person entered (a command, `!command`, or a prompt)."""

    def interrupt(self) -> None: ...

    def ctrl_c_idle(self) -> None: ...

    def cycle_mode(self) -> None: ...

    def expand_last(self) -> None: ...

    def show_question(self) -> None:
        """Print the whole of the question on screen above the tail (a tall one is cut)."""

    def exit(self) -> None: ...

    def focus_input(self) -> None: ...

    def focus_note(self) -> None: ...
