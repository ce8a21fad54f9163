"""/cost and /status: what the person reads about the session's use and set-up."""

from __future__ import annotations

from pathlib import Path

from stayer._version import __version__
from stayer.ui.repl.figures import duration, money, tokens
from stayer.ui.repl.surface import Totals
from tests.fakes.model_server import FakeModelServer
from tests.ui.repl.commands_kit import RecordingRepl, opened, run


async def test_cost_shows_money_tokens_and_time_from_the_totals(tmp_path: Path) -> None:
    totals = Totals(
        cost_usd=0.04213,
        input_tokens=12_345,
        output_tokens=678,
        cache_read_tokens=9_000,
        cache_write_tokens=1_024,
        runs=3,
        api_duration_ms=62_300,
        wall_duration_ms=301_200,
    )
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session, totals=totals, running=True)
            assert await run(repl, "/cost") == [
                "Cost:       $0.0421 over 3 runs (at list prices)\n"
                "Tokens:     12,345 in, 678 out, 9,000 cache read, 1,024 cache write\n"
                "API time:   1m 2.3s\n"
                "Wall time:  5m 1.2s"
            ]
            one = Totals(cost_usd=12.5, runs=1, api_duration_ms=400, wall_duration_ms=3_725_000)
            [text] = await run(RecordingRepl(session, totals=one), "/cost")
    assert text.splitlines()[0] == "Cost:       $12.50 over 1 run (at list prices)"
    assert text.splitlines()[2:] == ["API time:   0.4s", "Wall time:  1h 2m 5s"]


def test_numbers_are_written_short() -> None:
    assert [tokens(n) for n in (0, 950, 1_000, 12_345, 200_000, 1_000_000, 1_250_000)] == [
        "0", "950", "1k", "12.3k", "200k", "1M", "1.2M",
    ]  # fmt: skip
    assert [money(x) for x in (0, 0.00042, 0.5, 1, 1234.5)] == [
        "$0.0000", "$0.0004", "$0.5000", "$1.00", "$1,234.50",
    ]  # fmt: skip
    assert [duration(ms) for ms in (0, 59_949, 60_000, 3_600_000)] == [
        "0.0s", "59.9s", "1m 0.0s", "1h 0m 0s",
    ]  # fmt: skip


async def test_status_names_the_session_model_mode_and_files(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()  # a repository, as memory files are looked for
    (project / "STAYER.md").write_text("Run the tests with make test.\n")
    (project / ".stayer").mkdir()
    (project / ".stayer" / "settings.json").write_text('{"permissions": {"allow": ["Read"]}}')
    with FakeModelServer() as server:
        async with opened(server, project, model="sonnet", permission_mode="plan") as session:
            repl = RecordingRepl(session, running=True)
            [text] = await run(repl, "/status")
            transcript = session.transcript_path
    assert transcript is not None
    rows = dict(line.split(":", 1) for line in text.splitlines())
    assert {key: value.strip() for key, value in rows.items()} == {
        "Version": f"stayer {__version__}",
        "Session": session.session_id,
        "Directory": str(project),
        "Model": "claude-sonnet-5-5",
        "Provider": "anthropic",
        "Permission mode": "plan",
        "Settings files": str(project / ".stayer" / "settings.json"),
        "Memory files": str(project / "STAYER.md"),
        "Transcript": str(transcript),
    }
