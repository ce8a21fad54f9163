"""Which settings files are read, in what order, and how they combine (`stayer.config`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from stayer.config import Loaded, SourceRule, load_settings, parse_levels
from stayer.errors import ConfigError


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """The user folders, empty, and the environment that points at them."""
    (tmp_path / "stayer-home").mkdir()
    (tmp_path / "claude-home").mkdir()
    return {
        "STAYER_CONFIG_DIR": str(tmp_path / "stayer-home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-home"),
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def write(path: Path, data: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def rules(loaded: Loaded, kind: str) -> list[str]:
    return [rule.text for rule in getattr(loaded, kind)]


def test_no_files_means_default_settings_and_no_warning(
    home: dict[str, str], project: Path
) -> None:
    loaded = load_settings(project, home)
    assert (loaded.settings.model, loaded.sources, loaded.warnings, loaded.deny) == (
        None,
        (),
        (),
        (),
    )


def test_a_project_deny_and_a_user_allow_both_hold_each_with_its_source(
    home: dict[str, str], project: Path
) -> None:
    user = write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json",
                 {"permissions": {"allow": ["Read"]}})  # fmt: skip
    shared = write(project / ".claude" / "settings.json",
                   {"permissions": {"deny": ["Read(./secrets/**)"]}})  # fmt: skip

    loaded = load_settings(project, home)

    assert loaded.allow == (SourceRule("Read", str(user), user.parent.parent, 4),)
    assert loaded.deny == (SourceRule("Read(./secrets/**)", str(shared), project, 4),)
    assert [source.level for source in loaded.sources] == ["user", "project"]


def test_later_levels_override_scalars_and_rules_add_up(
    home: dict[str, str], project: Path
) -> None:
    write(
        Path(home["STAYER_CONFIG_DIR"]) / "settings.json",
        {"model": "user-model", "doneWhen": "make", "permissions": {"deny": ["Bash(rm:*)"]}},
    )
    write(
        project / ".claude" / "settings.json",
        {"model": "project-model", "permissions": {"defaultMode": "plan", "deny": ["WebFetch"]}},
    )
    write(project / ".claude" / "settings.local.json",
          {"model": "local-model", "permissions": {"allow": ["Bash(ls)"]}})  # fmt: skip

    loaded = load_settings(project, home)

    assert (loaded.settings.model, loaded.settings.done_when) == ("local-model", "make")
    assert loaded.settings.permissions.default_mode == "plan"
    assert rules(loaded, "deny") == ["Bash(rm:*)", "WebFetch"]
    assert rules(loaded, "allow") == ["Bash(ls)"]
    assert loaded.settings.permissions.deny == ("Bash(rm:*)", "WebFetch")


def test_within_a_level_stayers_file_wins_over_claude_codes(
    home: dict[str, str], project: Path
) -> None:
    write(project / ".claude" / "settings.json", {"model": "claude", "env": {"A": "c", "B": "c"}})
    write(project / ".stayer" / "settings.json", {"model": "stayer", "env": {"A": "s"}})

    settings = load_settings(project, home).settings

    assert (settings.model, settings.env) == ("stayer", {"A": "s", "B": "c"})


def test_env_merges_key_by_key_in_source_order(home: dict[str, str], project: Path) -> None:
    write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json", {"env": {"A": "user", "U": "1"}})
    write(project / ".claude" / "settings.json", {"env": {"A": "project", "P": "2"}})
    write(project / ".stayer" / "settings.local.json", {"env": {"A": "local"}})

    loaded = load_settings(project, home, flag_settings='{"env": {"F": "3"}}')

    assert loaded.settings.env == {"A": "local", "U": "1", "P": "2", "F": "3"}


def test_settings_flag_comes_last_as_a_file_or_inline_json(
    home: dict[str, str], project: Path, tmp_path: Path
) -> None:
    write(project / ".stayer" / "settings.local.json", {"model": "local"})
    extra = write(tmp_path / "extra" / "run.json", {"model": "from-file",
                  "permissions": {"deny": ["Edit(/docs/**)"]}})  # fmt: skip

    inline = load_settings(project, home, flag_settings='{"model":"x"}')
    from_file = load_settings(project, home, flag_settings=str(extra))
    from_mapping = load_settings(project, home, flag_settings={"model": "y"})

    assert (inline.settings.model, from_file.settings.model) == ("x", "from-file")
    assert from_mapping.settings.model == "y"
    assert inline.sources[-1].origin == "--settings"
    assert from_file.deny == (SourceRule("Edit(/docs/**)", str(extra), extra.parent, 5),)


def test_setting_sources_pick_the_levels_and_the_flag_still_applies(
    home: dict[str, str], project: Path
) -> None:
    write(Path(home["STAYER_CONFIG_DIR"]) / "settings.json",
          {"permissions": {"allow": ["Bash"]}, "model": "user"})  # fmt: skip
    write(project / ".claude" / "settings.json", {"permissions": {"deny": ["Read(./secrets/**)"]}})
    write(project / ".claude" / "settings.local.json", {"model": "local"})

    only_project = load_settings(project, home, sources=parse_levels("project"),
                                 flag_settings='{"env": {"F": "1"}}')  # fmt: skip
    nothing = load_settings(project, home, sources=parse_levels(""))

    assert rules(only_project, "allow") == []
    assert rules(only_project, "deny") == ["Read(./secrets/**)"]
    assert (only_project.settings.model, only_project.settings.env) == (None, {"F": "1"})
    assert nothing.sources == ()


def test_setting_sources_are_checked() -> None:
    assert parse_levels(None) == ("user", "project", "local")
    assert parse_levels(" local , user,") == ("local", "user")
    assert parse_levels(["user", "project,local"]) == ("user", "project", "local")
    with pytest.raises(ConfigError, match="unknown source 'policy'; use user, project"):
        parse_levels("user,policy")


@pytest.mark.parametrize("switch", ["env", "stayer-file", "flag"])
def test_claude_code_files_can_be_left_unread(
    home: dict[str, str], project: Path, switch: str
) -> None:
    write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json", {"model": "claude-user"})
    write(project / ".claude" / "settings.json", {"permissions": {"deny": ["Bash"]}})
    write(project / ".stayer" / "settings.json", {"env": {"OURS": "1"}})
    read = load_settings(project, home)
    env, flag = dict(home), None
    if switch == "env":
        env["STAYER_NO_CLAUDE_SETTINGS"] = "1"
    elif switch == "stayer-file":
        write(project / ".stayer" / "settings.local.json", {"readClaudeSettings": False})
    else:
        flag = '{"readClaudeSettings": false}'

    loaded = load_settings(project, env, flag_settings=flag)

    assert (loaded.settings.model, loaded.deny, loaded.settings.env) == (None, (), {"OURS": "1"})
    assert all(source.kind != "claude" for source in loaded.sources)
    assert (read.settings.model, rules(read, "deny")) == ("claude-user", ["Bash"])


def test_a_claude_code_file_cannot_turn_reading_itself_back_on(
    home: dict[str, str], project: Path
) -> None:
    write(project / ".claude" / "settings.json", {"readClaudeSettings": True, "model": "c"})
    loaded = load_settings(project, {**home, "STAYER_NO_CLAUDE_SETTINGS": "1"})
    assert loaded.settings.model is None


def test_project_is_the_working_directory_not_the_repository_root(
    home: dict[str, str], project: Path
) -> None:
    (project / ".git").mkdir()
    write(project / ".claude" / "settings.json", {"model": "root"})
    sub = project / "sub"
    sub.mkdir()
    assert load_settings(sub, home).settings.model is None
    assert load_settings(project, home).settings.model == "root"


def test_hooks_from_every_source_add_up_per_event(home: dict[str, str], project: Path) -> None:
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "check", "timeout": 5}]}
    write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json", {"hooks": {"PreToolUse": [hook]}})
    write(project / ".stayer" / "settings.json",
          {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "log"}]}],
                     "Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}]}})  # fmt: skip

    hooks = load_settings(project, home).settings.hooks

    assert [(m.matcher, [h.command for h in m.hooks]) for m in hooks["PreToolUse"]] == [
        ("Bash", ["check"]),
        ("", ["log"]),
    ]
    assert hooks["PreToolUse"][0].hooks[0].timeout == 5
    assert [h.type for m in hooks["Stop"] for h in m.hooks] == ["prompt"]


def test_malformed_json_is_one_line_with_its_place_and_the_rest_applies(
    home: dict[str, str], project: Path
) -> None:
    broken = write(
        project / ".claude" / "settings.json",
        '{\n  "permissions": {\n    "deny": ["Bash"]\n  }\n  "model": "x"\n}\n',
    )
    write(project / ".stayer" / "settings.json", {"permissions": {"deny": ["Read(./secrets/**)"]}})

    loaded = load_settings(project, home)

    assert loaded.warnings == (
        f"{broken}:5:3: not valid JSON (Expecting ',' delimiter); skipped the file",
    )
    assert rules(loaded, "deny") == ["Read(./secrets/**)"]


def test_a_known_key_of_the_wrong_type_is_reported_at_its_line_and_only_it_is_dropped(
    home: dict[str, str], project: Path
) -> None:
    text = (
        '{\n  "model": 3,\n  "permissions": {\n    "deny": ["Bash(rm:*)", 7, "WebFetch"],\n'
        '    "defaultMode": "acceptEdit"\n  },\n  "env": {"A": "1", "B": true}\n}\n'
    )
    path = write(project / ".claude" / "settings.json", text)

    loaded = load_settings(project, home)

    kept = "ignored this value, the rest of the file applies"
    assert loaded.warnings == (
        f"{path}:2:12: model: input should be a valid string (got 3); {kept}",
        f"{path}:4:28: permissions.deny[1]: input should be a valid string (got 7); {kept}",
        f"{path}:5:20: permissions.defaultMode: input should be 'default', 'manual', "
        f"'acceptEdits', 'plan', 'bypassPermissions' or 'dontAsk' (got \"acceptEdit\"); {kept}",
        f"{path}:7:26: env.B: input should be a valid string (got true); {kept}",
    )
    assert [(rule.text, rule.line) for rule in loaded.deny] == [("Bash(rm:*)", 4), ("WebFetch", 4)]
    assert loaded.settings.env == {"A": "1"}


def test_a_hook_without_its_command_is_dropped_and_the_others_kept(
    home: dict[str, str], project: Path
) -> None:
    path = write(project / ".stayer" / "settings.json",
                 {"hooks": {"Stop": [{"hooks": [{"type": "command"},
                                                {"type": "command", "command": "ok"}]},
                                     {"matcher": "x"}]}})  # fmt: skip

    loaded = load_settings(project, home)

    assert [line.split(": ", 1)[1] for line in loaded.warnings] == [
        'hooks.Stop[0].hooks[0]: a hook of type "command" needs a "command" to run (got '
        '{"type": "command"}); ignored this value, the rest of the file applies',
        "hooks.Stop[1].hooks: a required key is missing; ignored this value, the rest of the "
        "file applies",
    ]
    assert loaded.warnings[0].startswith(f"{path}:6:")
    assert [[h.command for h in m.hooks] for m in loaded.settings.hooks["Stop"]] == [["ok"]]


def test_unknown_keys_are_kept_quietly(home: dict[str, str], project: Path) -> None:
    write(project / ".claude" / "settings.json",
          {"statusLine": {"type": "command", "command": "x"}, "outputStyle": "Explanatory",
           "permissions": {"allow": ["Bash"], "someNewKey": 1}, "model": "m"})  # fmt: skip

    loaded = load_settings(project, home)

    assert (loaded.warnings, loaded.settings.model, rules(loaded, "allow")) == ((), "m", ["Bash"])
    source = loaded.sources[0].settings
    assert source is not None and source.model_extra == {
        "statusLine": {"type": "command", "command": "x"},
        "outputStyle": "Explanatory",
    }


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("[]", "1:1: settings must be a JSON object ({...}), not list"),
        ('{"a": }', "1:7: not valid JSON (Expecting value)"),
    ],
)
def test_a_document_that_is_not_settings_is_skipped(
    home: dict[str, str], project: Path, text: str, what: str
) -> None:
    path = write(project / ".claude" / "settings.json", text)
    assert load_settings(project, home).warnings == (f"{path}:{what}; skipped the file",)


def test_an_empty_file_is_empty_settings(home: dict[str, str], project: Path) -> None:
    write(project / ".claude" / "settings.json", "\n")
    loaded = load_settings(project, home)
    assert (loaded.warnings, len(loaded.sources)) == ((), 1)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_is_reported_and_skipped(home: dict[str, str], project: Path) -> None:
    path = write(project / ".claude" / "settings.json", {"model": "x"})
    path.chmod(0)
    write(project / ".stayer" / "settings.json", {"env": {"A": "1"}})

    loaded = load_settings(project, home)

    assert loaded.warnings == (
        f"{path}: cannot read this settings file (Permission denied); skipped it",
    )
    assert (loaded.settings.model, loaded.settings.env) == (None, {"A": "1"})


def test_a_settings_folder_that_is_a_file_holds_no_settings(
    home: dict[str, str], project: Path
) -> None:
    write(project / ".claude", "not a folder")
    assert load_settings(project, home).sources == ()


def test_a_settings_file_that_cannot_be_read_as_one_is_reported(
    home: dict[str, str], project: Path
) -> None:
    (project / ".claude" / "settings.json").mkdir(parents=True)
    write(project / ".stayer" / "settings.json", {"model": "ours"})

    loaded = load_settings(project, home)

    path = project / ".claude" / "settings.json"
    assert loaded.warnings == (
        f"{path}: cannot read this settings file (Is a directory); skipped it",
    )
    assert loaded.settings.model == "ours"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ('{"model": 3}', "--settings:1:11: model: input should be a valid string (got 3); fix it"),
        ('{"model": ', "--settings:1:11: not valid JSON (Expecting value); fix it"),
        ("missing.json", "--settings missing.json: cannot read it (No such file or directory)"),
    ],
)
def test_a_broken_settings_flag_stops_the_run(
    home: dict[str, str], project: Path, given: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(project, home, flag_settings=given)
    assert str(caught.value).startswith(message)
