"""How a tool call reads: its key argument, a short result, a diff for a file change."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from rich.console import RenderableType

from stayer.ui.repl.ansi import Painter, plain
from stayer.ui.repl.diffs import Change, change_of, counts, diff_texts, read_text
from stayer.ui.repl.tool_lines import key_argument, relative, result_texts, todo_texts

CWD = "/home/me/project"


def test_each_tool_shows_the_argument_that_tells_its_calls_apart() -> None:
    cases: list[tuple[str, dict[str, object], str]] = [
        ("Bash", {"command": "make test\necho done", "description": "x"}, "make test …"),
        ("Read", {"file_path": f"{CWD}/src/a.py"}, "src/a.py"),
        ("Write", {"file_path": "/etc/hosts", "content": ""}, "/etc/hosts"),
        ("Edit", {"file_path": f"{CWD}/b.py", "old_string": "", "new_string": ""}, "b.py"),
        ("NotebookEdit", {"notebook_path": f"{CWD}/n.ipynb", "new_source": ""}, "n.ipynb"),
        ("Grep", {"pattern": "TODO", "path": f"{CWD}/src"}, 'pattern: "TODO", path: "src"'),
        ("Grep", {"pattern": "TODO"}, 'pattern: "TODO"'),
        ("Glob", {"pattern": "**/*.py"}, "**/*.py"),
        ("WebFetch", {"url": "https://example.com", "prompt": "what?"}, "https://example.com"),
        ("WebSearch", {"query": "rich markdown"}, "rich markdown"),
        ("TodoWrite", {"todos": [{}, {}]}, "2 tasks"),
        ("Task", {"description": "Find the bug", "prompt": "long..."}, "Find the bug"),
        ("mcp__db__run", {"limit": 3, "sql": "select 1"}, "select 1"),
    ]
    for name, tool_input, expected in cases:
        assert key_argument(name, tool_input, CWD) == expected, name


def test_an_argument_with_escape_sequences_is_made_safe() -> None:
    assert key_argument("Bash", {"command": "echo \x1b[31mred\x1b[0m"}, CWD) == "echo red"


def test_paths_are_shown_relative_only_under_the_working_directory() -> None:
    assert relative(f"{CWD}/x/y.py", CWD) == "x/y.py"
    assert relative(f"{CWD}-other/y.py", CWD) == f"{CWD}-other/y.py"
    assert relative("rel/y.py", CWD) == "rel/y.py"
    assert relative(CWD, CWD) == CWD


def _lines(texts: Sequence[RenderableType], width: int = 80, color: bool = False) -> list[str]:
    painter = Painter(width, color=color)
    return [row for text in texts for row in painter.lines(text)]


def test_a_long_result_shows_its_first_lines_and_how_many_more() -> None:
    shown = _lines(result_texts("1\n2\n3\n4\n5\n", "completed", change=None, limit=3, cwd=None))
    assert shown == ["  ⎿  1", "     2", "     3", "     … +2 lines (ctrl+o to expand)"]
    whole = _lines(result_texts("1\n2\n3\n4\n5\n", "completed", change=None, limit=None, cwd=None))
    assert len(whole) == 5


def test_an_error_result_is_red() -> None:
    shown = _lines(
        result_texts("Error: no such file", "failed", change=None, limit=3, cwd=None), color=True
    )
    assert "\x1b[31m" in shown[0]
    assert plain(shown[0]) == "  ⎿  Error: no such file"


def test_an_edit_is_a_numbered_diff_removals_red_additions_green() -> None:
    before = "".join(f"line {n}\n" for n in range(1, 11))
    edit = {"file_path": "f.txt", "old_string": "line 5\n", "new_string": "five\nand more\n"}
    change = change_of("Edit", edit, before)
    assert change == Change("f.txt", before, before.replace("line 5\n", "five\nand more\n"))
    assert counts(change) == (2, 1)
    rows = _lines(diff_texts(change), color=True)
    assert [plain(row) for row in rows] == [
        "    2   line 2",
        "    3   line 3",
        "    4   line 4",
        "    5 - line 5",
        "    5 + five",
        "    6 + and more",
        "    7   line 6",
        "    8   line 7",
        "    9   line 8",
    ]
    assert "\x1b[31m" in rows[3] and "\x1b[32m" not in rows[3]
    assert "\x1b[32m" in rows[4] and "\x1b[31m" not in rows[4]


def test_an_edit_to_an_unknown_file_shows_its_own_old_and_new_text() -> None:
    edit = {"file_path": "f.txt", "old_string": "a\n", "new_string": "b\n"}
    assert change_of("Edit", edit, None) == Change("f.txt", "a\n", "b\n")
    assert change_of("Edit", edit, "not there\n") == Change("f.txt", "a\n", "b\n")


def test_replace_all_changes_every_occurrence() -> None:
    edit = {"file_path": "f", "old_string": "x", "new_string": "y", "replace_all": True}
    assert change_of("Edit", edit, "x x\nx\n") == Change("f", "x x\nx\n", "y y\ny\n")


def test_a_write_shows_new_content_against_what_was_there() -> None:
    write = {"file_path": "f", "content": "a\nb\n"}
    assert change_of("Write", write, None) == Change("f", "", "a\nb\n")
    assert change_of("Write", write, "a\n") == Change("f", "a\n", "a\nb\n")
    shown = _lines(
        result_texts("ok", "completed", change=Change("f", "", "a\n"), limit=3, cwd=None)
    )
    assert shown == ["  ⎿  Wrote f with 1 addition and 0 removals", "         1 + a"]


def test_a_notebook_edit_diffs_the_cell_it_replaces() -> None:
    notebook = '{"cells": [{"id": "c1", "source": ["x = 1\\n"]}, {"source": "y = 2\\n"}]}'
    replace = {"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "x = 3\n"}
    assert change_of("NotebookEdit", replace, notebook) == Change("n.ipynb", "x = 1\n", "x = 3\n")
    by_index = {"notebook_path": "n.ipynb", "cell_id": "cell-1", "edit_mode": "delete"}
    assert change_of("NotebookEdit", by_index, notebook) == Change("n.ipynb", "y = 2\n", "")
    assert change_of("NotebookEdit", replace, "{broken") == Change("n.ipynb", "", "x = 3\n")


def test_other_tools_make_no_change() -> None:
    assert change_of("Bash", {"command": "rm -rf x"}, "") is None


def test_reading_a_file_never_fails(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("a\r\nb\r\n")
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    assert read_text(tmp_path / "t.txt") == "a\nb\n"
    assert read_text(tmp_path / "bin") is None
    assert read_text(tmp_path / "missing") is None
    assert read_text(tmp_path) is None
    os.mkfifo(tmp_path / "pipe")  # opening it would wait for a writer forever
    assert read_text(tmp_path / "pipe") is None
    assert read_text(Path("/dev/zero")) is None


def test_a_todo_list_marks_each_task_by_status() -> None:
    todos: list[object] = [
        {"content": "read", "status": "completed"},
        {"content": "write", "status": "in_progress"},
        {"content": "test", "status": "pending"},
    ]
    assert _lines(todo_texts(todos)) == ["  ⎿  ☒ read", "     ◐ write", "     ☐ test"]


def test_a_write_read_after_it_landed_shows_the_content_as_new() -> None:
    write = {"file_path": "f", "content": "a\n"}
    assert change_of("Write", write, "a\n") == Change("f", "", "a\n")
