"""Paths no permission mode writes unasked: they make other programs run code or change the rules.

An edit to `.git/config` can set `core.fsmonitor`, which runs a command on the user's next
`git status`; a file in `.git/hooks/` runs on the next commit; `.claude/settings.json`,
`.stayer/` and `.mcp.json` change what the agent itself may do next time; `.vscode/tasks.json`
and `.idea/` run tasks in the user's editor; shell start-up files run in every new terminal.
No mode (`acceptEdits`, even `bypassPermissions`) lets a file tool write these unasked: such a
write asks the user, as Claude Code's does, and with nobody to ask it is denied. Only an allow
rule whose pattern names the protected place itself lets it through without asking
(`Edit(.git/config)`, `Write(.claude/**)`); a rule as broad as `Edit(**)` does not.

Names are compared case-insensitively (case-folded), since macOS and Windows file systems are.
"""

from __future__ import annotations

from pathlib import PurePath

PROTECTED_DIRECTORIES: dict[str, str] = {
    ".git": "git runs what its config and hooks say",
    ".stayer": "it holds stayer's own settings",
    ".claude": "it holds the agent's settings, hooks and commands",
    ".vscode": "the editor runs its tasks and settings",
    ".idea": "the IDE runs its run configurations",
}

PROTECTED_FILES: dict[str, str] = {
    ".mcp.json": "it starts MCP servers for the agent",
    ".claude.json": "it holds the agent's settings",
    ".gitconfig": "git runs what its config says",
    ".gitmodules": "git fetches and checks out what it names",
    ".envrc": "direnv runs it on entering the directory",
    ".ripgreprc": "the search tool reads its options",
    **dict.fromkeys(
        (
            ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
            ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
            ".cshrc", ".tcshrc", ".kshrc", ".mkshrc", "config.fish",
        ),
        "the shell runs it at start-up",
    ),
}  # fmt: skip


def protected_parts(path: str) -> list[tuple[str, str]]:
    """Every protected directory or file in `path`, outermost first, each with why.

    Any component counts for directories (`src/.git/hooks/x` is inside a `.git`), the last one
    for files. Names are case-folded, as case-insensitive file systems compare them (`ſ` is `s`
    there, which `lower()` would miss).
    """
    parts = [part.casefold() for part in PurePath(path).parts]
    found = [
        (part + "/", PROTECTED_DIRECTORIES[part]) for part in parts if part in PROTECTED_DIRECTORIES
    ]
    if parts and parts[-1] in PROTECTED_FILES:
        found.append((parts[-1], PROTECTED_FILES[parts[-1]]))
    return found


def protected_part(path: str) -> tuple[str, str] | None:
    """The outermost protected place in `path` and why; None if there is none."""
    found = protected_parts(path)
    return found[0] if found else None
