"""A prompt too large for the model's window, saved to a file and sent as its head (SPEC §3.1).

A pasted log or file that alone fills the window can be neither summarised away (that would
rewrite the user's request before anything was done) nor cleared (it is not tool output). It is
saved whole in the session's folder, and the model is sent its beginning and where the rest is,
to read in pages or search as the task needs. Nothing of what the user gave is lost.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from stayer.messages import Message, TextBlock, ToolResultBlock, UserMessage

from .compact import CHARS_PER_TOKEN

SAVED_NOTE = (
    "[The user's message was too long to send whole ({chars:,} characters in {lines:,} lines), "
    "so it is saved unchanged at {path}. Its beginning follows; read the rest with the Read "
    "tool (from line {next:,}, with offset and limit) or search it with Grep, as the task "
    "needs.]\n\n"
)


def plain_prompt(message: Message) -> UserMessage | None:
    """`message` if it is words from the user (not tool results), else None."""
    if not isinstance(message, UserMessage):
        return None
    if any(isinstance(block, ToolResultBlock) for block in message.content):
        return None
    return message


def save_prompt(
    message: UserMessage, folder: Path, *, head_tokens: int
) -> tuple[UserMessage, Path] | None:
    """`message` with its text replaced by a head and a reference to the file now holding it
    all, and that file; None when the text is no longer than the head or cannot be saved."""
    words = [b for b in message.content if isinstance(b, TextBlock) and not _reminder(b)]
    text = "\n".join(block.text for block in words)
    room = max(head_tokens, 1) * CHARS_PER_TOKEN
    if len(text) <= room:
        return None
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    path = folder / f"prompt-{digest}.txt"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the user's words only
        with open(fd, "w", encoding="utf-8", errors="surrogatepass") as file:
            file.write(text)
    except OSError:
        return None  # the caller goes on as if there were no folder: nothing is lost
    head, shown = _head(text, room)
    note = SAVED_NOTE.format(chars=len(text), lines=text.count("\n") + 1, path=path, next=shown + 1)
    # what the session added (its reminders, the listing of agents and skills) stays as it is
    others = tuple(block for block in message.content if not any(block is w for w in words))
    return UserMessage((TextBlock(note + head), *others)), path


REMINDER = "<system-reminder>"


def _reminder(block: TextBlock) -> bool:
    """Whether `block` is a note of the session's, not the user's words."""
    return block.text.startswith(REMINDER)


def _head(text: str, room: int) -> tuple[str, int]:
    """The first `room` characters of `text`, ending at a line's end when one is near, and
    how many whole lines that is (a line cut in two is read again from its start)."""
    head = text[:room]
    cut = head.rfind("\n")
    if cut > room * 0.8:
        return head[:cut], head[:cut].count("\n") + 1
    return head, head.count("\n")
