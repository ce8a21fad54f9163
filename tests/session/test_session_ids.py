"""Which saved session a Session goes on with: its folder may stand for two directories, a
deep directory's folder name is cut, and a given session id names one new session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stayer.errors import ConfigError
from stayer.messages import TextBlock
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.listings import is_listing
from stayer.session.options import QueryOptions
from stayer.session.paths import MAX_SLUG_CHARS, config_root, project_slug
from stayer.session.session import Session
from stayer.session.transcript import load, summaries


def options(config: Path, cwd: Path, *replies: str, **more: Any) -> QueryOptions:
    model = ScriptedProvider([text(reply) for reply in replies])
    env = {"STAYER_CONFIG_DIR": str(config)}
    return QueryOptions(cwd=cwd, provider=model, permission_mode="acceptEdits", env=env, **more)


async def run(opts: QueryOptions, prompt: str) -> Session:
    """One prompt in a new session; the closed session is returned for its id and path."""
    async with Session(opts) as session:
        async for _ in session.submit(prompt):
            pass
    return session


def texts(session: Session) -> list[str]:
    return [
        b.text
        for m in session.history
        for b in m.content
        if isinstance(b, TextBlock) and not is_listing(b.text)  # what the session adds
    ]


def twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two directories whose sessions share one folder."""
    underscore, dot = tmp_path / "my_proj", tmp_path / "my.proj"
    underscore.mkdir()
    dot.mkdir()
    assert project_slug(underscore) == project_slug(dot)
    return underscore, dot


async def test_continue_and_the_listing_keep_to_sessions_begun_in_this_directory(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config"
    underscore, dot = twins(tmp_path)
    first = await run(options(config, underscore, "plan A"), "the plan for my_proj")

    with pytest.raises(ConfigError, match="no saved session to continue in "):
        Session(options(config, dot, continue_session=True))
    folder = config / "projects" / project_slug(dot)
    assert summaries(folder, cwd=dot) == []

    second = await run(options(config, dot, "plan B"), "the plan for my.proj")
    assert [s.session_id for s in summaries(folder, cwd=dot)] == [second.session_id]
    assert [s.session_id for s in summaries(folder, cwd=underscore)] == [first.session_id]
    assert [s.session_id for s in summaries(folder, cwd=None)] == [
        second.session_id,
        first.session_id,
    ]
    # the newer session of the folder is my.proj's; my_proj still goes on with its own
    async with Session(options(config, underscore, continue_session=True)) as resumed:
        assert resumed.session_id == first.session_id
        assert texts(resumed) == ["the plan for my_proj", "plan A"]
        assert resumed.warnings == ()


async def test_resuming_by_id_a_session_recorded_elsewhere_goes_on_with_a_warning(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config"
    underscore, dot = twins(tmp_path)
    first = await run(options(config, underscore, "plan A"), "the plan for my_proj")

    async with Session(options(config, dot, resume=first.session_id)) as resumed:
        assert resumed.session_id == first.session_id
        assert texts(resumed) == ["the plan for my_proj", "plan A"]
        assert resumed.warnings == (
            f"session {first.session_id} was recorded in {underscore}, not here ({dot}); "
            "going on here",
        )


async def test_a_deep_directory_gets_a_cut_folder_name_that_still_tells_it_apart(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config"
    deep = tmp_path / ("d" * 200) / ("e" * 100)
    deeper = tmp_path / ("d" * 200) / ("f" * 100)
    deep.mkdir(parents=True)
    deeper.mkdir(parents=True)
    session = await run(options(config, deep, "hi"), "hello")

    path = session.transcript_path
    assert path is not None and load(path).messages == session.history
    slug = path.parent.name
    assert len(slug) < 255
    assert slug[: MAX_SLUG_CHARS + 1] == project_slug(deep)[:MAX_SLUG_CHARS] + "-"
    assert project_slug(deep) != project_slug(deeper)
    assert project_slug(deep)[:MAX_SLUG_CHARS] == project_slug(deeper)[:MAX_SLUG_CHARS]
    async with Session(options(config, deep, continue_session=True)) as resumed:
        assert resumed.session_id == session.session_id


def test_short_folder_names_are_kept_whole() -> None:
    path = Path("/" + "a" * (MAX_SLUG_CHARS - 1))
    assert project_slug(path) == "-" + "a" * (MAX_SLUG_CHARS - 1)
    longer = Path("/" + "a" * MAX_SLUG_CHARS)
    assert len(project_slug(longer)) > MAX_SLUG_CHARS + 1


async def test_an_upper_case_session_id_is_kept_in_lower_case_and_can_be_resumed(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config"
    given = "ABCDEF01-2345-6789-ABCD-EF0123456789"
    session = await run(options(config, tmp_path, "one", session_id=given), "first")

    assert session.session_id == given.lower()
    assert session.transcript_path == (
        config_root({"STAYER_CONFIG_DIR": str(config)})
        / "projects"
        / project_slug(tmp_path)
        / f"{given.lower()}.jsonl"
    )
    for spelling in (given, given.lower()):
        async with Session(options(config, tmp_path, resume=spelling)) as resumed:
            assert resumed.session_id == given.lower()
            assert texts(resumed) == ["first", "one"]


async def test_the_id_of_a_saved_session_cannot_start_another(tmp_path: Path) -> None:
    config = tmp_path / "config"
    session_id = "11111111-2222-3333-4444-555555555555"
    session = await run(options(config, tmp_path, "A", session_id=session_id), "conversation A")
    assert session.transcript_path is not None
    before = session.transcript_path.read_bytes()

    for spelling in (session_id, session_id.upper()):
        with pytest.raises(ConfigError) as refused:
            Session(options(config, tmp_path, "B", session_id=spelling))
        assert str(refused.value) == (
            f"session {session_id} already exists; use --resume {session_id} to go on with it, "
            "or give another id"
        )
    assert session.transcript_path.read_bytes() == before
    # a session that writes nothing may take the id
    await run(options(config, tmp_path, "C", session_id=session_id, persist_session=False), "C")
    assert session.transcript_path.read_bytes() == before


@pytest.mark.parametrize("by_id", [True, False])
async def test_a_session_id_with_resume_needs_fork_session_and_names_the_fork(
    tmp_path: Path, by_id: bool
) -> None:
    config = tmp_path / "config"
    first = await run(options(config, tmp_path, "one"), "first")
    how: dict[str, Any] = {"resume": first.session_id} if by_id else {"continue_session": True}
    wanted = "22222222-3333-4444-5555-666666666666"

    with pytest.raises(ConfigError) as refused:
        Session(options(config, tmp_path, session_id=wanted, **how))
    assert str(refused.value) == (
        "a session id with --resume or --continue needs --fork-session (the fork gets the id); "
        "leave the id out to go on under the resumed session's own"
    )
    fork = await run(
        options(config, tmp_path, "two", session_id=wanted, fork_session=True, **how), "more"
    )
    assert fork.session_id == wanted and fork.transcript_path is not None
    assert fork.transcript_path.stem == wanted
    assert texts(fork) == ["first", "one", "more", "two"]
    assert first.transcript_path is not None
    assert load(first.transcript_path).messages == first.history  # left as it was
