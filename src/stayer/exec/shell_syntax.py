"""What a shell command line runs, read by a real parse (tree-sitter-bash).

`parse(command)` finds every simple command the line runs, wherever it stands: in lists and
pipelines, in subshells and groups, in ``$(…)``, backticks and process substitution, behind
wrappers such as ``env``, ``nice``, ``timeout``, ``sudo``, ``xargs`` and ``find -exec``. Each
command comes with its words after quote removal; a word whose value is known only when the
shell runs it (an expansion, a glob) is kept as written and marked dynamic. Redirections that
write files are listed apart from harmless ones (``2>&1``, ``>/dev/null``, ``<`` from a file).

Whatever the words cannot show is reported as a reason in `Parsed.opaque`: a command name that
comes from an expansion, ``eval`` and its kin, a shell given code to run, function and alias
definitions, arithmetic that assigns, ``${x@P}``, a line that does not parse. Callers fail closed
on any.

The exec layer owns this because both the tools (is a command read-only?) and permissions (which
rules cover it?) must read a command the same way. tree-sitter loads on the first parse, never at
start-up.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from msgspec import Struct, field
from msgspec.structs import replace

from .evaluations import evaluates, names_evaluated
from .shell_words import SimpleCommand, Word

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser

    from .programs import Wrapper

__all__ = ["Parsed", "SimpleCommand", "Word", "parse", "preload"]


class Parsed(Struct, frozen=True):
    """What a command line runs, what it cannot show, and the files it redirects output to."""

    commands: tuple[SimpleCommand, ...] = ()
    """The simple commands as written, in source order (wrapped ones hang off `runs`)."""
    opaque: tuple[str, ...] = ()
    """Why the words do not tell which commands the line runs; empty when they do."""
    writes: tuple[str, ...] = ()
    """Targets of redirections that write a file (as written when dynamic)."""
    reads: tuple[Word, ...] = ()
    """Files redirected into a command (``< file``)."""
    code: tuple[str, ...] = ()
    """Why a command it runs, seen as written, runs code or text its words do not show (a
    shell or an interpreter given code, ``eval``, ``script -c``): what that code does is
    unknown, so any deny rule could be reached, though the command itself is plain."""

    @property
    def unreadable(self) -> bool:
        """Whether the line could not be read at all (it does not parse as it will run), so
        even its words are not the ones the shell will see."""
        return any(reason in UNREADABLE for reason in self.opaque)

    @property
    def hidden(self) -> tuple[str, ...]:
        """Every reason the line may do what its words do not show."""
        return (*self.opaque, *self.code)

    def every_command(self) -> Iterator[SimpleCommand]:
        """Every command the line runs, wrapped ones included."""
        for command in self.commands:
            yield from command.flattened()


UNREADABLE = (
    "the command does not parse as shell",
    "the command is nested too deeply to read",
    "a line continuation joins words in a way the parse cannot see",
)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_ENVIRONMENT_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_WRITE_OPERATORS = frozenset({">", ">>", "&>", "&>>", ">|", ">&"})
_ARITHMETIC = frozenset({"arithmetic_expansion", "c_style_for_statement"})
_ASSIGNING = re.compile(r"^(?:\+\+|--|[-+*/%&|^]?=|<<=|>>=|\*\*=)$")
_GLOB = re.compile(r"[*?]|\[.*\]|\{.*(?:,|\.\.).*\}", re.DOTALL)
_QUOTED = re.compile(r"\\.|'[^']*'|\"(?:\\.|[^\"\\])*\"", re.DOTALL)
_STATIC_LEAVES = frozenset({"word", "number"})


def parse(command: str) -> Parsed:
    """What `command` runs, read by tree-sitter-bash; cached, since each call is judged by
    several layers (read-only, permission) in turn."""
    return _parse_cached(command)


@functools.lru_cache(maxsize=256)
def _parse_cached(command: str) -> Parsed:
    parsed = _read(command)
    if "\\\n" in command:
        # Bash joins a backslash-newline before it splits words, so `$\<newline>(` is `$(`;
        # tree-sitter does not always. A line means what it seems only if joining it first
        # (wrong inside single quotes and comments) reads the same.
        joined = _read(command.replace("\\\n", ""))
        if (joined.commands, joined.writes) != (parsed.commands, parsed.writes):
            reason = UNREADABLE[2]
            return replace(parsed, opaque=(*parsed.opaque, reason))
    return parsed


def _read(command: str) -> Parsed:
    source = command.encode("utf-8", "surrogateescape")
    tree = _parser().parse(source)
    reader = _Reader()
    try:
        for child in tree.root_node.named_children:
            reader.statement(child)
    except RecursionError:
        reader.opaque.append(UNREADABLE[1])
    if tree.root_node.has_error:
        reader.opaque.append(UNREADABLE[0])
    from .hidden_runs import runs_written_file

    reader.code += runs_written_file(reader.commands, bool(reader.writes))
    return Parsed(
        tuple(reader.commands),
        tuple(dict.fromkeys(reader.opaque)),
        tuple(reader.writes),
        tuple(reader.reads),
        tuple(dict.fromkeys(reader.code)),
    )


def preload() -> None:
    """Load tree-sitter and the bash grammar now (the tools load in a background thread while
    the model thinks), so the first judged command does not wait for them."""
    _language()


_local = threading.local()


def _parser() -> Parser:
    """This thread's parser (parsers are not safe to share between threads)."""
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        from tree_sitter import Parser

        parser = Parser(_language())
        _local.parser = parser
    return parser


@functools.cache
def _language() -> Language:
    from tree_sitter import Language
    from tree_sitter_bash import language

    return Language(language())


class _Reader(Struct):
    """Walks one tree, collecting commands, reasons and write targets."""

    commands: list[SimpleCommand] = field(default_factory=list[SimpleCommand])
    opaque: list[str] = field(default_factory=list[str])
    code: list[str] = field(default_factory=list[str])
    writes: list[str] = field(default_factory=list[str])
    reads: list[Word] = field(default_factory=list[Word])

    def statement(self, node: Node, *, arithmetic: bool = False) -> None:
        """Read `node` and everything below it."""
        kind = node.type
        if kind == "command":
            self.commands.append(self._command(node))
        elif kind in ("declaration_command", "unset_command"):
            self.commands.append(self._judged(SimpleCommand(tuple(_declaration_words(node)))))
        elif kind == "function_definition":
            self.opaque.append("it defines a function, whose later calls hide what they run")
        elif kind == "file_redirect":
            self._redirect(node)
        elif kind == "variable_assignment" and not arithmetic:
            self._standalone_assignment(node)
        elif kind == "expansion" and any(c.type == "@" for c in node.children):
            self.opaque.append("a ${…@…} transformation can run the value as code")
        elif arithmetic and _assigns(node):
            self.opaque.append("arithmetic that assigns has effects its words do not show")
        self.code += filter(None, [evaluates(node, arithmetic=arithmetic)])
        inside = arithmetic or kind in _ARITHMETIC or _is_arithmetic_command(node)
        for child in node.named_children:
            if child.type == "do_group":  # a loop's body is not its arithmetic
                self.statement(child, arithmetic=arithmetic)
            elif kind == "command" and child.type == "variable_assignment":
                # `NAME=value cmd` sets NAME for cmd alone: part of its words, not a statement
                for part in child.named_children:
                    self.statement(part, arithmetic=inside)
            else:
                self.statement(child, arithmetic=inside)

    def _command(self, node: Node) -> SimpleCommand:
        assignments: list[str] = []
        words: list[Word] = []
        for index, child in enumerate(node.children):
            name = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                assignments.append(_text(child))
            elif child.type == "command_name":
                inner = child.named_children
                words.append(_word(inner[0]) if inner else Word(_text(child), dynamic=True))
            elif name == "argument":
                words.append(_word(child))
        command = SimpleCommand(tuple(words), tuple(assignments))
        return self._judged(command)

    def _judged(self, command: SimpleCommand) -> SimpleCommand:
        """`command` with what it wraps; reasons for what it hides go to `opaque`."""
        from . import programs  # the tables load with the first parse, not at start-up

        if not command.words:
            return command
        first = command.words[0]
        if first.dynamic or (command.fed and "{}" in first.text):
            self.opaque.append(f"the command name {first.text} is known only when it runs")
            return command
        program = command.program
        if program in programs.HIDES_LATER:
            self.opaque.append(f"{program} makes later words run something else")
            return command
        if program in programs.TEXT_RUNNERS:
            self.code.append(f"{program} runs text or commands its words do not show")
            return command
        code = (
            programs.interpreter_runs_code(command)
            or _runs_given(command)
            or names_evaluated(command)
        )
        if code is not None:
            self.code.append(code)
            return command
        wrapper = programs.WRAPPERS.get(program)
        if wrapper is not None:
            return self._unwrapped(command, wrapper)
        if program == "find":
            runs = tuple(self._judged(inner) for inner in _find_exec(command))
            return SimpleCommand(command.words, command.assignments, runs, fed=command.fed)
        return command

    def _unwrapped(self, command: SimpleCommand, wrapper: Wrapper) -> SimpleCommand:
        from .programs import unwrap

        inner = unwrap(command, wrapper, split_words)
        if inner.reason is not None:
            self.opaque.append(inner.reason)
            return command
        runs = () if inner.command is None else (self._judged(inner.command),)
        return SimpleCommand(
            command.words, command.assignments, runs, inner.transparent, command.fed
        )

    def _redirect(self, node: Node) -> None:
        operator = next((c.type for c in node.children if not c.is_named), "")
        target = node.child_by_field_name("destination")
        if operator == "<" and target is not None and target.type != "process_substitution":
            self.reads.append(_word(target))
            return
        if operator not in _WRITE_OPERATORS or target is None:
            return  # closes (`>&-`), here-strings
        if target.type == "process_substitution":
            return  # into a command, which is read like any other
        if operator == ">&" and target.type == "number":
            return  # `2>&1`: one stream into another
        word = _word(target)
        if word.dynamic or word.text not in _HARMLESS_TARGETS:
            self.writes.append(word.text)

    def _standalone_assignment(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        if name is not None and _ENVIRONMENT_NAME.match(_text(name)):
            # Upper-case names are environment variables by convention: one already exported
            # (PATH, LD_PRELOAD, GIT_EXTERNAL_DIFF) steers every later program of the line.
            self.opaque.append(f"setting {_text(name)} can change what later commands do")


def _runs_given(command: SimpleCommand) -> str | None:
    """Why git or sed runs a command given on its line (an alias with ``!``, ``bisect run``,
    sed's ``e``); None when it does not."""
    from .git_calls import git_runs_code
    from .hidden_runs import runs_given_string
    from .sed_scripts import sed_runs_code

    given = runs_given_string(command)
    if given is not None:
        return given
    if command.program == "git":
        return git_runs_code(command.words[1:])
    if command.program == "sed" and sed_runs_code(command):
        return "sed can run a command its script gives, or its script cannot be read"
    return None


def _find_exec(command: SimpleCommand) -> Iterator[SimpleCommand]:
    """The commands ``find -exec``/``-ok`` run, each up to its ``;`` or ``+``."""
    words = command.words
    for index, word in enumerate(words):
        if word.text in _FIND_EXEC and not word.dynamic:
            end = next(
                (i for i in range(index + 1, len(words)) if words[i].text in (";", "+")),
                len(words),
            )
            if end > index + 1:
                yield SimpleCommand(words[index + 1 : end], fed=True)


def _declaration_words(node: Node) -> Iterator[Word]:
    for child in node.children:
        if child.type == "variable_assignment" or not child.is_named:
            yield Word(_text(child))
        else:
            yield _word(child)


def _is_arithmetic_command(node: Node) -> bool:
    """``(( … ))`` is a compound statement whose first token is ``((``."""
    return (
        node.type == "compound_statement"
        and node.child_count > 0
        and (node.children[0].type == "((")
    )


def _assigns(node: Node) -> bool:
    if node.type not in ("binary_expression", "unary_expression", "postfix_expression"):
        return False
    return any(not c.is_named and _ASSIGNING.match(c.type) for c in node.children)


def _word(node: Node) -> Word:
    """A word after quote removal; dynamic (kept as written) if the shell decides its value."""
    kind = node.type
    if kind in ("word", "concatenation") and _globs(_text(node)):
        return Word(_text(node), dynamic=True)
    if kind in _STATIC_LEAVES:
        return Word(_unescape(_text(node)))
    if kind == "raw_string":
        return Word(_text(node)[1:-1])
    if kind == "string":
        return _double_quoted(node)
    if kind == "concatenation":
        parts = [_word(child) for child in node.named_children]
        if any(part.dynamic for part in parts):
            return Word(_text(node), dynamic=True)
        return Word("".join(part.text for part in parts))
    return Word(_text(node), dynamic=True)


def _double_quoted(node: Node) -> Word:
    parts: list[str] = []
    for child in node.named_children:
        if child.type != "string_content":
            return Word(_text(node), dynamic=True)
        parts.append(re.sub(r'\\([$`"\\])|\\\n', lambda m: m.group(1) or "", _text(child)))
    return Word("".join(parts))


def _globs(source: str) -> bool:
    """Whether a word as written has an unquoted glob or brace expansion, which makes its
    value (even whether it is an option) depend on the files present."""
    unquoted = _QUOTED.sub("", source)
    return bool(_GLOB.search(unquoted))


def _unescape(text: str) -> str:
    return re.sub(r"\\\n|\\(.)", lambda m: m.group(1) or "", text, flags=re.DOTALL)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def split_words(values: tuple[str, ...]) -> list[Word] | None:
    """The words ``env -S`` makes of its strings, read as the shell would read them; None
    when that is not one plain command (an expansion, an operator, a redirection)."""
    words: list[Word] = []
    for value in values:
        parsed = parse(value)
        if parsed.opaque or parsed.writes or parsed.reads or len(parsed.commands) != 1:
            return None
        only = parsed.commands[0]
        if only.assignments or any(word.dynamic for word in only.words):
            return None
        words += only.words
    return words
