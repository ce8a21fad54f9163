"""The `result` line printed when a run could not even start (a bad flag, no key, bad model).

Programs that read `--output-format json` or `stream-json` parse standard output; an error told
only on standard error would leave them with nothing to parse. This line has the shape of every
other `result` (claude-agent-sdk's required fields), with `is_error` set and the message in
`result` and `errors`. Its `terminal_reason` is Claude Code's `turn_setup_failed`: the loop never
ran.
"""

from __future__ import annotations

import uuid
from typing import Any

from stayer import json_text
from stayer.messages import Usage, usage_to_wire


def error_result_line(message: str, *, session_id: str | None) -> str:
    """One JSON line reporting `message` as a failed run."""
    return json_text.dumps(result_fields(message, session_id=session_id, is_error=True))


def result_fields(message: str, *, session_id: str | None, is_error: bool) -> dict[str, Any]:
    """A `result` for what ran no model call: failed (`message` is the error), or done (a
    command the front end carried out, `/clear` say; `message` is what it says)."""
    return {
        "type": "result",
        "subtype": "error_during_execution" if is_error else "success",
        "is_error": is_error,
        "duration_ms": 0,
        "duration_api_ms": 0,
        "num_turns": 0,
        "result": message,
        "stop_reason": None,
        "terminal_reason": "turn_setup_failed" if is_error else "completed",
        "session_id": session_id or str(uuid.uuid4()),
        "total_cost_usd": 0.0,
        "usage": usage_to_wire(Usage()),
        "modelUsage": {},
        "permission_denials": [],
        **({"errors": [message]} if is_error else {}),
        "uuid": str(uuid.uuid4()),
    }
