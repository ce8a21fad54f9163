"""A command that reads a folder whole is refused only when the folder holds a file a read
rule names: the folder is walked on disk (a `Read(.env)` rule names `.env` at any depth, but a
`src/` with none in it is searched unasked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.loop.state import ToolCall
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider
from stayer.session import trees
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare
from stayer.tools.builtin.bash import BashInput, BashTool


async def decide(root: Path, command: str, *rules: str) -> Decision:
    setup = prepare(
        QueryOptions(
            cwd=str(root),
            provider=ScriptedProvider([]),
            disallowed_tools=list(rules),
            permission_mode="bypassPermissions",  # read deny rules win in every mode
            persist_session=False,
        )
    )
    call = ToolCall(BashTool(), "t1", BashInput(command=command))
    return await setup.params.can_use_tool(call)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src" / "lib").mkdir(parents=True)
    (tmp_path / "src" / "lib" / "a.py").write_text("# TODO\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / ".env").write_text("TOKEN=1\n")
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn TODO src",
        "rg -n TODO src",
        "tar cf - src",
        "cp -r src /tmp/x-copy",
        "rg -l x docs",
    ],
)
async def test_a_folder_without_the_named_file_is_read_unasked(project: Path, command: str) -> None:
    assert (await decide(project, command, "Read(.env)")).behavior == "allow"


@pytest.mark.parametrize("command", ["grep -rn TODO .", "rg TODO", "tar cf - .", "grep -r x src"])
async def test_a_folder_holding_it_anywhere_below_is_refused(project: Path, command: str) -> None:
    (project / "src" / "lib" / ".env").write_text("TOKEN=2\n")
    decision = await decide(project, command, "Read(.env)")
    assert decision.behavior == "deny", command


async def test_a_link_inside_the_folder_is_judged_where_it_points(project: Path) -> None:
    (project / "src" / "lib" / "cfg").symlink_to(project / ".env")
    assert (await decide(project, "grep -r x src", "Read(.env)")).behavior == "deny"
    (project / "src" / "lib" / "cfg").unlink()
    (project / "src" / "lib" / "up").symlink_to(project)  # a folder above: its .env too
    assert (await decide(project, "grep -R x src", "Read(.env)")).behavior == "deny"


async def test_a_folder_too_large_to_walk_counts_as_holding_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(5):
        (project / "src" / f"f{index}.py").write_text("")
    monkeypatch.setattr(trees, "MOST_ENTRIES", 3)
    assert (await decide(project, "grep -r x src", "Read(.env)")).behavior == "deny"
