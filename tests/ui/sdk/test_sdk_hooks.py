"""The SDK's hooks as `initialize` registers them: each registered callback becomes a hook of
the session that asks the SDK with a `hook_callback` request over the control channel, and the
SDK's answer is applied as a settings hook's output is. An SDK that answers with an error, or
not in time, is a failed hook; events stayer never fires are named on stderr; a registration
of the wrong shape is refused in one line."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import stayer
from stayer.errors import ConfigError
from stayer.events import Event, Finished, HookRan
from stayer.providers.scripted import Reply, text, tool_call
from stayer.session.options import QueryOptions
from stayer.ui.sdk.control import ControlChannel, Frame
from stayer.ui.sdk.hooks import sdk_hooks
from tests.session.hook_kit import results


class FakeSdk:
    """The SDK's side of the channel: answers each `hook_callback` from `answers` by callback
    id (a dict is the success reply, a str the error reply's text, None no answer at all)."""

    def __init__(self, answers: Mapping[str, Mapping[str, Any] | str | None]) -> None:
        self.answers = answers
        self.frames: list[Frame] = []
        self.channel = ControlChannel(self.write)

    def write(self, frame: Frame) -> None:
        self.frames.append(frame)
        if frame["type"] != "control_request":
            return
        answer = self.answers[frame["request"]["callback_id"]]
        if answer is None:
            return
        request_id = frame["request_id"]
        if isinstance(answer, str):
            response = {"subtype": "error", "request_id": request_id, "error": answer}
        else:
            response = {"subtype": "success", "request_id": request_id, "response": answer}
        # answered as the SDK would: later, from the reader of standard input
        asyncio.get_running_loop().call_soon(
            self.channel.dispatch, {"type": "control_response", "response": response}
        )

    def requests(self) -> list[Mapping[str, Any]]:
        return [f["request"] for f in self.frames if f["type"] == "control_request"]


def registered(**events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"subtype": "initialize", "hooks": events}


async def run(
    tmp_path: Path, sdk: FakeSdk, initialize: Mapping[str, Any], steps: list[Reply]
) -> tuple[list[Event], Mapping[str, Any]]:
    options = QueryOptions(
        cwd=tmp_path,
        provider=stayer.ScriptedProvider(steps),
        persist_session=False,
        permission_mode="bypassPermissions",
        env={"PATH": "/usr/bin:/bin", "STAYER_CONFIG_DIR": str(tmp_path / "none")},
    )
    options, reply = sdk_hooks(options, initialize, sdk.channel)
    events = [event async for event in stayer.query("go", options=options)]
    assert isinstance(events[-1], Finished)
    return events, reply


def bash(command: str) -> list[Reply]:
    return [tool_call("Bash", {"command": command}, id="toolu_0"), text("done")]


def ran(events: list[Event]) -> list[tuple[str, str, str, str]]:
    return [
        (e.hook_name, e.command, e.outcome, e.message) for e in events if isinstance(e, HookRan)
    ]


async def test_a_registered_pre_tool_use_asks_the_sdk_and_its_deny_stops_the_call(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "not in this folder",
        }
    }
    sdk = FakeSdk({"hook_0": deny})
    initialize = registered(PreToolUse=[{"matcher": "Bash", "hookCallbackIds": ["hook_0"]}])
    events, reply = await run(tmp_path, sdk, initialize, bash(f"touch {marker}"))

    assert reply == {"hook_on_failure_supported": True}
    assert not marker.exists()
    assert results(events[-1]) == [("not in this folder", True)]
    ((request),) = sdk.requests()
    assert request == {
        "subtype": "hook_callback",
        "callback_id": "hook_0",
        "input": {
            "session_id": request["input"]["session_id"],
            "transcript_path": "",
            "cwd": str(tmp_path.resolve()),
            "permission_mode": "bypassPermissions",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"touch {marker}"},
            "tool_use_id": "toolu_0",
        },
        "tool_use_id": "toolu_0",
    }


async def test_each_callback_id_is_asked_and_events_without_a_call_send_no_tool_use_id(
    tmp_path: Path,
) -> None:
    context = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "ok"}}
    sdk = FakeSdk({"hook_0": {}, "hook_1": context, "hook_2": {}})
    initialize = registered(
        PostToolUse=[{"matcher": None, "hookCallbackIds": ["hook_0", "hook_1"]}],
        Stop=[{"matcher": None, "hookCallbackIds": ["hook_2"], "timeout": 5}],
    )
    events, _ = await run(tmp_path, sdk, initialize, bash("echo hi"))

    asked = [
        (r["callback_id"], r["input"]["hook_event_name"], r["tool_use_id"]) for r in sdk.requests()
    ]
    assert sorted(asked) == [
        ("hook_0", "PostToolUse", "toolu_0"),
        ("hook_1", "PostToolUse", "toolu_0"),
        ("hook_2", "Stop", None),
    ]
    assert results(events[-1]) == [("hi\n\nok", False)]


async def test_an_error_reply_is_a_failed_hook_and_the_call_goes_on(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    sdk = FakeSdk({"hook_0": "No hook callback found for ID: hook_0"})
    initialize = registered(PreToolUse=[{"matcher": "", "hookCallbackIds": ["hook_0"]}])
    events, _ = await run(tmp_path, sdk, initialize, bash(f"touch {marker}"))

    assert marker.exists()
    assert ran(events) == [
        (
            "PreToolUse:Bash",
            "SDK callback hook_0",
            "error",
            "failed: No hook callback found for ID: hook_0",
        )
    ]


async def test_an_sdk_that_does_not_answer_in_time_is_passed_over_and_the_request_withdrawn(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    sdk = FakeSdk({"hook_0": None})
    initialize = registered(PreToolUse=[{"hookCallbackIds": ["hook_0"], "timeout": 0.2}])
    events, _ = await run(tmp_path, sdk, initialize, bash(f"touch {marker}"))

    assert marker.exists()
    assert ran(events) == [
        ("PreToolUse:Bash", "SDK callback hook_0", "timeout", "did not answer within 0.2 s")
    ]
    asked, withdrawn = sdk.frames
    assert withdrawn == {"type": "control_cancel_request", "request_id": asked["request_id"]}


async def test_on_failure_block_makes_an_unanswered_hook_block(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    sdk = FakeSdk({"hook_0": "the callback raised"})
    hooks = [{"hookCallbackIds": ["hook_0"], "onFailure": "block"}]
    events, _ = await run(tmp_path, sdk, registered(PreToolUse=hooks), bash(f"touch {marker}"))

    assert not marker.exists()
    ((_, _, outcome, message),) = ran(events)
    assert (outcome, message) == (
        "blocked",
        "failed: the callback raised (its matcher blocks on failure)",
    )


def test_events_stayer_never_fires_are_named_on_stderr_and_the_rest_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sdk = FakeSdk({})
    initialize = registered(
        PostCompact=[{"hookCallbackIds": ["hook_0"]}],
        PreToolUse=[{"hookCallbackIds": ["hook_1"]}],
        PermissionRequest=[{"hookCallbackIds": ["hook_2"]}],
    )
    options, _ = sdk_hooks(QueryOptions(), initialize, sdk.channel)

    assert list(options.hooks) == ["PreToolUse", "PermissionRequest"]
    assert capsys.readouterr().err == (
        "stayer: the SDK registered hooks for PostCompact, which stayer never fires; "
        "they will not run\n"
    )


def test_no_hooks_leave_the_options_as_they_were() -> None:
    options = QueryOptions()
    assert sdk_hooks(options, {"subtype": "initialize", "hooks": None}, FakeSdk({}).channel) == (
        options,
        {"hook_on_failure_supported": True},
    )


@pytest.mark.parametrize(
    ("hooks", "said"),
    [
        (["PreToolUse"], "hooks must map event names to matchers"),
        ({"PreToolUse": {"matcher": "Bash"}}, "hooks.PreToolUse must be a list of matchers"),
        ({"Stop": ["hook_0"]}, r"hooks.Stop\[0\] must be an object"),
        ({"Stop": [{"matcher": 3, "hookCallbackIds": []}]}, r"Stop\[0\].matcher must be text"),
        ({"Stop": [{"hookCallbackIds": "hook_0"}]}, r"hookCallbackIds must be a list of ids"),
        ({"Stop": [{"hookCallbackIds": [""]}]}, r"hookCallbackIds must be a list of ids"),
        ({"Stop": [{"hookCallbackIds": ["a"], "timeout": 0}]}, "positive number of seconds"),
        ({"Stop": [{"hookCallbackIds": ["a"], "timeout": "5"}]}, "positive number of seconds"),
    ],
)
def test_a_registration_of_the_wrong_shape_is_refused_in_one_line(hooks: Any, said: str) -> None:
    with pytest.raises(ConfigError, match=f"^initialize: .*{said}"):
        sdk_hooks(QueryOptions(), {"subtype": "initialize", "hooks": hooks}, FakeSdk({}).channel)


def test_event_names_are_shown_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    sdk = FakeSdk({})
    forged = "Nope\nstayer: every hook will run"
    many = {f"Later{n}": [{"hookCallbackIds": [f"hook_{n}"]}] for n in range(11)}
    initialize = registered(**{forged: [{"hookCallbackIds": ["hook_x"]}]}, **many)
    sdk_hooks(QueryOptions(), initialize, sdk.channel)

    [line] = capsys.readouterr().err.splitlines()
    assert "'Nope\\nstayer: every hook will run', Later0, " in line
    assert "Later8 and 2 more, which stayer never fires" in line
