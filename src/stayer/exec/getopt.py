"""A program's options read the way the program reads them (GNU getopt_long).

A rule about what a program does with its options is only as good as its reading of them. GNU
tools accept a long option by any prefix that names one option alone (`env --sp=…` is
`--split-string`), take several short options in one word (`env -vS'…'` is `-v` then `-S` with
`…` as its value), let an option take its value glued on or as the next word, and stop at `--`.
Most permute (options may follow operands: `ls dir -la`); wrappers stop at their first operand,
which begins the command they run. `read_options` follows all of that against a program's full
option list, and says what it could not follow (an unknown or ambiguous option, a missing
value, a word known only when the line runs) instead of guessing: callers fail closed on it.

An option list is written compactly, as getopt's own strings are: short letters, a `:` after a
letter that takes a value and `::` after one whose value may only be glued on; long names
separated by spaces, `name=` for a value and `name[=]` for an optional one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias

from msgspec import Struct, field

from .shell_words import Word

Arity: TypeAlias = Literal["none", "required", "optional"]

_NUMBER = re.compile(r"^-\d+[A-Za-z]*$")


class OptionSpec(Struct, frozen=True):
    """Every option a program accepts, and how it reads its command line."""

    short: Mapping[str, Arity] = field(default_factory=dict[str, Arity])
    long: Mapping[str, Arity] = field(default_factory=dict[str, Arity])
    permute: bool = True
    """Whether options may follow operands (GNU's default); False for programs that stop at
    their first operand, such as wrappers whose operands are a command."""
    numbers: bool = False
    """Whether ``-NUM`` is an option (``head -5``, ``git log -3``)."""
    lone_dash: bool = False
    """Whether a lone ``-`` is an option (``env -`` is ``env -i``), not an operand."""
    abbreviations: bool = True
    """Whether a long option may be given by a unique prefix (getopt_long; not ripgrep)."""

    def names(self) -> tuple[str, ...]:
        """Every option as written on a command line: ``-a`` and ``--all``."""
        return (*(f"-{s}" for s in self.short), *(f"--{name}" for name in self.long))


def options(
    short: str = "",
    long: str = "",
    *,
    permute: bool = True,
    numbers: bool = False,
    lone_dash: bool = False,
    abbreviations: bool = True,
) -> OptionSpec:
    """An `OptionSpec` from getopt-style strings (see the module docstring)."""
    shorts: dict[str, Arity] = {}
    index = 0
    while index < len(short):
        letter = short[index]
        colons = len(short[index + 1 :]) - len(short[index + 1 :].lstrip(":"))
        shorts[letter] = ("none", "required", "optional")[min(colons, 2)]
        index += 1 + colons
    longs: dict[str, Arity] = {}
    for name in long.split():
        if name.endswith("[=]"):
            longs[name[:-3]] = "optional"
        elif name.endswith("="):
            longs[name[:-1]] = "required"
        else:
            longs[name] = "none"
    return OptionSpec(shorts, longs, permute, numbers, lone_dash, abbreviations)


class Reading(Struct, frozen=True):
    """A command line's words read against an `OptionSpec`."""

    options: tuple[tuple[str, str | None], ...] = ()
    """Each option met, by its full name (``-o``, ``--output``), with its value if any."""
    operands: tuple[Word, ...] = ()
    rest: int = 0
    """For a spec that does not permute: where the operands begin (the wrapped command)."""
    problem: str | None = None
    """What could not be read; the reading stops there."""
    dynamic: bool = False
    """Whether a word known only when the line runs was taken as an operand or a value (it
    could be an option, or several words)."""

    def has(self, *names: str) -> bool:
        """Whether any of the options `names` was given."""
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> tuple[str, ...]:
        """The values given to the options `names`, in order."""
        return tuple(value for name, value in self.options if name in names and value is not None)


def resolve_long(spec: OptionSpec, given: str) -> str | None:
    """The full long option that `given` (without ``--``) names: itself, or the one option it
    is a prefix of; None when it names none or several."""
    if given in spec.long:
        return given
    if not spec.abbreviations:
        return None
    found = [name for name in spec.long if name.startswith(given)]
    return found[0] if len(found) == 1 else None


def read_options(spec: OptionSpec, words: Sequence[Word]) -> Reading:
    """Read `words` (the arguments, not the program) as the program would.

    A word known only when the line runs (an expansion, a glob) could be any option, or
    several words: a spec that does not permute cannot tell where its command begins past one
    (a problem); one that permutes takes it as an operand and says so (`Reading.dynamic`)."""
    found: list[tuple[str, str | None]] = []
    operands: list[Word] = []
    dynamic = False
    index = 0
    while index < len(words):
        word = words[index]
        text = word.text
        if word.dynamic:
            if not spec.permute:
                return Reading(
                    tuple(found),
                    tuple(operands),
                    index,
                    f"{text} is known only when the line runs",
                    dynamic=True,
                )
            dynamic = True
            operands.append(word)
            index += 1
            continue
        if text == "--":
            rest = words[index + 1 :]
            dynamic = dynamic or any(w.dynamic for w in rest)
            return Reading(tuple(found), (*operands, *rest), index + 1, dynamic=dynamic)
        if text == "-" and spec.lone_dash:
            found.append(("-", None))
            index += 1
            continue
        if not text.startswith("-") or text == "-":
            if not spec.permute:
                return Reading(tuple(found), (*operands, *words[index:]), index)
            operands.append(word)
            index += 1
            continue
        step = _one(spec, words, index, found)
        if isinstance(step, str):
            return Reading(tuple(found), tuple(operands), index, step, dynamic=dynamic)
        if step > index + 1 and words[index + 1].dynamic:  # a value known only at run time
            if not spec.permute:
                return Reading(
                    tuple(found),
                    tuple(operands),
                    index,
                    f"{words[index + 1].text} is known only when the line runs",
                    dynamic=True,
                )
            dynamic = True
        index = step
    return Reading(tuple(found), tuple(operands), len(words), dynamic=dynamic)


def _one(
    spec: OptionSpec, words: Sequence[Word], index: int, found: list[tuple[str, str | None]]
) -> int | str:
    """Read the option word at `index` into `found`; the index after it, or a problem."""
    text = words[index].text
    if text.startswith("--"):
        return _long(spec, words, index, found)
    if spec.numbers and _NUMBER.match(text):
        found.append(("-NUM", text[1:]))
        return index + 1
    return _short(spec, words, index, found)


def _long(
    spec: OptionSpec, words: Sequence[Word], index: int, found: list[tuple[str, str | None]]
) -> int | str:
    given, equals, value = words[index].text[2:].partition("=")
    name = resolve_long(spec, given)
    if name is None:
        matches = [n for n in spec.long if n.startswith(given)]
        return f"--{given} is " + ("ambiguous" if matches else "not an option it is known to take")
    arity = spec.long[name]
    if arity == "none":
        if equals:
            return f"--{name} takes no value"
        found.append((f"--{name}", None))
        return index + 1
    if equals or arity == "optional":
        found.append((f"--{name}", value if equals else None))
        return index + 1
    if index + 1 >= len(words):
        return f"--{name} needs a value"
    found.append((f"--{name}", words[index + 1].text))
    return index + 2


def _short(
    spec: OptionSpec, words: Sequence[Word], index: int, found: list[tuple[str, str | None]]
) -> int | str:
    text = words[index].text
    position = 1
    while position < len(text):
        letter = text[position]
        arity = spec.short.get(letter)
        if arity is None:
            return f"-{letter} is not an option it is known to take"
        glued = text[position + 1 :]
        if arity == "none":
            found.append((f"-{letter}", None))
            position += 1
            continue
        if glued or arity == "optional":
            found.append((f"-{letter}", glued or None))
            return index + 1
        if index + 1 >= len(words):
            return f"-{letter} needs a value"
        found.append((f"-{letter}", words[index + 1].text))
        return index + 2
    return index + 1
