"""The REPL's keys, as Claude Code's are: Enter sends (a trailing `\\` or Alt+Enter or Ctrl+J
adds a line), Escape or Ctrl+C stops a run, Ctrl+C twice or Ctrl+D on an empty prompt leaves,
Shift+Tab steps the permission mode, Ctrl+O shows the last result whole; while a question is
asked, its number answers it (or Up/Down and Enter; Escape says no). Everything else is
prompt_toolkit's Emacs-style editing, Up/Down history and Ctrl+R search."""

from __future__ import annotations

from prompt_toolkit.filters import Condition
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.key_binding.key_bindings import KeyBindingsBase
from prompt_toolkit.keys import Keys

from .controls import Controls
from .entry import entered
from .paste import paste_bindings

NEW_LINE_KEYS = ("\x1b\r", "\x1b[13;2u", "\x1b[27;2;13~", "\x1b[13;3u", "\x1b[27;3;13~")
"""What terminals send for Alt+Enter and Shift+Enter (plain, CSI u, xterm's modifyOtherKeys):
read as Ctrl+J, the new-line key (prompt_toolkit reads modifyOtherKeys' as Enter, which sent
the message)."""


def read_new_line_keys() -> None:
    """Teach prompt_toolkit's input parser `NEW_LINE_KEYS` (its table is global; these
    sequences mean nothing else)."""
    for sequence in NEW_LINE_KEYS:
        ANSI_SEQUENCES[sequence] = Keys.ControlJ


def key_bindings(repl: Controls) -> KeyBindingsBase:
    read_new_line_keys()
    return merge_key_bindings(
        [_typing(repl), _running(repl), _asking(repl), paste_bindings(repl.pastes)]
    )


def _typing(repl: Controls) -> KeyBindings:
    keys = KeyBindings()
    # the input box takes keys unless a question is ready for its answer or its note is open
    typing = Condition(lambda: not repl.dialog_ready) & ~_noting(repl)

    @keys.add("enter", filter=typing)
    def _enter(event: KeyPressEvent) -> None:
        buffer = repl.buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            buffer.apply_completion(state.current_completion)
            if entered(buffer.text) != "command":  # a path chosen: go on typing
                return
        text = buffer.text
        if text.endswith("\\") and buffer.cursor_position == len(text):
            buffer.delete_before_cursor()
            buffer.insert_text("\n")
            return
        if not text.strip():
            return
        buffer.append_to_history()
        buffer.reset()
        repl.take(text)

    @keys.add("c-j", filter=typing)  # also Alt+Enter and Shift+Enter: see `NEW_LINE_KEYS`
    def _newline(event: KeyPressEvent) -> None:
        repl.buffer.insert_text("\n")

    keys.add("tab", filter=typing)(lambda event: _complete(repl))

    @keys.add("c-d", filter=typing & Condition(lambda: not repl.buffer.text))
    def _leave(event: KeyPressEvent) -> None:
        repl.exit()

    @keys.add("s-tab")
    def _mode(event: KeyPressEvent) -> None:
        repl.cycle_mode()

    @keys.add("c-o", filter=typing)
    def _expand(event: KeyPressEvent) -> None:
        repl.expand_last()

    @keys.add("c-c", filter=typing & Condition(lambda: not repl.running))
    def _ctrl_c(event: KeyPressEvent) -> None:
        repl.ctrl_c_idle()

    return keys


def _complete(repl: Controls) -> None:
    """Tab: the next completion (the first, when none is chosen yet)."""
    buffer = repl.buffer
    if buffer.complete_state is not None:
        buffer.complete_next()
    else:
        buffer.start_completion(select_first=True)


def _running(repl: Controls) -> KeyBindings:
    keys = KeyBindings()
    running = Condition(lambda: repl.running)
    completing = Condition(lambda: repl.buffer.complete_state is not None)

    # not eager: Alt+<key> (Escape then the key) is editing, never an interrupt; the wait to
    # tell them apart is the app's `timeoutlen`
    @keys.add("escape", filter=running & ~completing & Condition(lambda: repl.dialog is None))
    @keys.add("c-c", filter=running)
    def _interrupt(event: KeyPressEvent) -> None:
        repl.interrupt()

    return keys


def _asking(repl: Controls) -> KeyBindings:
    keys = KeyBindings()
    asking = Condition(lambda: repl.dialog is not None and not repl.dialog.noting)
    ready = Condition(lambda: repl.dialog_ready)
    noting = _noting(repl)

    for digit in "123456789":
        keys.add(digit, filter=ready)(lambda event, index=int(digit) - 1: _chose(repl, index))
    keys.add("enter", filter=ready)(lambda event: _chose(repl, None))
    keys.add("up", filter=ready)(lambda event: _move(repl, -1))
    keys.add("down", filter=ready)(lambda event: _move(repl, 1))
    keys.add("tab", filter=ready)(lambda event: _move(repl, 1))

    @keys.add("escape", filter=(asking | noting) & ~_completing(repl))
    def _escape(event: KeyPressEvent) -> None:
        if repl.dialog is not None:
            repl.dialog.dismiss()
            repl.focus_input()

    keys.add("c-o", filter=asking)(lambda event: repl.show_question())

    @keys.add("enter", filter=noting)
    def _note(event: KeyPressEvent) -> None:
        if repl.dialog is not None:
            repl.dialog.give_note(repl.note.text)
            repl.focus_input()

    return keys


def _completing(repl: Controls) -> Condition:
    return Condition(lambda: repl.buffer.complete_state is not None)


def _noting(repl: Controls) -> Condition:
    return Condition(lambda: repl.dialog is not None and repl.dialog.noting)


def _move(repl: Controls, step: int) -> None:
    if repl.dialog is not None:
        repl.dialog.move(step)


def _chose(repl: Controls, index: int | None) -> None:
    dialog = repl.dialog
    if dialog is None:
        return
    if dialog.choose(index):
        repl.focus_input()
    else:
        repl.focus_note()
