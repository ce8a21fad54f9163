"""The `result` line printed when a run could not even start (a bad flag, no key, bad model).

Programs that read `--output-format json` or `stream-json` parse standard output; an error told
only on standard error would leave them with nothing to parse. This line has the shape of every
other `result` (claude-agent-sdk's required fields), with `is_error` set and the message in
`result` and `errors`. Its `terminal_reason` is Claude Code's `turn_setup_failed`: the loop never
ran.
"""

from __future__ import annotations

import uuid

from stayer import json_text
from stayer.messages import Usage, usage_to_wire


def error_result_line(message: str, *, session_id: str | None) -> str:
    """One JSON line reporting `message` as a failed run."""
    line = {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "duration_ms": 0,
        "duration_api_ms": 0,
        "num_turns": 0,
        "result": message,
        "stop_reason": None,
        "terminal_reason": "turn_setup_failed",
        "session_id": session_id or str(uuid.uuid4()),
        "total_cost_usd": 0.0,
        "usage": usage_to_wire(Usage()),
        "modelUsage": {},
        "permission_denials": [],
        "errors": [message],
        "uuid": str(uuid.uuid4()),
    }
    return json_text.dumps(line)
