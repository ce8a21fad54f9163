"""`opusplan` over the wire: Opus answers while the session is in plan mode, Sonnet once the
plan is accepted, and Opus again when the session goes back to plan mode."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

import stayer
from stayer.events import Event, PermissionRequested
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.ask_model import model_asker
from stayer.session.options import QueryOptions
from tests.e2e.test_model_fallback import system_text
from tests.fakes.loop_harness import make_params
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


async def allow(_request: PermissionRequested) -> Decision:
    return Decision("allow")


async def test_the_request_model_follows_the_permission_mode(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with FakeModelServer() as server:
        server.enqueue(
            reply(ToolCall("toolu_plan", "ExitPlanMode", {"plan": "1. Say hi."})),
            reply("hi"),
            reply("planning again"),
        )
        env = {**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config")}
        options = QueryOptions(
            cwd=work, env=env, model="opusplan", permission_mode="plan", can_use_tool=allow
        )
        async with stayer.Session(options) as session:
            first: list[Event] = [event async for event in session.submit("plan it")]
            assert session.permission_mode == "default"
            session.set_permission_mode("plan")
            second: list[Event] = [event async for event in session.submit("and again")]
        assert first and second
        assert [request.model for request in server.requests] == [
            "claude-opus-5-5",  # plan mode
            "claude-sonnet-5-5",  # the plan accepted: default mode
            "claude-opus-5-5",  # plan mode again
        ]
        named = [  # the system prompt names the model that answers
            [line for line in system_text(request.body) if line.startswith("Model:")]
            for request in server.requests
        ]
        assert named == [[f"Model: {request.model}"] for request in server.requests]


async def test_a_tools_question_goes_to_the_small_model_not_the_plan_mode_one(
    tmp_path: Path,
) -> None:
    # WebFetch asks its small model; opusplan's switch is the main model's, not the asker's
    model = ScriptedProvider([text("a short answer")])
    params = replace(make_params(model, [], tmp_path), live_model=lambda: "claude-opus-5-5")
    ask = model_asker(params, "claude-haiku-5-5")

    answer = await ask("What does the page say?", system="Answer briefly.", purpose="webfetch")

    assert [request.model for request in model.requests] == ["claude-haiku-5-5"]
    assert (answer.text, answer.spent.model) == ("a short answer", "claude-haiku-5-5")
