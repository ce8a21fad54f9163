"""A session on disk as it goes: the transcript writer a session opens (`session_writer`),
and the events worth a record of their own beside the conversation (`record`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import assert_never

from stayer.errors import ConfigError
from stayer.events import (
    BlockCompleted,
    BlockStarted,
    Compacted,
    Continuing,
    Event,
    Finished,
    HookRan,
    McpServerStatus,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    ModelSwitched,
    PartialKept,
    PermissionRequested,
    PermissionResolved,
    RequestStarted,
    Retrying,
    SessionStarted,
    SubagentEvent,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolInputDelta,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.tools.names import TODO_WRITE

from .assemble import Setup
from .options import QueryOptions
from .paths import sessions_home
from .transcript import Scrubber, TranscriptWriter


def record(writer: TranscriptWriter, event: Event) -> None:
    """The events worth a record of their own beside the conversation."""
    match event:
        case Compacted():
            writer.event(
                "compact_boundary",
                compactMetadata={
                    "trigger": event.trigger,
                    "method": event.method,
                    "preTokens": event.tokens_before,
                    "postTokens": event.tokens_after,
                },
            )
        case ToolCallFinished():  # on record as it finishes, not when its whole round has
            writer.result(event.result)
            if event.name == TODO_WRITE and "newTodos" in event.data:
                writer.event("todos", todos=event.data["newTodos"])
        case ModelSwitched():
            writer.event("model_fallback", fromModel=event.from_model, toModel=event.to_model)
        case Finished(terminal=Terminal.ABORTED_STREAMING | Terminal.ABORTED_TOOLS):
            writer.event("interrupted", terminalReason=event.terminal.value)
        case (
            Finished()
            | SessionStarted() | RequestStarted() | Retrying() | Withdrawn() | PartialKept()
            | ToolCallStarted() | ToolCallProgress() | PermissionRequested()
            | PermissionResolved() | ToolResultsAppended() | Continuing() | HookRan()
            | McpServerStatus() | SubagentEvent() | MessageStarted() | BlockStarted() | TextDelta()
            | ThinkingDelta() | ToolInputDelta() | BlockCompleted() | MessageDelta()
            | MessageCompleted()
        ):  # fmt: skip
            pass  # the conversation itself holds what these showed (`observe` writes it)
        case _ as unreachable:
            assert_never(unreachable)


def session_writer(
    options: QueryOptions, setup: Setup, env: Mapping[str, str]
) -> TranscriptWriter | None:
    if not options.persist_session:
        return None
    cwd = Path(setup.started.cwd)
    folder = sessions_home(env, cwd, options.sessions_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        writable = os.access(folder, os.W_OK)
    except OSError as error:
        writable, reason = False, error.strerror or str(error)
    else:
        reason = "not writable"
    if not writable:
        where = "sessions_dir" if options.sessions_dir is not None else "STAYER_CONFIG_DIR"
        raise ConfigError(
            f"cannot keep sessions in {folder} ({reason}); set {where} to a folder "
            "you can write, or pass --no-session-persistence"
        )
    return TranscriptWriter(
        path=folder / f"{setup.started.session_id}.jsonl",
        session_id=setup.started.session_id,
        cwd=str(cwd),
        git_branch=git_branch(cwd),
        scrub=Scrubber.of(os.environ, env),
        mode=lambda: setup.permissions.mode,
    )


def git_branch(cwd: Path) -> str | None:
    """The branch checked out in the repository holding `cwd`, read from `.git/HEAD`."""
    for directory in (cwd, *cwd.parents):
        head = directory / ".git" / "HEAD"
        try:
            text = head.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        return text.removeprefix("ref: refs/heads/") if text.startswith("ref: ") else "HEAD"
    return None
