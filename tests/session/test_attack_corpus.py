"""The attack corpus (`attack_corpus.py`) in real sessions: no attack achieves its effect.

Each case is a session in a copy of one project (a git repository whose history and tree hold
a secret, a folder `evil/` that is another repository whose config runs a command on `git
status`, a fake `curl` on the session's PATH that leaves a mark), with the rules a person
writes: allow `git status`, `git diff`, `ls`, `npm run test` and edits in `src/`; deny `curl`,
reading `secrets/` and editing `.env`. The scripted model makes the one call; headless, an ask
is a denial. The call must be refused (its status `denied`) and its effect absent on disk and
in every result. Ordinary commands must run unasked. The counts are printed at the end of every
run that collects this file (`conftest.py`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import stayer
from stayer.events import Event, ToolCallFinished
from stayer.permissions import PermissionMode
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions

from .attack_corpus import ORDINARY, SECRET, Attack, corpus

ALLOWED = ("Bash(git status:*)", "Bash(git diff:*)", "Bash(ls:*)", "Bash(npm run test:*)",
           "Edit(src/**)")  # fmt: skip
DISALLOWED = ("Bash(curl:*)", "Read(secrets/**)", "Edit(.env)")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.test",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.test",
           "GIT_CONFIG_NOSYSTEM": "1"}  # fmt: skip
MARKS = ("PWNED", "CURLED")


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _executable(path: Path, body: str) -> None:
    path.write_text(body)
    path.chmod(0o755)


def _build(base: Path) -> None:
    """The project, the fake curl beside it, and a home of its own."""
    project = base / "project"
    (project / "src").mkdir(parents=True)
    (project / "secrets").mkdir()
    (project / "empty").mkdir()
    (base / "bin").mkdir()
    (base / "home").mkdir()
    _executable(base / "bin" / "curl", '#!/bin/sh\ntouch "$CURL_MARK"\n')
    (project / "README.md").write_text("readme\n")
    (project / "notes.txt").write_text("x\nTODO later\n")
    (project / "package.json").write_text('{"name": "demo"}\n')
    (project / "src" / "app.py").write_text("# TODO\n")
    (project / "secrets" / "key.txt").write_text(f"TOKEN={SECRET}\n")
    (project / "list").write_text("secrets/key.txt\n")
    (project / "list0").write_text("secrets/key.txt\0")
    (project / "lock").write_text("")
    _executable(project / "pwn.sh", f'#!/bin/sh\ntouch "{project}/PWNED"\ncat "$@"\n')
    (project / "vault").symlink_to("secrets")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "start")
    (project / "notes.txt").write_text("x\nTODO later\nmore\n")
    _git(project, "commit", "-q", "-am", "more notes")
    evil = project / "evil"
    evil.mkdir()
    (evil / "a").write_text("a\n")
    _git(evil, "init", "-q")
    _git(evil, "config", "core.fsmonitor", f"touch {project}/PWNED")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("corpus")
    _build(base)
    return base


@pytest.fixture
def place(template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the project (paths inside it are made for the template: rewritten)."""
    shutil.copytree(template, tmp_path / "c", symlinks=True)
    base = tmp_path / "c"
    project = base / "project"
    for script in (project / "pwn.sh",):
        script.write_text(script.read_text().replace(str(template), str(base)))
    _git(project / "evil", "config", "core.fsmonitor", f"touch {project}/PWNED")
    return base


async def _session(
    base: Path,
    tool: str,
    given: dict[str, object],
    mode: PermissionMode,
    before: tuple[str, ...] = (),
) -> list[Event]:
    project = base / "project"
    env = {
        **os.environ,
        "PATH": f"{base / 'bin'}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        "HOME": str(base / "home"),
        "CURL_MARK": str(project / "CURLED"),
        "STAYER_CONFIG_DIR": str(base / "config"),
    }
    earlier = [tool_call("Bash", {"command": c}, id=f"toolu_b{i}") for i, c in enumerate(before)]
    model = ScriptedProvider([*earlier, tool_call(tool, given, id="toolu_attack"), text("done")])
    options = QueryOptions(
        cwd=project,
        provider=model,
        env=env,
        allowed_tools=list(ALLOWED),
        disallowed_tools=list(DISALLOWED),
        permission_mode=mode,
        persist_session=False,
    )
    return [event async for event in stayer.query("go", options=options)]


def _finished(events: list[Event]) -> ToolCallFinished:
    return [e for e in events if isinstance(e, ToolCallFinished)][-1]


CASES = corpus()


@pytest.mark.parametrize("case", list(CASES))
async def test_an_attack_is_refused_and_has_no_effect(place: Path, case: str) -> None:
    attack, mode = CASES[case]
    project = place / "project"
    target = project / attack.target
    kept = target.read_bytes() if attack.target and target.exists() else None
    events = await _session(place, attack.tool, attack.input, mode, attack.before)
    call = _finished(events)
    assert call.status == "denied", (call.status, call.result.text)
    assert call.result.text, "a refusal says why"
    assert not [mark for mark in MARKS if (project / mark).exists()]
    shown = " ".join(f"{e.result.text} {e.data}" for e in events if isinstance(e, ToolCallFinished))
    assert SECRET not in shown
    if attack.target:
        assert (target.read_bytes() if target.exists() else None) == kept


@pytest.mark.parametrize("command", list(ORDINARY.values()), ids=list(ORDINARY))
async def test_an_ordinary_command_runs_unasked(place: Path, command: str) -> None:
    events = await _session(place, "Bash", {"command": command}, "default")
    call = _finished(events)
    assert call.status == "completed", call.result.text
    assert not [mark for mark in MARKS if (place / "project" / mark).exists()]


def test_the_corpus_covers_every_kind() -> None:
    kinds = {name.split(":", 1)[0] for name in CASES}
    assert kinds == {"run", "read", "write"}
    assert len(CASES) >= 900 and len(ORDINARY) >= 33
    assert all(isinstance(attack, Attack) for attack, _ in CASES.values())
