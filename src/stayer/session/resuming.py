"""Which saved conversation a session goes on with, and under which id (`--resume`,
`--continue`, `--fork-session`, a given `--session-id`): found, read and checked before the
session opens."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path

from msgspec.structs import replace

from stayer.errors import ConfigError

from .options import QueryOptions
from .paths import sessions_home
from .resolve import working_directory
from .transcript import Loaded, load, recorded_cwd, summaries


def saved_to_resume(
    options: QueryOptions, env: Mapping[str, str]
) -> tuple[Loaded | None, QueryOptions]:
    """The saved conversation `options` asks to go on with, and the options to go on under
    (its session id, or a new one when forking or importing)."""
    resuming = options.resume is not None or options.continue_session
    if not resuming and options.session_id is None:
        return None, options
    cwd = working_directory(options)
    folder = sessions_home(env, cwd, options.sessions_dir)
    _check_new_id(options, folder, resuming=resuming)
    if not resuming:
        return None, options
    path = _transcript_to_resume(options, folder, cwd)
    try:
        loaded = load(path)
        recorded = recorded_cwd(path)
    except OSError as error:
        raise ConfigError(f"cannot read the session at {path}: {error.strerror}") from None
    if not loaded.messages:
        raise ConfigError(f"{path} holds no conversation to resume")
    if recorded is not None and Path(recorded) != cwd:
        # asked for by name, so it goes on; but a folder name can stand for two directories
        note = f"session {path.stem} was recorded in {recorded}, not here ({cwd}); going on here"
        loaded = replace(loaded, warnings=(*loaded.warnings, note))
    own = path.parent == folder and loaded.session_id == path.stem
    from .resume_state import with_recorded_mode  # only a resume needs it

    # the mode it was left in, unless this run names one
    options, loaded = with_recorded_mode(options, loaded, own=path.parent == folder)
    if options.fork_session or not own:
        return loaded, replace(options, session_id=options.session_id or str(uuid.uuid4()))
    return loaded, replace(options, session_id=path.stem)


def _check_new_id(options: QueryOptions, folder: Path, *, resuming: bool) -> None:
    """A given session id names a new session: with --resume or --continue only for the fork
    (as Claude Code rules), and never one already saved, whose file it would write a second
    conversation into (a session that writes nothing may share an id, say to tag its logs)."""
    if options.session_id is None:
        return
    if resuming and not options.fork_session:
        raise ConfigError(
            "a session id with --resume or --continue needs --fork-session (the fork gets the "
            "id); leave the id out to go on under the resumed session's own"
        )
    try:
        session_id = str(uuid.UUID(options.session_id))
    except ValueError:
        return  # not a UUID at all: `prepare` says so
    if options.persist_session and (folder / f"{session_id}.jsonl").exists():
        raise ConfigError(
            f"session {session_id} already exists; use --resume {session_id} to go on with it, "
            "or give another id"
        )


def _transcript_to_resume(options: QueryOptions, folder: Path, cwd: Path) -> Path:
    if options.resume is None:  # --continue: the latest session begun in this directory
        latest = summaries(folder, cwd=cwd, limit=1)
        if not latest:
            raise ConfigError(f"no saved session to continue in {folder}; start one first")
        return latest[0].path
    given = options.resume
    if given.endswith(".jsonl") or os.sep in given:
        try:
            path = Path(given).expanduser()
        except RuntimeError:  # `~name` for a user that does not exist
            raise ConfigError(f"--resume {given}: no such home directory; give a path") from None
        if not path.is_file():
            raise ConfigError(f"--resume {given}: no such transcript file")
        return path
    try:
        session_id = str(uuid.UUID(given))
    except ValueError:
        raise ConfigError(
            f"--resume {given!r}: give a session id (a UUID) or a transcript's path"
        ) from None
    path = folder / f"{session_id}.jsonl"
    if not path.is_file():
        raise ConfigError(
            f"no session {session_id} saved for this folder; `stayer --resume` lists them"
        )
    return path
