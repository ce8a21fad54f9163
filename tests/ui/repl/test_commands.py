"""The slash-command table: parsing a line, unknown names, completion, commands that wait for
the run to end, and entries added by later sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.driver import Clear
from stayer.errors import ConfigError
from stayer.ui.repl.commands import BUILT_IN, Command, Commands
from stayer.ui.repl.surface import Repl
from tests.fakes.model_server import FakeModelServer
from tests.ui.repl.commands_kit import RecordingRepl, opened, run

BUILT_IN_NAMES = [
    "agents", "clear", "compact", "context", "cost", "exit", "help", "init", "mcp", "memory",
    "model", "permissions", "resume", "status",
]  # fmt: skip


def echo(name: str, *, while_running: bool = False, aliases: tuple[str, ...] = ()) -> Command:
    """A command that says what it was given."""

    async def handler(repl: Repl, argument: str) -> None:
        repl.say(f"{name} got {argument!r}")

    return Command(name, f"say what {name} got", handler, "[text]", aliases, while_running)


async def test_an_unknown_command_gets_the_closest_name_suggested(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/clera") == ["Unknown command /clera; did you mean /clear?"]
            assert await run(repl, "/stauts now") == [
                "Unknown command /stauts; did you mean /status?"
            ]
            assert await run(repl, "/xyzzy") == ["Unknown command /xyzzy; /help lists the commands"]
            assert await run(repl, "/") == ["A slash starts a command: /help lists them"]
    assert repl.sent == []


def test_the_table_names_completes_and_finds_by_alias() -> None:
    table = Commands()
    assert table.names() == BUILT_IN_NAMES
    assert [c.name for c in table.complete("c")] == ["clear", "compact", "context", "cost"]
    assert [c.name for c in table.complete("/co")] == ["compact", "context", "cost"]
    assert [c.name for c in table.complete("q")] == ["exit"]  # by its alias /quit
    assert [c.name for c in table.complete("")] == BUILT_IN_NAMES
    assert table.complete("zz") == []
    exit_command = table.find("exit")
    assert exit_command is not None
    assert table.find("/QUIT") is exit_command
    assert table.closest("hlep") == "help"
    assert table.closest("frobnicate") is None


async def test_an_added_command_runs_with_the_text_after_its_name(tmp_path: Path) -> None:
    table = Commands()
    table.add(echo("review", aliases=("rv",)))
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "  /review   the   diff  ", table) == ["review got 'the   diff'"]
            assert await run(repl, "/rv", table) == ["review got ''"]
            assert await run(repl, "/review\nthe first line\nand more ", table) == [
                "review got 'the first line\\nand more'"
            ]
            assert await run(repl, "/review\tx", table) == ["review got 'x'"]
            assert await run(repl, "/ review", table) == [
                "A slash starts a command: /help lists them"
            ]
            assert await run(repl, "/reveiw x", table) == [
                "Unknown command /reveiw; did you mean /review?"
            ]
    assert "review" in table.names()
    assert [c.name for c in table.complete("r")] == ["resume", "review"]


def test_a_built_in_name_or_alias_cannot_be_taken_but_an_added_one_is_replaced() -> None:
    table = Commands()
    with pytest.raises(ConfigError, match=r"^/clear is already a built-in command; give yours"):
        table.add(echo("clear"))
    with pytest.raises(ConfigError, match=r"^/quit is already a built-in command"):
        table.add(echo("leave", aliases=("quit",)))
    with pytest.raises(ConfigError, match="is not a command name"):
        table.add(echo("two words"))
    table.add(echo("review", aliases=("rv",)))
    replacement = echo("review")
    table.add(replacement)  # a project's command over the user's
    assert table.find("review") is replacement
    assert table.find("rv") is None  # the old entry's alias went with it
    assert table.find("clear") is not None and table.find("clear") in BUILT_IN


async def test_a_command_that_must_wait_is_refused_while_a_run_goes_on(tmp_path: Path) -> None:
    table = Commands()
    table.add(echo("peek", while_running=True))
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session, running=True)
            assert await run(repl, "/clear", table) == [
                "/clear cannot run while the agent is working; press Esc to stop it, "
                "or wait until it finishes"
            ]
            assert await run(repl, "/peek now", table) == ["peek got 'now'"]
    assert repl.sent == []


async def test_a_command_waits_for_a_run_shown_ended_to_finish_tidying(tmp_path: Path) -> None:
    # the person saw the run end and typed /clear while it still stopped its background work:
    # refusing it then let their next prompt join the old conversation
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session, running=True, finishing=True)
            assert await run(repl, "/clear") == [
                "Started a new conversation; the last one is saved (/resume goes back to it)"
            ]
    assert repl.settled == 1 and repl.sent == [Clear()]


async def test_a_failing_command_is_one_line_naming_it(tmp_path: Path) -> None:
    async def refuses(repl: Repl, argument: str) -> None:
        raise ConfigError("no such thing; try another")

    table = Commands([*BUILT_IN, Command("fail", "always fails", refuses)])
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/fail", table) == ["/fail: no such thing; try another"]


async def test_help_lists_every_command_with_its_hint_and_the_keys(tmp_path: Path) -> None:
    table = Commands()
    table.add(echo("review", aliases=("rv",)))
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session, running=True)  # help may run while the agent works
            [text] = await run(repl, "/help", table)
    lines = text.splitlines()
    assert lines[0] == "Commands:"
    for command in table.commands():
        [line] = [line for line in lines if line.lstrip().startswith(f"/{command.name}")]
        assert line.rstrip().endswith(command.summary)
        assert command.argument_hint in line
    assert any("/compact [instructions]" in line for line in lines)
    assert any("/exit (/quit)" in line for line in lines)
    assert any("/review [text] (/rv)" in line for line in lines)
    keys = lines[lines.index("Keys:") + 1 :]
    for key in ("Enter", "Alt+Enter", "Esc, Ctrl+C", "Ctrl+D", "Shift+Tab", "Ctrl+R", "Ctrl+O"):
        assert any(key in line for line in keys), key
    assert any(line.lstrip().startswith("!command") for line in keys)
    assert any(line.lstrip().startswith("@path") for line in keys)
