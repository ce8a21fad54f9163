"""A line the person enters is a slash command, a shell command, or a prompt."""

from __future__ import annotations

import pytest

from stayer.ui.repl.entry import entered


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("/help", "command"),
        ("  /compact keep the plan", "command"),
        ("!ls -la", "shell"),
        ("! git status", "shell"),
        ("!", "prompt"),
        ("/", "prompt"),
        ("/ spaced", "prompt"),
        ("//etc/passwd is a path", "prompt"),
        ("/etc/passwd please", "prompt"),
        ("  /usr/bin/x", "prompt"),
        ("/tmp/ what is here", "prompt"),
        ("/mcp__docs__search a/b", "command"),
        ("/tidy:hello there/here", "command"),
        ("fix the bug in /src/app.py", "prompt"),
        ("what does !important do in CSS?", "prompt"),
    ],
)
def test_what_a_line_is(text: str, kind: str) -> None:
    assert entered(text) == kind
