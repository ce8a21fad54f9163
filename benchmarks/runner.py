"""The one runner every benchmark shares: its options, interleaved arms, a fixed-width table,
the JSON file, and `main`.

A benchmark module declares only what it measures: a `Config` dataclass whose fields are its
options (`option(...)` gives each its help and bounds), an async `collect(config, workdir)`, a
`report` of the samples as text and an `as_json` of them, and a `Benchmark` tying them up. The
runner parses `--FIELD` options and `--json PATH` from the fields, measures in a throwaway
folder, prints the report to standard output (progress goes to standard error), writes every
sample with the machine's state before and after to the JSON file, and exits 1 when the
benchmark's own `status` says a target was missed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
import typing
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from benchmarks import machine

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

C = TypeVar("C", bound="DataclassInstance")
S = TypeVar("S")
A = TypeVar("A")


def progress(message: str) -> None:
    """A line for the person waiting: standard error, at once, never in the report."""
    print(message, file=sys.stderr, flush=True)


# --- options ---------------------------------------------------------------------------------


def option(
    default: Any,
    help_text: str = "",
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    why: str = "",
) -> Any:
    """A `Config` field that is also a command-line option `--NAME` (underscores as dashes):
    typed as its default is (a bool is a flag), refused outside `at_least`..`at_most` with
    `why` after the complaint."""
    bounds = {"help": help_text, "at_least": at_least, "at_most": at_most, "why": why}
    return dataclasses.field(default=default, metadata=bounds)


def parse_config(
    config_type: type[C],
    prog: str,
    description: str,
    argv: Sequence[str],
    check: Callable[[C], str | None] | None = None,
) -> tuple[C, Path | None]:
    """The `Config` the command line asks for, and the `--json` path if one was given.

    A value out of bounds, or one `check` refuses (it returns the complaint), ends the program
    with argparse's usage and the complaint, status 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    fields = dataclasses.fields(config_type)
    hints = typing.get_type_hints(config_type)
    for field in fields:
        _add(parser, field, hints[field.name])
    parser.add_argument("--json", type=Path, help="write every sample and summary here")
    args = parser.parse_args(list(argv))
    for field in fields:
        complaint = _out_of_bounds(field, getattr(args, field.name))
        if complaint:
            parser.error(complaint)
    config = config_type(**{field.name: getattr(args, field.name) for field in fields})
    complaint = check(config) if check else None
    if complaint:
        parser.error(complaint)
    return config, args.json


def _add(parser: argparse.ArgumentParser, field: dataclasses.Field[Any], hint: Any) -> None:
    flag = "--" + field.name.replace("_", "-")
    help_text = field.metadata.get("help") or None
    if hint is bool:
        parser.add_argument(flag, action="store_true", help=help_text)
        return
    choices = typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else None
    kind = str if choices else hint
    parser.add_argument(flag, type=kind, choices=choices, default=field.default, help=help_text)


def _out_of_bounds(field: dataclasses.Field[Any], value: Any) -> str | None:
    low, high = field.metadata.get("at_least"), field.metadata.get("at_most")
    name = "--" + field.name.replace("_", "-")
    why = f": {field.metadata['why']}" if field.metadata.get("why") else ""
    if low is not None and high is not None and not low <= value <= high:
        return f"{name} must be between {low:g} and {high:g}{why}"
    if low is not None and value < low:
        least = "0 or more" if low == 0 else f"at least {low:g}"
        return f"{name} must be {least}{why}"
    return None


# --- measuring -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Round(Generic[A]):
    """One round of interleaved arms: its label, whether its samples are kept, and the arms in
    this round's order."""

    label: str
    kept: bool
    arms: tuple[A, ...]


def rounds(
    arms: Sequence[A], runs: int, warmup: int = 0, *, rotate: bool = True
) -> Iterator[Round[A]]:
    """`warmup` discarded rounds, then `runs` kept ones, each running every arm once; with
    `rotate`, each round starts one arm later than the last, so a burst of load on a shared
    machine, or a cache one arm warms for the next, favours no arm."""
    for index in range(warmup + runs):
        shift = index % len(arms) if rotate else 0
        kept = index >= warmup
        label = f"{index - warmup + 1}/{runs}" if kept else "warm-up"
        yield Round(label, kept, (*arms[shift:], *arms[:shift]))


def in_workdir(prefix: str, collect: Callable[[Path], Coroutine[Any, Any, S]]) -> S:
    """`collect` run to the end on a new event loop, in a folder removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        return asyncio.run(collect(Path(tmp)))


# --- the report ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a fixed-width table: its head, width and alignment (`<` or `>`), and the
    text before it (one space unless said)."""

    head: str
    width: int
    align: str = ">"
    gap: str = " "


def table_lines(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], ruler: int | None = None
) -> list[str]:
    """The header, a ruler (as wide as the header unless `ruler`), and one line per row of
    already formatted cells."""
    header = _line(columns, [column.head for column in columns])
    return [header, "-" * (ruler or len(header)), *(_line(columns, row) for row in rows)]


def _line(columns: Sequence[Column], cells: Sequence[str]) -> str:
    parts = [
        ("" if index == 0 else column.gap) + f"{cell:{column.align}{column.width}}"
        for index, (column, cell) in enumerate(zip(columns, cells, strict=True))
    ]
    return "".join(parts)


# --- the program -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Benchmark(Generic[C, S]):
    """What one benchmark module declares; `main` does the rest."""

    prog: str
    """Its command, `python -m benchmarks.NAME`."""
    doc: str
    """Its module docstring; the first line is the `--help` description."""
    config: type[C]
    workdir_prefix: str
    collect: Callable[[C, Path], Coroutine[Any, Any, S]]
    report: Callable[[S, C], str]
    as_json: Callable[[S, C], dict[str, Any]]
    check: Callable[[C], str | None] | None = None
    """Refuses a combination of options the bounds cannot judge (the complaint, or None)."""
    status: Callable[[S, C], int] | None = None
    """The exit status once measured: 1 when a target was missed; 0 without it."""

    def measure(self, config: C) -> S:
        """Every sample, taken in a throwaway folder."""
        return in_workdir(self.workdir_prefix, lambda workdir: self.collect(config, workdir))

    def main(self, argv: Sequence[str] | None = None) -> int:
        """Parse, measure, print the report, optionally write JSON; the exit status."""
        config, json_path = parse_config(
            self.config,
            self.prog,
            self.doc.split("\n", 1)[0],
            sys.argv[1:] if argv is None else argv,
            self.check,
        )
        before = machine.describe()
        samples = self.measure(config)
        print(self.report(samples, config))
        if json_path is not None:
            write_json(json_path, before, self.as_json(samples, config))
        return self.status(samples, config) if self.status else 0


def write_json(path: Path, before: dict[str, Any], document: dict[str, Any]) -> None:
    """`document` with the machine's state before the run and now, to `path`."""
    whole = {"machine_before": before, "machine_after": machine.describe(), **document}
    path.write_text(json.dumps(whole, indent=2, default=str) + "\n", encoding="utf-8")
    progress(f"wrote {path}")
