"""Telling the simple commands of a shell command line apart, for Bash permission rules.

Rules are judged per simple command, so `git status; rm -rf x` cannot ride on an allow rule for
`git status`. This is not a shell parser: whenever a command line holds something whose effect
cannot be read off its words (command or process substitution, `${...}` expansion, ANSI-C
quoting, redirection to a file, subshells and groups), `command_parts` gives up and returns None,
and then no allow rule with a pattern applies while any Bash deny rule with a pattern does.
Failing closed is the point.
"""

from __future__ import annotations

import os
import re
import shlex

_OPERATORS = ";&|\n"

# Redirections that touch no file of the user's: stderr into stdout, output thrown away.
_HARMLESS_REDIRECTS = re.compile(r"(?<!\S)(?:[0-9]?>&[0-9]|(?:[0-9]|&)?>>?\s*/dev/null)(?!\S)")

# Outside quotes, and (for the `$` forms) inside double quotes, these make a command opaque.
_OPAQUE_ANYWHERE_BUT_SINGLE = ("$(", "`", "${", '$"')
_OPAQUE_UNQUOTED = ("$'", "<", ">", "(", ")", "{", "}")

_WRAPPERS = frozenset({"command", "builtin", "exec", "env", "nohup", "time", "nice", "sudo"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def command_parts(command: str) -> list[str] | None:
    """The simple commands of `command`, each as its words joined by spaces; None if opaque."""
    text = _HARMLESS_REDIRECTS.sub(" ", command.replace("\\\n", ""))
    if _opaque(text):
        return None
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_OPERATORS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""  # a `#` ends nothing we rely on: keep every word in view
    parts: list[str] = []
    words: list[str] = []
    try:
        for token in lexer:
            if token and set(token) <= set(_OPERATORS):
                parts.append(" ".join(words))
                words = []
            else:
                words.append(token)
    except ValueError:  # unbalanced quotes
        return None
    parts.append(" ".join(words))
    return [part for part in parts if part]


def _opaque(text: str) -> bool:
    """Whether `text` holds a construct whose effect its words do not show."""
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        rest = text[index:]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            index += 1  # the next character is literal
        elif rest.startswith(_OPAQUE_ANYWHERE_BUT_SINGLE):
            return True
        elif quote == '"':
            quote = "" if char == '"' else quote
        elif rest.startswith(_OPAQUE_UNQUOTED):
            return True
        elif char in "'\"":
            quote = char
        index += 1
    return False


def program_forms(part: str) -> list[str]:
    """`part` as deny rules should also see it: without leading variable assignments and
    wrappers such as `env` or `command`, and with the program named without its directory.
    """
    words = part.split(" ")
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    if not words:
        return []
    bare = [os.path.basename(words[0]), *words[1:]]
    return [" ".join(words), " ".join(bare)]
