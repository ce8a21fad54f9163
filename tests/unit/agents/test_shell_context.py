"""An argument put into a skill's `!` command is quoted for where it stands (bare, in single
quotes, in double quotes) and refused where no quoting is safe; run by bash, it is one piece
of literal text and never a command of its own."""

from __future__ import annotations

import random
import shlex
import subprocess
from pathlib import Path

import pytest

from stayer.agents.arguments import render
from stayer.agents.shell_context import Unquotable

HOSTILE = 'it\'s "a" $(touch INJ1) `touch INJ2`;touch INJ3 \\ \n touch INJ4 #\'"\\'


def commands(body: str, args: str) -> tuple[str, ...]:
    return render(body, args, session_id="s-1", project_dir=Path("/p q;x")).commands


def bash(command: str, cwd: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=10,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.stdout


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('!`echo "$ARGUMENTS"`', 'echo "hello world"'),
        ('!`echo "[$0] $ARGUMENTS"`', 'echo "[$0] hello world"'),
        ("!`echo '$ARGUMENTS'`", "echo 'hello world'"),
        ("!`echo $ARGUMENTS`", "echo 'hello world'"),
        ('!`echo "$(printf %s $ARGUMENTS)"`', "echo \"$(printf %s 'hello world')\""),
    ],
)
def test_a_placeholder_is_quoted_for_where_it_stands(body: str, expected: str) -> None:
    assert commands(body, "hello world") == (expected,)


def test_each_quoting_keeps_a_hostile_argument_one_literal_text(tmp_path: Path) -> None:
    bodies = ['!`printf %s "$ARGUMENTS"`', "!`printf %s '$ARGUMENTS'`", "!`printf %s $ARGUMENTS`"]
    for body in bodies:
        [command] = commands(body, HOSTILE)
        assert bash(command, tmp_path) == HOSTILE.strip(), body
    assert commands('!`echo "$ARGUMENTS"`', "a$b")[0] == 'echo "a\\$b"'
    assert list(tmp_path.iterdir()) == []


def test_the_folders_are_quoted_for_where_they_stand() -> None:
    body = '!`ls "${CLAUDE_PROJECT_DIR}/a" ${CLAUDE_PROJECT_DIR}`'
    assert commands(body, "") == ("ls \"/p q;x/a\" '/p q;x'",)


@pytest.mark.parametrize(
    "body",
    [
        "!`echo ${x:-$ARGUMENTS}`",
        "```!\ncat <<E\n$ARGUMENTS\nE\n```",
        "!`echo $(( $ARGUMENTS ))`",
        "!`echo $'$ARGUMENTS'`",
        "!`echo x # $ARGUMENTS`",
        "```!\necho `echo $ARGUMENTS`\n```",
        "!`echo $(case a in a) echo $ARGUMENTS;; esac)`",
    ],
)
def test_where_no_quoting_is_safe_a_value_is_refused_unless_plain(body: str) -> None:
    with pytest.raises(Unquotable, match=r"^\$ARGUMENTS in `.*` stands where no quoting"):
        commands(body, "a b")
    assert "plain-1.0" in commands(body, "plain-1.0")[0]


ATOMS = [
    *["echo ", "$ARGUMENTS", " ", '"', "'", "$(", "(", ")", ";", "#", "\n", "\\", "x"],
    *["${HOME}", "`", "<<E\n", "\nE\n", "case ", "$((", "|", "$'", "${CLAUDE_PROJECT_DIR}"],
]


def test_no_argument_runs_as_a_command_whatever_the_body(tmp_path: Path) -> None:
    """Random bodies around placeholders, run by bash with a hostile argument: whatever each
    does, nothing the argument says is ever run."""
    chosen = random.Random(19)
    ran = 0
    for _ in range(250):
        written = "".join(chosen.choice(ATOMS) for _ in range(chosen.randint(1, 10)))
        try:
            filled = commands(f"```!\n{written}\n```\n", HOSTILE)
        except Unquotable:
            continue
        for command in filled:
            bash(command, tmp_path)
            ran += 1
    assert ran > 150
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_bare_quoting_is_shlex_quote() -> None:
    assert commands("!`echo $ARGUMENTS`", HOSTILE) == (f"echo {shlex.quote(HOSTILE.strip())}",)
