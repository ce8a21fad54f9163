"""Programs known to change nothing, with every option each accepts and those that would.

A command is read-only when its program is in `READERS` and it is called within that entry:
every option is one the table lists for the program (read as the program reads them: an
abbreviated long option resolves to the one it names, bundled short options are split), none
is one of its `unsafe` options (those that write a file or run a program), and its operands
fit. An option the table does not know, an ambiguous one, a program not in the table: not
read-only. The table lists what is known to be safe, in the manner of Claude Code's read-only
validation, never what is known to be harmful; its option lists follow the GNU tools (and
ripgrep, git, jq as they are), so another tool's option is refused rather than guessed at.

A word known only when the line runs (an expansion, a glob) could be any option: a program
with an unsafe option, or a limit on its operands, is then not read-only. So is such a
program when it is fed more arguments from input (``xargs grep``).

Git is judged by subcommand (`git_reads`), sed by its script (`sed_script`), find by its
expression; the rest by `Reader`.
"""

from __future__ import annotations

import re

from .getopt import read_options
from .git_calls import git_read_only
from .programs import WRAPPERS, unwrap
from .reader_table import READERS, Judge, reader, set_of
from .sed_scripts import sed_call
from .shell_syntax import Parsed, split_words
from .shell_words import SimpleCommand, Word

__all__ = ["JUDGES", "READERS", "command_judgement", "line_judgement"]


def _any(_words: tuple[Word, ...], _fed: bool) -> str | None:
    return None


# --- judged by their own grammar ----------------------------------------------------------


def _sed(words: tuple[Word, ...], fed: bool) -> str | None:
    """sed reads when it edits nothing in place and its script touches no other file."""
    if fed:
        return "it is given more arguments when it runs, which could be options"
    call = sed_call(words)
    if call is None:
        return "its options or script cannot be read"
    if call.in_place:
        return "it edits files in place"
    if call.runs or call.files:
        return "its script runs commands or reads or writes other files"
    return None


_FIND_UNSAFE = set_of(
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
    "-fls",
)  # fmt: skip


def _find(words: tuple[Word, ...], fed: bool) -> str | None:
    """find reads unless its expression runs, deletes or writes (find takes no abbreviations,
    and refuses what it does not know)."""
    if fed or any(word.dynamic for word in words):
        return "a word known only when it runs could be an action that runs or deletes"
    hit = next((word.text for word in words if word.text in _FIND_UNSAFE), None)
    if hit is not None:
        return f"{hit} runs a command, deletes or writes"
    return None


def _date(words: tuple[Word, ...], fed: bool) -> str | None:
    """date reads unless told to set the clock (``-s``, or an operand other than +FORMAT)."""
    reason = READERS["date"].judge(words, fed)
    if reason is not None:
        return reason
    reading = read_options(READERS["date"].spec, words)
    if any(not operand.text.startswith("+") for operand in reading.operands):
        return "an operand other than +FORMAT sets the clock"
    return None


_XXD_VALUES = set_of("-c", "-cols", "-g", "-groupsize", "-l", "-len", "-s", "-seek", "-o",
                   "-offset", "-n", "-name", "-R")  # fmt: skip
_XXD_FLAGS = set_of(
    "-a", "-autoskip", "-b", "-bits", "-C", "-capitalize", "-d", "-e", "-E", "-EBCDIC", "-h",
    "-help", "-i", "-include", "-p", "-ps", "-postscript", "-plain", "-u", "-v", "-version",
    "-r", "-revert",
)  # fmt: skip


def _xxd(words: tuple[Word, ...], fed: bool) -> str | None:
    """xxd reads when it has one input at most (a second operand is a file it writes); its
    options are single-dash words it matches whole here."""
    if fed or any(word.dynamic for word in words):
        return "a word known only when it runs could be a file it writes"
    operands = 0
    index = 0
    while index < len(words):
        text = words[index].text
        if text in _XXD_VALUES:
            index += 2
            continue
        if any(text.startswith(v) and text[len(v) :].isdigit() for v in ("-c", "-g", "-l")):
            index += 1
            continue
        if text.startswith("-") and text != "-" and text not in _XXD_FLAGS:
            return f"{text} is not an option it is known to take"
        operands += not text.startswith("-") or text == "-"
        index += 1
    return None if operands <= 1 else "its second operand is a file it writes"


_JQ_ONE = set_of(
    "-c", "-n", "-e", "-s", "-r", "-j", "-a", "-S", "-C", "-M", "-R", "-h", "-V", "--tab",
    "--compact-output", "--null-input", "--exit-status", "--slurp", "--raw-output",
    "--raw-output0", "--join-output", "--ascii-output", "--sort-keys", "--color-output",
    "--monochrome-output", "--raw-input", "--seq", "--stream", "--stream-errors", "--help",
    "--version", "--unbuffered", "--args", "--jsonargs", "--build-configuration",
)  # fmt: skip
_JQ_VALUE = set_of("--indent", "-f", "--from-file", "-L", "--library-path")
_JQ_PAIR = set_of("--arg", "--argjson", "--slurpfile", "--rawfile")


def _jq(words: tuple[Word, ...], fed: bool) -> str | None:
    """jq reads: it has no option that writes or runs a program (its options are matched
    whole, as jq does, bundles of one-letter flags split)."""
    index = 0
    while index < len(words):
        text = words[index].text
        if words[index].dynamic or text in ("--args", "--jsonargs"):
            return None  # the rest are operands (and no operand makes jq write or run)
        if text in _JQ_PAIR:
            index += 3
            continue
        if text in _JQ_VALUE:
            index += 2
            continue
        if text.startswith("--") and text not in _JQ_ONE:
            return f"{text} is not an option it is known to take"
        short = text.startswith("-") and len(text) > 1 and not text.startswith("--")
        if short and any(f"-{letter}" not in _JQ_ONE for letter in text[1:]):
            return f"{text} is not an option it is known to take"
        index += 1
    return None


def _tree(words: tuple[Word, ...], fed: bool) -> str | None:
    return _TREE.judge(words, fed)


_TREE = reader(
    "adlfxL:P:I:pshugDFqNQrtcUvCAnSiJX",
    "gitignore noreport dirsfirst filesfirst prune matchdirs ignore-case du charset= "
    "filelimit= sort= info timefmt= fflinks hyperlink",
    numbers=False,
)


def _wrapper(name: str) -> Judge:
    """A wrapper reads when its own options are ones the table knows and none makes it do
    more than run its command (``time -o`` writes a file); what it runs is judged on its own."""
    wrapper = WRAPPERS[name]

    def judge(words: tuple[Word, ...], fed: bool) -> str | None:
        unwrapped = unwrap(SimpleCommand((Word(name), *words), fed=fed), wrapper, split_words)
        if unwrapped.reason is not None:
            return unwrapped.reason
        reading = read_options(wrapper.spec, words)
        changing = next((name for name, _ in reading.options if name in wrapper.changes), None)
        return None if changing is None else f"{changing} makes it write a file"

    return judge


JUDGES: dict[str, Judge] = {
    **{name: reader.judge for name, reader in READERS.items()},
    **{
        name: _wrapper(name)
        for name in ("env", "command", "nice", "timeout", "stdbuf", "time", "xargs")
    },
    "git": git_read_only,
    "sed": _sed,
    "find": _find,
    "date": _date,
    "xxd": _xxd,
    "jq": _jq,
    "tree": _tree,
    **dict.fromkeys(("echo", "printf", "true", "false", ":", "test", "[", "sleep", "ps"), _any),
}
"""Every program the table knows, by name. Builtins that take any words (``echo``, ``test``)
and ``ps`` (whose options neither write nor run anything) accept whatever they are given."""


HARMLESS_ASSIGNMENT = re.compile(r"^(?:LANG|LC_[A-Z]+|TZ|NO_COLOR|COLUMNS|TERM)=")
"""Variables a read-only command may be given: locale, time zone and display only (others,
such as GIT_EXTERNAL_DIFF or LD_PRELOAD, can make a program run something else)."""


def command_judgement(command: SimpleCommand) -> str | None:
    """Why one simple command (not what it wraps) is not read-only; None when it is."""
    assignment = next((a for a in command.assignments if not HARMLESS_ASSIGNMENT.match(a)), None)
    if assignment is not None:
        return f"{assignment.split('=', 1)[0]} can change what the program runs"
    if not command.words:
        return None
    name = command.words[0].text
    judge = JUDGES.get(name)
    if judge is None:
        return f"{name} is not a program known to only read"
    reason = judge(command.words[1:], command.fed)
    return None if reason is None else f"{name}: {reason}"


def line_judgement(parsed: Parsed) -> str | None:
    """Why a parsed command line is not read-only; None when everything it runs only reads
    and it redirects output into no file."""
    if parsed.hidden:
        return parsed.hidden[0]
    if parsed.writes:
        return f"it writes {parsed.writes[0]}"
    programs = [command.program for command in parsed.every_command()]
    for command in parsed.every_command():
        reason = command_judgement(command)
        if reason is not None:
            return reason
    if "git" in programs and any(p in ("cd", "pushd", "popd") for p in programs):
        return "git after cd could find another repository, whose config it would run"
    return None
