"""/memory (open the memory file in the person's editor) and /init (have the model write a
starter STAYER.md).

The project's memory file is the one in use nearest the working directory, up to the
repository's top level: STAYER.md, else CLAUDE.md, AGENTS.md or .claude/CLAUDE.md (as
`context.memory` reads them); with none, a new STAYER.md at the top level (the working
directory outside a repository). `/memory user` opens the user's own, in stayer's folder.
A file that leads out of the project (a symlink) is not opened: the memory loader would not read
it either, and the editor would change what it points at.
"""

from __future__ import annotations

import os
from pathlib import Path

from stayer.config.dirs import config_root
from stayer.context.memory import USER_NAMES, project_root
from stayer.driver import Submit
from stayer.errors import ConfigError
from stayer.session.session import Session

from .commands_entry import Command
from .surface import Repl

PROJECT_FILES = ("STAYER.md", "CLAUDE.md", "AGENTS.md", ".claude/CLAUDE.md")
"""The names /memory looks for in each directory, the one it prefers first."""
OURS = "STAYER.md"


def project_top(cwd: Path) -> Path:
    """Where the project's memory file goes: the repository's top level, else `cwd` (a
    repository at or above the home directory is no project, as `context.memory` has it)."""
    root = project_root(cwd)
    if root is None or Path.home().resolve().is_relative_to(root.resolve()):
        return cwd
    return root


def project_memory(cwd: Path) -> Path:
    """The project's memory file in use (see the module), or where a new one goes."""
    top = project_top(cwd)
    directories = [cwd, *cwd.parents]
    if top in directories:
        directories = directories[: directories.index(top) + 1]
    for directory in directories:
        for name in PROJECT_FILES:
            if (directory / name).is_file():
                return directory / name
    return top / OURS


def user_memory(env: dict[str, str] | None) -> Path:
    """The user's own memory file in stayer's folder: the first that exists, else STAYER.md."""
    folder = config_root(os.environ if env is None else env)
    found = [folder / name for name in reversed(USER_NAMES) if (folder / name).is_file()]
    return found[0] if found else folder / OURS


def _cwd(session: Session) -> Path:
    return Path(session.setup.started.cwd)


def _env(session: Session) -> dict[str, str] | None:
    resolved = session.setup.resolved
    return None if resolved is None else dict(resolved.env)


async def _memory(repl: Repl, argument: str) -> None:
    session = repl.session
    if argument not in ("", "user", "project"):
        repl.say("Write /memory for the project's memory file, or /memory user for your own")
        return
    if argument == "user":
        path, boundary = user_memory(_env(session)), None
    else:
        path, boundary = project_memory(_cwd(session)), project_top(_cwd(session))
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a loop of symlinks (RuntimeError before Python 3.13)
        raise ConfigError(f"{path} is a link that leads nowhere; remove it or fix it") from None
    if boundary is not None and not real.is_relative_to(boundary.resolve()):
        raise ConfigError(f"{path} leads out of the project, to {real}; open it yourself")
    created = _create(path)
    await repl.edit(path)
    if created and _empty(path):
        path.unlink(missing_ok=True)
        repl.say(f"{path} was left empty, so it is not kept")
        return
    repl.say(f"Saved {path}; sessions started from now on read it")


def _create(path: Path) -> bool:
    """Make `path` empty if it is missing; whether it was made."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8"):
            return True
    except FileExistsError:
        if not path.is_file():
            raise ConfigError(
                f"{path} is not a file; move it away, or edit the file you mean"
            ) from None
        return False
    except OSError as error:
        raise ConfigError(f"cannot create {path}: {error.strerror or error}") from None


def _empty(path: Path) -> bool:
    try:
        return not path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return False


def init_prompt(target: Path, others: list[str], exists: bool) -> str:
    """What /init asks of the model, for the memory file at `target`."""
    lines = [
        f"Look over this repository and write {target} for the coding agents who will work "
        "here after you. It is read into the system prompt of every session started in this "
        "project, so keep it short and concrete (well under 200 lines), and write only what an "
        "agent could not work out quickly by itself:",
        "- how to build the project, how to run its tests (all of them, and one alone), and "
        "its linters and formatters;",
        "- the layout: where the main pieces live and how they fit together;",
        "- the conventions the code keeps that differ from the usual ones (style, naming, "
        "errors, how tests are written);",
        "- what tends to trip up a newcomer.",
        "Learn these from the repository itself (README, build and CI files, package "
        "manifests, the code, instructions for other tools such as .cursorrules or "
        ".github/copilot-instructions.md), not from general knowledge, and never write down "
        "a command you have not seen there. Leave out general advice and lists of every file.",
    ]
    if exists:
        lines.append(
            f"{target.name} exists already: read it first, then improve it: correct what is "
            "out of date, add what is missing, keep what is still right."
        )
    if others:
        lines.append(
            f"The project also has {', '.join(others)}, read into every session as well: do "
            f"not repeat what they say in {target.name}."
        )
    return "\n".join(lines)


async def _init(repl: Repl, argument: str) -> None:
    top = project_top(_cwd(repl.session))
    target = top / OURS
    others = [name for name in PROJECT_FILES[1:] if (top / name).is_file()]
    repl.send(Submit(init_prompt(target, others, target.is_file())))
    verb = "improve" if target.is_file() else "write"
    repl.say(f"Asking the model to look over the repository and {verb} {target}")


memory_command = Command(
    "memory", "open the memory file in your editor", _memory, argument_hint="[user]"
)
init_command = Command("init", "have the model write a starter STAYER.md for this project", _init)
