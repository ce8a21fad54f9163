"""SubagentStart and SubagentStop hooks fire as a subagent starts and ends, with the input
Claude Code gives them; a SubagentStop block sends the child back to work, as Stop does."""

from __future__ import annotations

from pathlib import Path

import stayer
from stayer.events import Finished, HookRan, Terminal
from stayer.providers.scripted import ScriptedProvider, text, tool_call

from .hook_kit import hook, kit
from .subagent_kit import Router, agent, nested, options
from .test_subagents import run


async def test_subagent_hooks_fire_as_a_child_starts_and_ends_and_a_stop_block_sends_it_back(
    tmp_path: Path,
) -> None:
    hooks = kit(tmp_path)
    hooks.install(
        {
            "SubagentStart": [hook(hooks.command("print", "hi"), matcher="scout")],
            "SubagentStop": [hook(hooks.command("block-unless-active"), matcher="scout")],
            "Stop": [hook(hooks.command("print", "lead stops"))],
        }
    )
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "look", "subagent_type": "scout"}, id="t1"), text("ok")]
    )
    scout = ScriptedProvider([text("first try"), text("tests run: all pass")])
    router = Router(lead, SCOUT=scout)
    opts = options(hooks.project, router, env=hooks.env, agents={"scout": agent("SCOUT")})
    async with stayer.Session(opts) as session:
        events = await run(session, "go")
        lead_id = session.session_id

    wrapped = nested(events)
    agent_id = wrapped[0].agent_id
    started, first_stop, second_stop = hooks.of("SubagentStart") + hooks.of("SubagentStop")
    assert {k: started[k] for k in ("session_id", "agent_id", "agent_type")} == {
        "session_id": lead_id,
        "agent_id": agent_id,
        "agent_type": "scout",
    }
    assert started["cwd"] == str(hooks.project)
    assert (first_stop["stop_hook_active"], second_stop["stop_hook_active"]) == (False, True)
    assert second_stop["last_assistant_message"] == "tests run: all pass"
    assert (second_stop["session_id"], second_stop["agent_id"]) == (lead_id, agent_id)
    assert "agent_transcript_path" in second_stop
    assert [data["hook_event_name"] for data in hooks.inputs()].count("Stop") == 1  # the lead's
    # the child went back to work once: its second answer is its report
    (inner,) = [e.event for e in wrapped if isinstance(e.event, Finished)]
    assert inner.terminal is Terminal.COMPLETED and inner.result_text == "tests run: all pass"
    assert "run the tests first" in str(scout.requests[1].messages[-1])
    assert any(isinstance(e.event, HookRan) for e in wrapped)  # its SubagentStop runs, nested
    assert any(isinstance(e, HookRan) and e.hook_event == "SubagentStart" for e in events)
    router.assert_done()
