"""What a batch tells whoever shows it: the plan, each task as it starts and as it ends."""

from __future__ import annotations

from typing import Protocol

from .results import TaskResult


class BatchListener(Protocol):
    """Told, on the batch's event loop, what happens; it must not block (it may draw)."""

    def planned(self, total: int, skipped: int) -> None:
        """The batch holds `total` tasks, of which `skipped` already have a result."""

    def started(self, task_id: str) -> None:
        """A task began (its workspace is being made)."""

    def finished(self, result: TaskResult) -> None:
        """A task ended with `result`, whose line is in the results file now."""


class Quiet:
    """A listener that shows nothing."""

    def planned(self, total: int, skipped: int) -> None:
        pass

    def started(self, task_id: str) -> None:
        pass

    def finished(self, result: TaskResult) -> None:
        pass
