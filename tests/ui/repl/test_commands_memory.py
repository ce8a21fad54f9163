"""/memory (the memory file in the person's editor) and /init (the model asked to write a
starter STAYER.md)."""

from __future__ import annotations

from pathlib import Path

from stayer.driver import Submit
from tests.fakes.model_server import FakeModelServer
from tests.ui.repl.commands_kit import RecordingRepl, opened, run


def repository(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    (top / "src" / "app").mkdir(parents=True)
    (top / ".git").mkdir()  # a repository's top level, as the memory files see it
    return top


async def test_memory_makes_a_stayer_md_at_the_top_and_keeps_what_was_written(
    tmp_path: Path,
) -> None:
    top = repository(tmp_path)
    with FakeModelServer() as server:
        async with opened(server, top / "src" / "app") as session:
            repl = RecordingRepl(session, on_edit=lambda path: path.write_text("Use make.\n"))
            assert await run(repl, "/memory") == [
                f"Saved {top / 'STAYER.md'}; sessions started from now on read it"
            ]
            assert repl.edited == [top / "STAYER.md"]
            assert (top / "STAYER.md").read_text() == "Use make.\n"
            # the file exists now: it is opened again, and kept though left as it was
            again = RecordingRepl(session)
            assert await run(again, "/memory") == [
                f"Saved {top / 'STAYER.md'}; sessions started from now on read it"
            ]
            assert (top / "STAYER.md").read_text() == "Use make.\n"


async def test_a_new_memory_file_left_empty_is_not_kept(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:  # no repository: the directory itself
            repl = RecordingRepl(session)
            assert await run(repl, "/memory") == [
                f"{tmp_path / 'STAYER.md'} was left empty, so it is not kept"
            ]
    assert repl.edited == [tmp_path / "STAYER.md"]
    assert not (tmp_path / "STAYER.md").exists()


async def test_memory_opens_the_file_in_use_nearest_the_directory(tmp_path: Path) -> None:
    top = repository(tmp_path)
    (top / "CLAUDE.md").write_text("Claude's notes\n")
    with FakeModelServer() as server:
        async with opened(server, top / "src" / "app") as session:
            repl = RecordingRepl(session)
            await run(repl, "/memory")
            (top / "src" / "AGENTS.md").write_text("nearer\n")
            await run(repl, "/memory")
            (top / "src" / "STAYER.md").write_text("ours, beside it\n")
            await run(repl, "/memory")
    assert repl.edited == [top / "CLAUDE.md", top / "src" / "AGENTS.md", top / "src" / "STAYER.md"]
    assert not (top / "STAYER.md").exists()


async def test_memory_will_not_open_a_file_that_leads_out_of_the_project(tmp_path: Path) -> None:
    top = repository(tmp_path)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not the project's\n")
    (top / "STAYER.md").symlink_to(outside)
    with FakeModelServer() as server:
        async with opened(server, top) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/memory") == [
                f"/memory: {top / 'STAYER.md'} leads out of the project, to {outside}; "
                "open it yourself"
            ]
    assert repl.edited == []


async def test_memory_user_opens_the_users_own_file(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session, on_edit=lambda path: path.write_text("Be brief.\n"))
            await run(repl, "/memory user")
            assert await run(repl, "/memory everything") == [
                "Write /memory for the project's memory file, or /memory user for your own"
            ]
    assert repl.edited == [tmp_path / "config" / "STAYER.md"]
    assert (tmp_path / "config" / "STAYER.md").read_text() == "Be brief.\n"


async def test_memory_and_init_wait_for_the_run_to_end(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session, running=True)
            for name in ("memory", "init"):
                [line] = await run(repl, f"/{name}")
                assert line.startswith(f"/{name} cannot run while the agent is working")
    assert repl.edited == [] and repl.sent == []


async def test_init_asks_the_model_to_write_a_starter_stayer_md(tmp_path: Path) -> None:
    top = repository(tmp_path)
    (top / "AGENTS.md").write_text("Agents: run tox.\n")
    with FakeModelServer() as server:
        async with opened(server, top / "src") as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/init") == [
                f"Asking the model to look over the repository and write {top / 'STAYER.md'}"
            ]
            (top / "STAYER.md").write_text("# Notes\n")
            assert await run(repl, "/init") == [
                f"Asking the model to look over the repository and improve {top / 'STAYER.md'}"
            ]
    first, second = repl.sent
    assert isinstance(first, Submit) and isinstance(first.prompt, str)
    assert isinstance(second, Submit) and isinstance(second.prompt, str)
    assert first.prompt.startswith(f"Look over this repository and write {top / 'STAYER.md'} ")
    for topic in ("build", "tests", "linters", "layout", "conventions"):
        assert topic in first.prompt
    assert "The project also has AGENTS.md" in first.prompt
    assert "exists already" not in first.prompt
    assert "STAYER.md exists already: read it first, then improve it" in second.prompt


async def test_memory_says_so_when_the_name_is_taken_by_a_folder(tmp_path: Path) -> None:
    (tmp_path / "STAYER.md").mkdir()
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/memory") == [
                f"/memory: {tmp_path / 'STAYER.md'} is not a file; move it away, or edit the "
                "file you mean"
            ]
    assert repl.edited == []


async def test_memory_says_so_when_the_file_is_a_loop_of_links(tmp_path: Path) -> None:
    (tmp_path / "STAYER.md").symlink_to(tmp_path / "STAYER.md")
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/memory") == [
                f"/memory: {tmp_path / 'STAYER.md'} is a link that leads nowhere; remove it or "
                "fix it"
            ]
    assert repl.edited == []
