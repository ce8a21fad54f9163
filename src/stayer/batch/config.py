"""How one batch runs: what `stayer batch`'s flags (and the settings) say, as one value."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from msgspec import Struct, field

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT_S = 1800.0
"""A task's time when its line gives no `timeout_s` (Codex's per-row default)."""
DEFAULT_SETTING_SOURCES = ("user",)
"""The settings a batch's sessions read: only the user's own. A task's repository is often
someone else's; its `.claude/`/`.stayer/` settings (project and local) could allow it tools,
run hooks and set variables on this machine, so they are read only when `--setting-sources`
asks for them."""


class RateLimit(Struct, frozen=True):
    """What one provider may be sent per minute, across the whole batch; None: no limit."""

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None


class RayPlacement(Struct, frozen=True):
    """Where a batch runs on Ray: the cluster, and what each task asks of it."""

    address: str | None = None
    """A running cluster's address (`ray://host:10001`, `auto`); None starts a local Ray."""
    cpus_per_task: float = 1.0
    memory_per_task_mib: int | None = None


class BatchConfig(Struct, frozen=True, kw_only=True):
    """One batch: its output folder and the defaults its tasks' lines may override."""

    out_dir: Path
    concurrency: int = DEFAULT_CONCURRENCY
    model: str | None = None
    permission_mode: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    retry_errors: bool = False
    rate_limits: Mapping[str, RateLimit] = field(default_factory=dict)
    """Per provider (`anthropic`, `openai`); the key `*` applies to every provider."""
    ray: RayPlacement | None = None
    """None runs the tasks in this process."""
    output_format: Literal["text", "json"] = "text"
    keep_workspaces: bool = False
    """Keep each task's workspace once its diff and check are taken (they are removed, or a
    batch of large checkouts would fill the disk)."""
    sandbox: bool = False
    """Run the sessions' Bash commands under bubblewrap: only the workspace writable."""
    setting_sources: tuple[str, ...] = DEFAULT_SETTING_SOURCES
    """Which settings files the sessions read (`user`, `project`, `local`); a task's line cannot
    change it."""

    @property
    def workspaces(self) -> Path:
        return self.out_dir / "workspaces"

    @property
    def transcripts(self) -> Path:
        return self.out_dir / "transcripts"
