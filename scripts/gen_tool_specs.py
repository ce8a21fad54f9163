"""Write src/stayer/tools/builtin_specs.py from the built-in tools' classes.

Run after changing a built-in tool's description or input model:
    .venv/bin/python scripts/gen_tool_specs.py
A test fails while the file is out of date.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "stayer" / "tools" / "builtin_specs.py"

HEADER = '''"""The built-in tools as the model sees them: generated, do not edit.

Made by scripts/gen_tool_specs.py from the tool classes, so a run can send its first request
without loading the tools (or pydantic). tests/unit/tools/test_specs_current.py checks it.
"""

from stayer.messages import ToolSpec

BUILTIN_SPECS: tuple[ToolSpec, ...] = (
'''


def render() -> str:
    """The module's text."""
    sys.path.insert(0, str(ROOT / "src"))
    from stayer.tools.registry import builtin_tools

    parts = [HEADER]
    for tool in builtin_tools():
        spec = tool.spec()
        parts.append(
            "    ToolSpec(\n"
            f"        name={spec.name!r},\n"
            f"        description={spec.description!r},\n"
            f"        input_schema={dict(spec.input_schema)!r},\n"
            "    ),\n"
        )
    parts.append(")\n")
    return "".join(parts)


if __name__ == "__main__":
    TARGET.write_text(render())
    subprocess.run([str(ROOT / ".venv" / "bin" / "ruff"), "format", "-q", str(TARGET)], check=True)
    print(f"wrote {TARGET.relative_to(ROOT)}")
