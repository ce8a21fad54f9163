"""A command's words read as getopt reads them: options anywhere, bundles (``-sSLo file``),
``--opt=value``, and ``--`` ending the options. Used by the table of programs that write
(`bash_writers`) to find the words they write.
"""

from __future__ import annotations

from msgspec import Struct, field

from stayer.exec.shell_syntax import Word


class Args(Struct):
    """A command's words as getopt reads them."""

    operands: list[Word] = field(default_factory=list[Word])
    flags: set[str] = field(default_factory=set[str])
    values: dict[str, list[Word]] = field(default_factory=dict[str, list[Word]])

    def of(self, *names: str) -> list[Word]:
        """The values given to any of the options `names` (a long one in any abbreviation,
        as getopt takes them: `--target=x` for `--target-directory`)."""
        return [
            value
            for given, values in self.values.items()
            if any(_names(given, name) for name in names)
            for value in values
        ]

    def has(self, *names: str) -> bool:
        """Whether any of the options `names` was given (a long one in any abbreviation)."""
        return any(_names(flag, name) for flag in self.flags for name in names)


def _names(given: str, option: str) -> bool:
    """Whether `given` stands for `option`: itself, or a prefix of a long option (taken
    for every option it could abbreviate: the safe side for a writer)."""
    return given == option or (
        given.startswith("--") and len(given) > 2 and option.startswith(given)
    )


def read_args(words: tuple[Word, ...], with_value: frozenset[str] = frozenset()) -> Args:
    """`words` split into operands and options; an option in `with_value` takes the rest of
    its bundle or the next word. A word known only at run time is an operand (it may be one)."""
    args = Args()
    index = 0
    while index < len(words):
        word = words[index]
        text = word.text
        if text == "--" and not word.dynamic:
            args.operands += words[index + 1 :]
            break
        if word.dynamic or not text.startswith("-") or text == "-":
            args.operands.append(word)
        elif text.startswith("--"):
            index += _long(args, words, index, with_value)
        else:
            index += _short(args, words, index, with_value)
        index += 1
    return args


def _long(args: Args, words: tuple[Word, ...], index: int, with_value: frozenset[str]) -> int:
    name, equals, value = words[index].text.partition("=")
    args.flags.add(name)
    if equals:
        args.values.setdefault(name, []).append(Word(value))
        return 0
    takes = any(_names(name, option) for option in with_value if option.startswith("--"))
    if takes and index + 1 < len(words):
        args.values.setdefault(name, []).append(words[index + 1])
        return 1
    return 0


def _short(args: Args, words: tuple[Word, ...], index: int, with_value: frozenset[str]) -> int:
    text = words[index].text
    for position, letter in enumerate(text[1:], start=1):
        option = "-" + letter
        args.flags.add(option)
        if option in with_value:
            rest = text[position + 1 :]
            if rest:
                args.values.setdefault(option, []).append(Word(rest))
                return 0
            if index + 1 < len(words):
                args.values.setdefault(option, []).append(words[index + 1])
                return 1
            return 0
    return 0


def options(*names: str) -> frozenset[str]:
    """A set of option names (the ones that take a value, say)."""
    return frozenset(names)
