"""Front matter split from the body, as Claude Code's files write it, and its loose values."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.agents import frontmatter
from stayer.agents.frontmatter import Parsed, as_bool, as_names, parse, split_names


def test_fields_and_body_are_split_at_the_fences() -> None:
    text = "---\nname: reviewer\ntools: Read, Grep\n---\n\nYou review code.\n"
    assert parse(text) == Parsed(
        fields={"name": "reviewer", "tools": "Read, Grep"}, body="You review code.\n"
    )


def test_a_bom_and_windows_line_ends_are_read_as_plain_text() -> None:
    text = "\ufeff---\r\ndescription: d\r\n---\r\nBody\r\n"
    assert parse(text) == Parsed(fields={"description": "d"}, body="Body\n")


def test_no_front_matter_is_an_empty_mapping_and_the_whole_body() -> None:
    assert parse("# Title\n\ntext\n") == Parsed(fields={}, body="# Title\n\ntext\n")


def test_empty_fences_are_no_fields() -> None:
    assert parse("---\n# nothing\n---\nbody") == Parsed(fields={}, body="body")


def test_broken_yaml_is_a_problem_not_an_exception() -> None:
    assert parse("---\n{name: [\n---\nbody") == Parsed(
        fields={},
        body="body",
        problem="its front matter is not valid YAML at line 3 (did not find expected node "
        "content); fix or quote the value",
    )


def test_front_matter_that_is_not_a_mapping_is_a_problem() -> None:
    assert parse("---\n- a\n- b\n---\nbody") == Parsed(
        fields={},
        body="body",
        problem="its front matter is not a mapping of `key: value` lines; write it as one",
    )


def test_an_unclosed_fence_is_a_problem() -> None:
    parsed = parse("---\nname: x\nbody")
    assert parsed.problem == (
        "its front matter opens with `---` but never closes; end it with a `---` line"
    )


def test_plain_lines_yaml_refuses_are_read_as_a_person_meant_them() -> None:
    # Claude Code's own examples: a hint of several [..] groups, a colon inside a description
    text = (
        "---\nargument-hint: [pr-number] [priority]\ndescription: Use when: tests fail\n"
        "allowed-tools:\n  - Read\n  - Bash(git add *)\nmodel:\n---\nbody"
    )
    assert parse(text) == Parsed(
        fields={
            "argument-hint": "[pr-number] [priority]",
            "description": "Use when: tests fail",
            "allowed-tools": ["Read", "Bash(git add *)"],
            "model": None,
        },
        body="body",
    )


def test_a_description_over_several_lines_as_claude_codes_own_plugins_write_it() -> None:
    text = (
        '---\nname: checker\ndescription: Use this agent when the user asks to "check". '
        'Examples:\n\n<example>\nContext: a change was made\nuser: "Check it"\n'
        'assistant: "I\'ll use the checker."\n</example>\nmodel: inherit\n'
        'tools: ["Read", "Grep"]\nbackground: no\n---\nYou check.\n'
    )
    assert parse(text) == Parsed(
        fields={
            "name": "checker",
            "description": 'Use this agent when the user asks to "check". Examples:\n\n'
            '<example>\nContext: a change was made\nuser: "Check it"\n'
            'assistant: "I\'ll use the checker."\n</example>',
            "model": "inherit",
            "tools": ["Read", "Grep"],
            "background": False,
        },
        body="You check.\n",
    )


def test_a_file_that_is_not_utf8_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.md"
    path.write_bytes(b"---\nname: \xff\n---\n")
    assert frontmatter.read(path).problem == "is not UTF-8 text; save it as UTF-8"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True), (False, False), ("yes", True), ("No", False), ("on", True),
        ("OFF", False), ("1", True), ("0", False), (1, True), (0, False), ("maybe", None),
        (2, None), (None, None),
    ],
)  # fmt: skip
def test_booleans_in_every_spelling(value: object, expected: bool | None) -> None:
    assert as_bool(value) is expected


def test_a_yaml_no_is_false() -> None:
    assert as_bool(parse("---\nuser-invocable: no\n---\n").fields["user-invocable"]) is False


def test_lists_from_commas_spaces_or_yaml_and_rules_keep_their_spaces() -> None:
    assert split_names("Read, Grep Glob") == ("Read", "Grep", "Glob")
    assert split_names("Bash(git add *) Read,Bash(npm run test:*)") == (
        "Bash(git add *)",
        "Read",
        "Bash(npm run test:*)",
    )
    assert as_names(["Read", "Bash(git add *), Edit"]) == ("Read", "Bash(git add *)", "Edit")
    assert as_names("") == ()
    assert as_names({"a": 1}) is None
    assert as_names([["nested"]]) is None
