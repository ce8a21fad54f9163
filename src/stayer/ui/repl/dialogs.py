"""The questions the REPL puts to the person in place of the input box: a permission prompt,
and a picker (`/resume`, `/model`).

A dialog is a choice among numbered options, answered by its number, or by Up/Down and Enter;
Escape answers the last option (for a permission prompt: no). An option may take a note: choosing
it opens a line for the note, and Enter sends both. The dialog owns no keys and draws nothing
itself: the app binds the keys to these methods and draws `lines()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path

from msgspec import Struct

from stayer.errors import StayerError
from stayer.events import PermissionRequested
from stayer.permissions import Decision
from stayer.session.session import Session
from stayer.session.settings import rule_problem
from stayer.tools.names import EXIT_PLAN_MODE, WRITING_TOOLS
from stayer.ui.live_output import safe


class Option(Struct, frozen=True):
    label: str
    takes_note: bool = False


class Chosen(Struct, frozen=True):
    index: int | None
    """The option chosen, None when the dialog was dismissed."""
    note: str = ""


class Dialog:
    """One open question: its heading lines (ANSI text allowed), its options, and the answer
    once given (`answer` is awaited by whoever asked)."""

    def __init__(
        self,
        heading: str,
        options: Sequence[Option],
        *,
        footnote: str = "",
        dismiss_is_last: bool = True,
    ) -> None:
        self.heading = heading
        self.options = tuple(options)
        self.footnote = footnote
        self.selected = 0
        self.shown_at: float | None = None
        """When the dialog was first on screen (the app sets it after drawing it)."""
        self.noting = False
        """Whether the note line is open (the option chosen takes a note)."""
        self._dismiss_is_last = dismiss_is_last
        self.answer: asyncio.Future[Chosen] = asyncio.get_running_loop().create_future()

    def move(self, step: int) -> None:
        if not self.noting and self.options:
            self.selected = (self.selected + step) % len(self.options)

    def choose(self, index: int | None = None) -> bool:
        """Choose option `index` (the selected one when None); False when it needs a note first
        (the note line opens)."""
        index = self.selected if index is None else index
        if not 0 <= index < len(self.options):
            return True
        self.selected = index
        if self.options[index].takes_note and not self.noting:
            self.noting = True
            return False
        self._settle(Chosen(index))
        return True

    def give_note(self, note: str) -> None:
        self._settle(Chosen(self.selected, note.strip()))

    def dismiss(self) -> None:
        """Escape: the last option (no) for a question, nothing chosen for a picker."""
        if self.noting:
            self.noting = False
            return
        last = len(self.options) - 1 if self._dismiss_is_last and self.options else None
        self._settle(Chosen(last))

    def cancel(self, reason: str = "") -> None:
        """Nobody will answer (the run was interrupted, the REPL is closing)."""
        self._settle(Chosen(None, reason))

    def _settle(self, chosen: Chosen) -> None:
        if not self.answer.done():
            self.answer.set_result(chosen)

    def option_lines(self) -> list[tuple[bool, str]]:
        """Each option as shown, numbered, with whether it is the selected one."""
        return [
            (number - 1 == self.selected, f"{number}. {option.label}")
            for number, option in enumerate(self.options, start=1)
        ]


def permission_dialog(request: PermissionRequested, shown: str, cwd: Path) -> Dialog:
    """The question for a call the policy asks about, as Claude Code puts it: `shown` is
    what the call will do (the view's description), then the question and three options —
    yes; yes and keep the rule that allows it (only when the policy suggested one); no, with
    a note for the model."""
    options = [Option("Yes")]
    rule = kept_rule(request)
    if rule is not None:
        options.append(Option(f"Yes, and don't ask again for {rule} in this project"))
    options.append(Option("No, and tell the model what to do instead", takes_note=True))
    heading = shown.rstrip("\n") + "\n" + _question(request, cwd)
    if request.agent:  # a subagent asks: say which, before what it would do
        heading = f"{safe(request.agent)} wants to use {safe(request.name)}:\n{heading}"
    return Dialog(heading, options, footnote="Esc to say no")


def kept_rule(request: PermissionRequested) -> str | None:
    """The rule option 2 keeps, or None when there is none it may offer: the first the policy
    suggested, if it allows no more than the option's words ("in this project") promise.
    A file-writing tool's bare name is held to the project (`Edit(/**)`; `Edit` alone would
    allow any file on the machine); any other bare name (`Bash` for a command whose reads
    cannot be told, `WebFetch` for a URL with no host) would allow everything, so it is not
    offered, nor is a suggestion that does not read as one rule."""
    if not request.suggestions:
        return None
    rule = request.suggestions[0]
    if "(" not in rule:
        if rule not in WRITING_TOOLS:
            return None
        rule = f"{rule}(/**)"
    return None if rule_problem(rule) else rule


def decision_for(
    chosen: Chosen, dialog: Dialog, request: PermissionRequested, keep: Callable[[str], None]
) -> Decision | None:
    """The answer a choice in `permission_dialog` gives (None: nobody answered, the driver
    has denied it already); option 2 calls `keep` with `kept_rule` first."""
    if chosen.index is None:
        return None
    if chosen.index == len(dialog.options) - 1:
        return Decision("deny", chosen.note, by="user")
    rule = kept_rule(request)
    if chosen.index == 1 and rule is not None:
        keep(rule)
    return Decision("allow", by="user")


def keeper(session: Session, say: Callable[[str], None]) -> Callable[[str], None]:
    """Option 2's action: the rule in force at once and written to the project's local
    settings; a rule that cannot be kept is one line (the call is still allowed once)."""

    def keep(rule: str) -> None:
        try:
            session.add_rule("allow", rule, save=True)
        except StayerError as error:
            say(f"could not keep the rule: {error}")

    return keep


def _question(request: PermissionRequested, cwd: Path) -> str:
    """The question over the options: what the call does, in a person's words."""
    if request.name == EXIT_PLAN_MODE:
        return "Would you like to go ahead with this plan?"
    path = request.input.get("file_path")
    if isinstance(path, str) and path:
        shown = Path(path)
        with suppress(ValueError):
            shown = shown.resolve().relative_to(cwd)
        return f"Do you want to make this change to {shown}?"
    return "Do you want to proceed?"
