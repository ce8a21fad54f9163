"""Settings files as a run meets them: their rules, mode, directories, env, model and stayer's
own keys reach the run, under what the caller gave (the scripted model, real tools)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import stayer
from stayer.errors import ConfigError
from stayer.events import Event, Finished, SessionStarted
from stayer.messages import TextBlock, ToolResultBlock, UserMessage
from stayer.providers.scripted import text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / "secrets").mkdir(parents=True)
    (path / "secrets" / "key.txt").write_text("hunter2\n")
    (path / "notes.txt").write_text("hello\n")
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "user-stayer").mkdir()
    (tmp_path / "user-claude").mkdir()
    return {
        "STAYER_CONFIG_DIR": str(tmp_path / "user-stayer"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "user-claude"),
        "PATH": "/usr/bin:/bin",
    }


def write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


async def run(project: Path, env: dict[str, str], calls: list[tuple[str, dict[str, Any]]],
              **options: Any) -> tuple[list[Event], list[tuple[str, bool]]]:  # fmt: skip
    """Run the scripted calls; the events, and each tool result's text and error flag."""
    steps = [tool_call(name, tool_input, id=f"toolu_{i}") for i, (name, tool_input) in
             enumerate(calls)]  # fmt: skip
    model = stayer.ScriptedProvider([*steps, text("done")])
    opts = QueryOptions(cwd=project, env=env, provider=model, persist_session=False, **options)
    events = [event async for event in stayer.query("go", options=opts)]
    finished = events[-1]
    assert isinstance(finished, Finished)
    results = [
        (_text(block), block.is_error)
        for message in finished.messages if isinstance(message, UserMessage)
        for block in message.content if isinstance(block, ToolResultBlock)
    ]  # fmt: skip
    return events, results


def _text(block: ToolResultBlock) -> str:
    return "".join(part.text for part in block.content if isinstance(part, TextBlock))


async def test_a_project_deny_holds_against_a_user_allow(
    project: Path, env: dict[str, str]
) -> None:
    write(Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json", {"permissions": {"allow": ["Read"]}})
    write(project / ".claude" / "settings.json", {"permissions": {"deny": ["Read(./secrets/**)"]}})

    _, results = await run(project, env, [
        ("Read", {"file_path": str(project / "secrets" / "key.txt")}),
        ("Read", {"file_path": str(project / "notes.txt")}),
    ])  # fmt: skip

    (denied, denied_error), (read, read_error) = results
    assert (denied_error, "denied by a deny rule" in denied) == (True, True)
    assert (read_error, "hello" in read) == (False, True)


async def test_a_slash_rule_is_relative_to_the_folder_holding_the_settings(
    project: Path, env: dict[str, str]
) -> None:
    write(project / ".stayer" / "settings.json", {"permissions": {"deny": ["Read(/secrets/**)"]}})
    _, results = await run(project, env, [
        ("Read", {"file_path": str(project / "secrets" / "key.txt")}),
    ])  # fmt: skip
    assert results[0][1] is True and "denied by a deny rule" in results[0][0]


async def test_ask_rules_ask_even_when_bypassing_and_headless_that_denies(
    project: Path, env: dict[str, str]
) -> None:
    write(project / ".claude" / "settings.local.json",
          {"permissions": {"ask": ["Bash(touch:*)"], "allow": ["Bash"]}})  # fmt: skip

    _, results = await run(project, env, [
        ("Bash", {"command": "touch made"}),
        ("Bash", {"command": "echo fine"}),
    ], permission_mode="bypassPermissions")  # fmt: skip

    (asked, asked_error), (fine, fine_error) = results
    assert asked_error and "the ask rule Bash(touch:*) says each such call needs" in asked
    assert not (project / "made").exists()
    assert (fine_error, "fine" in fine) == (False, True)


async def test_default_mode_applies_without_a_mode_and_the_option_wins(
    project: Path, env: dict[str, str]
) -> None:
    write(project / ".claude" / "settings.json", {"permissions": {"defaultMode": "plan"}})
    assert (
        prepare(
            QueryOptions(
                cwd=project, env=env, provider=stayer.ScriptedProvider([]), persist_session=False
            )
        ).started.permission_mode
        == "plan"
    )
    given = QueryOptions(cwd=project, env=env, provider=stayer.ScriptedProvider([]),
                         persist_session=False, permission_mode="acceptEdits")  # fmt: skip
    assert prepare(given).started.permission_mode == "acceptEdits"


async def test_settings_env_is_over_the_inherited_one_and_tools_see_it(
    project: Path, env: dict[str, str]
) -> None:
    write(project / ".stayer" / "settings.json", {"env": {"GREETING": "from-settings"}})
    _, results = await run(project, {**env, "GREETING": "inherited"},
                           [("Bash", {"command": "echo $GREETING"})],
                           allowed_tools="Bash")  # fmt: skip
    assert results == [("from-settings", False)]


def test_model_done_when_and_compaction_fill_in_what_options_leave_out(
    project: Path, env: dict[str, str]
) -> None:
    write(project / ".stayer" / "settings.json",
          {"model": "claude-opus-4-1", "autoCompactWindow": 150000, "autoCompactPercent": 70,
           "doneWhen": "true"})  # fmt: skip
    model = stayer.ScriptedProvider([])
    base: dict[str, Any] = {"cwd": project, "provider": model, "persist_session": False}

    setup = prepare(QueryOptions(env=env, **base))
    unset = prepare(QueryOptions(env=env, setting_sources="", **base))
    chosen = prepare(QueryOptions(env=env, model="sonnet", autocompact_window=200000, **base))
    by_env = prepare(QueryOptions(env={**env, "ANTHROPIC_MODEL": "haiku"}, **base))

    assert (setup.params.model, setup.params.compaction.window) == ("claude-opus-4-1", 150000)
    assert (setup.params.compaction.percent, unset.params.compaction.percent) == (70, None)
    assert len(setup.params.stop_checks) == len(unset.params.stop_checks) + 1  # doneWhen
    assert (chosen.params.model, chosen.params.compaction.window) == ("sonnet", 200000)
    assert by_env.params.model == model.name  # ANTHROPIC_MODEL comes before the settings'


def test_additional_directories_add_to_add_dir_and_a_missing_one_is_a_warning(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "shared").mkdir()
    write(project / ".claude" / "settings.json",
          {"permissions": {"additionalDirectories": ["../shared", "../gone"],
                           "allow": ["Read"]}})  # fmt: skip
    setup = prepare(QueryOptions(cwd=project, env=env, provider=stayer.ScriptedProvider([]),
                                 persist_session=False))  # fmt: skip
    path = project / ".claude" / "settings.json"
    assert setup.warnings == (
        f"{path}:5: additionalDirectories: {tmp_path / 'gone'} is not a directory; ignored it",
    )
    assert setup.params.can_use_tool is not None
    assert setup.started.settings_warnings == setup.warnings
    assert setup.started.settings_files == (str(path),)


def test_disable_bypass_refuses_a_bypass_run(project: Path, env: dict[str, str]) -> None:
    write(project / ".claude" / "settings.json",
          {"permissions": {"disableBypassPermissionsMode": "disable"}})  # fmt: skip
    options = QueryOptions(cwd=project, env=env, provider=stayer.ScriptedProvider([]),
                           persist_session=False, permission_mode="bypassPermissions")  # fmt: skip
    with pytest.raises(ConfigError, match=r"bypassPermissions is turned off by "
                       r"disableBypassPermissionsMode in .*settings\.json"):  # fmt: skip
        prepare(options)


BROKEN = '{\n  "permissions": {\n    "deny": ["Read(./secrets/**)", "Bash(rm:*"]\n  }\n}\n'
"""A project file whose second deny rule lacks its `)`."""


async def test_a_broken_file_stops_query_and_session_with_config_error(
    project: Path, env: dict[str, str]
) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(BROKEN)
    model = stayer.ScriptedProvider([tool_call("Read", {"file_path": "secrets/key.txt"})])
    options = QueryOptions(cwd=project, env=env, provider=model, persist_session=False)
    message = (
        f"{path}:3:36: permissions.deny[1]: bad permission rule 'Bash(rm:*'; write Tool or "
        "Tool(pattern); fix the file, or set STAYER_IGNORE_BAD_SETTINGS=1 to go on without it"
    )

    with pytest.raises(ConfigError) as from_query:
        async for _ in stayer.query("read the key", options=options):
            pass
    with pytest.raises(ConfigError) as from_session:
        stayer.Session(options)

    assert str(from_query.value) == str(from_session.value) == message
    assert model.requests == []  # the model was never asked


async def test_with_the_switch_the_broken_file_is_left_out_with_a_warning(
    project: Path, env: dict[str, str]
) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(BROKEN)
    write(project / ".stayer" / "settings.json", {"permissions": {"deny": ["Bash"]}})
    options = QueryOptions(cwd=project, env={**env, "STAYER_IGNORE_BAD_SETTINGS": "1"},
                           provider=stayer.ScriptedProvider([text("ok")]),
                           persist_session=False)  # fmt: skip
    async with stayer.Session(options) as session:
        assert session.warnings == (
            f"{path}:3:36: permissions.deny[1]: bad permission rule 'Bash(rm:*'; write Tool or "
            "Tool(pattern); left the whole file out, as STAYER_IGNORE_BAD_SETTINGS is set: none "
            "of its settings apply",
        )
        events = [event async for event in session.submit("hi")]
    started = events[0]
    assert isinstance(started, SessionStarted)
    assert "Bash" not in started.tools  # the other file's deny rule holds
    assert started.settings_files == (str(project / ".stayer" / "settings.json"),)
    assert started.settings_warnings == session.warnings
