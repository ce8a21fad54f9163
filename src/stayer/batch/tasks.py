"""The tasks file: one JSON object per line, validated whole before anything runs.

Each line names a task: `id` (unique; letters, digits, `.`, `_` and `-`, as it names the
task's workspace folder), `prompt`, `repo` (a local git repository, relative to the tasks
file's folder, or a git URL) and optionally `ref`, `model`, `max_turns`, `timeout_s`, `setup`,
`check`, `permission_mode`, `allowed_tools` and `env`. Blank lines are skipped. A line that is
not such an object is one `TasksFileError` naming the file, the line and what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct

from stayer.errors import ConfigError
from stayer.permissions.policy import MODE_ALIASES, PERMISSION_MODES

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_URL = re.compile(r"(?:[a-z][a-z0-9+.-]*://|[^/\s:]+:(?!:))")
"""A git URL: a scheme (`https://`, `ssh://`, `file://`, `git://`) or scp-like
`[user@]host:path`, which git takes for ssh when no `/` comes before the colon (`host` may be
an alias from ~/.ssh/config). A remote helper's `name::address` is not one."""
FIELDS = (
    "id",
    "prompt",
    "repo",
    "ref",
    "model",
    "max_turns",
    "timeout_s",
    "setup",
    "check",
    "permission_mode",
    "allowed_tools",
    "env",
)


class TasksFileError(ConfigError):
    """A tasks file that cannot be run as written; the message names file and line."""


class BatchTask(Struct, frozen=True, kw_only=True):
    """One task of a batch, as its line gave it (a local `repo` made absolute)."""

    id: str
    prompt: str
    repo: str
    """A local repository's absolute path, or a git URL as given."""
    ref: str | None = None
    """What to check out (a branch, tag or commit); None: the repository's HEAD."""
    model: str | None = None
    max_turns: int | None = None
    timeout_s: float | None = None
    setup: str | None = None
    """A shell command run in the workspace before the agent."""
    check: str | None = None
    """A shell command run in the workspace after the agent; exit status 0 means passed."""
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = ()
    env: Mapping[str, str] = msgspec.field(default_factory=dict)

    @property
    def remote(self) -> bool:
        """Whether `repo` is a URL to clone rather than a local repository."""
        return is_url(self.repo)


def is_url(repo: str) -> bool:
    return _URL.match(repo) is not None


def load_tasks(path: Path) -> list[BatchTask]:
    """Every task of the file at `path`, in order; raises `TasksFileError` (one line: file,
    line number, what is wrong) at the first bad line, or when there is no task at all."""
    try:
        text = path.read_bytes().decode("utf-8-sig")  # an editor's BOM is no error
    except OSError as error:
        raise TasksFileError(f"{path}: cannot read the tasks file ({error.strerror})") from None
    except UnicodeDecodeError:
        raise TasksFileError(f"{path}: the tasks file is not UTF-8 text") from None
    tasks: list[BatchTask] = []
    seen: dict[str, int] = {}
    # Only "\n" ends a line: `splitlines` would also cut at characters a JSON string may hold
    # as they are (U+2028, U+0085), splitting a task in two.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            task = parse_task(line, base=path.parent)
        except ValueError as error:
            raise TasksFileError(f"{path}:{number}: {error}") from None
        if task.id in seen:
            raise TasksFileError(
                f"{path}:{number}: id {task.id!r} is used on line {seen[task.id]} too; "
                "give every task an id of its own"
            )
        seen[task.id] = number
        tasks.append(task)
    if not tasks:
        raise TasksFileError(f"{path}: no tasks: write one JSON object per line")
    return tasks


def parse_task(line: str, *, base: Path) -> BatchTask:
    """One line as a task; raises `ValueError` saying what is wrong and what to write."""
    try:
        data = msgspec.json.decode(line)
    except msgspec.DecodeError as error:
        raise ValueError(f"not JSON ({error}); write one JSON object per line") from None
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__} is no task; write a JSON object")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; a task has {', '.join(FIELDS)}")
    for name in ("id", "prompt", "repo"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            raise ValueError(f"`{name}` is missing or empty; every task needs one (text)")
    task_id: str = data["id"]
    if not _ID.fullmatch(task_id):
        raise ValueError(
            f"id {task_id!r} cannot name a folder; use letters, digits, '.', '_' and '-' "
            "(up to 128, not starting with '.' or '-')"
        )
    return BatchTask(
        id=task_id,
        prompt=data["prompt"],
        repo=_repo(data["repo"], base),
        ref=_text(data, "ref"),
        model=_text(data, "model"),
        max_turns=_positive_int(data, "max_turns"),
        timeout_s=_positive_number(data, "timeout_s"),
        setup=_text(data, "setup"),
        check=_text(data, "check"),
        permission_mode=_mode(data),
        allowed_tools=_tools(data),
        env=_env(data),
    )


def _repo(repo: str, base: Path) -> str:
    if is_url(repo):
        return repo
    path = (base / Path(repo).expanduser()).resolve()
    if not path.is_dir():
        raise ValueError(f"repo {repo!r}: no such folder ({path}); give a git repository or URL")
    if not (path / ".git").exists() and not (path / "HEAD").is_file():
        raise ValueError(f"repo {repo!r}: {path} is not a git repository; run `git init` there")
    return str(path)


def _text(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`{name}` must be non-empty text, not {value!r}")
    return value


def _positive_int(data: Mapping[str, Any], name: str) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{name}` must be a whole number of at least 1, not {value!r}")
    return value


def _positive_number(data: Mapping[str, Any], name: str) -> float | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"`{name}` must be a number of seconds above 0, not {value!r}")
    if value == float("inf"):
        raise ValueError(f"`{name}` must be finite; leave it out for the batch's default")
    return float(value)


def _mode(data: Mapping[str, Any]) -> str | None:
    mode = _text(data, "permission_mode")
    if mode is not None:
        mode = MODE_ALIASES.get(mode, mode)  # the names `--permission-mode` accepts
    if mode is not None and mode not in PERMISSION_MODES:
        raise ValueError(f"permission_mode {mode!r} is none of {', '.join(PERMISSION_MODES)}")
    return mode


def _tools(data: Mapping[str, Any]) -> tuple[str, ...]:
    value = data.get("allowed_tools")
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError('`allowed_tools` must be a list of rules (text), like ["Bash(git *)"]')
    return tuple(item.strip() for item in value if item.strip())


def _env(data: Mapping[str, Any]) -> dict[str, str]:
    value = data.get("env")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError('`env` must be an object of names to text, like {"CI": "1"}')
    for name, item in value.items():
        if not name or "=" in name or "\0" in name or not isinstance(item, str) or "\0" in item:
            raise ValueError(f"`env` entry {name!r}: give a name without '=' and a text value")
    return dict(value)
