"""The real CLI keeps its model credentials from the processes it starts: a command the model
runs (in the foreground or the background), a hook and the --done-when check all see the
environment without ANTHROPIC_API_KEY and the like, unless STAYER_PASS_ENV names one."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import stayer
from tests.e2e.test_headless_over_the_wire import result_text, tool_results
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-e2e-secret",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth-e2e-secret",
    "OPENAI_API_KEY": "sk-openai-e2e-secret",
}


def _env(server: FakeModelServer, **more: str) -> dict[str, str]:
    return {**server.env(), **SECRETS, "STAYER_E2E_MARKER": "visible", **more}


def _printenv(server: FakeModelServer, project: Path, *flags: str, **env: str) -> str:
    server.enqueue(reply(ToolCall("toolu_env", "Bash", {"command": "printenv"})), reply("ok"))
    done = stayer(
        "-p", "show the environment", "--allowedTools", "Bash(printenv)", *flags,
        cwd=project, env=_env(server, **env),
    )  # fmt: skip
    assert done.status == 0, done.stderr
    (result,) = tool_results(server.requests[1])
    return result_text(result)


def test_a_command_the_model_runs_sees_no_model_credentials(
    server: FakeModelServer, tmp_path: Path
) -> None:
    shown = _printenv(server, tmp_path)
    assert "STAYER_E2E_MARKER=visible" in shown
    for name, value in SECRETS.items():
        assert name not in shown and value not in shown


def test_stayer_pass_env_lets_a_named_credential_through(
    server: FakeModelServer, tmp_path: Path
) -> None:
    shown = _printenv(server, tmp_path, STAYER_PASS_ENV="OPENAI_API_KEY")
    assert "OPENAI_API_KEY=sk-openai-e2e-secret" in shown
    assert "sk-ant-e2e-secret" not in shown and "oauth-e2e-secret" not in shown


def test_a_background_command_sees_no_model_credentials(
    server: FakeModelServer, tmp_path: Path
) -> None:
    started = "printenv > bg-env.txt && touch bg-done"
    collect = "while [ ! -f bg-done ]; do sleep 0.05; done; cat bg-env.txt"
    server.enqueue(
        reply(ToolCall("toolu_bg", "Bash", {"command": started, "run_in_background": True})),
        reply(ToolCall("toolu_fg", "Bash", {"command": collect})),
        reply("ok"),
    )
    done = stayer("-p", "go", "--dangerously-skip-permissions", cwd=tmp_path, env=_env(server))
    assert done.status == 0, done.stderr
    (result,) = tool_results(server.requests[2])
    shown = result_text(result)
    assert "STAYER_E2E_MARKER=visible" in shown
    assert not any(value in shown for value in SECRETS.values())


def test_hooks_and_the_done_check_see_no_model_credentials(
    server: FakeModelServer, tmp_path: Path
) -> None:
    (tmp_path / ".claude").mkdir()
    hook = 'printenv > "$CLAUDE_PROJECT_DIR/hook-env.txt"'
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": hook}]}]}}  # fmt: skip
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    server.enqueue(reply(ToolCall("toolu_ls", "Bash", {"command": "ls"})), reply("done"))
    done = stayer(
        "-p", "go", "--allowedTools", "Bash(ls)", "--done-when", "printenv > done-env.txt",
        cwd=tmp_path, env=_env(server),
    )  # fmt: skip
    assert done.status == 0, done.stderr
    for seen in ("hook-env.txt", "done-env.txt"):
        shown = (tmp_path / seen).read_text()
        assert "STAYER_E2E_MARKER=visible" in shown, seen
        assert not any(value in shown for value in SECRETS.values()), seen
