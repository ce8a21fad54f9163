"""Every built-in tool speaks Claude Code's input names."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from stayer.tools.base import Tool
from stayer.tools.builtin.grep import GrepInput
from stayer.tools.registry import builtin_tools

CLAUDE_CODE_FIELDS = {
    "Agent": (
        {
            "description",
            "prompt",
            "subagent_type",
            "model",
            "effort",
            "run_in_background",
            "isolation",
        },
        {"description", "prompt"},
    ),
    "Bash": ({"command", "timeout", "description", "run_in_background"}, {"command"}),
    "BashOutput": ({"bash_id", "filter"}, {"bash_id"}),
    "KillShell": ({"shell_id"}, {"shell_id"}),
    "Glob": ({"pattern", "path"}, {"pattern"}),
    "Grep": (
        {
            "pattern",
            "path",
            "glob",
            "type",
            "output_mode",
            "-i",
            "-n",
            "-A",
            "-B",
            "-C",
            "head_limit",
            "offset",
            "multiline",
        },
        {"pattern"},
    ),
    "Read": ({"file_path", "offset", "limit", "pages"}, {"file_path"}),
    "Edit": (
        {"file_path", "old_string", "new_string", "replace_all"},
        {"file_path", "old_string", "new_string"},
    ),
    "Write": ({"file_path", "content"}, {"file_path", "content"}),
    "NotebookEdit": (
        {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
        {"notebook_path", "new_source"},
    ),
    "WebFetch": ({"url", "prompt"}, {"url", "prompt"}),
    "TodoWrite": ({"todos"}, {"todos"}),
    "ExitPlanMode": ({"plan"}, {"plan"}),
    "Skill": ({"skill", "args"}, {"skill"}),
    "Pin": ({"note"}, {"note"}),  # stayer's own: Claude Code has no such tool
}

MINIMAL: dict[str, dict[str, object]] = {"TodoWrite": {"todos": []}}
"""Required fields that a string does not satisfy, with the least valid value."""


def test_todowrite_items_have_claude_codes_fields_and_statuses_inline() -> None:
    from stayer.tools.builtin.todo import TodoWriteTool

    schema = TodoWriteTool().spec().input_schema
    assert "$defs" not in schema
    items = schema["properties"]["todos"]["items"]
    assert set(items["properties"]) == set(items["required"]) == {"content", "status", "activeForm"}
    assert items["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert items["additionalProperties"] is False and "title" not in items


def test_notebook_edit_modes_and_cell_types_are_closed_sets() -> None:
    from stayer.tools.builtin.notebook import NotebookEditTool

    properties = NotebookEditTool().spec().input_schema["properties"]
    assert properties["edit_mode"]["enum"] == ["replace", "insert", "delete"]
    assert properties["edit_mode"]["default"] == "replace"
    assert properties["cell_type"]["enum"] == ["code", "markdown"]


BUILTIN_ORDER = [
    "Agent",
    "Bash",
    "BashOutput",
    "KillShell",
    "Glob",
    "Grep",
    "Read",
    "Edit",
    "Write",
    "NotebookEdit",
    "WebFetch",
    "TodoWrite",
    "ExitPlanMode",
    "Skill",
    "Pin",
]
"""The built-in tools as the model sees them: Claude Code's order, stayer's own last."""


def test_builtin_tools_come_in_claude_codes_order_with_stayers_own_last() -> None:
    assert [tool.name for tool in builtin_tools()] == BUILTIN_ORDER


@pytest.mark.parametrize("tool", builtin_tools(), ids=lambda tool: tool.name)
def test_schema_uses_claude_code_field_names(tool: Tool[Any]) -> None:
    spec = tool.spec()
    fields, required = CLAUDE_CODE_FIELDS[tool.name]
    assert set(spec.input_schema["properties"]) == fields
    assert set(spec.input_schema.get("required", ())) == required
    assert spec.input_schema["additionalProperties"] is False
    assert spec.description.strip()


@pytest.mark.parametrize("tool", builtin_tools(), ids=lambda tool: tool.name)
def test_schema_fields_are_described_plain_types(tool: Tool[Any]) -> None:
    schema = tool.spec().input_schema
    assert "title" not in schema and "description" not in schema
    for name, prop in schema["properties"].items():
        assert prop.get("description"), f"{tool.name}.{name} has no description"
        assert "anyOf" not in prop and "title" not in prop, f"{tool.name}.{name}: {prop}"
        assert "type" in prop, f"{tool.name}.{name}: {prop}"


@pytest.mark.parametrize("tool", builtin_tools(), ids=lambda tool: tool.name)
def test_unknown_fields_are_rejected(tool: Tool[Any]) -> None:
    _, required = CLAUDE_CODE_FIELDS[tool.name]
    minimal: dict[str, object] = {**dict.fromkeys(required, "x"), **MINIMAL.get(tool.name, {})}
    tool.input_model.model_validate(minimal)
    with pytest.raises(ValidationError, match="extra_field"):
        tool.input_model.model_validate({**minimal, "extra_field": 1})


def test_grep_flags_are_accepted_by_their_rg_names() -> None:
    parsed = GrepInput.model_validate(
        {"pattern": "x", "-i": True, "-n": False, "-A": 1, "-B": 2, "-C": 3}
    )
    assert (parsed.case_insensitive, parsed.line_numbers) == (True, False)
    assert (parsed.after, parsed.before, parsed.context) == (1, 2, 3)


def test_grep_output_mode_is_a_closed_set() -> None:
    schema = GrepInput.model_json_schema(by_alias=True)["properties"]["output_mode"]
    assert schema["enum"] == ["content", "files_with_matches", "count"]
    assert schema["default"] == "files_with_matches"
    with pytest.raises(ValidationError):
        GrepInput.model_validate({"pattern": "x", "output_mode": "lines"})


def test_builtin_tools_are_fresh_instances() -> None:
    first, second = builtin_tools(), builtin_tools()
    assert all(a is not b for a, b in zip(first, second, strict=True))
