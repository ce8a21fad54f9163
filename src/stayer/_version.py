"""Version numbers: stayer's own, and the Claude Code version whose protocol it speaks."""

__version__ = "0.1.0"
CLAUDE_CODE_COMPAT_VERSION = "2.1.332"
"""Reported as `claude_code_version` so claude-agent-sdk's version check is satisfied."""
