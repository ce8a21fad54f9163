"""Where bash evaluates a value as code: arithmetic and names with an index.

Bash evaluates a variable's value as arithmetic in ``$((x))``, ``((x))``, ``[[ $x -eq 1 ]]``,
an array's index, a substring's offset, ``${!x}`` and every value given to an integer
variable; and a name given to ``test -v``, ``printf -v``, ``read``, ``declare``, ``unset``…
is evaluated with its index. An index that holds ``$(command)`` runs the command, even from
single-quoted text, so each of these runs what the line's words do not show: `evaluates`
judges a node of the parse, `names_evaluated` a builtin's words.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

from .shell_words import SimpleCommand, Word

if TYPE_CHECKING:
    from tree_sitter import Node


_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_NAME_TESTS = frozenset({"-v", "-R"})
_VALUES = frozenset({"variable_name", "word", "simple_expansion", "expansion", "string",
                     "raw_string", "concatenation"})  # fmt: skip


def evaluates(node: Node, *, arithmetic: bool) -> str | None:
    """Why evaluating `node` can run a command its words do not show: bash evaluates a
    variable's value as arithmetic (``$((x))``, ``[[ $x -eq 1 ]]``, an array's index, a
    substring's offset, ``${!x}``), and such a value, or a name tested with ``-v``, can hold
    ``a[$(command)]``, whose index runs the command; None when it cannot."""
    kind = node.type
    text = node_text(node)
    if arithmetic and kind in _VALUES and not _literal_number(node):
        return f"arithmetic evaluates {text}, whose value can run a command"
    if kind == "subscript":
        index = node.named_children[1:]  # after the array's name
        if any(not _literal_number(c) and node_text(c) not in ("@", "*") for c in index):
            return f"the index of {text} is evaluated, and can run a command"
    if kind == "expansion":
        return _expansion_evaluates(node, text)
    if kind == "array":
        keys = [re.match(r"^\[([^\]]*)\]=", node_text(child)) for child in node.named_children]
        if any(key and not re.fullmatch(r"\s*-?\d+\s*", key.group(1)) for key in keys):
            return f"an index in {text} is evaluated, and can run a command"
    if kind in ("binary_expression", "unary_expression") and node.parent is not None:
        return _test_evaluates(node, text)
    return None


def _expansion_evaluates(node: Node, text: str) -> str | None:
    children = node.children
    if len(children) > 1 and children[1].type == "!":
        return f"{text} names a variable by another's value, which can run a command"
    for before, after in itertools.pairwise(children):
        if before.type == ":" and not _literal_number(after):
            return f"the offset in {text} is evaluated, and can run a command"
    return None


def _test_evaluates(node: Node, text: str) -> str | None:
    """A `[[ … ]]` or `[ … ]` comparison of numbers evaluates both sides; `-v` a name."""
    test = _enclosing_test(node)
    if test is None:
        return None
    double = bool(test.children) and test.children[0].type == "[["
    operators = [c for c in node.children if c.type == "test_operator"]
    operands = [c for c in node.named_children if c.type != "test_operator"]
    if (
        double
        and any(node_text(o) in _ARITHMETIC_TESTS for o in operators)
        and not all(_literal_number(o) for o in operands)
    ):
        return f"{text} compares values as arithmetic, which can run a command"
    if any(node_text(o) in _NAME_TESTS for o in operators) and any(
        "[" in node_text(o) or "$" in node_text(o) or "`" in node_text(o) for o in operands
    ):
        return f"{text} tests a name whose index can run a command"
    return None


def _enclosing_test(node: Node) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type in ("binary_expression", "unary_expression",
                                                  "parenthesized_expression"):  # fmt: skip
        parent = parent.parent
    return parent if parent is not None and parent.type == "test_command" else None


def _literal_number(node: Node) -> bool:
    return node.type == "number" or bool(re.fullmatch(r"-?\d+", node_text(node)))


_NAME_TAKERS = frozenset(
    {"read", "mapfile", "readarray", "declare", "typeset", "local", "export", "readonly",
     "unset", "getopts", "wait", "let"}
)  # fmt: skip


def names_evaluated(command: SimpleCommand) -> str | None:
    """Why a builtin that takes a variable's name runs code: a name with an index
    (``a[$(cmd)]``, or ``a[i]`` with `i` holding one) is evaluated (``test -v``, ``printf -v``,
    ``read``, ``declare``, ``let``…), and so is a name, an option or a value that comes from
    an expansion, and every value given to an integer variable (``declare -i``)."""
    program = command.program
    words = command.words[1:]
    texts = [word.text for word in words]
    indexed = any("[" in text and text != "[" for text in texts)
    expanded = any(word.dynamic and _leading_expansion(word.text) for word in words)
    if program == "let":
        return "let evaluates arithmetic, which can run a command"
    if program in _NAME_TAKERS:
        integer = program in ("declare", "typeset", "local") and any(
            t.startswith("-") and "i" in t[1:] for t in texts
        )
        if indexed or expanded or integer:
            return f"{program} evaluates a name or value that can run a command"
    if program in ("test", "[") and _test_names(words):
        return f"{program} evaluates a name or expression that can run a command"
    if program == "printf" and (any(t.startswith("-v") for t in texts) or (
        words and words[0].dynamic and _leading_expansion(words[0].text)
    )):  # fmt: skip
        return "printf -v evaluates a name that can run a command"
    return None


def _test_names(words: tuple[Word, ...]) -> bool:
    """Whether `test` may evaluate a name: `-v`/`-R` with an indexed or expanded name, or an
    operator that comes from an expansion (`test $op name`)."""
    operands = [word for word in words if word.text != "]"]
    if any(word.text in _NAME_TESTS for word in operands) and any(
        "[" in word.text or word.dynamic for word in operands if word.text not in _NAME_TESTS
    ):
        return True
    if len(operands) == 2 and operands[0].dynamic:
        return True
    return len(operands) > 3 and any(
        word.dynamic and _leading_expansion(word.text) for word in operands
    )


def _leading_expansion(text: str) -> bool:
    """Whether a word as written begins with an expansion (so it may be an option, `-v`)."""
    return text.lstrip("\"'").startswith(("$", "`"))


def node_text(node: Node) -> str:
    """A node's source text."""
    return (node.text or b"").decode("utf-8", "surrogateescape")
