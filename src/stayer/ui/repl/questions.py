"""The questions waiting for the person (permission prompts, pickers), the first on screen,
and when it may take an answer.

A question takes no answer (a number, Enter) until it has been on screen `ARM_S`, and `ARM_S`
after the last key typed into the input box: keys typed ahead or mid-sentence are meant for the
input box, go there, and must not approve a call nobody has read.
"""

from __future__ import annotations

import time

from .dialogs import Chosen, Dialog

ARM_S = 0.4


class Questions:
    """Open questions in the order asked; the app tells it when a frame was drawn and when the
    input box changed."""

    def __init__(self) -> None:
        self._open: list[Dialog] = []
        self._typed_at = 0.0

    def __bool__(self) -> bool:
        return bool(self._open)

    @property
    def current(self) -> Dialog | None:
        """The question on screen (the first asked)."""
        return self._open[0] if self._open else None

    @property
    def ready(self) -> bool:
        """Whether the question on screen takes an answer now (see the module)."""
        dialog = self.current
        if dialog is None or dialog.noting or dialog.shown_at is None:
            return False
        return time.monotonic() - max(dialog.shown_at, self._typed_at) >= ARM_S

    def typed(self) -> None:
        """A key changed the input box."""
        self._typed_at = time.monotonic()

    def drawn(self) -> None:
        """A frame is on screen: the question in it is seen from now."""
        dialog = self.current
        if dialog is not None and dialog.shown_at is None:
            dialog.shown_at = time.monotonic()

    async def ask(self, dialog: Dialog) -> Chosen:
        """Put `dialog` in line and wait for its answer."""
        self._open.append(dialog)
        try:
            return await dialog.answer
        finally:
            self._open.remove(dialog)

    def cancel_all(self, reason: str = "") -> None:
        """Nobody will answer these (the run was interrupted, the REPL is closing)."""
        for dialog in self._open:
            dialog.cancel(reason)
