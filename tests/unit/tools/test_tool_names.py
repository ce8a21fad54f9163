"""Nothing outside `stayer.tools` spells a tool's name: the session, the loop and compaction
refer to a built-in through `stayer.tools.names`, and every name there is a built-in's."""

from __future__ import annotations

import ast
from pathlib import Path

from stayer.tools import names
from stayer.tools.builtin_specs import BUILTIN_SPECS
from stayer.tools.registry import builtin_tools

SRC = Path(__file__).parents[3] / "src" / "stayer"
BUILTIN_NAMES = {spec.name for spec in BUILTIN_SPECS}

SCRIPTED = {"session/demo.py"}
"""The demo's scripted model, whose calls name their tools as a model's do."""


def _spelt(source: Path) -> set[str]:
    """The built-in names a module spells as a whole string, or as a rule (`Read(...)`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            head = node.value.split("(", 1)[0]
            if head in BUILTIN_NAMES and (head == node.value or node.value.endswith(")")):
                found.add(head)
    return found


def test_nothing_outside_tools_spells_a_tool_name() -> None:
    found = {
        (str(source.relative_to(SRC)), name)
        for source in sorted(SRC.rglob("*.py"))
        if source.relative_to(SRC).parts[0] != "tools"
        if str(source.relative_to(SRC)) not in SCRIPTED
        for name in _spelt(source)
    }
    assert found == set()


def test_the_check_finds_a_name_spelt_as_a_string_or_a_rule(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('A = "TodoWrite"\nB = "Bash(git diff:*)"\nC = "Read the file"\n')
    assert _spelt(module) == {"TodoWrite", "Bash"}


def test_every_named_tool_is_a_built_in_that_takes_its_name_from_there() -> None:
    single = {names.READ, names.TODO_WRITE, names.EXIT_PLAN_MODE, names.WEB_FETCH, names.BASH}
    single |= {names.EDIT, names.WRITE, names.NOTEBOOK_EDIT, names.GREP, names.GLOB}
    assert single <= BUILTIN_NAMES
    assert single <= {tool.name for tool in builtin_tools()}


def test_every_built_in_with_a_path_subject_has_path_rules() -> None:
    path_tools = {tool.name for tool in builtin_tools() if tool.subject_kind == "path"}
    assert path_tools <= names.PATH_RULE_TOOLS
    not_ours = names.PATH_RULE_TOOLS - BUILTIN_NAMES
    assert not_ours == {"MultiEdit"}  # Claude Code's own


def test_the_table_of_what_read_rules_judge_matches_the_tools() -> None:
    from stayer.tools.names import READS_UNDER

    assert {
        tool.name: tool.reads_under for tool in builtin_tools() if tool.reads_under
    } == READS_UNDER
