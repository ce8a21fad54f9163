"""Writing rules into `.stayer/settings.local.json`: created when missing, other keys and
rules kept, no duplicates, replaced atomically, and a broken file never overwritten."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stayer.config.local_rules import add_local_rule, local_settings_path, remove_local_rule
from stayer.errors import ConfigError


def written(project: Path) -> object:
    return json.loads(local_settings_path(project).read_text())


def test_the_file_and_its_folder_are_made_when_missing(tmp_path: Path) -> None:
    assert add_local_rule(tmp_path, "allow", "Bash(npm test:*)") is True
    assert local_settings_path(tmp_path) == tmp_path / ".stayer" / "settings.local.json"
    assert written(tmp_path) == {"permissions": {"allow": ["Bash(npm test:*)"]}}
    assert [p.name for p in (tmp_path / ".stayer").iterdir()] == ["settings.local.json"]


def test_other_keys_and_rules_are_kept_and_a_rule_is_not_listed_twice(tmp_path: Path) -> None:
    path = local_settings_path(tmp_path)
    path.parent.mkdir()
    before = {
        "model": "sonnet",
        "env": {"A": "1"},
        "permissions": {"allow": ["Read"], "deny": ["Bash(rm *)"], "defaultMode": "plan"},
        "hooks": {"Stop": []},
    }
    path.write_text(json.dumps(before))
    os.chmod(path, 0o600)

    assert add_local_rule(tmp_path, "allow", "Bash(ls)") is True
    assert add_local_rule(tmp_path, "allow", " Bash(ls) ") is False
    same = add_local_rule(tmp_path, "allow", "Bash(ls:*)", same=lambda e: e.startswith("Bash"))
    assert same is False  # the caller's notion of the same rule
    assert add_local_rule(tmp_path, "ask", "Bash(git push:*)") is True

    permissions = {**before["permissions"], "allow": ["Read", "Bash(ls)"]}  # type: ignore[dict-item]
    permissions["ask"] = ["Bash(git push:*)"]
    assert written(tmp_path) == {**before, "permissions": permissions}
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.local.json"]


def test_a_rule_is_removed_from_every_list_and_a_missing_one_writes_nothing(
    tmp_path: Path,
) -> None:
    path = local_settings_path(tmp_path)
    path.parent.mkdir()
    path.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)", 3], "ask": ["Bash(ls)"]}}))

    assert remove_local_rule(tmp_path, "Bash(ls)") is True
    assert written(tmp_path) == {"permissions": {"allow": [3], "ask": []}}
    stamp = path.stat().st_mtime_ns
    assert remove_local_rule(tmp_path, "Bash(pwd)") is False
    assert path.stat().st_mtime_ns == stamp
    assert remove_local_rule(tmp_path / "elsewhere", "Bash(ls)") is False
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"permissions": {"allow": ["Read"],}', "is not valid JSON at line 1"),
        ("", "is not valid JSON"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"permissions": ["Read"]}', '"permissions" in'),
        ('{"permissions": {"allow": "Read"}}', '"permissions.allow" in'),
    ],
)
def test_a_file_that_cannot_be_understood_is_left_alone(
    tmp_path: Path, text: str, said: str
) -> None:
    path = local_settings_path(tmp_path)
    path.parent.mkdir()
    path.write_text(text)

    for adding in (True, False):
        with pytest.raises(ConfigError) as raised:
            if adding:
                add_local_rule(tmp_path, "allow", "Bash(ls)")
            else:
                remove_local_rule(tmp_path, "Read")
        message = str(raised.value)
        assert said in message and str(path) in message
        assert "fix" in message and "remove it" in message and "\n" not in message
    assert path.read_text() == text


def test_a_link_inside_the_project_is_followed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    real = project / "config" / "shared.json"
    real.parent.mkdir(parents=True)
    real.write_text('{"model": "opus"}')
    path = local_settings_path(project)
    path.parent.mkdir(parents=True)
    path.symlink_to(real)

    add_local_rule(project, "deny", "WebFetch")
    assert path.is_symlink()
    assert json.loads(real.read_text()) == {
        "model": "opus",
        "permissions": {"deny": ["WebFetch"]},
    }


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_link_out_of_the_project_is_not_written_through(tmp_path: Path, linked: str) -> None:
    """A cloned repository could point `.stayer` (or the file) at the user's own settings:
    a rule kept for this project would then hold in every one."""
    project, outside = tmp_path / "project", tmp_path / "home" / ".stayer"
    outside.mkdir(parents=True)
    (outside / "settings.local.json").write_text('{"model": "opus"}')
    project.mkdir()
    if linked == "folder":
        (project / ".stayer").symlink_to(outside)
    else:
        (project / ".stayer").mkdir()
        local_settings_path(project).symlink_to(outside / "settings.local.json")

    with pytest.raises(ConfigError, match=r"outside the project; stayer does not write rules"):
        add_local_rule(project, "allow", "Bash")
    with pytest.raises(ConfigError, match=r"outside the project"):
        remove_local_rule(project, "Bash")
    assert json.loads((outside / "settings.local.json").read_text()) == {"model": "opus"}


def test_a_file_that_cannot_be_written_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".stayer").write_text("a file where the folder should be")
    with pytest.raises(ConfigError, match=r"^cannot write .*settings\.local\.json \(.+\)$"):
        add_local_rule(tmp_path, "allow", "Read")
    assert (tmp_path / ".stayer").read_text() == "a file where the folder should be"
