"""No module of a package imports itself back through others of its package (`loop/asking` and
`loop/tool_exec` did, `session/query` and `session/session`, the parse and the program tables,
the HTTP layer and the model list): a cycle makes import order matter and hides
which of the two owns the shared piece. Annotation-only imports count, as they tie the two
modules' meanings together all the same."""

from __future__ import annotations

import grimp

PACKAGES = (
    "stayer.cli",
    "stayer.ui",
    "stayer.session",
    "stayer.loop",
    "stayer.context",
    "stayer.permissions",
    "stayer.hooks",
    "stayer.tools",
    "stayer.providers",
    "stayer.exec",
    "stayer.config",
)


def _cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The groups of modules of `package` that import each other round in a circle."""
    members = {m for m in graph.modules if m.startswith(package + ".")}
    edges = {m: graph.find_modules_directly_imported_by(m) & members for m in members}
    found: list[list[str]] = []
    for start in sorted(members):
        reached = {start}
        frontier = list(edges[start])
        while frontier:
            module = frontier.pop()
            if module not in reached:
                reached.add(module)
                frontier.extend(edges[module])
        back = sorted(m for m in reached if m != start and start in _reach(edges, m))
        if back and start < back[0]:
            found.append([start, *back])
    return found


def _reach(edges: dict[str, set[str]], start: str) -> set[str]:
    reached: set[str] = set()
    frontier = [start]
    while frontier:
        module = frontier.pop()
        for other in edges[module] - reached:
            reached.add(other)
            frontier.append(other)
    return reached


def test_no_package_has_an_import_cycle() -> None:
    graph = grimp.build_graph("stayer")
    assert {package: _cycles(graph, package) for package in PACKAGES} == {
        package: [] for package in PACKAGES
    }
