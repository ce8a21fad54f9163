"""Which permission modes let through no more than another: what bounds a subagent's mode by
its parent's (`derive`) and a main session's agent's mode by the settings' (`agent_options`)."""

from __future__ import annotations

from stayer.permissions import PermissionMode

NO_LOOSER: dict[PermissionMode, frozenset[PermissionMode]] = {
    "bypassPermissions": frozenset(
        {"bypassPermissions", "acceptEdits", "default", "dontAsk", "plan"}
    ),
    "acceptEdits": frozenset({"acceptEdits", "default", "dontAsk", "plan"}),
    "default": frozenset({"default", "dontAsk", "plan"}),
    "dontAsk": frozenset({"dontAsk"}),
    "plan": frozenset({"plan"}),
}
"""The modes that let through no more than each mode does. Not a ladder: `dontAsk` lets
through what allow rules name, which `plan` refuses, and `plan` asks about what `dontAsk`
refuses; neither is below the other, so each keeps only itself."""

BYPASS: PermissionMode = "bypassPermissions"

BYPASS_REFUSED = (
    "bypassPermissions can only be switched to in a session started in it or with "
    "--allow-dangerously-skip-permissions (allow_dangerously_skip_permissions)"
)


def may_bypass(start: PermissionMode, allowed: bool) -> bool:
    """Whether a session started in `start` may switch into bypassPermissions later, as Claude
    Code rules: only one started in it, or given `allowed`
    (`--allow-dangerously-skip-permissions`). The one rule every way of switching keeps."""
    return start == BYPASS or allowed
