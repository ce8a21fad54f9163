"""The tasks file is validated whole: a bad line is one error naming file and line, and only
well-formed tasks get through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stayer.batch.tasks import BatchTask, TasksFileError, is_url, load_tasks
from tests.batch.git_repos import git


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding a git repository `repo`, a plain folder `plain`, and the tasks file."""
    git(tmp_path, "init", "-q", "repo")
    (tmp_path / "plain").mkdir()
    return tmp_path


def _write(folder: Path, *lines: str | dict[str, Any]) -> Path:
    path = folder / "tasks.jsonl"
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n")
    return path


def _task(**fields: Any) -> dict[str, Any]:
    return {"id": "t1", "prompt": "fix it", "repo": "repo", **fields}


def _error(folder: Path, *lines: str | dict[str, Any]) -> str:
    path = _write(folder, *lines)
    with pytest.raises(TasksFileError) as raised:
        load_tasks(path)
    message = str(raised.value)
    assert "\n" not in message
    return message


# --- what is accepted -----------------------------------------------------------------------


def test_a_full_line_becomes_a_task(folder: Path) -> None:
    line = _task(
        ref="v1",
        model="claude-x",
        max_turns=5,
        timeout_s=30,
        setup="make deps",
        check="make test",
        permission_mode="acceptEdits",
        allowed_tools=["Bash(git *)", " Read "],
        env={"CI": "1"},
    )
    assert load_tasks(_write(folder, line)) == [
        BatchTask(
            id="t1",
            prompt="fix it",
            repo=str((folder / "repo").resolve()),
            ref="v1",
            model="claude-x",
            max_turns=5,
            timeout_s=30.0,
            setup="make deps",
            check="make test",
            permission_mode="acceptEdits",
            allowed_tools=("Bash(git *)", "Read"),
            env={"CI": "1"},
        )
    ]


def test_blank_lines_are_skipped_and_line_numbers_stay_true(folder: Path) -> None:
    path = _write(folder, "", _task(), "   ", _task(id="t2"), "", "[]")
    with pytest.raises(TasksFileError, match=r"tasks\.jsonl:6: a JSON list is no task"):
        load_tasks(path)
    (folder / "tasks.jsonl").write_text(
        "\n" + json.dumps(_task()) + "\n\n" + json.dumps(_task(id="t2"))
    )
    assert [task.id for task in load_tasks(path)] == ["t1", "t2"]


def test_a_local_repo_is_found_from_the_tasks_files_folder(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder / "plain")  # not where the tasks file is
    (task,) = load_tasks(_write(folder, _task(repo="./repo/")))
    assert task.repo == str((folder / "repo").resolve())
    assert not task.remote


def test_a_bare_repository_is_a_repository(folder: Path) -> None:
    git(folder, "init", "-q", "--bare", "bare.git")
    (task,) = load_tasks(_write(folder, _task(repo="bare.git")))
    assert task.repo == str((folder / "bare.git").resolve())


def test_a_byte_order_mark_is_no_error(folder: Path) -> None:
    path = folder / "tasks.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_task()).encode() + b"\r\n")
    assert [task.id for task in load_tasks(path)] == ["t1"]


def test_a_prompt_may_hold_any_character_json_allows(folder: Path) -> None:
    prompt = "line\u2028separator\u0085next\u000cform feed\u001eand é"
    path = folder / "tasks.jsonl"
    lines = [json.dumps(_task(prompt=prompt), ensure_ascii=False), json.dumps(_task(id="t2"))]
    path.write_text("\n".join(lines))
    assert [(task.id, task.prompt) for task in load_tasks(path)] == [
        ("t1", prompt),
        ("t2", "fix it"),
    ]


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/owner/repo.git",
        "http://127.0.0.1:8080/r.git",
        "ssh://git@example.com/owner/repo.git",
        "git://example.com/repo.git",
        "file:///srv/git/repo.git",
        "git@github.com:owner/repo.git",
        "me@host.example:repo",
        "github.com:owner/repo.git",
        "work-alias:team/repo",
    ],
)
def test_urls_are_kept_as_given(folder: Path, url: str) -> None:
    (task,) = load_tasks(_write(folder, _task(repo=url)))
    assert (task.repo, task.remote) == (url, True)
    assert is_url(url)


@pytest.mark.parametrize(
    "path", ["repo", "./repo", "/srv/repo", "~/repo", "dir/a@b:c", "./a:b", "ext::sh -c x"]
)
def test_paths_are_no_urls(path: str) -> None:
    assert not is_url(path)


@pytest.mark.parametrize("tools", ["Read, Bash(git *)", ["Read", "Bash(git *)"]])
def test_allowed_tools_as_a_list_or_comma_separated(folder: Path, tools: object) -> None:
    (task,) = load_tasks(_write(folder, _task(allowed_tools=tools)))
    assert task.allowed_tools == ("Read", "Bash(git *)")


# --- what is refused, each with file and line -----------------------------------------------


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TasksFileError) as raised:
        load_tasks(tmp_path / "none.jsonl")
    assert str(raised.value) == (
        f"{tmp_path / 'none.jsonl'}: cannot read the tasks file (No such file or directory)"
    )


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_bytes(b'{"id": "caf\xe9"}\n')
    with pytest.raises(TasksFileError, match=r"tasks\.jsonl: the tasks file is not UTF-8 text$"):
        load_tasks(path)


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_a_file_without_tasks(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(text)
    with pytest.raises(TasksFileError, match=r"tasks\.jsonl: no tasks: write one JSON object"):
        load_tasks(path)


def test_not_json(folder: Path) -> None:
    message = _error(folder, _task(), "{id: t2}")
    assert message.startswith(f"{folder / 'tasks.jsonl'}:2: not JSON (")
    assert message.endswith("); write one JSON object per line")


@pytest.mark.parametrize(("line", "kind"), [("[1]", "list"), ('"t"', "str"), ("3", "int")])
def test_json_that_is_no_object(folder: Path, line: str, kind: str) -> None:
    message = _error(folder, line)
    assert message == f"{folder / 'tasks.jsonl'}:1: a JSON {kind} is no task; write a JSON object"


def test_an_unknown_field(folder: Path) -> None:
    message = _error(folder, _task(), _task(id="t2", promt="typo", extra=1))
    assert message.startswith(f"{folder / 'tasks.jsonl'}:2: unknown field(s) extra, promt; ")
    assert "a task has id, prompt, repo, ref," in message


@pytest.mark.parametrize("name", ["id", "prompt", "repo"])
@pytest.mark.parametrize("value", [None, "", "  ", 5, ["x"]])
def test_a_required_field_missing_empty_or_not_text(folder: Path, name: str, value: object) -> None:
    line = _task()
    if value is None:
        del line[name]
    else:
        line[name] = value
    message = _error(folder, line)
    assert message == (
        f"{folder / 'tasks.jsonl'}:1: `{name}` is missing or empty; every task needs one (text)"
    )


@pytest.mark.parametrize(
    "task_id", ["../x", "..", ".", "a/b", "/abs", ".hidden", "-flag", "a b", "é", "x" * 129]
)
def test_an_id_that_cannot_name_a_folder(folder: Path, task_id: str) -> None:
    message = _error(folder, _task(id=task_id))
    assert message.startswith(f"{folder / 'tasks.jsonl'}:1: id {task_id!r} cannot name a folder")


def test_the_longest_id_and_dots_inside_are_fine(folder: Path) -> None:
    ids = ["x" * 128, "a..b", "v1.2_rc-3"]
    tasks = load_tasks(_write(folder, *(_task(id=task_id) for task_id in ids)))
    assert [task.id for task in tasks] == ids


def test_a_duplicate_id(folder: Path) -> None:
    message = _error(folder, _task(), _task(id="t2"), _task())
    assert message == (
        f"{folder / 'tasks.jsonl'}:3: id 't1' is used on line 1 too; "
        "give every task an id of its own"
    )


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("ref", 5, "`ref` must be non-empty text, not 5"),
        ("ref", "", "`ref` must be non-empty text, not ''"),
        ("model", ["m"], "`model` must be non-empty text"),
        ("setup", True, "`setup` must be non-empty text"),
        ("check", {}, "`check` must be non-empty text"),
        ("max_turns", 0, "`max_turns` must be a whole number of at least 1, not 0"),
        ("max_turns", 2.5, "`max_turns` must be a whole number"),
        ("max_turns", "3", "`max_turns` must be a whole number"),
        ("max_turns", True, "`max_turns` must be a whole number"),
        ("timeout_s", 0, "`timeout_s` must be a number of seconds above 0, not 0"),
        ("timeout_s", -1.5, "`timeout_s` must be a number of seconds above 0"),
        ("timeout_s", "10", "`timeout_s` must be a number of seconds above 0"),
        ("timeout_s", False, "`timeout_s` must be a number of seconds above 0"),
        ("permission_mode", "yolo", "permission_mode 'yolo' is none of default, "),
        ("permission_mode", 1, "`permission_mode` must be non-empty text"),
        ("allowed_tools", 5, "`allowed_tools` must be a list of rules (text)"),
        ("allowed_tools", ["Read", 1], "`allowed_tools` must be a list of rules (text)"),
        ("env", ["CI=1"], "`env` must be an object of names to text"),
        ("env", {"CI": 1}, "`env` entry 'CI': give a name without '=' and a text value"),
        ("env", {"A=B": "x"}, "`env` entry 'A=B': give a name without '='"),
        ("env", {"": "x"}, "`env` entry '': give a name"),
        ("env", {"A": "x\u0000y"}, "`env` entry 'A': give a name"),
        ("env", {"A": None}, "`env` entry 'A': give a name"),
    ],
)
def test_a_field_of_the_wrong_kind(folder: Path, field: str, value: object, says: str) -> None:
    message = _error(folder, _task(), _task(id="t2", **{field: value}))
    assert message.startswith(f"{folder / 'tasks.jsonl'}:2: {says}")


def test_an_infinite_timeout(folder: Path) -> None:
    message = _error(folder, '{"id": "t", "prompt": "p", "repo": "repo", "timeout_s": 1e999}')
    assert message.startswith(f"{folder / 'tasks.jsonl'}:1: not JSON (Number out of range")


def test_a_permission_mode_alias_is_accepted(folder: Path) -> None:
    (task,) = load_tasks(_write(folder, _task(permission_mode="manual")))
    assert task.permission_mode == "default"


def test_a_repo_folder_that_does_not_exist(folder: Path) -> None:
    message = _error(folder, _task(repo="nowhere"))
    assert message == (
        f"{folder / 'tasks.jsonl'}:1: repo 'nowhere': no such folder "
        f"({(folder / 'nowhere').resolve()}); give a git repository or URL"
    )


def test_a_repo_folder_that_is_no_repository(folder: Path) -> None:
    message = _error(folder, _task(repo="plain"))
    assert message == (
        f"{folder / 'tasks.jsonl'}:1: repo 'plain': {(folder / 'plain').resolve()} is not a "
        "git repository; run `git init` there"
    )


def test_a_repo_that_is_a_file(folder: Path) -> None:
    (folder / "file").write_text("x")
    assert ": repo 'file': no such folder" in _error(folder, _task(repo="file"))


def test_the_first_bad_line_is_named_and_nothing_is_returned(folder: Path) -> None:
    message = _error(folder, _task(), _task(id="t2", max_turns=0), _task(id="t3", repo="x"))
    assert message.startswith(f"{folder / 'tasks.jsonl'}:2: ")
