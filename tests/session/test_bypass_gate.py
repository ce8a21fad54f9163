"""Switching into bypassPermissions mid-session, Claude Code's rule kept by every way of
switching: only a session started in it, or opened with `allow_dangerously_skip_permissions`,
may; otherwise one line says so and the mode stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import stayer
from stayer.errors import ConfigError
from stayer.events import HookRan, PermissionRequested
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.tools.names import BASH
from tests.session.hook_kit import Kit, hook, kit, results

REFUSED = "bypassPermissions can only be switched to in a session started in it"


def opts(tmp_path: Path, **more: object) -> QueryOptions:
    given: dict[str, object] = {
        "cwd": tmp_path,
        "env": {"STAYER_CONFIG_DIR": str(tmp_path / "config")},
        "provider": ScriptedProvider([]),
        "persist_session": False,
        **more,
    }
    return QueryOptions(**given)  # type: ignore[arg-type]


async def test_a_session_not_started_in_bypass_cannot_switch_to_it(tmp_path: Path) -> None:
    async with stayer.Session(opts(tmp_path)) as session:
        session.set_permission_mode("acceptEdits")
        with pytest.raises(ConfigError, match=REFUSED):
            session.set_permission_mode("bypassPermissions")
        assert session.permission_mode == "acceptEdits"


@pytest.mark.parametrize(
    "given",
    [{"allow_dangerously_skip_permissions": True}, {"permission_mode": "bypassPermissions"}],
)
async def test_the_flag_or_a_start_in_bypass_allows_the_switch(
    tmp_path: Path, given: dict[str, object]
) -> None:
    async with stayer.Session(opts(tmp_path, **given)) as session:
        session.set_permission_mode("plan")
        session.set_permission_mode("bypassPermissions")
        assert session.permission_mode == "bypassPermissions"


async def test_settings_that_disable_bypass_win_over_the_flag(tmp_path: Path) -> None:
    # a repository's (or an administrator's) disableBypassPermissionsMode holds mid-session
    # too: the flag that allows a later switch does not reopen what the settings closed
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"disableBypassPermissionsMode": "disable"}})
    )
    async with stayer.Session(opts(tmp_path, allow_dangerously_skip_permissions=True)) as session:
        with pytest.raises(ConfigError, match="turned off by disableBypassPermissionsMode in"):
            session.set_permission_mode("bypassPermissions")
        assert session.permission_mode == "default"


async def test_a_deciders_switch_into_bypass_denies_its_call(tmp_path: Path) -> None:
    async def loosen(request: PermissionRequested) -> Decision:
        return Decision("allow", mode="bypassPermissions")

    model = ScriptedProvider([tool_call(BASH, {"command": "touch a"}), text("done")])
    options = opts(tmp_path, provider=model, can_use_tool=loosen)
    async with stayer.Session(options) as session:
        events = [event async for event in session.submit("go")]
        mode = session.permission_mode

    assert mode == "default" and not (tmp_path / "a").exists()
    ((said, error),) = results(events[-1])
    assert error and REFUSED in said


async def test_a_permission_request_hooks_set_mode_into_bypass_is_reported_not_applied(
    tmp_path: Path,
) -> None:
    k: Kit = kit(tmp_path)
    update = {"type": "setMode", "mode": "bypassPermissions", "destination": "session"}
    allow = {"behavior": "allow", "updatedPermissions": [update]}
    said = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                              "decision": allow}})  # fmt: skip
    k.install({"PermissionRequest": [hook(k.command("json", said))]})
    model = ScriptedProvider([tool_call(BASH, {"command": "touch a"}), text("done")])
    options = QueryOptions(cwd=k.project, env=k.env, provider=model, persist_session=False)
    async with stayer.Session(options) as session:
        events = [event async for event in session.submit("go")]
        mode = session.permission_mode

    assert mode == "default"
    assert (k.project / "a").exists()  # the call itself was allowed
    (failed,) = [e for e in events if isinstance(e, HookRan) and e.outcome == "error"]
    assert REFUSED in failed.message
