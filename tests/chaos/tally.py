"""The figures of a chaos run: how sessions ended, how the loop went round, what was injected.

Counted from the events the runs yielded (`Finished`, `Continuing`, `Retrying`, `Withdrawn`,
`Compacted`) and from the chaos models' ledgers; printed as a table and written as JSON, so the
figures can be copied into the README.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from stayer.events import Compacted, Continuing, Finished, Retrying, ToolCallStarted, Withdrawn
from stayer.messages import JSON
from tests.chaos.session import SessionRun


@dataclass
class Tally:
    """Counts over many sessions."""

    seed: str
    sessions: int = 0
    protocols: Counter[str] = field(default_factory=Counter[str])
    terminals: Counter[str] = field(default_factory=Counter[str])
    continues: Counter[str] = field(default_factory=Counter[str])
    retries: Counter[str] = field(default_factory=Counter[str])
    """Retries of a model call, by the status that failed (`none`: the stream was cut, stalled
    or garbled)."""
    compactions: Counter[str] = field(default_factory=Counter[str])
    withdrawn: int = 0
    faults: Counter[str] = field(default_factory=Counter[str])
    requests: int = 0
    tool_calls: int = 0

    def add(self, run: SessionRun) -> None:
        """Count one session."""
        self.sessions += 1
        self.protocols[run.protocol] += 1
        self.faults.update(run.ledger.faults)
        self.requests += run.ledger.requests
        for event in run.events:
            if isinstance(event, Finished):
                self.terminals[event.terminal.value] += 1
            elif isinstance(event, Continuing):
                self.continues[event.reason.value] += 1
            elif isinstance(event, Retrying):
                self.retries[str(event.status or "none")] += 1
            elif isinstance(event, Compacted):
                self.compactions[f"{event.trigger} {event.method}"] += 1
            elif isinstance(event, Withdrawn):
                self.withdrawn += 1
            elif isinstance(event, ToolCallStarted):
                self.tool_calls += 1

    def as_json(self) -> dict[str, JSON]:
        """The figures as one JSON object."""
        return {
            "seed": self.seed,
            "sessions": self.sessions,
            "protocols": dict(self.protocols),
            "requests": self.requests,
            "tool_calls": self.tool_calls,
            "faults_injected": dict(self.faults.most_common()),
            "terminal_reasons": dict(self.terminals.most_common()),
            "continue_reasons": dict(self.continues.most_common()),
            "retries_by_status": dict(self.retries.most_common()),
            "compactions": dict(self.compactions.most_common()),
            "withdrawn": self.withdrawn,
        }

    def table(self, title: str) -> str:
        """The figures as text, one section a counter."""
        lines = [
            f"{title}: {self.sessions} sessions ({_inline(self.protocols)}), seed {self.seed!r},"
            f" {self.requests} model requests, {self.tool_calls} tool calls, "
            f"{self.withdrawn} answers withdrawn"
        ]
        for name, counts in (
            ("faults injected", self.faults),
            ("terminal reasons", self.terminals),
            ("continue reasons", self.continues),
            ("retries by status", self.retries),
            ("compactions", self.compactions),
        ):
            lines.append(f"  {name}:")
            lines += [f"    {key:<34} {count:>5}" for key, count in counts.most_common()]
        return "\n".join(lines)

    def write(self, path: Path, **extra: JSON) -> None:
        """Save the figures, and `extra` ones, as JSON at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**self.as_json(), **extra}, indent=2) + "\n")


def _inline(counts: Counter[str]) -> str:
    return ", ".join(f"{count} {key}" for key, count in counts.most_common())
