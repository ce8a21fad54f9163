"""run_probes against real processes: side by side, one deadline, caps, and no exceptions."""

from __future__ import annotations

import time
from pathlib import Path

from stayer.exec.probe import ProbeResult, run_probes
from tests.unit.tools.helpers import is_running


def _gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while is_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_output_exit_code_and_order_are_reported(tmp_path: Path) -> None:
    results = run_probes(
        [["sh", "-c", "echo out; echo err >&2; exit 3"], ["sh", "-c", "pwd -P"]],
        cwd=tmp_path,
        env=None,
        timeout_s=10,
        max_bytes=1_000,
    )
    assert results == (
        ProbeResult(("sh", "-c", "echo out; echo err >&2; exit 3"), 3, "out\n", "err\n"),
        ProbeResult(("sh", "-c", "pwd -P"), 0, f"{tmp_path.resolve()}\n", ""),
    )


def test_probes_run_side_by_side(tmp_path: Path) -> None:
    """The first waits for a file only the second writes: run one after the other, the first
    could never finish."""
    marker = tmp_path / "second-ran"
    waiter = ["sh", "-c", f"while [ ! -e {marker} ]; do sleep 0.01; done; echo saw it"]
    writer = ["sh", "-c", f"touch {marker}"]
    first, second = run_probes(
        [waiter, writer], cwd=tmp_path, env=None, timeout_s=10, max_bytes=1_000
    )
    assert (first.exit_code, first.stdout, second.exit_code) == (0, "saw it\n", 0)


def test_a_probe_past_the_deadline_is_killed_with_its_children(tmp_path: Path) -> None:
    started = time.monotonic()
    (result,) = run_probes(
        [["sh", "-c", "sleep 60 & echo $!; wait"]],
        cwd=tmp_path,
        env=None,
        timeout_s=0.5,
        max_bytes=1_000,
    )
    assert time.monotonic() - started < 5
    assert (result.exit_code, result.problem, result.cut) == (None, "no answer within 0.5 s", False)
    assert _gone(int(result.stdout))


def test_a_probe_that_writes_past_its_cap_is_stopped_at_once(tmp_path: Path) -> None:
    """`yes` never ends by itself: coming back well before the deadline shows it was stopped
    for its output, keeping exactly the start."""
    started = time.monotonic()
    (result,) = run_probes([["yes"]], cwd=tmp_path, env=None, timeout_s=30, max_bytes=1_000)
    assert time.monotonic() - started < 10
    assert result == ProbeResult(
        ("yes",), None, "y\n" * 500, "", "stopped: it wrote more than was wanted", cut=True
    )


def test_output_of_exactly_the_cap_is_not_cut(tmp_path: Path) -> None:
    (result,) = run_probes(
        [["sh", "-c", "printf 'abcd'"]], cwd=tmp_path, env=None, timeout_s=10, max_bytes=4
    )
    assert (result.exit_code, result.stdout, result.cut) == (0, "abcd", False)


def test_a_program_that_cannot_start_is_a_result_not_an_error(tmp_path: Path) -> None:
    missing, present = run_probes(
        [["no-such-program-for-stayer"], ["true"]],
        cwd=tmp_path,
        env=None,
        timeout_s=10,
        max_bytes=1_000,
    )
    assert missing == ProbeResult(
        ("no-such-program-for-stayer",),
        None,
        problem="could not start no-such-program-for-stayer: No such file or directory",
    )
    assert present.exit_code == 0


def test_the_environment_given_is_the_whole_environment(tmp_path: Path) -> None:
    (result,) = run_probes(
        [["/bin/sh", "-c", 'echo "$ONLY|$HOME"']],
        cwd=tmp_path,
        env={"ONLY": "this"},
        timeout_s=10,
        max_bytes=1_000,
    )
    assert result.stdout == "this|\n"
