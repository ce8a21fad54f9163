"""What the built-in tools share: their input base model, file-state rules, line numbering.

The tools themselves live one per module (`bash`, `read`, `write`, `edit`, `glob`, `grep`,
`notebook`, `webfetch`, `todo`, `pin`, `exit_plan`); `stayer.tools.registry.builtin_tools()`
collects them.
This package module imports none of them, so each can import these helpers without a cycle.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from stayer.exec import CommandResult, run_argv
from stayer.exec.child_env import child_env
from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.textfile import UTF8, TextEncoding, encode_for

MAX_LINE_CHARS = 2000
"""Lines longer than this are cut when shown to the model (Read, Edit snippets)."""

SEARCH_TIMEOUT_S = 60.0
"""How long Glob and Grep let ripgrep run."""

VCS_DIRECTORIES = (".git", ".hg", ".svn", ".bzr", ".jj")
"""Version-control directories, never searched even when hidden files are."""


def _tidy_schema(schema: dict[str, Any]) -> None:
    """Make the schema read like Claude Code's: optional fields are plain types, no titles.

    Pydantic spells ``int | None = None`` as ``anyOf: [integer, null]`` with ``default: null``;
    models trained on Claude Code expect ``{"type": "integer"}`` and simply omit the field.
    """
    # The model sees field descriptions; the input model's docstring is for programmers.
    schema.pop("description", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        options = prop.get("anyOf")
        if isinstance(options, list):
            concrete = [option for option in options if option.get("type") != "null"]
            if len(concrete) == 1 and len(concrete) < len(options):
                del prop["anyOf"]
                prop.update(concrete[0])
                if prop.get("default", ...) is None:
                    del prop["default"]


class ToolInput(BaseModel):
    """Base of every built-in tool's input: unknown fields are rejected, aliases accepted."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        json_schema_extra=_tidy_schema,
    )


def tool_env(ctx: ToolContext) -> dict[str, str]:
    """The environment for a child process: ours, overlaid with the context's variables,
    without stayer's credentials (`child_env`)."""
    return child_env({**os.environ, **ctx.env})


def env_value(ctx: ToolContext, name: str) -> str | None:
    """A setting from the context's variables, else from our own environment."""
    return ctx.env.get(name, os.environ.get(name))


def find_ripgrep() -> Path | None:
    """The `rg` binary: the one installed beside our Python (PyPI `ripgrep`), else on PATH."""
    beside = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if beside.is_file():
        return beside
    found = shutil.which("rg")
    return Path(found) if found else None


_UNREADABLE_ENTRY = re.compile(r"rg: (?:(?P<path>.+): )?[^:]+ \(os error (?:1|2|3|13|20|22)\)")
"""rg's line for one entry it could not read: gone (ENOENT, or ENOTDIR when a file took its
place; under /proc, ESRCH or EINVAL for a process that is ending) or closed to us (EACCES,
EPERM)."""


def only_unreadable_entries(stderr: str) -> bool:
    """Whether every line of rg's `stderr` is an entry below the search directory that could
    not be read (it vanished during the walk, or is closed to us), nothing worse."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    found = [_UNREADABLE_ENTRY.fullmatch(line) for line in lines]
    return bool(lines) and all(
        match is not None and match["path"] not in (".", "./") for match in found
    )


async def ripgrep(
    args: Sequence[str],
    *,
    cwd: Path,
    ctx: ToolContext,
    max_output_chars: int,
    skip_unreadable: bool = False,
) -> CommandResult:
    """Run rg with `args` in `cwd`; `ToolFailure` if rg is missing, failed, or timed out.

    Exit code 1 (nothing matched) is a normal result. Exit code 2 with output means some
    paths could not be searched; the result is kept and the caller may mention stderr. With
    `skip_unreadable`, so is exit code 2 without output when all rg could not do was read
    some entries below `cwd` (a walk of /proc meets processes that end while it runs).
    """
    rg = find_ripgrep()
    if rg is None:
        raise ToolFailure(
            "ripgrep (rg) is not available. It normally comes with stayer (the `ripgrep` "
            "Python package); reinstall stayer or put rg on PATH."
        )
    try:
        result = await run_argv(
            [str(rg), "--no-config", *args],
            cwd=cwd,
            env=tool_env(ctx),
            timeout_s=SEARCH_TIMEOUT_S,
            max_output_chars=max_output_chars,
        )
    except OSError as exc:
        raise ToolFailure(f"Could not run ripgrep ({rg}): {exc}") from None
    if result.timed_out:
        raise ToolFailure(
            f"The search timed out after {SEARCH_TIMEOUT_S:g} s. Narrow it with a more "
            "specific path, pattern, glob or type."
        )
    if result.exit_code not in (0, 1) and not result.stdout.strip():
        if skip_unreadable and only_unreadable_entries(result.stderr):
            return result
        message = result.stderr.strip() or f"rg exited with code {result.exit_code}"
        raise ToolFailure(f"ripgrep failed: {message.removeprefix('rg: ')}")
    return result


def number_lines(lines: Iterable[str], first: int) -> str:
    """Lines in ``cat -n`` style: the number right-aligned in six columns, a tab, the text."""
    return "\n".join(f"{number:>6}\t{text}" for number, text in enumerate(lines, start=first))


def clip_line(text: str) -> str:
    """A line cut to `MAX_LINE_CHARS`, saying so when it was."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    return clipped(text[:MAX_LINE_CHARS], len(text) - MAX_LINE_CHARS)


def clipped(kept: str, dropped: int) -> str:
    """The start of a long line followed by how much of it was left out."""
    return f"{kept} [... line cut, {dropped} more characters]"


def record_read(ctx: ToolContext, path: Path, mtime_ns: int) -> None:
    """Remember that the model has seen `path` as it was at `mtime_ns`."""
    ctx.read_files[path.resolve()] = mtime_ns


def require_fresh_read(ctx: ToolContext, path: Path, action: str) -> None:
    """Refuse (`ToolFailure`) to `action` an existing file the model has not seen as it is now."""
    seen = ctx.read_files.get(path.resolve())
    if seen is None:
        raise unread(path, action)
    if path.stat().st_mtime_ns != seen:
        raise ToolFailure(
            f"{path} has changed on disk since it was last read (by the user, a formatter or "
            f"a command). Read it again, then {action} it."
        )


def unread(path: Path, action: str) -> ToolFailure:
    """The refusal to `action` an existing file the model has not read."""
    return ToolFailure(
        f"{path} has not been read yet. Read it with the Read tool first, "
        f"then {action} it, so the change is based on its current contents."
    )


def save_text(ctx: ToolContext, path: Path, text: str, encoding: TextEncoding = UTF8) -> None:
    """Write `text` exactly as given, in `encoding` (the file's own; UTF-8 for a new one),
    creating parent directories, and remember it.

    Recording the new modification time lets the model edit its own result again without
    another Read.
    """
    data = encode_for(path, text, encoding)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        record_read(ctx, path, path.stat().st_mtime_ns)
    except OSError as exc:
        raise ToolFailure(f"Could not write {path}: {exc.strerror or exc}.") from None


def count_lines(text: str) -> int:
    """How many lines `text` has, counting a last line without a newline."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 line``, ``2 lines`` (give `nouns` when adding an s is wrong)."""
    return f"{count} {noun}" if count == 1 else f"{count} {nouns or noun + 's'}"


def newest_first(paths: list[Path]) -> list[Path]:
    """Existing files among `paths`, most recently modified first (ties by path)."""
    stamped: list[tuple[int, str, Path]] = []
    for path in paths:
        try:
            stamped.append((-path.stat().st_mtime_ns, str(path), path))
        except OSError:  # vanished since listing, or a truncated line of a huge listing
            continue
    stamped.sort()
    return [path for _, _, path in stamped]
