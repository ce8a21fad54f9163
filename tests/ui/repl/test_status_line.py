"""The `statusLine` setting: a real command given the session as JSON on stdin and COLUMNS,
its first line shown with colours kept and nothing else that moves or changes the terminal;
debounced, a run in flight cancelled by a newer one, a failing or slow one showing nothing.
And the setting itself, read from a real settings file."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from stayer.config import load_settings
from stayer.config.model import StatusLineSetting
from stayer.ui.repl.status import StatusInput, StatusLine, safe_line, status_input
from stayer.ui.repl.surface import Totals


def session_json(tmp_path: Path, session_id: str = "s-1") -> StatusInput:
    return status_input(
        session_id=session_id,
        cwd=tmp_path,
        project_dir=tmp_path,
        transcript_path=tmp_path / "t.jsonl",
        model_id="claude-sonnet-4-5",
        model_name="Sonnet 4.5",
        totals=Totals(
            cost_usd=0.25,
            input_tokens=100,
            output_tokens=50,
            context_tokens=50_000,
            context_window=200_000,
        ),
        version="0.1.0",
    )


def status_line(command: str, tmp_path: Path, *, timeout_s: float = 5.0) -> StatusLine:
    env = {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": "sk-secret"}
    setting = StatusLineSetting(type="command", command=command)
    return StatusLine(setting, cwd=tmp_path, env=env, debounce_s=0.0, timeout_s=timeout_s)


async def shown(line: StatusLine, status: StatusInput, columns: int = 80) -> str:
    line.trigger(status, columns)
    await asyncio.wait_for(line.finished.wait(), 10)
    return line.text


async def test_the_command_reads_the_session_and_its_first_line_is_shown(tmp_path: Path) -> None:
    dump = tmp_path / "stdin.json"
    command = (
        f"cat > {dump}; "
        'echo "[$(jq -r .model.display_name {dump} 2>/dev/null || echo x)] cols=$COLUMNS '
        'key=${ANTHROPIC_API_KEY-unset}"; echo second line'
    ).replace("{dump}", str(dump))
    line = status_line(command, tmp_path)
    text = await shown(line, session_json(tmp_path), columns=97)
    assert text.endswith(" cols=97 key=unset")
    assert "second line" not in text
    sent = json.loads(dump.read_text())
    assert sent == {
        "cwd": str(tmp_path),
        "session_id": "s-1",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "version": "0.1.0",
        "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": str(tmp_path), "project_dir": str(tmp_path)},
        "cost": {"total_cost_usd": 0.25, "total_duration_ms": 0.0, "total_api_duration_ms": 0.0},
        "context_window": {
            "total_input_tokens": 100,
            "total_output_tokens": 50,
            "context_window_size": 200_000,
            "used_percentage": 25.0,
            "remaining_percentage": 75.0,
        },
    }


async def test_padding_is_put_before_the_line(tmp_path: Path) -> None:
    setting = StatusLineSetting(type="command", command="echo hi", padding=3)
    line = StatusLine(setting, cwd=tmp_path, env=dict(os.environ), debounce_s=0.0)
    assert await shown(line, session_json(tmp_path)) == "   hi"


def test_colours_are_kept_and_everything_else_taken_out() -> None:
    raw = (
        "\x1b[1;32mgreen\x1b[0m \x1b[2J\x1b[Hcleared \x1b[5Aup \x1b]0;title\x07"
        "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ \x1bcreset bell\x07 \x9b2Jc1 "
        "tab\there\rcr\nsecond line"
    )
    assert safe_line(raw) == ("\x1b[1;32mgreen\x1b[0m cleared up link reset bell 2Jc1 tab herecr")


async def test_a_failing_or_silent_command_shows_nothing(tmp_path: Path) -> None:
    for command in ("echo partial; exit 1", "true", "printf '\\n\\nlater'", "no-such-cmd-x"):
        line = status_line(command, tmp_path)
        assert await shown(line, session_json(tmp_path)) == "", command


async def test_a_slow_command_shows_nothing_and_holds_nothing_up(tmp_path: Path) -> None:
    line = status_line("sleep 30; echo late", tmp_path, timeout_s=0.5)
    began = time.monotonic()
    line.trigger(session_json(tmp_path), 80)
    assert time.monotonic() - began < 0.1  # triggering never waits for the command
    await asyncio.wait_for(line.finished.wait(), 10)
    assert line.text == ""
    assert time.monotonic() - began < 5


async def test_triggers_in_quick_succession_run_the_command_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    setting = StatusLineSetting(type="command", command=f"echo run >> {runs}; echo ok")
    line = StatusLine(setting, cwd=tmp_path, env=dict(os.environ), debounce_s=0.3)
    for _ in range(5):
        line.trigger(session_json(tmp_path), 80)
    await asyncio.wait_for(line.finished.wait(), 10)
    assert line.text == "ok"
    assert runs.read_text() == "run\n"
    assert line.runs == 1


async def test_a_new_trigger_cancels_the_run_in_flight(tmp_path: Path) -> None:
    started, pid_file = tmp_path / "started", tmp_path / "pid"
    command = (
        f'input=$(cat); case "$input" in *slow*) echo $$ > {pid_file}; touch {started}; '
        "sleep 30; echo slow;; *) echo fast;; esac"
    )
    changes: list[str] = []
    setting = StatusLineSetting(type="command", command=command)
    line = StatusLine(setting, cwd=tmp_path, env=dict(os.environ), debounce_s=0.0,
                      on_change=lambda: changes.append(line.text))  # fmt: skip
    line.trigger(session_json(tmp_path, "slow"), 80)
    while not started.exists():  # the first run says it is under way
        await asyncio.sleep(0.01)
        assert not line.finished.is_set()
    line.trigger(session_json(tmp_path, "quick"), 80)
    await asyncio.wait_for(line.finished.wait(), 10)
    assert line.text == "fast"
    assert changes == ["fast"]
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or " Z " in Path(f"/proc/{pid}/stat").read_text()
    await line.close()


async def test_with_a_refresh_interval_it_runs_again_by_itself(tmp_path: Path) -> None:
    count = tmp_path / "count"
    command = f"echo x >> {count}; wc -l < {count}"
    setting = StatusLineSetting(type="command", command=command, refresh_interval=1)
    changed = asyncio.Event()
    line = StatusLine(setting, cwd=tmp_path, env=dict(os.environ), debounce_s=0.0,
                      on_change=changed.set)  # fmt: skip
    line.trigger(session_json(tmp_path), 80)
    await asyncio.wait_for(changed.wait(), 10)
    assert line.text.strip() == "1"
    changed.clear()
    await asyncio.wait_for(changed.wait(), 10)  # nothing asked: the interval ran it
    assert line.text.strip() == "2"
    await line.close()
    assert line.runs == 2


def write_settings(tmp_path: Path, content: object) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "project"
    (project / ".stayer").mkdir(parents=True)
    (project / ".stayer" / "settings.json").write_text(json.dumps(content))
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "u1"), "CLAUDE_CONFIG_DIR": str(tmp_path / "u2")}
    return project, env


def test_the_setting_is_read_in_claude_codes_form(tmp_path: Path) -> None:
    project, env = write_settings(tmp_path, {"statusLine": {
        "type": "command", "command": "~/.claude/statusline.sh", "padding": 2,
        "refreshInterval": 5}})  # fmt: skip
    loaded = load_settings(project, env)
    assert loaded.settings.status_line == StatusLineSetting(
        type="command", command="~/.claude/statusline.sh", padding=2, refresh_interval=5
    )
    assert loaded.warnings == ()


@pytest.mark.parametrize("bad", [{"type": "text", "command": "x"}, {"type": "command"}, "echo"])
def test_a_bad_setting_is_dropped_with_a_warning_and_the_rest_applies(
    tmp_path: Path, bad: object
) -> None:
    project, env = write_settings(
        tmp_path, {"statusLine": bad, "permissions": {"deny": ["Bash(rm *)"]}}
    )
    loaded = load_settings(project, env)
    assert loaded.settings.status_line is None
    assert loaded.settings.permissions.deny == ("Bash(rm *)",)
    assert len(loaded.warnings) == 1
    assert "statusLine" in loaded.warnings[0]
