"""What the skill and command tests share: a session whose catalog holds the skills a test
gives (put in place of the one it found, as the file readers would have read them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec.structs import replace

import stayer
from stayer.agents.model import Catalog, Skill
from stayer.events import Event
from stayer.providers.scripted import ScriptedProvider
from stayer.session.options import QueryOptions


def skill(name: str, body: str, folder: Path, **more: Any) -> Skill:
    """A skill record as the readers make one from `folder/name/SKILL.md`."""
    base = folder / name
    base.mkdir(parents=True, exist_ok=True)
    fields: dict[str, Any] = {"description": f"The {name} skill.", "kind": "skill"}
    fields.update(more)
    return Skill(
        name=name,
        body=body,
        scope="project",
        source=base / "SKILL.md",
        base_dir=base,
        **fields,
    )


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config"), "STAYER_NO_PREAPPROVED_HOSTS": "1"}
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return QueryOptions(cwd=work, provider=model, env=env, persist_session=False, **more)


def with_skills(session: stayer.Session, *skills: Skill) -> stayer.Session:
    """`session` with `skills` in its catalog (its agents kept)."""
    resolved = session.setup.resolved
    assert resolved is not None
    catalog = Catalog(agents=resolved.catalog.agents, skills=skills)
    session.setup = replace(session.setup, resolved=replace(resolved, catalog=catalog))
    return session


async def submit(session: stayer.Session, prompt: str = "go") -> list[Event]:
    return [event async for event in session.submit(prompt)]
