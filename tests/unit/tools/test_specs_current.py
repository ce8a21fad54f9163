"""The generated specs are exactly what the tools would say, and loading them is lazy."""

from __future__ import annotations

import subprocess
import sys

from stayer.tools.builtin_specs import BUILTIN_SPECS
from stayer.tools.registry import builtin_toolbox, builtin_tools


def test_generated_specs_match_the_tools() -> None:
    actual = tuple(tool.spec() for tool in builtin_tools())
    assert actual == BUILTIN_SPECS, "tool specs changed: run scripts/gen_tool_specs.py"


def test_a_toolbox_offers_specs_before_loading_any_tool() -> None:
    code = (
        "import sys; from stayer.tools.registry import builtin_toolbox; "
        "box = builtin_toolbox({'Read', 'Bash'}); "
        "print(box.names, 'pydantic' in sys.modules, 'stayer.tools.builtin.bash' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "('Bash', 'Read') False False"


def test_a_toolbox_loads_only_the_tools_it_offers() -> None:
    box = builtin_toolbox({"Grep", "Write"})
    assert sorted(box.tools()) == ["Grep", "Write"]
    assert box.tools() is box.tools()


def test_preloading_loads_the_tools_in_the_background() -> None:
    import time

    box = builtin_toolbox({"Read"})
    loaded_at_first = box.loaded
    box.preload()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not box.loaded:
        time.sleep(0.01)
    assert (loaded_at_first, box.loaded) == (False, True)
    assert list(box.tools()) == ["Read"]
