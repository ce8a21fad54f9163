"""Broken settings files fail closed (`stayer.config`): a problem in anything that guards stops
the run with one `file:line:col` line; `STAYER_IGNORE_BAD_SETTINGS=1` leaves such a file out
whole; a bad value of a key that guards nothing is only dropped, with a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stayer.config import Loaded, load_settings
from stayer.errors import ConfigError
from stayer.session.settings import rule_problem

FIX = "fix the file, or set STAYER_IGNORE_BAD_SETTINGS=1 to go on without it"
LEFT_OUT = (
    "left the whole file out, as STAYER_IGNORE_BAD_SETTINGS is set: none of its settings apply"
)
IGNORE = {"STAYER_IGNORE_BAD_SETTINGS": "1"}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load(project: Path, env: dict[str, str], *, flag_settings: str | None = None) -> Loaded:
    """Settings as a run loads them: its own judge of permission rules."""
    return load_settings(project, env, flag_settings=flag_settings, rule_problem=rule_problem)


def refusal(project: Path, env: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as caught:
        load(project, env)
    return str(caught.value)


def rules(loaded: Loaded, kind: str) -> list[str]:
    return [rule.text for rule in getattr(loaded, kind)]


GUARDING = [
    # the document itself
    ('{"permissions": {"deny": ["Read(secret.txt)"],}}',
     "1:47: not valid JSON (Expecting property name enclosed in double quotes)"),
    ('["Read(secret.txt)"]', "1:1: settings must be a JSON object ({...}), not list"),
    # permissions, each key
    ('{"permissions": ["Read(secret.txt)"]}',
     '1:17: permissions: input should be an object (got ["Read(secret.txt)"])'),
    ('{"permissions": {"deny": "Read(secret.txt)"}}',
     '1:26: permissions.deny: input should be a valid array (got "Read(secret.txt)")'),
    ('{"permissions": {"allow": "Bash"}}',
     '1:27: permissions.allow: input should be a valid array (got "Bash")'),
    ('{"permissions": {"ask": ["Bash(git push:*)", 7]}}',
     "1:46: permissions.ask[1]: input should be a valid string (got 7)"),
    ('{"permissions": {"defaultMode": "acceptEdit"}}',
     "1:33: permissions.defaultMode: input should be 'default', 'manual', 'acceptEdits', "
     "'plan', 'bypassPermissions' or 'dontAsk' (got \"acceptEdit\")"),
    ('{"permissions": {"additionalDirectories": "../shared"}}',
     '1:43: permissions.additionalDirectories: input should be a valid array (got "../shared")'),
    ('{"permissions": {"disableBypassPermissionsMode": true}}',
     "1:50: permissions.disableBypassPermissionsMode: input should be 'disable' (got true)"),
    # rules that do not parse, of each kind
    ('{"permissions": {"deny": ["Read(secret.txt"]}}',
     "1:27: permissions.deny[0]: bad permission rule 'Read(secret.txt'; write Tool or "
     "Tool(pattern)"),
    ('{"permissions": {"allow": ["Bash(ls)", "Bash(ls"]}}',
     "1:40: permissions.allow[1]: bad permission rule 'Bash(ls'; write Tool or Tool(pattern)"),
    ('{"permissions": {"ask": [""]}}',
     "1:26: permissions.ask[0]: bad permission rule ''; write Tool or Tool(pattern)"),
    ('{"permissions": {"deny": ["Read Edit"]}}',
     "1:27: permissions.deny[0]: bad permission rule 'Read Edit'; write Tool or Tool(pattern)"),
    ('{"permissions": {"deny": ["Read(.env), Edit(.env)"]}}',
     "1:27: permissions.deny[0]: 'Read(.env), Edit(.env)' reads as 2 rules; give each rule its "
     "own entry in the list"),
    # a guarding key misspelled: kept as unknown, its rules would not apply
    ('{"permisions": {"deny": ["Read(secret.txt)"]}}',
     "1:16: permisions: not a settings key; did you mean permissions? (as it is, it would not "
     "apply)"),
    ('{"permissions": {"Deny": ["Read(secret.txt)"]}}',
     "1:26: permissions.Deny: not a settings key; did you mean deny? (as it is, it would not "
     "apply)"),
    ('{"hook": {"PreToolUse": []}}',
     "1:10: hook: not a settings key; did you mean hooks? (as it is, it would not apply)"),
    # a key given twice: json would keep only the last
    ('{"permissions": {"deny": ["Read(secret.txt)"], "deny": []}}',
     "1:56: permissions.deny: given twice in one object (only the last would count)"),
    ('{"permissions": {"deny": ["Read(secret.txt)"]},\n "permissions": {"allow": ["Bash(ls)"]}}',
     "2:17: permissions: given twice in one object (only the last would count)"),
    # hooks of the wrong shape
    ('{"hooks": ["check.sh"]}', '1:11: hooks: input should be an object (got ["check.sh"])'),
    ('{"hooks": {"PreToolUse": {"matcher": "Bash"}}}',
     '1:26: hooks.PreToolUse: input should be a valid array (got {"matcher": "Bash"})'),
    ('{"hooks": {"PreToolUse": [{"matcher": "Bash"}]}}',
     "1:27: hooks.PreToolUse[0].hooks: a required key is missing"),
    ('{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}',
     '1:38: hooks.PreToolUse[0].hooks[0]: a hook of type "command" needs a "command" to run '
     '(got {"type": "command"})'),
    ('{"hooks": {"PreToolUse": [{"hooks": [{"type": "shell", "command": "x"}]}]}}',
     "1:47: hooks.PreToolUse[0].hooks[0].type: input should be 'command', 'prompt', 'agent' or "
     "'http' (got \"shell\")"),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}',
     "1:79: hooks.Stop[0].hooks[0].timeout: input should be greater than 0 (got 0)"),
    # stayer's keys that decide what is read or checked
    ('{"readClaudeSettings": "false"}',
     '1:24: readClaudeSettings: input should be a valid boolean (got "false")'),
    ('{"doneWhen": ""}',
     '1:14: doneWhen: string should have at least 1 character (got "")'),
]  # fmt: skip


@pytest.mark.parametrize(("text", "what"), GUARDING)
def test_a_problem_in_what_guards_stops_the_run_in_one_line_at_its_place(
    home: dict[str, str], project: Path, text: str, what: str
) -> None:
    path = write(project / ".claude" / "settings.json", text)
    assert refusal(project, home) == f"{path}:{what}; {FIX}"


@pytest.mark.parametrize(("text", "what"), GUARDING)
def test_with_the_switch_a_bad_file_is_left_out_whole_and_named_once(
    home: dict[str, str], project: Path, text: str, what: str
) -> None:
    path = write(project / ".claude" / "settings.json", text)
    write(project / ".stayer" / "settings.json", '{"permissions": {"deny": ["WebFetch"]}}')

    loaded = load(project, {**home, **IGNORE})

    assert loaded.warnings == (f"{path}:{what}; {LEFT_OUT}",)
    assert rules(loaded, "deny") == ["WebFetch"]
    assert [source.origin for source in loaded.sources if source.settings] == [
        str(project / ".stayer" / "settings.json")
    ]


def test_nothing_of_a_left_out_file_is_used_not_even_its_good_values(
    home: dict[str, str], project: Path
) -> None:
    write(project / ".stayer" / "settings.json", json.dumps({
        "model": "ours", "readClaudeSettings": False, "env": {"A": "1"},
        "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Read"], "defaultMode": "plann"},
    }))  # fmt: skip
    write(project / ".claude" / "settings.json", '{"permissions": {"deny": ["Read(.env)"]}}')

    loaded = load(project, {**home, **IGNORE})

    assert (loaded.settings.model, loaded.settings.env, rules(loaded, "allow")) == (None, {}, [])
    # its readClaudeSettings went with it, so Claude Code's file is read
    assert rules(loaded, "deny") == ["Read(.env)"]
    assert len(loaded.warnings) == 1 and LEFT_OUT in loaded.warnings[0]


def test_the_first_bad_file_in_reading_order_is_reported_and_the_switch_names_each(
    home: dict[str, str], project: Path
) -> None:
    user = write(Path(home["STAYER_CONFIG_DIR"]) / "settings.json", '{"hooks": []}')
    local = write(project / ".stayer" / "settings.local.json", "{")

    assert refusal(project, home) == (
        f"{user}:1:11: hooks: input should be an object (got []); {FIX}"
    )
    assert load(project, {**home, **IGNORE}).warnings == (
        f"{user}:1:11: hooks: input should be an object (got []); {LEFT_OUT}",
        f"{local}:1:2: not valid JSON (Expecting property name enclosed in double quotes); "
        f"{LEFT_OUT}",
    )


@pytest.mark.parametrize("kind", ["not UTF-8", "a folder"])
def test_a_settings_file_that_cannot_be_read_stops_the_run_too(
    home: dict[str, str], project: Path, kind: str
) -> None:
    path = project / ".claude" / "settings.json"
    if kind == "a folder":
        path.mkdir(parents=True)
        why = "Is a directory"
    else:
        path.parent.mkdir()
        path.write_bytes(b'{"permissions": {"deny": ["Read(\xff)"]}}')
        why = "not UTF-8 text"

    assert refusal(project, home) == f"{path}: cannot read this settings file ({why}); {FIX}"
    assert load(project, {**home, **IGNORE}).warnings == (
        f"{path}: cannot read this settings file ({why}); {LEFT_OUT}",
    )


MINOR = [
    ('"model": 3', "model: input should be a valid string (got 3)", "model", None),
    ('"env": {"A": "1", "B": true}', "env.B: input should be a valid string (got true)", "env",
     {"A": "1"}),
    ('"env": ["A=1"]', 'env: input should be an object (got ["A=1"])', "env", {}),
    ('"autoCompactWindow": 5000',
     "autoCompactWindow: input should be greater than or equal to 100000 (got 5000)",
     "auto_compact_window", None),
    ('"autoCompactPercent": "70"',
     'autoCompactPercent: input should be a valid integer (got "70")',
     "auto_compact_percent", None),
]  # fmt: skip


@pytest.mark.parametrize(("entry", "what", "field", "kept"), MINOR)
def test_a_bad_value_that_guards_nothing_is_dropped_with_a_warning_and_the_rest_applies(
    home: dict[str, str], project: Path, entry: str, what: str, field: str, kept: object
) -> None:
    text = '{"permissions": {"deny": ["Read(secret.txt)"]},\n ' + entry + "}"
    path = write(project / ".claude" / "settings.json", text)

    loaded = load(project, home)

    assert len(loaded.warnings) == 1
    assert loaded.warnings[0].startswith(f"{path}:2:")
    kept_rest = "ignored this value, the rest of the file applies"
    assert loaded.warnings[0].endswith(f": {what}; {kept_rest}")
    assert getattr(loaded.settings, field) == kept
    assert rules(loaded, "deny") == ["Read(secret.txt)"]


def test_a_key_given_twice_that_guards_nothing_is_json_as_usual(
    home: dict[str, str], project: Path
) -> None:
    write(project / ".claude" / "settings.json", '{"model": "a", "model": "b", "x": 1, "x": 2}')
    loaded = load(project, home)
    assert (loaded.settings.model, loaded.warnings) == ("b", ())


@pytest.mark.parametrize(
    ("switch", "why"),
    [
        ({"STAYER_NO_CLAUDE_SETTINGS": "1"}, "STAYER_NO_CLAUDE_SETTINGS is set"),
        ("stayer-file", '"readClaudeSettings": false in {ours}'),
    ],
)
def test_claude_code_files_left_unread_name_the_deny_rules_they_held(
    home: dict[str, str], project: Path, switch: object, why: str
) -> None:
    theirs = write(project / ".claude" / "settings.json",
                   '{"permissions": {"deny": ["Read(.env)", "Bash(rm:*)"]}}')  # fmt: skip
    write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json", '{"model": "no deny rules here"}')
    write(project / ".claude" / "settings.local.json", "{broken")  # unread, so no matter
    ours = write(project / ".stayer" / "settings.json", '{"readClaudeSettings": false}')
    env = {**home, **switch} if isinstance(switch, dict) else home

    loaded = load(project, env)

    assert loaded.warnings == (
        f"{theirs}: not read ({why.format(ours=ours)}): its 2 deny rules do not apply",
    )
    assert loaded.deny == ()


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ('{"model": 3}', "--settings:1:11: model: input should be a valid string (got 3)"),
        ('{"model": ', "--settings:1:11: not valid JSON (Expecting value)"),
        ('{"permissions": {"deny": ["Read(x"]}}',
         "--settings:1:27: permissions.deny[0]: bad permission rule 'Read(x'; write Tool or "
         "Tool(pattern)"),
    ],
)  # fmt: skip
def test_a_broken_settings_flag_stops_the_run_whatever_the_switch_says(
    home: dict[str, str], project: Path, given: str, message: str
) -> None:
    for env in (home, {**home, **IGNORE}):
        with pytest.raises(ConfigError) as caught:
            load(project, env, flag_settings=given)
        assert str(caught.value) == f"{message}; fix it, or leave --settings out"


def test_a_settings_flag_that_cannot_be_read_stops_the_run(
    home: dict[str, str], project: Path
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(project, {**home, **IGNORE}, flag_settings="missing.json")
    assert str(caught.value).startswith(
        "--settings missing.json: cannot read it (No such file or directory)"
    )


def test_a_document_nested_too_deeply_is_refused_without_a_traceback(
    home: dict[str, str], project: Path
) -> None:
    path = write(
        project / ".claude" / "settings.json", '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    )
    assert refusal(project, home) == f"{path}:1:1: nested too deeply to be settings; {FIX}"


def test_each_bad_entry_of_env_is_dropped_by_its_own_name_and_the_good_ones_apply(
    home: dict[str, str], project: Path
) -> None:
    """msgspec stops at the first bad value and hides a mapping's keys (`env[...]`): each bad
    entry is still named, found by its key, dropped, and the typing goes on."""
    text = '{"env": {"A.b[0]": 1, "OK": "yes", "C": false}, "model": "m"}'
    path = write(project / ".claude" / "settings.json", text)

    loaded = load(project, home)

    kept_rest = "ignored this value, the rest of the file applies"
    assert loaded.warnings == (
        f"{path}:1:20: env.A.b[0]: input should be a valid string (got 1); {kept_rest}",
        f"{path}:1:41: env.C: input should be a valid string (got false); {kept_rest}",
    )
    assert (loaded.settings.env, loaded.settings.model) == ({"OK": "yes"}, "m")


def test_a_bad_guarding_value_after_a_minor_one_still_makes_the_file_unusable(
    home: dict[str, str], project: Path
) -> None:
    path = write(
        project / ".claude" / "settings.json",
        '{"model": 3, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": " "}]}]}}',
    )
    assert refusal(project, home) == (
        f'{path}:1:44: hooks.Stop[0].hooks[0]: a hook of type "command" needs a "command" to run '
        f'(got {{"type": "command", "command": " "}}); {FIX}'
    )


def test_a_number_too_long_to_read_is_one_line_not_a_traceback(
    home: dict[str, str], project: Path
) -> None:
    path = write(project / ".claude" / "settings.json", '{"x": ' + "9" * 5000 + "}")
    refused = refusal(project, home)
    assert refused.startswith(f"{path}:1:1: not valid JSON (") and refused.endswith(FIX)
