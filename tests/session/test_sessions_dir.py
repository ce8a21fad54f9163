"""`QueryOptions.sessions_dir`: a session kept in a folder of the caller's choosing (its
transcript, its own files), found there again by resume and continue, and nothing written to
the config folder's projects (`stayer batch` gives each task such a folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stayer.errors import ConfigError
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.options import QueryOptions
from stayer.session.session import Session


def options(tmp_path: Path, *replies: str, **more: Any) -> QueryOptions:
    model = ScriptedProvider([text(reply) for reply in replies])
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return QueryOptions(cwd=work, provider=model, permission_mode="acceptEdits", env=env, **more)


async def test_a_session_is_kept_and_found_again_in_its_sessions_dir_only(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    async with Session(options(tmp_path, "noted", sessions_dir=kept)) as session:
        async for _ in session.submit("note this"):
            pass
        context = session.setup.params.tool_context
        assert context.session_dir == kept / session.session_id  # large results, prompts
    assert session.transcript_path == kept / f"{session.session_id}.jsonl"
    assert session.transcript_path.is_file()
    assert not (tmp_path / "config" / "projects").exists()

    async with Session(options(tmp_path, sessions_dir=kept, continue_session=True)) as again:
        assert again.session_id == session.session_id
        assert len(again.history) == len(session.history)
    async with Session(options(tmp_path, sessions_dir=kept, resume=session.session_id)) as again:
        assert again.session_id == session.session_id
    with pytest.raises(ConfigError, match="no saved session to continue"):
        Session(options(tmp_path, continue_session=True))  # not where sessions usually are


async def test_a_relative_sessions_dir_is_taken_from_the_working_directory(
    tmp_path: Path,
) -> None:
    async with Session(options(tmp_path, "ok", sessions_dir="runs/one")) as session:
        async for _ in session.submit("go"):
            pass
    folder = tmp_path / "work" / "runs" / "one"
    assert session.transcript_path == folder / f"{session.session_id}.jsonl"


def test_a_sessions_dir_goes_to_a_worker_as_plain_data(tmp_path: Path) -> None:
    spec = QueryOptions(sessions_dir=tmp_path / "kept").to_spec()
    assert spec == {"sessions_dir": str(tmp_path / "kept")}
    assert Path(QueryOptions.from_spec(spec).sessions_dir or "") == tmp_path / "kept"


def test_a_sessions_dir_that_cannot_be_made_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ConfigError) as refused:
        Session(options(tmp_path, sessions_dir=tmp_path / "a-file" / "kept"))
    assert str(refused.value).startswith(f"cannot keep sessions in {tmp_path / 'a-file' / 'kept'}")
    assert "set sessions_dir to a folder you can write" in str(refused.value)
