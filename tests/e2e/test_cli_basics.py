"""The command line without a model server: version, bad input, and the offline demo."""

from __future__ import annotations

import re
from pathlib import Path

from tests.e2e.cli import stayer


def test_version_starts_with_a_semver_for_sdk_version_checks(tmp_path: Path) -> None:
    for flag in ("-v", "--version"):
        done = stayer(flag, cwd=tmp_path)
        assert done.status == 0
        assert re.match(r"^\d+\.\d+\.\d+ \(stayer \d+\.\d+\.\d+\)$", done.stdout.strip())


def test_missing_key_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    done = stayer("-p", "hello", "--model", "claude-sonnet-4-5", cwd=tmp_path)
    assert done.status == 2
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "ANTHROPIC_API_KEY" in line
    assert "Traceback" not in done.stderr


def test_no_model_at_all_says_what_to_set(tmp_path: Path) -> None:
    done = stayer("-p", "hello", cwd=tmp_path)
    assert done.status == 2
    (line,) = done.stderr.strip().splitlines()
    assert "ANTHROPIC_API_KEY" in line and "OPENAI_API_KEY" in line


def test_missing_prompt_is_explained(tmp_path: Path) -> None:
    done = stayer("-p", cwd=tmp_path)
    assert done.status == 2
    assert done.stderr.strip() == (
        'stayer: no prompt: give one as an argument (stayer -p "...") or on standard input; '
        "`stayer demo` shows a live session"
    )


def test_bad_flag_values_are_one_line_errors(tmp_path: Path) -> None:
    cases = [
        ("--max-turns", "many"),
        ("--output-format", "xml"),
        ("--permission-mode", "yolo"),
    ]
    for flag, value in cases:
        done = stayer(
            "-p", "x", flag, value, cwd=tmp_path, env={"OPENAI_BASE_URL": "http://127.0.0.1:9"}
        )
        assert done.status == 2, (flag, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr


def test_unknown_flags_are_reported_and_ignored(tmp_path: Path) -> None:
    done = stayer("--some-future-flag", "-v", cwd=tmp_path)
    assert done.status == 0
    assert (
        "stayer: --some-future-flag has no effect: stayer does not know this option" in done.stderr
    )


def test_offline_demo_fixes_a_real_bug_with_real_tools(tmp_path: Path) -> None:
    done = stayer("demo", cwd=tmp_path, timeout=120)
    assert done.status == 0, done.stderr
    assert done.stderr.startswith("stayer: no model configured")
    out = done.stdout
    for call in (
        "● Bash(python3 test_pricing.py)",
        "● Grep(def total_with_tax)",
        "● Read(",
        "● Edit(",
    ):
        assert call in out, out
    assert "AssertionError: expected 18.0" in out  # the first, failing run really happened
    assert "ok: total_with_tax adds tax correctly" in out  # and the test really passes after
    repo = Path(done.stderr.strip().splitlines()[-1].split(": ", 1)[1])
    assert "(1 + rate)" in (repo / "pricing.py").read_text()
    assert "✓ done" in out
