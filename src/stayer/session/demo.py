"""The offline demo: a small real coding task in a throwaway git repository.

With no model configured, the scripted model plays a plausible session (run the failing test,
Grep for the function, Read it, Edit the bug, run the test again, report). The tools are real:
the file really changes and the test really runs. With a model configured, the same task goes to
the real model instead.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from stayer.exec import run_command
from stayer.messages import TextBlock, ToolResultBlock, UserMessage
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, Step, tool_call

PROMPT = "The test in this repository fails. Find the bug, fix it, and show me the test passing."

PRICING = '''\
"""Prices for the checkout page."""


def total_with_tax(prices: list[float], rate: float) -> float:
    """The sum of `prices` with tax added at `rate` (0.2 means 20 %)."""
    subtotal = sum(prices)
    return round(subtotal * rate, 2)
'''

TEST = '''\
"""Run with: python3 test_pricing.py"""

from pricing import total_with_tax

got = total_with_tax([10.0, 5.0], 0.2)
assert got == 18.0, f"expected 18.0 for 15.00 plus 20 % tax, got {got}"
print("ok: total_with_tax adds tax correctly")
'''

BUGGY_LINE = "    return round(subtotal * rate, 2)"
FIXED_LINE = "    return round(subtotal * (1 + rate), 2)"


async def make_repo() -> Path:
    """Create the throwaway repository and commit the buggy code.

    git reads no configuration and no template but ours, and no GIT_ variable of ours: no
    hook, filter or signing program of the user's runs, and `GIT_DIR` cannot send the commit
    to another repository."""
    root = Path(tempfile.mkdtemp(prefix="stayer-demo-"))
    (root / "pricing.py").write_text(PRICING)
    (root / "test_pricing.py").write_text(TEST)
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    env |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    await run_command(
        "git init -q --template= && git add -A && "
        "git -c user.name=stayer -c user.email=demo@stayer.invalid commit -qm 'Add pricing'",
        cwd=root,
        env=env,
        timeout_s=30,
    )
    return root


def _last_result(request: ModelRequest) -> str:
    last = request.messages[-1]
    if isinstance(last, UserMessage):
        for block in last.content:
            if isinstance(block, ToolResultBlock):
                return block.text
    return ""


def _report(request: ModelRequest) -> Reply:
    output = _last_result(request).strip()
    if "ok:" in output:
        summary = (
            "Fixed. `total_with_tax` in pricing.py multiplied the subtotal by the rate, so it "
            "returned only the tax (3.0) instead of the total. It now multiplies by `1 + rate`, "
            f"and the test passes:\n\n    {output.splitlines()[0]}\n"
        )
    else:
        summary = f"The edit is in, but the test still fails:\n\n{output}\n"
    return Reply((TextBlock(summary),))


def script(root: Path) -> list[Step]:
    """The scripted model's side of the demo session."""
    pricing = str(root / "pricing.py")
    return [
        tool_call(
            "Bash",
            {"command": "python3 test_pricing.py", "description": "Run the failing test"},
            id="toolu_demo_1",
            say="Let me run the test first to see how it fails.",
        ),
        tool_call(
            "Grep",
            {"pattern": "def total_with_tax", "output_mode": "content", "-n": True},
            id="toolu_demo_2",
            say="The total comes out far too small. Let me find where it is computed.",
        ),
        tool_call("Read", {"file_path": pricing}, id="toolu_demo_3"),
        tool_call(
            "Edit",
            {"file_path": pricing, "old_string": BUGGY_LINE, "new_string": FIXED_LINE},
            id="toolu_demo_4",
            say="Found it: the subtotal is multiplied by the rate alone, which gives just the "
            "tax. The total needs `subtotal * (1 + rate)`.",
        ),
        tool_call(
            "Bash",
            {"command": "python3 test_pricing.py && git diff --stat", "description": "Re-run"},
            id="toolu_demo_5",
            say="Now the test again:",
        ),
        _report,
    ]


def scripted_model(root: Path, *, chunk_delay_s: float = 0.02) -> ScriptedProvider:
    """The scripted model for the demo, pacing its text like a live model."""
    return ScriptedProvider(script(root), model="scripted-demo", chunk_delay_s=chunk_delay_s)
