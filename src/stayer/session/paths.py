"""Where a session keeps its files: `~/.stayer/projects/<folder-slug>/<session-id>/` (or the
`sessions_dir` option's folder instead of the project's, as `stayer batch` gives each task).

`STAYER_CONFIG_DIR` moves the root. The folder slug is the working directory's absolute path
with every character that is not a letter, a digit or `-` turned into `-`, as Claude Code names
its project folders, so one project's sessions sit together and are easy to find by hand. Two
directories can share a slug (`my_proj` and `my.proj`), so a transcript's records say which
directory they were written in, and reading them back checks it (see `session`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from stayer.config.dirs import config_root as config_root  # where it lived first

_UNSAFE = re.compile(r"[^A-Za-z0-9-]")
MAX_SLUG_CHARS = 200
"""Longer slugs are cut here and given a hash of the whole path, as Claude Code's are: most
file systems refuse a name over 255 bytes, and a deep working directory's slug can be longer."""


def project_slug(cwd: Path) -> str:
    """The name of the folder holding the sessions run in `cwd`."""
    slug = _UNSAFE.sub("-", str(cwd))
    if len(slug) <= MAX_SLUG_CHARS:
        return slug
    return f"{slug[:MAX_SLUG_CHARS]}-{_short_hash(str(cwd))}"


def _short_hash(text: str) -> str:
    """A 32-bit string hash in base 36 (`h * 31 + c` over UTF-16 code units), the kind Claude
    Code appends; it only has to tell apart paths that share their first 200 characters."""
    value = 0
    encoded = text.encode("utf-16-le", errors="surrogatepass")
    for index in range(0, len(encoded), 2):
        unit = int.from_bytes(encoded[index : index + 2], "little")
        value = (value * 31 + unit) & 0xFFFFFFFF
    if value >= 1 << 31:  # as a signed 32-bit number, then its magnitude
        value = (1 << 32) - value
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, digit = divmod(value, 36)
        out = digits[digit] + out
        if value == 0:
            return out


def sessions_home(env: Mapping[str, str], cwd: Path, chosen: Path | str | None = None) -> Path:
    """The folder keeping the sessions run in `cwd`: `chosen` (the `sessions_dir` option, taken
    from `cwd` when relative) or the project's folder under the config root."""
    if chosen is not None:
        return cwd / chosen
    return config_root(env) / "projects" / project_slug(cwd)


def session_folder(
    env: Mapping[str, str], cwd: Path, session_id: str, chosen: Path | str | None = None
) -> Path:
    """The folder for one session's files (saved prompts, and large tool output)."""
    return sessions_home(env, cwd, chosen) / session_id
