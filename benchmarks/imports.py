"""Where start-up goes: `python -X importtime` output turned into something to act on.

`python -X importtime` prints one line per module the first time it is imported, children
before their parent, nesting shown by indentation. This module rebuilds that tree and reports:

* totals per package (self time summed; stayer's own modules grouped by sub-package, so
  `stayer.providers` and `stayer.tools` show up separately from the stdlib and third parties);
* the *crossings*: each place one package's import pulls in another (stayer.cli → asyncio,
  stayer.tools.base → pydantic), with the cumulative time of what was pulled in, as an indented
  tree pruned below a threshold, which names the file to make the import lazy in;
* for each costly package, every stayer module importing it at module level (an AST scan of
  src/stayer), since making one import lazy only helps when no other module still imports it
  eagerly.

`-X importtime` itself slows imports down, so the figures are larger than in a plain run; use
them for proportions, and the start-up benchmark for absolute time.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.fakes.sse import anthropic_text

from benchmarks.measure import (
    DEFAULT_VENV,
    PROMPT,
    REPO,
    RUN_TIMEOUT_S,
    STAYER_FLAGS,
    clean_env,
    spawn,
)
from benchmarks.timed_server import FINAL_TEXT, TimedServer, text_reply

SRC = REPO / "src"
TOP = "<top>"
"""The importer of a module imported at start-up or from inside a function (a lazy import)."""


@dataclass
class ImportNode:
    """One module's import, with the modules it imported first."""

    name: str
    depth: int
    self_us: int
    cumulative_us: int
    children: list[ImportNode] = field(default_factory=list["ImportNode"])

    def walk(self) -> Iterator[ImportNode]:
        """This node and every node under it, parents first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True, slots=True)
class Crossing:
    """A place where one package's import pulled in another package."""

    level: int
    importer: str
    imported: str
    cumulative_us: int


@dataclass(frozen=True, slots=True)
class ImportReport:
    """The parsed breakdown of one command's imports."""

    label: str
    total_us: int
    packages: tuple[tuple[str, str, int], ...]
    crossings: tuple[Crossing, ...]
    eager_importers: Mapping[str, tuple[str, ...]]


def group_of(module: str) -> str:
    """The package a module is billed to: `stayer.<sub>` for ours, else the top-level name."""
    parts = module.split(".")
    if parts[0] == "stayer" and len(parts) > 1:
        return f"stayer.{parts[1]}"
    return parts[0]


def kind_of(group: str) -> str:
    """stayer, stdlib or third-party."""
    top = group.split(".")[0]
    if top == "stayer":
        return "stayer"
    if top in sys.stdlib_module_names or top.startswith("_"):
        return "stdlib"
    return "third-party"


def parse_importtime(stderr: str) -> list[ImportNode]:
    """The import forest from `-X importtime` output (other lines are ignored)."""
    stack: list[ImportNode] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        fields = line[len("import time:") :].split("|", 2)
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue  # the header line
        label = fields[2][1:]  # one space of padding, then two per nesting level
        node = ImportNode(
            name=label.strip(),
            depth=(len(label) - len(label.lstrip(" "))) // 2,
            self_us=int(fields[0]),
            cumulative_us=int(fields[1]),
        )
        children: list[ImportNode] = []
        while stack and stack[-1].depth > node.depth:
            children.append(stack.pop())
        node.children = children[::-1]
        stack.append(node)
    return stack


def package_totals(roots: Sequence[ImportNode]) -> list[tuple[str, str, int]]:
    """(package, kind, self time in µs), costliest first."""
    totals: defaultdict[str, int] = defaultdict(int)
    for root in roots:
        for node in root.walk():
            totals[group_of(node.name)] += node.self_us
    ordered = sorted(totals.items(), key=lambda item: item[1], reverse=True)
    return [(group, kind_of(group), us) for group, us in ordered]


def crossings(roots: Sequence[ImportNode], min_us: int) -> list[Crossing]:
    """Package-to-package import edges costing at least `min_us`, as an indented tree."""
    found: list[Crossing] = []

    def visit(node: ImportNode, parent: str, parent_group: str, level: int) -> None:
        group = group_of(node.name)
        if group != parent_group:
            if node.cumulative_us < min_us:
                return
            found.append(Crossing(level, parent, node.name, node.cumulative_us))
            level += 1
        for child in node.children:
            visit(child, node.name, group, level)

    for root in roots:
        visit(root, TOP, TOP, 0)
    return found


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, node: ast.ImportFrom, path: Path) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(tree: ast.Module, module: str, path: Path) -> Iterator[str]:
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, ast.Import):
            yield from (alias.name for alias in statement.names)
        elif isinstance(statement, ast.ImportFrom):
            yield _resolve(module, statement, path)
        elif isinstance(statement, ast.If) and not _is_type_checking(statement.test):
            pending.extend([*statement.body, *statement.orelse])
        elif isinstance(statement, ast.Try):
            pending.extend([*statement.body, *statement.orelse, *statement.finalbody])
            for handler in statement.handlers:
                pending.extend(handler.body)


def eager_importers(groups: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """For each package, the stayer source files importing it at module level."""
    wanted = set(groups)
    found: defaultdict[str, set[str]] = defaultdict(set)
    for path in sorted((SRC / "stayer").rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for imported in _module_level_imports(tree, module, path):
            group = group_of(imported)
            if group in wanted and group != group_of(module):
                found[group].add(str(path.relative_to(REPO)))
    return {group: tuple(sorted(found[group])) for group in groups}


def analyse(label: str, stderr: str, *, min_ms: float = 3.0, top: int = 15) -> ImportReport:
    """The report for one command's `-X importtime` output."""
    roots = parse_importtime(stderr)
    packages = package_totals(roots)
    costly = [group for group, kind, _ in packages[:top] if kind != "stayer"]
    return ImportReport(
        label=label,
        total_us=sum(us for _, _, us in packages),
        packages=tuple(packages[:top]),
        crossings=tuple(crossings(roots, int(min_ms * 1000))),
        eager_importers=eager_importers(costly),
    )


def importtime_stderr(
    args: Sequence[str], *, serve: bool, workdir: Path, venv: Path = DEFAULT_VENV
) -> str:
    """Run `python -X importtime -m stayer ARGS` (against a fake server when `serve`)."""
    argv = (str(venv / "bin" / "python"), "-X", "importtime", "-m", "stayer", *args)
    with TimedServer() as server:
        if serve:
            server.enqueue(text_reply())
        done = spawn(argv, clean_env(server.env("anthropic"), workdir), workdir)
    if done.status != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.status}: {done.stderr[-2000:]}")
    return done.stderr


def importtime_to_first_request(
    args: Sequence[str], *, workdir: Path, venv: Path = DEFAULT_VENV
) -> str:
    """`python -X importtime -m stayer ARGS` up to its first model request: the server holds
    its answer and the process is stopped once the request is in, so what it printed is what
    start-up imported (the tools load only once an answer begins)."""
    argv = (str(venv / "bin" / "python"), "-X", "importtime", "-m", "stayer", *args)
    with TimedServer() as server, tempfile.TemporaryFile() as err:
        server.enqueue(anthropic_text(FINAL_TEXT).stalled(before_headers=RUN_TIMEOUT_S))
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=clean_env(server.env("anthropic"), workdir),
            cwd=workdir,
        )
        try:
            server.wait_for_requests(1, timeout_s=RUN_TIMEOUT_S)
        finally:
            process.kill()
            process.wait()
        server.wait_for_abandoned(1)
        err.seek(0)
        return err.read().decode("utf-8", "replace")


def startup_reports(workdir: Path, venv: Path = DEFAULT_VENV) -> list[ImportReport]:
    """Import breakdowns of `stayer --version` and of `stayer -p` up to its first request."""
    version = importtime_stderr(["--version"], serve=False, workdir=workdir, venv=venv)
    flags = ["-p", PROMPT, *STAYER_FLAGS]
    run = importtime_to_first_request(flags, workdir=workdir, venv=venv)
    return [
        analyse("python -X importtime -m stayer --version", version),
        analyse(
            f"python -X importtime -m stayer -p {PROMPT} {' '.join(STAYER_FLAGS)}, "
            "up to its first request",
            run,
        ),
    ]


def render(report: ImportReport, *, top: int = 15) -> str:
    """The report as text."""
    lines = [
        f"## {report.label}",
        f"total import time (under -X importtime): {report.total_us / 1000:.1f} ms",
        "",
        f"{'package':<28} {'kind':<12} {'self ms':>8} {'share':>6}",
    ]
    for group, kind, us in report.packages[:top]:
        share = 100 * us / report.total_us if report.total_us else 0.0
        lines.append(f"{group:<28} {kind:<12} {us / 1000:>8.1f} {share:>5.1f}%")
    lines += [
        "",
        "imports that pull in another package (cumulative ms; indented = nested;",
        f"{TOP} = imported at start-up or from inside a function, i.e. lazily):",
    ]
    for crossing in report.crossings:
        indent = "  " * crossing.level
        lines.append(
            f"{crossing.cumulative_us / 1000:>8.1f}  {indent}{crossing.importer} → "
            f"{crossing.imported}"
        )
    lines += ["", "module-level importers in src/ of the costliest non-stayer packages:"]
    for group, files in report.eager_importers.items():
        lines.append(f"  {group}: {', '.join(files) if files else '(only indirectly)'}")
    return "\n".join(lines)
