"""The catalog's custom commands and user-invocable skills in the REPL: in /help (saying where
each is from, and which a built-in's name hides), in `/` completion with their argument hint,
and `/greet Ada` sent as the person's message for the session to expand; and /agents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from stayer.agents.model import Catalog, Scope, Skill
from stayer.driver import Submit
from stayer.ui.repl.commands import Commands
from stayer.ui.repl.commands_custom import CatalogCommands
from stayer.ui.repl.completion import ReplCompleter
from tests.fakes.model_server import FakeModelServer
from tests.ui.repl.commands_kit import RecordingRepl, opened, run
from tests.ui.repl.test_completion import complete


def _skill(
    name: str,
    description: str,
    *,
    kind: Literal["skill", "command"] = "command",
    scope: Scope = "project",
    argument_hint: str = "",
    plugin: str | None = None,
    user_invocable: bool = True,
) -> Skill:
    folder = Path("/p/.claude/commands")
    return Skill(
        name=name,
        description=description,
        body="Say hello to $ARGUMENTS.",
        kind=kind,
        scope=scope,
        source=folder / f"{name}.md",
        base_dir=folder,
        argument_hint=argument_hint,
        plugin=plugin,
        user_invocable=user_invocable,
    )


CATALOG = Catalog(
    skills=(
        _skill("greet", "Say hello to someone", argument_hint="<name>"),
        _skill("review", "Review the diff", kind="skill", scope="user"),
        _skill("lint:fix", "Fix lint", plugin="lint", scope="plugin"),
        _skill("clear", "My own clear"),
        _skill("secret", "Model only", user_invocable=False),
    )
)


def _table() -> tuple[Commands, list[str]]:
    table = Commands()
    problems = CatalogCommands().offer(table, CATALOG)
    return table, problems


async def test_a_custom_command_is_sent_as_the_person_s_message(tmp_path: Path) -> None:
    table, problems = _table()
    assert problems == []
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/greet Ada Lovelace", table) == []
            assert await run(repl, "/lint:fix", table) == []
            said = await run(repl, "/secret", table)
    assert repl.sent == [Submit("/greet Ada Lovelace"), Submit("/lint:fix")]
    assert said == ["Unknown command /secret; /help lists the commands"]


async def test_help_lists_them_with_where_each_is_from_and_the_built_in_that_wins(
    tmp_path: Path,
) -> None:
    table, _ = _table()
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            [text] = await run(RecordingRepl(session), "/help", table)
    lines = text.splitlines()
    start = lines.index("Custom commands and skills (sent to the model):")
    custom = lines[start + 1 : lines.index("Keys:") - 1]
    assert [" ".join(line.split()) for line in custom] == [
        "/greet <name> Say hello to someone (the project's command)",
        "/lint:fix Fix lint (command of plugin lint)",
        "/review Review the diff (your skill)",
        "/clear (the project's command) not offered: the built-in /clear wins; rename it",
    ]
    builtin = lines[1:start]
    assert any(line.split()[0] == "/clear" for line in builtin if line.strip())
    assert not any("greet" in line for line in builtin)


def test_they_complete_after_a_slash_with_their_argument_hint() -> None:
    table, _ = _table()

    def offered() -> list[tuple[str, str, str]]:
        return [(c.name, c.summary, c.argument_hint) for c in table.complete("")]

    found = complete(ReplCompleter(offered, None), "/gr")
    assert [(c.text, c.display_text, c.display_meta_text) for c in found] == [
        ("/greet", "/greet <name>", "Say hello to someone")
    ]
    assert [c.text for c in complete(ReplCompleter(offered, None), "/lint")] == ["/lint:fix"]


def test_a_new_catalog_replaces_the_old_one_s_commands() -> None:
    table = Commands()
    offer = CatalogCommands()
    offer.offer(table, CATALOG)
    offer.offer(table, Catalog(skills=(_skill("deploy", "Ship it"),)))
    assert table.find("greet") is None and table.find("deploy") is not None
    assert table.shadowed == {}
    assert table.find("clear") is not None  # the built-in, untouched


async def test_agents_lists_each_type_with_its_origin_model_and_tools(tmp_path: Path) -> None:
    agents = {
        "reviewer": {
            "description": "Reviews a diff\nfor bugs",
            "prompt": "Review.",
            "tools": ["Read", "Grep"],
            "model": "haiku",
        }
    }
    with FakeModelServer() as server:
        async with opened(server, tmp_path, agents=json.dumps(agents)) as session:
            [text] = await run(RecordingRepl(session, running=True), "/agents")
    lines = [" ".join(line.split()) for line in text.splitlines()]
    assert lines[0] == "Agent types (the model starts one with the Agent tool):"
    at = next(index for index, line in enumerate(lines) if line.startswith("reviewer "))
    assert lines[at : at + 2] == [
        "reviewer --agents · model: haiku · tools: Read, Grep",
        "Reviews a diff for bugs",
    ]
    assert "general-purpose built-in · model: inherit · tools: all" in lines
