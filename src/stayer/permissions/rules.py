"""Permission rules: ``Tool`` or ``Tool(specifier)``, parsed, and matched against one call.

The specifier is matched against the call's subject. Commands and other subjects match as a
glob (``*`` anything); the legacy ``prefix:*`` form matches a prefix up to a word boundary. A
domain specifier may be written ``domain:host`` (``domain:*.example.com`` covers subdomains); it
is matched in the form a domain subject comes in, however the rule spells it (`domain_pattern`).

Path specifiers follow gitignore's rules, as Claude Code's do: ``//abs`` is an absolute path,
``~/p`` is under the home directory, ``/p`` is relative to the rule's root (the directory of the
settings file that holds it; for a flag, the working directory), and ``p`` or ``./p`` relative to
the working directory. A pattern with no ``/`` inside it (``*.env``, ``.env``) matches at any
depth below that directory. ``*`` and ``?`` stop at ``/``, ``**`` crosses it, and a pattern that
matches a directory covers everything in it. Negation (``!p``) is not supported: Claude Code's
rules have none, and a deny rule must never be undone by a pattern elsewhere.

A rule naming an MCP server (``mcp__server`` or ``mcp__server__*``) covers each of its tools.
A rule naming a tool by its old name (``Task(Explore)``) covers it under its new one (Agent),
and the reverse (`stayer.tools.names.TOOL_ALIASES`).
"""

from __future__ import annotations

import fnmatch
import ipaddress
import os
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from msgspec import Struct

from stayer.errors import ConfigError
from stayer.exec.globs import glob_literal
from stayer.tools.base import SubjectKind
from stayer.tools.names import TOOL_ALIASES

_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_.\-]+(?:__\*)?)(?:\((?P<spec>.*)\))?$", re.DOTALL)
_SERVER_PREFIX = "mcp__"


class Rule(Struct, frozen=True):
    """``Tool`` (every call) or ``Tool(specifier)`` (calls whose subject matches).

    `root` is the directory a ``/``-rooted path pattern is relative to: that of the settings
    file the rule came from; None for flag rules, which take the working directory.
    """

    tool: str
    specifier: str | None = None
    root: Path | None = None

    @classmethod
    def parse(cls, text: str, *, root: Path | None = None) -> Rule:
        """Parse one rule; raises `ConfigError` naming the bad rule."""
        match = _RULE.match(text.strip())
        if not match:
            raise ConfigError(f"bad permission rule {text!r}; write Tool or Tool(pattern)")
        spec = match.group("spec")
        return cls(match.group("tool"), spec if spec not in (None, "", "*") else None, root)

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def names(self, tool: str) -> bool:
        """Whether this rule is about `tool`: by its name, or as a tool of the MCP server the
        rule names."""
        if TOOL_ALIASES.get(tool, tool) == TOOL_ALIASES.get(self.tool, self.tool):
            return True
        server = self.tool.removesuffix("__*")
        return (
            self.specifier is None
            and server.startswith(_SERVER_PREFIX)
            and "__" not in server.removeprefix(_SERVER_PREFIX)
            and tool.startswith(server + "__")
        )

    def matches(
        self,
        tool: str,
        subject: str | None,
        cwd: Path,
        *,
        kind: SubjectKind = "none",
        fold: bool = False,
    ) -> bool:
        """Whether this rule covers a call of `tool` on `subject` (a resolved path for paths);
        with `fold`, paths are compared case-folded (deny rules: on macOS and Windows `.ENV`
        is `.env`, and a wrong denial of a look-alike costs a question, a wrong allowance the
        file)."""
        if not self.names(tool):
            return False
        if self.specifier is None:
            return True
        if subject is None:
            return False
        if kind == "domain":
            return fnmatch.fnmatchcase(subject.lower(), domain_pattern(self.specifier))
        specifier = self.specifier
        if fold and kind != "path":  # `CURL` runs curl where file names fold (macOS)
            subject, specifier = subject.casefold(), specifier.casefold()
        if specifier.endswith(":*"):  # the legacy prefix form ends at a word boundary
            prefix = specifier[:-2]
            return subject == prefix or subject.startswith(prefix + " ")
        if kind != "path":
            return fnmatch.fnmatchcase(subject, specifier)
        pattern = self.path_pattern(cwd)
        if fold:
            subject, pattern = subject.casefold(), pattern.casefold()
        return _path_regex(pattern).fullmatch(subject) is not None

    def path_pattern(self, cwd: Path) -> str:
        """The specifier as an absolute gitignore-style pattern (see the module docstring)."""
        pattern = self.specifier or "**"
        if pattern.startswith("//"):
            return os.path.normpath(pattern[1:])
        if pattern.startswith("~/") or pattern == "~":
            return os.path.normpath(glob_literal(str(Path.home())) + pattern[1:])
        if pattern.startswith("~"):  # a `~user` that does not exist stays as written
            return os.path.normpath(glob_literal(str(cwd / expanded(pattern))))
        if pattern.startswith("/"):
            return os.path.normpath(glob_literal(str(self.root or cwd)) + pattern)
        if "/" not in pattern.rstrip("/"):  # no slash inside: at any depth, as in gitignore
            pattern = "**/" + pattern
        # `./p` and `a/p`: from the working directory, whose name is no pattern of its own
        return os.path.normpath(glob_literal(str(cwd)) + "/" + pattern)


def command_literal(command: str) -> str:
    """A command line as a rule specifier that matches just itself: a command rule is an
    fnmatch pattern, so the `*`, `?` and `[` a command holds are put in brackets (a rule
    suggested for `rm -f build/*.o` must not allow `rm -f build/ -r ~ x.o`)."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in command)


def domain_pattern(specifier: str) -> str:
    """A domain rule's host pattern in the form a domain subject has: lower case, without a
    trailing dot or an IPv6 literal's brackets, an address in its standard form, and a
    non-ASCII name in its IDNA form (``xn--…``), as the URL's host is put."""
    pattern = specifier.removeprefix("domain:").strip().lower().removesuffix(".")
    if pattern.startswith("[") and pattern.endswith("]") and ":" in pattern:
        pattern = pattern[1:-1]
    try:
        address = ipaddress.ip_address(pattern)
    except ValueError:
        pass
    else:
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        return str(mapped or address)
    if pattern.isascii():
        return pattern
    import idna  # httpx's own, so both sides agree on every name

    try:
        return ".".join(
            label if label.isascii() else idna.encode(label).decode("ascii")
            for label in pattern.split(".")
        )
    except idna.IDNAError:
        return pattern  # no host is spelled so; the rule matches nothing


def expanded(path: str | None) -> Path:
    """`path` with `~` expanded; a `~user` that does not exist stays as written."""
    candidate = Path(path or ".")
    try:
        return candidate.expanduser()
    except RuntimeError:  # no such user, or no home directory to be found
        return candidate


@lru_cache(maxsize=512)
def _path_regex(pattern: str) -> re.Pattern[str]:
    """A gitignore-style pattern as a regular expression over absolute paths; what it
    matches, it matches with everything inside too."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("/**/", i):  # `a/**/b` is also `a/b`
            out.append("/(?:.*/)?")
            i += 4
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            piece, i = _glob_piece(pattern, i)
            out.append(piece)
    return re.compile("".join(out) + "(?:/.*)?", re.DOTALL)


def _glob_piece(pattern: str, i: int) -> tuple[str, int]:
    """The regular expression for the one glob item at `i`, and where the next begins."""
    char = pattern[i]
    if char == "*":
        return "[^/]*", i + 1
    if char == "?":
        return "[^/]", i + 1
    if char == "\\" and i + 1 < len(pattern):
        return re.escape(pattern[i + 1]), i + 2
    if char == "[":
        end = pattern.find("]", i + 2)
        if end != -1:
            body = pattern[i + 1 : end]
            negate = body[0] in "!^"
            body = re.escape(body[1:] if negate else body).replace(r"\-", "-")
            return f"[{'^/' if negate else ''}{body}]", end + 1
    return re.escape(char), i + 1


def parse_rules(values: Iterable[str], *, root: Path | None = None) -> tuple[Rule, ...]:
    """Rules from flag values; each value may hold several, comma- or space-separated."""
    rules: list[Rule] = []
    for value in values:
        for item in _split_rules(value):
            rules.append(Rule.parse(item, root=root))
    return tuple(rules)


def _split_rules(value: str) -> list[str]:
    """Split on commas and spaces that are not inside parentheses."""
    items: list[str] = []
    depth, current = 0, ""
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if char in ", " and depth == 0:
            if current:
                items.append(current)
            current = ""
            continue
        current += char
    if current:
        items.append(current)
    return items
