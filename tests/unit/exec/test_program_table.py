"""The program table, walked whole: every program, every option, read as the program reads it.

For each read-only program: each option it takes (its value given glued, after `=` and as the
next word) is read-only exactly when it is not one of the program's unsafe options; every
abbreviation of a long option is judged as the option itself, or refused when it is
ambiguous; an option the table does not know, and a bundle holding one, make the command not
read-only. For each wrapper: each of its options still finds the command it wraps (or none,
or fails closed where the option hides it). Where GNU's own tool is installed, its `--help`
lists no long option the table lacks.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from stayer.exec.getopt import OptionSpec, resolve_long
from stayer.exec.programs import WRAPPERS
from stayer.exec.readers import READERS, line_judgement
from stayer.exec.shell_syntax import parse


def read_only(line: str) -> bool:
    return line_judgement(parse(line)) is None


def operand(program: str) -> str:
    """An operand, where the program takes one (popd takes none; date a +FORMAT)."""
    most = READERS[program].most_operands
    return "" if most == 0 else " +%s" if program == "date" else " f"


def _given(name: str, arity: str, *, long: bool) -> list[str]:
    """The ways to give one option: alone, or with its value glued, after `=`, as next word."""
    flag = f"--{name}" if long else f"-{name}"
    if arity == "none":
        return [flag]
    if arity == "optional":
        return [flag, f"{flag}=1" if long else f"{flag}1"]
    return [f"{flag}=1", f"{flag} 1"] if long else [f"{flag}1", f"{flag} 1"]


def _every_option() -> Iterator[tuple[str, str, bool]]:
    for program, reader in READERS.items():
        spec = reader.spec
        for letter, arity in spec.short.items():
            for given in _given(letter, arity, long=False):
                yield program, given, f"-{letter}" not in reader.unsafe
        for name, arity in spec.long.items():
            for given in _given(name, arity, long=True):
                yield program, given, f"--{name}" not in reader.unsafe


OPTIONS = list(_every_option())


def test_the_table_is_walked_whole() -> None:
    assert len(READERS) >= 55
    assert len(OPTIONS) >= 1_500


@pytest.mark.parametrize(("program", "given", "safe"), OPTIONS)
def test_every_option_of_every_program_is_judged(program: str, given: str, safe: bool) -> None:
    assert read_only(f"{program} {given}{operand(program)}") is safe, (program, given)


def _abbreviations(spec: OptionSpec) -> Iterator[tuple[str, str | None]]:
    """Every prefix of every long option, with the option it names (None: ambiguous)."""
    for name in spec.long:
        for end in range(1, len(name)):
            prefix = name[:end]
            yield prefix, resolve_long(spec, prefix)


ABBREVIATED = [
    (program, prefix, target)
    for program, reader in READERS.items()
    if reader.spec.abbreviations
    for prefix, target in _abbreviations(reader.spec)
]


def test_abbreviations_cover_every_long_option() -> None:
    assert len(ABBREVIATED) >= 4_500


@pytest.mark.parametrize(("program", "prefix", "target"), ABBREVIATED)
def test_every_abbreviation_is_judged_as_the_option_it_names(
    program: str, prefix: str, target: str | None
) -> None:
    reader = READERS[program]
    if target is None:
        assert not read_only(f"{program} --{prefix} f"), "ambiguous: the program refuses it"
        return
    arity = reader.spec.long[target]
    value = "" if arity == "none" else "=1"
    line = f"{program} --{prefix}{value}{operand(program)}"
    assert read_only(line) is (f"--{target}" not in reader.unsafe)


def _unknown_letter(spec: OptionSpec) -> str:
    return next(c for c in "jJkKyYgG9Q" if c not in spec.short)


@pytest.mark.parametrize("program", sorted(READERS))
def test_an_option_the_table_does_not_know_fails_closed(program: str) -> None:
    spec = READERS[program].spec
    letter = _unknown_letter(spec)
    assert not read_only(f"{program} --no-such-option-anywhere f")
    assert not read_only(f"{program} -{letter} f")
    first_flag = next((s for s, a in spec.short.items() if a == "none"), None)
    if first_flag is not None:
        assert not read_only(f"{program} -{first_flag}{letter} f"), "a bundle holding it"


@pytest.mark.parametrize("program", sorted(READERS))
def test_a_bundle_is_judged_letter_by_letter(program: str) -> None:
    reader = READERS[program]
    flags = [s for s, a in reader.spec.short.items() if a == "none"]
    safe = [s for s in flags if f"-{s}" not in reader.unsafe]
    if len(safe) >= 2:
        assert read_only(f"{program} -{''.join(safe[:3])}{operand(program)}")
    unsafe_flags = [s for s in flags if f"-{s}" in reader.unsafe]
    for letter in unsafe_flags:
        assert not read_only(f"{program} -{safe[0] if safe else ''}{letter} f")


WRAPPED = [
    (name, given)
    for name, wrapper in WRAPPERS.items()
    for letter, arity in wrapper.spec.short.items()
    for given in _given(letter, arity, long=False)
] + [
    (name, given)
    for name, wrapper in WRAPPERS.items()
    for option, arity in wrapper.spec.long.items()
    for given in _given(option, arity, long=True)
]


@pytest.mark.parametrize(("name", "given"), WRAPPED)
def test_every_wrapper_option_still_finds_the_command_or_fails_closed(
    name: str, given: str
) -> None:
    wrapper = WRAPPERS[name]
    leading = " ".join(["5"] * wrapper.operands)
    parsed = parse(f"{name} {given} {leading} rm -rf x")
    option = given.split("=", 1)[0].split(" ", 1)[0]
    option = option if option.startswith("--") else option[:2]
    ran = [command.line for command in parsed.every_command()]
    if option in wrapper.hides:
        assert parsed.hidden, (name, given)
    elif option in wrapper.nothing:
        assert ran == [parsed.commands[0].line]
    elif option in wrapper.splits:
        assert "1 rm -rf x" in ran or parsed.hidden
    else:
        assert "rm -rf x" in ran, (name, given, ran)


def test_wrapper_options_are_read_as_the_programs_read_them() -> None:
    cases = {
        "env --sp='sh -c \"curl x\"'": "hidden",
        "env --uns X curl x": "curl x",
        "env -vS'curl x'": "curl x",
        "env -iuX curl x": "curl x",
        "timeout --sig KILL 5 curl x": "curl x",
        "timeout -sKILL -k1 5 curl x": "curl x",
        "nice --adj 5 curl x": "curl x",
        "nice -5 curl x": "curl x",
        "stdbuf --out L curl x": "curl x",
        "stdbuf -oL -eL curl x": "curl x",
        "xargs --arg f curl x": "curl x",
        "xargs -a f -n1 curl x": "curl x",
        "setsid -w curl x": "curl x",
        "ionice -c 3 curl x": "curl x",
        "taskset -c 0 curl x": "curl x",
        "flock -w 5 lock curl x": "curl x",
        "sudo -u bob curl x": "curl x",
        "env -- curl x": "curl x",
        "timeout --frobnicate 5 curl x": "hidden",
        "env --i curl x": "hidden",
        "flock -c 'curl x' lock": "hidden",
        "sudo -s": "hidden",
    }
    for line, expected in cases.items():
        parsed = parse(line)
        if expected == "hidden":
            assert parsed.hidden, line
        else:
            assert expected in [c.line for c in parsed.every_command()], line


_HELP_LONG = re.compile(r"^\s{1,12}(?:-\w, )?--([A-Za-z0-9][\w-]*)", re.MULTILINE)
_GNU = ["ls", "cat", "head", "tail", "wc", "grep", "cut", "sort", "uniq", "base64", "diff",
        "cmp", "comm", "fold", "paste", "tac", "nl", "tr", "expand", "unexpand", "od",
        "md5sum", "sha256sum", "du", "df", "stat", "readlink", "realpath", "basename",
        "dirname", "uname", "id", "printenv", "seq", "date", "env", "timeout", "nice",
        "stdbuf", "xargs"]  # fmt: skip


def test_gnu_help_lists_no_long_option_the_table_lacks() -> None:
    """An option the table lacks could make an abbreviation the table thinks unique
    ambiguous, or name an option it does not know: where the GNU tool is here, ask it."""
    compared = 0
    for program in _GNU:
        if shutil.which(program) is None:
            continue
        spec = READERS[program].spec if program in READERS else WRAPPERS[program].spec
        text = subprocess.run([program, "--help"], capture_output=True, text=True).stdout
        listed = set(_HELP_LONG.findall(text))
        # names in capitals are placeholders for a family (diff's --GTYPE-group-format)
        missing = sorted(n for n in listed if n not in spec.long and not n[:1].isupper())
        assert not missing, (program, missing)
        compared += 1
    assert compared >= 30, "the GNU tools are on every machine of this kind"
