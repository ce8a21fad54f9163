"""Read-only Bash calls of one reply run side by side; the others keep their turn."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from stayer.messages import ToolUseBlock
from stayer.providers.scripted import Reply, ScriptedProvider, text
from stayer.tools.builtin.bash import BashTool
from tests.fakes.loop_harness import make_params, results_in, run


def _feed(first: Path, then: Path) -> threading.Thread:
    """Write to `first`, then to `then`: each open waits until a command reads that pipe."""

    def write() -> None:
        for fifo in (first, then):
            with fifo.open("w") as pipe:
                pipe.write(fifo.name)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


async def test_two_read_only_commands_run_at_once(tmp_path: Path) -> None:
    # The first call can end only after the second has started reading: run one after the
    # other, the first would time out.
    a, b = tmp_path / "a.fifo", tmp_path / "b.fifo"
    os.mkfifo(a)
    os.mkfifo(b)
    calls = Reply(
        (
            ToolUseBlock("first", "Bash", {"command": f"cat {a}", "timeout": 20_000}),
            ToolUseBlock("second", "Bash", {"command": f"cat {b}", "timeout": 20_000}),
        )
    )
    model = ScriptedProvider([calls, text("done")])
    feeder = _feed(b, a)
    await run(make_params(model, [BashTool()], tmp_path))
    feeder.join(timeout=5)

    answers = results_in(model.requests[1].messages[-1])
    assert [(answer.text, answer.is_error) for answer in answers] == [
        ("a.fifo", False),
        ("b.fifo", False),
    ]
