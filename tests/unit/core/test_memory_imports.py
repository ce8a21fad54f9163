"""`@path` imports in memory files: where they point, how deep they go, what they may not do."""

from __future__ import annotations

from pathlib import Path

from stayer.context.imports import import_paths
from stayer.context.memory import (
    Candidate,
    Memory,
    MemoryLimits,
    SkippedFile,
    load_memory,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def project(file: Path, root: Path, limits: MemoryLimits | None = None) -> Memory:
    return load_memory(
        [Candidate(file, "project", root)], home=root / "home", limits=limits or MemoryLimits()
    )


def loaded(memory: Memory) -> list[tuple[str, str | None]]:
    """Each loaded file, and the file that imported it, as names relative to a common root."""
    return [
        (file.path.name, file.imported_by.name if file.imported_by else None)
        for file in memory.files
    ]


def test_imports_outside_code_are_found_in_order_as_written() -> None:
    text = (
        "# Guide\n"
        "See @docs/a.md and @~/notes.md, or mail me@example.com.\n"
        "`@in/a/span.md` is shown, @b.md#part is not a fragment of the path.\n"
        "```sh\n@in/a/fence.md\n```\n"
        "~~~~\n@in/a/tilde/fence.md\n~~~\nstill fenced\n~~~~\n"
        "Some prose.\n\n    @in/indented/code.md\n\n"
        "- a list item\n\n    @list/paragraph.md\n\n"
        "``a ` @in/double/span.md`` then (@in/parens.md) and @@twice @#hash @/ @/abs/path.md\n"
        "@my\\ file.md\n"
    )
    assert import_paths(text) == [
        "docs/a.md",
        "~/notes.md,",  # the comma is let go when the path is resolved
        "b.md",
        "list/paragraph.md",
        "/abs/path.md",
        "my file.md",
    ]


def test_a_backtick_without_a_partner_is_plain_text() -> None:
    assert import_paths("a ` lone backtick, then @real.md") == ["real.md"]
    assert import_paths("```unclosed fence\n@inside.md\n") == []


def test_imports_are_read_after_their_file_relative_to_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    agents = write(root / "pkg" / "AGENTS.md", "Style: @../docs/style.md\nAlso @./local.md.")
    write(root / "docs" / "style.md", "tabs, never spaces; see @glossary.md")
    write(root / "docs" / "glossary.md", "a glossary")
    write(root / "pkg" / "local.md", "local rules")
    memory = project(agents, root)
    assert loaded(memory) == [
        ("AGENTS.md", None),
        ("style.md", "AGENTS.md"),
        ("glossary.md", "style.md"),
        ("local.md", "AGENTS.md"),
    ]
    assert [file.source for file in memory.files] == ["project", "import", "import", "import"]
    assert memory.files[1].path == root / "docs" / "style.md"


def test_a_tilde_is_the_home_directory_and_a_users_file_may_import_from_anywhere(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    user = write(tmp_path / "config" / "STAYER.md", "mine: @~/notes/me.md @/etc/hostname")
    write(home / "notes" / "me.md", "I like short answers")
    memory = load_memory([Candidate(user, "user", None)], home=home)
    assert [str(file.path) for file in memory.files][:2] == [
        str(user),
        str(home / "notes" / "me.md"),
    ]


def test_a_projects_import_may_not_leave_the_project(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(tmp_path / "home" / ".aws" / "credentials", "secret")
    agents = write(root / "AGENTS.md", "@~/.aws/credentials @../outside.md @inside.md")
    write(tmp_path / "outside.md", "outside")
    write(root / "inside.md", "inside")
    (root / "link.md").symlink_to(tmp_path / "outside.md")
    write(root / "CLAUDE.md", "@link.md")
    memory = load_memory(
        [Candidate(agents, "project", root), Candidate(root / "CLAUDE.md", "project", root)],
        home=tmp_path / "home",
    )
    assert loaded(memory) == [("AGENTS.md", None), ("inside.md", "AGENTS.md"), ("CLAUDE.md", None)]
    assert [(s.path.name, s.reason) for s in memory.skipped] == [
        ("credentials", "outside_project"),
        ("outside.md", "outside_project"),
        ("link.md", "outside_project"),
    ]


def test_a_cycle_reads_each_file_once(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    first = write(root / "a.md", "a imports @b.md")
    write(root / "b.md", "b imports @a.md and itself @b.md")
    memory = project(first, root)
    assert loaded(memory) == [("a.md", None), ("b.md", "a.md")]
    assert memory.skipped == (
        SkippedFile(
            root / "a.md",
            "cycle",
            "imports itself through a chain of imports; read once",
            root / "b.md",
        ),
        SkippedFile(
            root / "b.md",
            "cycle",
            "imports itself through a chain of imports; read once",
            root / "b.md",
        ),
    )


def test_imports_go_five_hops_deep_and_no_further(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for level in range(7):
        write(root / f"level{level}.md", f"level {level} @level{level + 1}.md")
    memory = project(root / "level0.md", root)
    assert [file.path.name for file in memory.files] == [f"level{n}.md" for n in range(6)]
    assert memory.skipped == (
        SkippedFile(
            root / "level6.md",
            "too_deep",
            "not imported: more than 5 imports deep",
            root / "level5.md",
        ),
    )
    shallow = project(root / "level0.md", root, MemoryLimits(max_import_depth=1))
    assert [file.path.name for file in shallow.files] == ["level0.md", "level1.md"]


def test_a_missing_import_is_a_note_never_an_error(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    agents = write(root / "AGENTS.md", "Ask @alice, read @docs/gone.md.")
    memory = project(agents, root)
    assert loaded(memory) == [("AGENTS.md", None)]
    assert memory.notes == (
        f"{root / 'alice,'} (imported by {agents}): @alice, names no file",
        f"{root / 'docs' / 'gone.md.'} (imported by {agents}): @docs/gone.md. names no file",
    )


def test_text_that_is_not_text_and_targets_that_are_not_files_are_skipped(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    agents = write(root / "AGENTS.md", "@logo.png @src")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x00\x00")
    (root / "src").mkdir()
    memory = project(agents, root)
    assert [(s.path.name, s.reason) for s in memory.skipped] == [
        ("logo.png", "not_text"),
        ("src", "not_a_file"),
    ]


def test_a_file_over_its_cap_is_cut_and_the_cut_is_said(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    body = "".join(f"line {n:03}\n" for n in range(100))  # 900 characters
    agents = write(root / "AGENTS.md", body)
    memory = project(agents, root, MemoryLimits(max_file_chars=300))
    (file,) = memory.files
    assert (file.cut, file.size) == (True, 900)
    assert file.text == body[:297]  # whole lines only
    assert memory.notes == (f"{agents}: cut to its first 297 characters",)


def test_over_the_total_the_files_read_first_give_way(tmp_path: Path) -> None:
    """Later files take precedence, so the earliest is cut, and the one before it left out."""
    root = tmp_path / "repo"
    files = [write(root / f"f{n}.md", f"{n}" * 1_500) for n in range(4)]
    memory = load_memory(
        [Candidate(path, "project", root) for path in files],
        home=root,
        limits=MemoryLimits(max_total_chars=4_200),
    )
    assert [(f.path.name, len(f.text), f.cut) for f in memory.files] == [
        ("f1.md", 1_200, True),
        ("f2.md", 1_500, False),
        ("f3.md", 1_500, False),
    ]
    assert memory.skipped == (
        SkippedFile(
            files[0],
            "over_total",
            "left out: the memory files reached 4,200 characters in all",
        ),
    )
