"""Compaction's options as a user meets them: `stayer -p` against the fake server."""

from __future__ import annotations

from pathlib import Path

from stayer.session.paths import project_slug
from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

SESSION = "3e1f9a0c-5b7d-4c2e-8f6a-1b2c3d4e5f60"


def test_a_users_pins_are_in_every_request_and_survive_compaction(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Noted."))
    done = stayer(
        "-p", "go", "--pin", "Never touch db/migrations.", "--pin", "Answer in French.",
        cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 0, done.stderr
    system = server.requests[0].body["system"]
    text = system if isinstance(system, str) else "".join(part["text"] for part in system)
    assert "# Pinned by the user\nHold to these notes throughout the task:\n" in text
    assert "- Never touch db/migrations.\n- Answer in French." in text


def test_a_huge_pasted_prompt_is_saved_in_the_session_folder(
    server: FakeModelServer, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    work = tmp_path / "work"
    work.mkdir()
    pasted = "".join(f"2026-12-01 10:{n % 60:02d} request {n} served\n" for n in range(40_000))
    server.enqueue(reply("It is a server log."))
    env = {**server.env(), "STAYER_CONFIG_DIR": str(config)}
    done = stayer(
        "-p", "--output-format", "stream-json", "--verbose", "--session-id", SESSION,
        "--model", "claude-sonnet-4-5",  # a 200k window, which the paste would crowd
        cwd=work, env=env, stdin=pasted,
    )  # fmt: skip

    assert done.status == 0, done.stderr
    folder = config / "projects" / project_slug(work.resolve()) / SESSION / "prompts"
    (saved,) = folder.iterdir()
    assert saved.read_text().strip() == pasted.strip()
    (request,) = server.requests
    sent = request.messages[0]["content"]
    sent_text = sent if isinstance(sent, str) else sent[0]["text"]
    assert f"saved unchanged at {saved}" in sent_text
    assert len(sent_text) < 100_000
    boundary = [line for line in done.json_lines() if line.get("subtype") == "compact_boundary"]
    (line,) = boundary
    assert line["compact_metadata"]["method"] == "saved_prompt"
    assert line["compact_metadata"]["reattached"] == [str(saved)]
    assert done.json_lines()[-1]["result"] == "It is a server log."


def test_the_repeated_failure_thresholds_are_flags(server: FakeModelServer, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.txt")
    for n in range(2):
        server.enqueue(reply(ToolCall(f"toolu_{n}", "Read", {"file_path": missing})))
    done = stayer(
        "-p", "read it", "--output-format", "json", "--repeat-nudge-after", "1",
        "--repeat-stop-after", "2", cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 1, done.stderr
    result = done.json_lines()[-1]
    assert result["terminal_reason"] == "repeated_failure"
    assert "failed the same way 2 times in a row" in result["errors"][0]


def test_bad_compaction_values_are_refused_in_one_line(tmp_path: Path) -> None:
    done = stayer("-p", "go", "--autocompact", "50k", cwd=tmp_path)
    assert done.status == 2
    assert done.stderr.strip().endswith("(see stayer --help)")
    assert "'50k' is too small a window (at least 100k)" in done.stderr
    env = {"ANTHROPIC_API_KEY": "k", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "150"}
    done = stayer("-p", "go", cwd=tmp_path, env=env)
    assert done.status == 2
    assert done.stderr.strip().splitlines() == [
        "stayer: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE must be a percentage from 1 to 100, not '150'"
    ]
