"""A body's placeholders filled from what the user typed and the session, and its `!` commands
found and filled with their output."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from stayer.agents.arguments import (
    Rendered,
    ShellSpan,
    render,
    shell_commands,
    split_arguments,
)

PROJECT = Path("/work/project")


def run(body: str, args: str) -> str:
    return render(body, args, session_id="s-1", project_dir=PROJECT).fill([])


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("Fix issue $ARGUMENTS now", "123 urgent", "Fix issue 123 urgent now"),
        ("1=$0 2=$1 3=$2.", '"Ada Lovelace" 36', "1=Ada Lovelace 2=36 3=."),
        ("$ARGUMENTS[1] then $ARGUMENTS[0]", "a b", "b then a"),
        ("Review", "the diff", "Review\n\nARGUMENTS: the diff"),
        ("Review\n\n", "", "Review\n\n"),
        ("unbalanced: $1", "it's fine", "unbalanced: fine"),
        ("$ARGUMENTSX and $HOME stay", "a", "$ARGUMENTSX and $HOME stay\n\nARGUMENTS: a"),
        ("id ${CLAUDE_SESSION_ID} in ${CLAUDE_PROJECT_DIR}", "", "id s-1 in /work/project"),
        ("dir ${CLAUDE_SKILL_DIR}", "", "dir ${CLAUDE_SKILL_DIR}"),
    ],
)  # fmt: skip
def test_placeholders(body: str, args: str, expected: str) -> None:
    assert run(body, args) == expected


def test_named_arguments_and_the_skill_and_plugin_folders() -> None:
    body = "Deploy $env at $version from ${CLAUDE_SKILL_DIR} (${CLAUDE_PLUGIN_ROOT}), not $other"
    assert (
        render(
            body,
            "prod 1.2",
            session_id="s-1",
            project_dir=PROJECT,
            names=("env", "version"),
            skill_dir=Path("/s"),
            plugin_root=Path("/p"),
        ).fill([])
        == "Deploy prod at 1.2 from /s (/p), not $other"
    )


def test_a_session_variable_alone_still_gets_the_arguments_appended() -> None:
    assert run("in ${CLAUDE_PROJECT_DIR}", "x") == "in /work/project\n\nARGUMENTS: x"


def test_arguments_split_as_a_shell_would_else_on_spaces() -> None:
    assert split_arguments("a 'b c' \"d\"") == ["a", "b c", "d"]
    assert split_arguments("it's a") == ["it's", "a"]


BODY = """\
Status: !`git status --short`
Not a command: x!`echo no` and `!echo no`
!`date`
```!
ls
echo "two lines"
```
end
"""


def test_shell_commands_inline_and_fenced_in_order() -> None:
    spans = shell_commands(BODY)
    assert [(span.command, BODY[span.start : span.end]) for span in spans] == [
        ("git status --short", "!`git status --short`"),
        ("date", "!`date`"),
        ('ls\necho "two lines"', '```!\nls\necho "two lines"\n```'),
    ]
    filled = render(BODY, "", session_id="s-1", project_dir=PROJECT)
    assert filled.fill(["M a.py", "Wed", "a.py\ntwo lines"]) == (
        "Status: M a.py\nNot a command: x!`echo no` and `!echo no`\nWed\na.py\ntwo lines\nend\n"
    )


def test_an_inline_command_inside_a_fenced_block_is_part_of_it() -> None:
    body = "```!\necho !`inner`\n```\n"
    assert shell_commands(body) == (ShellSpan(0, len(body) - 1, "echo !`inner`"),)


def test_fill_needs_one_output_per_command() -> None:
    with pytest.raises(ValueError, match="1 shell commands but 0 outputs"):
        render("!`a`", "", session_id="s-1", project_dir=PROJECT).fill([])


def rendered(body: str, args: str, names: tuple[str, ...] = ()) -> Rendered:
    return render(body, args, names=names, session_id="s-1", project_dir=PROJECT)


def test_render_keeps_arguments_out_of_commands_syntax() -> None:
    body = "Look at $ARGUMENTS:\n!`git log -- $ARGUMENTS`\nand $0\n```!\nwc -l $path\n```\n"
    args = "'a b' !`cat ~/.ssh/id_rsa` ; rm -rf ~"
    result = rendered(body, args, names=("path",))
    assert result.commands == ("git log -- " + shlex.quote(args), "wc -l " + shlex.quote("a b"))
    assert result.text == (
        f"Look at {args}:\n!`git log -- $ARGUMENTS`\nand a b\n```!\nwc -l $path\n```\n"
    )  # the argument's own !`...` is text: no third command
    assert result.fill(["LOG", "3"]) == f"Look at {args}:\nLOG\nand a b\n3\n"
    with pytest.raises(ValueError, match="2 shell commands but 1 outputs"):
        result.fill(["one"])


def test_render_leaves_the_shells_own_dollar_numbers_in_commands() -> None:
    result = rendered("!`git log | awk '{print $1}'` for $1", "x y")
    assert (result.commands, result.fill(["out"])) == (
        ("git log | awk '{print $1}'",),
        "out for y",
    )


def test_render_with_no_placeholder_appends_the_arguments() -> None:
    assert rendered("Run !`date`", "now").fill(["D"]) == "Run D\n\nARGUMENTS: now"


def test_a_name_matches_only_when_the_name_ends() -> None:
    body = "$env-specific $env. $environment $env"
    assert render(body, "prod", names=("env",), session_id="s", project_dir=PROJECT).fill([]) == (
        "$env-specific prod. $environment prod"
    )
