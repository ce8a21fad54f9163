"""Tab completion: `/command` names at the start of the input, `@path` mentions anywhere, the
paths listed by ripgrep in a thread (a real tree, a real .gitignore), matched fuzzily with
whole pieces and short paths first, quoted when they hold a space."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent, Completion
from prompt_toolkit.document import Document

from stayer.ui.repl.completion import (
    FileIndex,
    PathMatcher,
    ReplCompleter,
    fuzzy_matches,
    list_paths,
    mention,
)

COMMANDS = [("help", "Show help"), ("clear", "Start over"), ("compact", "Summarise"),
            ("cost", "Show the cost"), ("context", "What fills the window")]  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    files = [
        "README.md",
        "src/app/main.py",
        "src/app/models.py",
        "src/util.py",
        "docs/my notes/todo.md",
        "build/out.bin",
        "node_modules/pkg/index.js",
        "debug.log",
        ".github/workflows/ci.yml",
        "secret/.env",
    ]
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    (root / ".gitignore").write_text("build/\nnode_modules/\n*.log\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def listed(project: Path) -> FileIndex:
    index = FileIndex(project, dict(os.environ))
    assert index.refresh().wait(20)
    return index


def complete(completer: ReplCompleter, text: str, cursor: int | None = None) -> list[Completion]:
    document = Document(text, cursor if cursor is not None else len(text))
    return list(completer.get_completions(document, CompleteEvent(completion_requested=True)))


def test_the_listing_leaves_out_what_git_ignores_and_adds_the_folders(project: Path) -> None:
    paths = listed(project).paths()
    assert set(paths) == {
        ".gitignore",
        "README.md",
        "src/",
        "src/app/",
        "src/app/main.py",
        "src/app/models.py",
        "src/util.py",
        "docs/",
        "docs/my notes/",
        "docs/my notes/todo.md",
        ".github/",
        ".github/workflows/",
        ".github/workflows/ci.yml",
        "secret/",
        "secret/.env",
    }
    assert ".git/" not in paths
    assert [len(path) for path in paths] == sorted(len(path) for path in paths)


def test_at_path_completes_anywhere_in_the_input(project: Path) -> None:
    completer = ReplCompleter(lambda: COMMANDS, listed(project))
    found = complete(completer, "please read @mai")
    assert found[0].text == "@src/app/main.py"
    assert found[0].start_position == -len("@mai")
    found = complete(completer, "look at @sapm and then more", cursor=len("look at @sapm"))
    assert [c.text for c in found] == ["@src/app/main.py", "@src/app/models.py"]


def test_an_at_inside_a_word_is_not_a_mention(project: Path) -> None:
    completer = ReplCompleter(lambda: COMMANDS, listed(project))
    assert complete(completer, "mail me at someone@src") == []


def test_a_path_with_a_space_is_offered_quoted_and_completes_a_quoted_query(
    project: Path,
) -> None:
    completer = ReplCompleter(lambda: COMMANDS, listed(project))
    found = complete(completer, "@todo")
    assert [c.text for c in found] == ['@"docs/my notes/todo.md"']
    found = complete(completer, 'see @"docs/my no')
    assert found[0].text == '@"docs/my notes/"'
    assert found[0].start_position == -len('@"docs/my no')


def test_fuzzy_matching_puts_whole_pieces_then_short_paths_first() -> None:
    paths = ["a/b/c/util_test.py", "src/util.py", "u/t/i/l.py", "unrelated.txt", "UTIL.md"]
    assert fuzzy_matches("util", paths) == ["UTIL.md", "src/util.py", "a/b/c/util_test.py",
                                            "u/t/i/l.py"]  # fmt: skip
    assert fuzzy_matches("", paths, limit=2) == ["UTIL.md", "u/t/i/l.py"]
    assert fuzzy_matches("zz", paths) == []
    assert mention("a b/c") == '@"a b/c"'
    assert mention("a/b") == "@a/b"


def test_slash_commands_complete_at_the_start_with_their_summaries() -> None:
    completer = ReplCompleter(lambda: COMMANDS, None)
    found = complete(completer, "/co")
    assert [c.text for c in found] == ["/compact", "/context", "/cost"]
    assert [c.display_meta_text for c in found] == ["Summarise", "What fills the window",
                                                    "Show the cost"]  # fmt: skip
    assert all(c.start_position == -3 for c in found)
    assert [c.text for c in complete(completer, "/")][:2] == ["/clear", "/compact"]
    # the letters in order, not only a prefix
    assert [c.text for c in complete(completer, "/cxt")] == ["/context"]
    assert [c.text for c in complete(completer, "/cst")] == ["/cost"]


def test_slash_is_a_command_only_at_the_start_of_the_input() -> None:
    completer = ReplCompleter(lambda: COMMANDS, None)
    assert complete(completer, "use /co") == []
    assert complete(completer, " /co") == []
    assert complete(completer, "/cost now") == []


def test_commands_added_later_are_offered(project: Path) -> None:
    table = list(COMMANDS)
    completer = ReplCompleter(lambda: table, None)
    table.append(("deploy", "A custom command"))
    assert [c.text for c in complete(completer, "/dep")] == ["/deploy"]


def test_the_listing_is_refreshed_in_the_background_when_stale(project: Path) -> None:
    updates: list[float] = []
    index = FileIndex(project, dict(os.environ), refresh_s=0.0,
                      on_update=lambda: updates.append(time.monotonic()))  # fmt: skip
    index.paths()  # starts the first listing and returns at once
    assert index.listed.wait(20)
    (project / "src" / "new_module.py").write_text("x\n")
    index.refresh(force=False).wait(20)
    assert "src/new_module.py" in index.paths()
    assert len(updates) >= 2


def test_a_recent_listing_is_not_redone(project: Path) -> None:
    index = FileIndex(project, dict(os.environ), refresh_s=3600.0)
    assert index.refresh().wait(20)
    (project / "late.py").write_text("x\n")
    assert index.refresh(force=False).is_set()  # nothing was started
    assert "late.py" not in index.paths()
    assert index.refresh().wait(20)  # asked for outright, it is
    assert "late.py" in index.paths()


def test_matching_key_by_key_gives_what_matching_afresh_gives() -> None:
    paths = ("src/App/Main.py", "src/app/models.py", "docs/api.md", "Makefile", "a/m/p.txt")
    matcher = PathMatcher()
    for query in ["", "a", "ap", "apm", "ap", "M", "ma", "mak", "x"]:
        assert matcher.matches(query, paths) == fuzzy_matches(query, paths), query
    fresh = (*paths, "apm.txt")  # a new listing is searched whole
    assert matcher.matches("apm", fresh)[0] == "apm.txt"


def test_a_listing_cut_short_offers_what_it_got_and_no_broken_path(project: Path) -> None:
    paths = list_paths(project, dict(os.environ), max_bytes=40)
    assert paths  # some of the tree
    for path in paths:
        assert (project / path).exists(), path


async def test_completing_while_typing_gives_the_same_from_a_thread(project: Path) -> None:
    completer = ReplCompleter(lambda: COMMANDS, listed(project))
    for text in ("read @mai", "/co", "plain"):
        document = Document(text, len(text))
        event = CompleteEvent(text_inserted=True)
        found = [c async for c in completer.get_completions_async(document, event)]
        assert found == list(completer.get_completions(document, event)), text
