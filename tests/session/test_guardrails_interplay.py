"""Where the guardrails meet: hooks and asking, deny and ask rules against shell reads and
searches, folders whose names look like patterns, plan mode, and interrupting a hanging hook."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from stayer.events import PermissionRequested
from stayer.loop.state import ToolCall
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.assemble import Setup
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare
from stayer.tools.base import Tool
from tests.session.hook_kit import Kit, hook, kit, run


@pytest.fixture
def k(tmp_path: Path) -> Kit:
    return kit(tmp_path)


def rewrite_to(command: str) -> str:
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "updatedInput": {"command": command},
            }
        }
    )


async def test_hook_rewrite_survives_a_decider_allow(k: Kit) -> None:
    # A PreToolUse hook rewrites `touch bad` to `touch good`; the default mode asks; the
    # decider approves (plain allow). The call must run the hook's rewrite.
    bad, good = k.project / "bad", k.project / "good"
    k.install({"PreToolUse": [hook(k.command("json", rewrite_to(f"touch {good}")))]})
    seen: list[PermissionRequested] = []

    async def decider(request: PermissionRequested) -> Decision:
        seen.append(request)
        return Decision("allow")

    steps = [tool_call("Bash", {"command": f"touch {bad}"}, id="toolu_0"), text("done")]
    await run(k, steps, can_use_tool=decider)
    assert seen, "default mode asks"
    assert good.exists() and not bad.exists(), "the hook's rewrite was lost after the ask"
    assert seen[0].input == {"command": f"touch {good}"}, "the person is shown what will run"


def _setup(root: Path, deny: list[str], mode: str = "bypassPermissions") -> Setup:
    return prepare(
        QueryOptions(
            cwd=str(root),
            provider=ScriptedProvider([]),
            disallowed_tools=deny,
            permission_mode=mode,
            persist_session=False,
        )
    )


async def _decide(
    setup: Setup, name: str, inp: dict[str, object]
) -> tuple[Decision, Tool[Any], Any]:
    tool = setup.params.tools.tools()[name]
    v = tool.input_model.model_validate(inp)
    return await setup.params.can_use_tool(ToolCall(tool, "t1", v)), tool, v


async def test_a_grep_of_a_subfolder_leaves_out_a_file_denied_at_any_depth(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / ".env").write_text("TOKEN=envsecret\n")
    setup = _setup(tmp_path, ["Read(.env)"])
    d, tool, v = await _decide(
        setup, "Grep", {"pattern": "TOKEN", "path": "src", "output_mode": "content"}
    )
    if d.behavior == "allow":
        out = await tool.call(v, setup.params.tool_context)
        assert "envsecret" not in str(out.content)


async def test_a_shell_grep_r_of_a_subfolder_holding_a_denied_file_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / ".env").write_text("TOKEN=envsecret\n")
    setup = _setup(tmp_path, ["Read(.env)"])
    d, _, _ = await _decide(setup, "Bash", {"command": "grep -r TOKEN src"})
    assert d.behavior != "allow"


async def test_cd_then_cat_in_one_command(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "key.json").write_text("{}")
    setup = _setup(tmp_path, ["Read(config/key.json)"])
    d, _, _ = await _decide(setup, "Bash", {"command": "cd config && cat key.json"})
    assert d.behavior != "allow"


async def test_a_cd_from_an_earlier_call_is_followed_by_the_next_reads_check(
    tmp_path: Path,
) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "key.json").write_text("SECRET")
    setup = _setup(tmp_path, ["Read(config/key.json)"])
    d, tool, v = await _decide(setup, "Bash", {"command": "cd config"})
    assert d.behavior == "allow"
    await tool.call(v, setup.params.tool_context)
    d, tool, v = await _decide(setup, "Bash", {"command": "cat key.json"})
    if d.behavior == "allow":
        out = await tool.call(v, setup.params.tool_context)
        assert "SECRET" not in str(out.content)


@pytest.mark.parametrize("command", ["ls *.py", "make -j$(nproc)", "echo $HOME", "cd src && ls"])
async def test_ordinary_commands_with_a_dotenv_read_rule(tmp_path: Path, command: str) -> None:
    (tmp_path / "src").mkdir()
    setup = _setup(tmp_path, ["Read(.env)"])
    d, _, _ = await _decide(setup, "Bash", {"command": command})
    assert d.behavior == "allow", d.reason


@pytest.mark.parametrize(
    "command", ['git commit -m "$(date)"', "export X=1", "source .venv/bin/activate && pytest"]
)
async def test_what_the_parse_cannot_see_through_is_refused_while_a_read_rule_stands(
    tmp_path: Path, command: str
) -> None:
    # By design (fail closed): a word known only when the line runs, or a line the parse
    # cannot read, might name the denied file; the model is told to name files plainly.
    setup = _setup(tmp_path, ["Read(.env)"])
    d, _, _ = await _decide(setup, "Bash", {"command": command})
    assert d.behavior == "deny" and "cannot be told" in d.reason


@pytest.mark.parametrize("folder", ["proj[1]", "proj?", "pro*j"])
async def test_a_deny_rule_still_denies_in_a_folder_whose_name_has_glob_characters(
    tmp_path: Path, folder: str
) -> None:
    root = tmp_path / folder
    root.mkdir()
    (root / ".env").write_text("TOKEN=1\n")
    setup = _setup(root, ["Read(.env)", "Edit(.env)"])
    d, _, _ = await _decide(setup, "Read", {"file_path": ".env"})
    assert d.behavior == "deny", d


async def test_settings_deny_rule_from_a_settings_file_in_a_bracketed_folder(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj[1]"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(/secrets/**)"]}})
    )
    (root / "secrets").mkdir()
    (root / "secrets" / "k").write_text("x")
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "u1"), "CLAUDE_CONFIG_DIR": str(tmp_path / "u2")}
    setup = prepare(
        QueryOptions(cwd=str(root), env=env, provider=ScriptedProvider([]), persist_session=False)
    )
    d, _, _ = await _decide(setup, "Read", {"file_path": "secrets/k"})
    assert d.behavior == "deny", d


async def test_an_interrupt_while_a_stop_hook_hangs_ends_the_run_promptly(k: Kit) -> None:
    import asyncio
    import time

    import stayer
    from stayer.loop.abort import AbortSignal

    started = k.project / "stop-started"
    os.mkfifo(started)  # the hook writes to it once it runs; reading it waits for that
    k.install({"Stop": [hook(f"echo go > {started}; exec sleep 30", timeout=20)]})
    abort = AbortSignal()

    async def later() -> None:
        await asyncio.to_thread(started.read_text)
        abort.abort()

    t = asyncio.create_task(later())
    began = time.monotonic()
    opts = QueryOptions(
        cwd=k.project,
        env=k.env,
        provider=stayer.ScriptedProvider([text("done")]),
        persist_session=False,
        abort=abort,
    )
    events = [e async for e in stayer.query("go", options=opts)]
    await t
    assert time.monotonic() - began < 5, f"took {time.monotonic() - began:.1f}s; {events[-1]}"


async def test_a_read_ask_rule_is_not_bypassed_by_cat(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"ask": ["Read(.env)"], "allow": ["Bash(cat:*)"]}})
    )
    (tmp_path / ".env").write_text("TOKEN=1\n")
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "u1"), "CLAUDE_CONFIG_DIR": str(tmp_path / "u2")}
    setup = prepare(
        QueryOptions(
            cwd=str(tmp_path), env=env, provider=ScriptedProvider([]), persist_session=False
        )
    )
    d, _, _ = await _decide(setup, "Read", {"file_path": ".env"})
    assert d.behavior == "ask"
    d, _, _ = await _decide(setup, "Bash", {"command": "cat .env"})
    assert d.behavior != "allow", "Read(.env) asks, but cat .env runs unasked"


@pytest.mark.parametrize(
    "command", ["git show HEAD:secrets/key.txt", "git show :.env", "find . -type f | xargs cat"]
)
async def test_read_only_commands_that_would_read_denied_files_are_refused(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("s3cret\n")
    (tmp_path / ".env").write_text("TOKEN=1\n")
    setup = _setup(tmp_path, ["Read(secrets/**)", "Read(.env)"], mode="default")
    d, _, _ = await _decide(setup, "Bash", {"command": command})
    assert d.behavior != "allow"


async def test_hook_allow_with_rewrite_keeps_rewrite_and_ask_rule_still_asks(k: Kit) -> None:
    # control: a hook allow does not answer an ask rule (passes today)
    k.install(
        {
            "PreToolUse": [
                hook(
                    k.command(
                        "json",
                        json.dumps(
                            {
                                "hookSpecificOutput": {
                                    "hookEventName": "PreToolUse",
                                    "permissionDecision": "allow",
                                }
                            }
                        ),
                    )
                )
            ]
        },
        permissions={"ask": ["Bash(touch:*)"]},
    )
    marker = k.project / "m"
    _events, _ = await run(
        k,
        [tool_call("Bash", {"command": f"touch {marker}"}, id="toolu_0"), text("done")],
        permission_mode="bypassPermissions",
    )
    assert not marker.exists()


async def test_plan_mode_refuses_a_protected_write_rather_than_asking(tmp_path: Path) -> None:
    setup = _setup(tmp_path, [], mode="plan")
    d, _, _ = await _decide(
        setup, "Edit", {"file_path": ".git/config", "old_string": "a", "new_string": "b"}
    )
    assert d.behavior == "deny" and "plan mode" in d.reason
