"""A hook run that failed is one `system`/`hook_failed` line, with or without
`--include-hook-events`; a run that succeeded or blocked is none."""

from __future__ import annotations

from typing import Any

import pytest

from stayer.events import HookOutcome, HookRan
from stayer.ui.stream_json import StreamJsonWriter


def ran(outcome: HookOutcome, exit_code: int | None, message: str = "") -> HookRan:
    return HookRan(
        hook_id="h1",
        hook_event="PreToolUse",
        hook_name="PreToolUse:Bash",
        command="./guard",
        exit_code=exit_code,
        duration_ms=3.0,
        outcome=outcome,
        message=message,
    )


def without_uuid(line: dict[str, Any]) -> dict[str, Any]:
    assert line.pop("uuid")
    return line


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (ran("timeout", None, "did not finish within 5 s and was stopped"), "timeout"),
        (ran("error", 1, "Traceback: the guard broke"), "exit_status"),
        (ran("error", -9, "exited with status -9"), "exit_status"),
        (ran("error", None, "could not start: no such folder"), "not_started"),
        (ran("error", 0, "its output looks like JSON but is not (Expecting value)"), "bad_output"),
    ],
)
@pytest.mark.parametrize("include_hooks", [False, True])
def test_a_failed_hook_is_one_hook_failed_line(
    event: HookRan, reason: str, include_hooks: bool
) -> None:
    writer = StreamJsonWriter(include_hooks=include_hooks, session_id="s1")
    lines = writer.lines(event)
    assert [line["subtype"] for line in lines] == [
        *(["hook_started", "hook_response"] if include_hooks else []),
        "hook_failed",
    ]
    assert without_uuid(lines[-1]) == {
        "type": "system",
        "subtype": "hook_failed",
        "hook_id": "h1",
        "hook_name": "PreToolUse:Bash",
        "hook_event": "PreToolUse",
        "command": "./guard",
        "reason": reason,
        "exit_code": event.exit_code,
        "error": event.message,
        "session_id": "s1",
    }


@pytest.mark.parametrize("event", [ran("success", 0), ran("blocked", 2, "not rm")])
def test_a_hook_that_ran_as_written_prints_no_failure_line(event: HookRan) -> None:
    assert StreamJsonWriter(include_hooks=False).lines(event) == []
    shown = StreamJsonWriter(include_hooks=True).lines(event)
    assert [line["subtype"] for line in shown] == ["hook_started", "hook_response"]
