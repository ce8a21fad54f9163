"""The project's prompt history: kept across sessions in one file per project, entries whole
(many lines, large pastes), newest last, capped on load, safe with two writers, and a torn or
garbled line costs only itself."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.history import History
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from stayer.session.paths import project_slug
from stayer.ui.repl.input import MAX_ENTRIES, ProjectHistory, history_file
from stayer.ui.repl.paste import Pastes, paste_bindings


def loaded(history: History) -> list[str]:
    """What a prompt session sees: the entries oldest first, as Up walks them backwards."""

    async def load() -> list[str]:
        return [entry async for entry in history.load()]

    return list(reversed(asyncio.run(load())))


def test_the_file_is_per_project_under_the_config_root_and_apart_from_transcripts(
    tmp_path: Path,
) -> None:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    one = history_file(tmp_path / "one", env)
    two = history_file(tmp_path / "two", env)
    assert one == tmp_path / "config" / "history" / f"{project_slug(tmp_path / 'one')}.jsonl"
    assert one != two
    # transcripts are `projects/<slug>/*.jsonl`: the history must not be taken for one
    assert "projects" not in one.parts


def test_entries_come_back_whole_in_a_new_session(tmp_path: Path) -> None:
    path = tmp_path / "h" / "history.jsonl"
    entries = [
        "first",
        "two\nlines",
        "tabs\tand\r\nCRLF and unicode é 漢字 🙂 and a \\ backslash",
        "x" * 100_000,
        '{"json": "looking"}',
    ]
    writer = ProjectHistory(path)
    for entry in entries:
        writer.append_string(entry)
    assert path.read_bytes().count(b"\n") == len(entries)  # one line per entry
    assert loaded(ProjectHistory(path)) == entries


def test_a_missing_file_is_an_empty_history(tmp_path: Path) -> None:
    assert loaded(ProjectHistory(tmp_path / "none.jsonl")) == []


def test_only_the_newest_entries_are_loaded(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    # long entries, so the file spans many of the blocks it is read back in
    lines = [json.dumps(f"{i} " + "y" * 300) for i in range(MAX_ENTRIES + 250)]
    path.write_text("\n".join(lines) + "\n")
    got = loaded(ProjectHistory(path))
    assert len(got) == MAX_ENTRIES
    assert got[0].startswith("250 ")
    assert got[-1].startswith(f"{MAX_ENTRIES + 249} ")
    assert loaded(ProjectHistory(path, max_entries=3)) == [json.loads(x) for x in lines[-3:]]


def test_torn_and_garbled_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_bytes(b'"good one"\nnot json at all\n\n{"an": "object"}\n"also good"\n"torn en')
    history = ProjectHistory(path)
    assert loaded(history) == ["good one", "also good"]
    # the next entry starts on a line of its own: the torn one does not swallow it
    history.append_string("after the tear")
    assert loaded(ProjectHistory(path)) == ["good one", "also good", "after the tear"]


def test_invalid_utf8_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_bytes(b'"before"\n"\xff\xfe bad"\n"after"\n')
    assert loaded(ProjectHistory(path)) == ["before", "after"]


def test_an_unwritable_history_does_not_stop_the_session(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    history = ProjectHistory(blocker / "sub" / "history.jsonl")  # its folder cannot exist
    history.append_string("still fine")
    assert history.get_strings() == ["still fine"]


def _append_many(path: str, tag: str, count: int, start: multiprocessing.synchronize.Event) -> None:
    history = ProjectHistory(Path(path))
    start.wait()
    for index in range(count):
        history.append_string(f"{tag} {index}\n" + tag * 5_000)


def test_two_processes_appending_at_once_lose_and_mangle_nothing(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    writers = [
        context.Process(target=_append_many, args=(str(path), tag, 200, start))
        for tag in ("a", "b")
    ]
    for writer in writers:
        writer.start()
    start.set()
    for writer in writers:
        writer.join(30)
        assert writer.exitcode == 0
    got = loaded(ProjectHistory(path))
    assert len(got) == 400
    for tag in ("a", "b"):
        mine = [entry for entry in got if entry.startswith(f"{tag} ")]
        assert mine == [f"{tag} {index}\n" + tag * 5_000 for index in range(200)]


def test_a_prompt_with_a_large_paste_is_recalled_whole_in_a_later_session(
    tmp_path: Path,
) -> None:
    """Through a real prompt session: the buffer holds the placeholder, the history the paste."""
    path = tmp_path / "history.jsonl"
    pastes = Pastes()
    big = "\n".join(f"line {n}\twith tab" for n in range(500))

    async def type_and_paste() -> str:
        with create_pipe_input() as pipe:
            session: PromptSession[str] = PromptSession(
                input=pipe,
                output=DummyOutput(),
                history=ProjectHistory(path, expand=pastes.expand),
                key_bindings=paste_bindings(pastes),
            )
            text = "look: \x1b[200~" + big.replace("\n", "\r") + "\x1b[201~\r"
            sending = asyncio.get_running_loop().run_in_executor(None, pipe.send_text, text)
            typed = await session.prompt_async()
            await sending
            return typed

    assert asyncio.run(type_and_paste()) == "look: [pasted 500 lines]"
    pastes.clear()  # a later session knows nothing of this one's pastes
    assert loaded(ProjectHistory(path)) == [f"look: {big}"]


def test_loading_stops_at_the_byte_cap(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(f"{i:03} " + "z" * 95) + "\n" for i in range(100)))
    got = loaded(ProjectHistory(path, max_bytes=1_000))  # each line is 102 bytes
    assert [entry[:3] for entry in got] == [f"{i:03}" for i in range(91, 100)]
