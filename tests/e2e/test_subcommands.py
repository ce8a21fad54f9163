"""Subcommands own their words: `stayer permissions` and `stayer demo` print their help or a
one-line usage error and never send anything to a model; after `-p` the same word is a prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.session.listings import is_listing
from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply

# a model that must never be called: nothing listens on port 9
NO_MODEL = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "sk-test"}


def test_permissions_alone_prints_its_usage_and_exits_2(tmp_path: Path) -> None:
    done = stayer("permissions", cwd=tmp_path, env=NO_MODEL)
    assert (done.status, done.stdout) == (2, "")
    assert done.stderr.startswith("usage: stayer permissions check")
    assert "\n  check    replay the tool calls of past sessions" in done.stderr


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_permissions_help_is_the_same_usage_with_status_0(tmp_path: Path, flag: str) -> None:
    alone = stayer("permissions", cwd=tmp_path, env=NO_MODEL)
    done = stayer("permissions", flag, cwd=tmp_path, env=NO_MODEL)
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout == alone.stderr


def test_permissions_check_help_prints_its_options_and_checks_nothing(tmp_path: Path) -> None:
    done = stayer("permissions", "check", "--help", cwd=tmp_path, env=NO_MODEL)
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: stayer permissions check [--settings FILE")
    assert "--permission-mode MODE" in done.stdout
    assert "would have been" not in done.stdout  # no report: nothing was replayed


def test_an_unknown_permissions_subcommand_is_one_line(tmp_path: Path) -> None:
    done = stayer("permissions", "list", cwd=tmp_path, env=NO_MODEL)
    assert (done.status, done.stdout) == (2, "")
    assert done.stderr == (
        "stayer: permissions: 'list' is not one of its subcommands; the one there is: "
        "stayer permissions check (see stayer permissions --help)\n"
    )


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_demo_help_prints_help_and_runs_nothing(tmp_path: Path, flag: str) -> None:
    done = stayer("demo", flag, cwd=tmp_path, env=NO_MODEL)
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: stayer demo\n\nWatch a live session fix a real bug")
    assert "throwaway repository at" not in done.stdout + done.stderr  # no repository made
    assert "●" not in done.stdout  # no tool call drawn


@pytest.mark.parametrize("words", [("extra", "words"), ("-p",), ("--model", "sonnet")])
def test_demo_refuses_words_it_does_not_take_in_one_line(
    tmp_path: Path, words: tuple[str, ...]
) -> None:
    done = stayer("demo", *words, cwd=tmp_path, env=NO_MODEL)
    assert (done.status, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()
    given = " ".join(words)
    assert line == f"stayer: demo: unrecognized arguments: {given}; usage: stayer demo"


@pytest.mark.parametrize("word", ["permissions", "demo"])
def test_after_p_the_word_is_a_prompt_for_the_model(
    server: FakeModelServer, tmp_path: Path, word: str
) -> None:
    server.enqueue(reply("a prompt, not a subcommand"))
    done = stayer("-p", word, cwd=tmp_path, env=server.env())
    assert (done.status, done.stdout) == (0, "a prompt, not a subcommand\n"), done.stderr
    (request,) = server.requests
    first = request.messages[0]
    assert isinstance(first, dict)
    said = [block["text"] for block in first["content"]]
    assert [text for text in said if not is_listing(text)] == [word]
