"""Words as bash expands them before a program sees them, and the folders a line moves through."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.exec.shell_syntax import parse
from stayer.tools.builtin.bash_words import Folders, brace_expansion, expanded


@pytest.mark.parametrize(
    ("word", "words"),
    [
        ("{secrets,zz}/key", ["secrets/key", "zz/key"]),
        ("a{1..3}b", ["a1b", "a2b", "a3b"]),
        ("{a..c}", ["a", "b", "c"]),
        ("{01..03}", ["01", "02", "03"]),
        ("{1..10..4}", ["1", "5", "9"]),
        ("x{a,{b,c}}y", ["xay", "xby", "xcy"]),
        ("{a}", ["{a}"]),  # no comma, no range: bash leaves it
        ("{a}/{s,x}/key", ["{a}/s/key", "{a}/x/key"]),  # the next braces still expand
        ("${x}", ["${x}"]),  # a parameter, not a brace expansion
    ],
)
def test_braces_expand_as_bash_expands_them(word: str, words: list[str]) -> None:
    assert brace_expansion(word) == words


def test_too_many_words_cannot_be_followed() -> None:
    assert brace_expansion("{1..2000}") is None
    assert brace_expansion("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}") is None


def test_globs_find_what_bash_would_match(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("")
    shell = Folders(str(tmp_path))
    for pattern in ("secret[[:alpha:]]/key.txt", "secret[^x]/key.txt", "secre?s/*.txt"):
        assert "secrets/key.txt" in (expanded(pattern, dynamic=True, shell=shell) or []), pattern
    assert expanded("$HOME/x", dynamic=True, shell=shell) is None


def _move(shell: Folders, line: str) -> bool:
    (command,) = parse(line).commands
    return shell.move(command)


def test_the_folders_follow_cd_pushd_popd_and_their_tildes(tmp_path: Path) -> None:
    shell = Folders(str(tmp_path))
    assert _move(shell, "cd secrets")
    assert shell.here == f"{tmp_path}/secrets"
    assert _move(shell, "cd ..") and shell.tilde("~-/key") == f"{tmp_path}/secrets/key"
    assert _move(shell, "cd -") and shell.here == f"{tmp_path}/secrets"
    assert shell.tilde("~+/key") == f"{tmp_path}/secrets/key"
    assert _move(shell, "pushd ../src") and _move(shell, "popd")
    assert shell.here == f"{tmp_path}/secrets"
    assert shell.tilde("~2/x") is None  # the stack by number: not followed
    assert not _move(shell, "popd")  # nothing left on the stack
    assert not _move(shell, "cd $X")
