"""No mode writes a protected path unasked; only an allow rule that names it lets it through
without asking (and deny still wins). dontAsk mode, which never asks, denies it.

These paths make other programs run code (`.git/config`'s core.fsmonitor, git hooks, hook
managers, ssh and git configs, editor tasks, shell start-up files, autostart and PATH folders)
or change what the agent may do next time (`.claude/`, `.stayer/`, `.mcp.json`). Here they are
judged by the pure permission layer; `test_protected_writes.py` drives the session's callback,
which also looks at the disk (git directories by their layout) and at what Bash writes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from stayer.permissions import (
    Decision,
    PermissionMode,
    PermissionPolicy,
    Writes,
    evaluate,
    lexical_subject,
    parse_rules,
    resolve_subject,
)
from stayer.permissions.protected import Place, environment_places

CWD = Path("/w")
HOME = Path.home()
MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "bypassPermissions", "dontAsk")


def write(
    policy: PermissionPolicy,
    path: str,
    tool: str = "Edit",
    cwd: Path = CWD,
    located: tuple[Place, ...] = (),
) -> Decision:
    """Decide a write as the session does: the path resolved, and also as written."""
    return evaluate(
        policy,
        tool=tool,
        subject=resolve_subject(path, cwd),
        read_only=False,
        cwd=cwd,
        subject_kind="path",
        aliases=(lexical_subject(path, cwd),),
        writes=Writes(located=located),
    )


PROTECTED = [
    ("/w/.git/config", ".git/", "Edit(.git/config)"),
    (".git/hooks/pre-commit", ".git/", "Edit(.git/hooks/pre-commit)"),
    ("/w/vendor/lib/.git/config", ".git/", "Edit(vendor/lib/.git/config)"),
    ("/w/.GIT/CONFIG", ".git/", "Edit(.GIT/CONFIG)"),
    ("/w/.claude/settings.json", ".claude/", "Edit(.claude/settings.json)"),
    ("/w/.stayer/settings.json", ".stayer/", "Edit(.stayer/settings.json)"),
    ("/w/.vscode/tasks.json", ".vscode/", "Edit(.vscode/tasks.json)"),
    ("/w/.idea/workspace.xml", ".idea/", "Edit(.idea/workspace.xml)"),
    ("/w/.mcp.json", ".mcp.json", "Edit(./.mcp.json)"),  # a bare name would match anywhere
    ("/w/.git", ".git/", "Edit(./.git)"),
    ("~/.bashrc", ".bashrc", "Edit(~/.bashrc)"),
    ("~/.zshrc", ".zshrc", "Edit(~/.zshrc)"),
    ("~/.profile", ".profile", "Edit(~/.profile)"),
    ("~/.config/fish/config.fish", ".config/fish/", "Edit(~/.config/fish/config.fish)"),
    ("/etc/.gitconfig", ".gitconfig", "Edit(//etc/.gitconfig)"),
    ("~/.config/git/config", ".config/git/", "Edit(~/.config/git/config)"),
    ("~/.config/git/attributes", ".config/git/", "Edit(~/.config/git/attributes)"),
    ("/etc/gitconfig", "/etc/gitconfig", "Edit(//etc/gitconfig)"),
    ("~/.ssh/config", ".ssh/", "Edit(~/.ssh/config)"),
    ("~/.ssh/authorized_keys", ".ssh/", "Edit(~/.ssh/authorized_keys)"),
    ("~/.gnupg/gpg-agent.conf", ".gnupg/", "Edit(~/.gnupg/gpg-agent.conf)"),
    ("~/.bash_aliases", ".bash_aliases", "Edit(~/.bash_aliases)"),
    ("~/.bash_login", ".bash_login", "Edit(~/.bash_login)"),
    ("~/.zshenv", ".zshenv", "Edit(~/.zshenv)"),
    ("/etc/profile.d/path.sh", "/etc/profile.d/", "Edit(//etc/profile.d/path.sh)"),
    ("/etc/bash.bashrc", "/etc/bash.bashrc", "Edit(//etc/bash.bashrc)"),
    ("/w/.husky/pre-commit", ".husky/", "Edit(.husky/pre-commit)"),
    ("/w/.githooks/pre-push", ".githooks/", "Edit(.githooks/pre-push)"),
    ("/w/lefthook.yml", "lefthook.yml", "Edit(./lefthook.yml)"),
    ("/w/.lefthook-local.yaml", ".lefthook-local.yaml", "Edit(./.lefthook-local.yaml)"),
    ("/w/.pre-commit-config.yaml", ".pre-commit-config.yaml", "Edit(./.pre-commit-config.yaml)"),
    ("~/.config/autostart/x.desktop", ".config/autostart/", "Edit(~/.config/autostart/x.desktop)"),
    ("~/.config/systemd/user/x.service", ".config/systemd/",
     "Edit(~/.config/systemd/user/x.service)"),
    ("/var/spool/cron/crontabs/me", "/var/spool/cron/", "Edit(//var/spool/cron/crontabs/me)"),
    ("~/.local/bin/git", ".local/bin/", "Edit(~/.local/bin/git)"),
    ("~/.npmrc", "~/.npmrc", "Edit(~/.npmrc)"),
    ("~/.cargo/config.toml", "~/.cargo/config.toml", "Edit(~/.cargo/config.toml)"),
    ("/w/.venv/lib/python3.12/site-packages/x.pth", "x.pth",
     "Edit(.venv/lib/python3.12/site-packages/x.pth)"),
    ("/w/.vimrc", ".vimrc", "Edit(./.vimrc)"),
]  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("path", "part", "rule"), PROTECTED)
def test_every_mode_asks_before_writing_a_protected_path(
    mode: PermissionMode, path: str, part: str, rule: str
) -> None:
    decision = write(PermissionPolicy(mode=mode), path)

    assert decision.behavior == ("deny" if mode == "dontAsk" else "ask")
    assert f"{part} is protected" in decision.reason
    assert "even in bypassPermissions mode" in decision.reason
    assert f'--allowedTools "{rule}"' in decision.reason
    assert decision.suggestions == (rule,)


@pytest.mark.parametrize(("path", "part", "rule"), PROTECTED)
def test_the_rule_a_denial_suggests_is_exactly_what_allows_it(
    path: str, part: str, rule: str
) -> None:
    suggested = re.search(r'--allowedTools "([^"]+)"', write(PermissionPolicy(), path).reason)
    assert suggested is not None and suggested.group(1) == rule
    policy = PermissionPolicy(mode="bypassPermissions", allow=parse_rules([suggested.group(1)]))
    assert write(policy, path).behavior == "allow"
    other = "/w/.idea/other.xml" if part != ".idea/" else "/w/.vscode/other.json"
    assert write(policy, other).behavior == "ask"


def test_only_a_rule_that_names_the_protected_place_counts() -> None:
    for broad in ("Edit", "Edit(**)", "Edit(*)", "Edit(/w/**)", "Write(.git/config)"):
        policy = PermissionPolicy(mode="bypassPermissions", allow=parse_rules([broad]))
        assert write(policy, "/w/.git/config").behavior == "ask", broad
        assert write(policy, "/w/src/app.py").behavior == "allow", broad
    for named in ("Edit(.git/**)", "Edit(//w/.git/config)", "Edit(**/.git/config)"):
        policy = PermissionPolicy(allow=parse_rules([named]))
        assert write(policy, "/w/.git/config").behavior == "allow", named


def test_deny_rules_still_win_over_an_explicit_allow() -> None:
    policy = PermissionPolicy(
        mode="bypassPermissions",
        allow=parse_rules(["Edit(.git/**)"]),
        deny=parse_rules(["Edit(.git/hooks/*)"]),
    )
    assert write(policy, "/w/.git/hooks/pre-commit").behavior == "deny"
    assert write(policy, "/w/.git/config").behavior == "allow"


ORDINARY = [
    "/w/.gitignore",
    "/w/.github/workflows/ci.yml",
    "/w/src/git/config.py",
    "/w/src/config.py",
    "/w/src/HEAD",
    "/w/src/hooks/use_thing.ts",
    "/w/docs/ssh/config",
    "/w/.npmrc",  # the project's own: no more than its package.json can do
    "/w/Makefile",
    "/w/package.json",
    "/w/notes.pth",
    "/w/.config/app.toml",
    "/w/bin/tool",
]


@pytest.mark.parametrize("path", ORDINARY)
def test_ordinary_project_files_are_not_protected(path: str) -> None:
    assert write(PermissionPolicy(mode="acceptEdits"), path).behavior == "allow"


def test_reading_and_lookalikes_are_not_protected() -> None:
    policy = PermissionPolicy(mode="acceptEdits")
    for path in ("/w/.gitignore", "/w/.github/workflows/ci.yml", "/w/src/git/config.py"):
        assert write(policy, path).behavior == "allow", path
    read = evaluate(
        PermissionPolicy(),
        tool="Read",
        subject="/w/.git/config",
        read_only=True,
        cwd=CWD,
        subject_kind="path",
    )
    assert read.behavior == "allow"


def test_a_symlink_into_git_is_git(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    os.symlink(tmp_path / ".git" / "config", tmp_path / "notes.txt")
    os.symlink(tmp_path / ".git", tmp_path / "meta")
    policy = PermissionPolicy(mode="bypassPermissions")

    for path in ("notes.txt", "meta/hooks/pre-commit"):
        decision = write(policy, path, cwd=tmp_path)
        assert decision.behavior == "ask", path
        assert f"{tmp_path / path} (which is {tmp_path / '.git'}" in decision.reason


def test_a_symlink_named_like_a_protected_path_is_judged_as_written_too(tmp_path: Path) -> None:
    """A link called `.bashrc` that points elsewhere is still what the shell runs."""
    (tmp_path / "innocent").write_text("")
    os.symlink(tmp_path / "innocent", tmp_path / ".bashrc")
    assert write(PermissionPolicy(mode="bypassPermissions"), ".bashrc", cwd=tmp_path).behavior == (
        "ask"
    )


def test_outside_the_working_directories_says_so_and_how_to_add_one() -> None:
    accept = write(PermissionPolicy(mode="acceptEdits"), "/elsewhere/notes.md", tool="Write")
    assert accept.behavior == "ask"
    assert "acceptEdits allows edits only inside the working directories (/w)" in accept.reason
    assert "--add-dir /elsewhere" in accept.reason
    assert '--allowedTools "Write(//elsewhere/notes.md)"' in accept.reason
    assert "--permission-mode acceptEdits" not in accept.reason

    widened = PermissionPolicy(mode="acceptEdits", directories=(Path("/elsewhere"),))
    assert write(widened, "/elsewhere/notes.md", tool="Write").behavior == "allow"
    assert write(widened, "/third/notes.md", tool="Write").behavior == "ask"

    default = write(PermissionPolicy(), "/elsewhere/notes.md", tool="Write")
    assert "outside the working directories (/w)" in default.reason
    assert "--add-dir /elsewhere and use --permission-mode acceptEdits" in default.reason


def test_a_home_path_is_suggested_with_a_tilde() -> None:
    decision = write(PermissionPolicy(mode="acceptEdits"), str(HOME / "notes" / "a.md"), "Write")
    assert '--allowedTools "Write(~/notes/a.md)"' in decision.reason


def test_a_symlink_followed_by_dotdot_goes_where_the_link_points(tmp_path: Path) -> None:
    """`docs -> .git/hooks` is a link a cloned repository can carry: `docs/../hooks/x` is
    `.git/hooks/x` to the file system, however `..` reads as text."""
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "config").write_text("[core]\n")
    os.symlink(tmp_path / ".git" / "hooks", tmp_path / "docs")
    policy = PermissionPolicy(mode="acceptEdits")

    hook = write(policy, "docs/../hooks/pre-commit", tool="Write", cwd=tmp_path)
    config = write(policy, "docs/../config", cwd=tmp_path)

    assert (hook.behavior, config.behavior) == ("ask", "ask")
    assert f"which is {tmp_path / '.git' / 'hooks' / 'pre-commit'}" in hook.reason
    assert ".git/ is protected" in config.reason


def test_a_symlink_followed_by_dotdot_cannot_leave_the_working_directory(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside" / "deep"
    work.mkdir()
    outside.mkdir(parents=True)
    os.symlink(outside, work / "link")
    decision = write(PermissionPolicy(mode="acceptEdits"), "link/../x.txt", "Write", cwd=work)
    assert decision.behavior == "ask"
    assert "allows edits only inside the working directories" in decision.reason


@pytest.mark.parametrize("path", ["/w/.vſcode/taſks.json", "~/.baſhrc", "/w/.ſtayer/x"])
def test_names_are_case_folded_as_case_insensitive_file_systems_fold_them(path: str) -> None:
    assert write(PermissionPolicy(mode="bypassPermissions"), path).behavior == "ask"


def test_a_rule_for_one_protected_place_does_not_open_another_inside_it() -> None:
    policy = PermissionPolicy(allow=parse_rules(["Edit(.vscode/**)"]))
    assert write(policy, "/w/.vscode/tasks.json").behavior == "allow"
    nested = write(policy, "/w/.vscode/.git/hooks/pre-commit")
    assert nested.behavior == "ask"
    both = PermissionPolicy(allow=parse_rules(["Edit(.vscode/.git/**)"]))
    assert write(both, "/w/.vscode/.git/hooks/pre-commit").behavior == "allow"


def test_an_unknown_home_in_a_rule_or_a_path_is_taken_as_written() -> None:
    policy = PermissionPolicy(mode="acceptEdits", allow=parse_rules(["Edit(~nosuchuser9/**)"]))
    assert write(policy, "/w/src/app.py").behavior == "allow"
    assert write(policy, "/w/.git/config").behavior == "ask"
    assert write(policy, "~nosuchuser9/.bashrc").behavior == "ask"


ENV = {
    "XDG_CONFIG_HOME": "/x/cfg",
    "STAYER_CONFIG_DIR": "/s/stayer",
    "CLAUDE_CONFIG_DIR": "/s/claude/",
    "GIT_CONFIG_GLOBAL": "/g/gitconfig",
    "BASH_ENV": "/b/env.sh",
    "PATH": "/opt/tools/bin:relative/bin:/w/node_modules/.bin::/:/usr/local/bin",
}


@pytest.mark.parametrize(
    ("path", "part"),
    [
        ("/x/cfg/git/config", "/x/cfg/git/"),
        ("/x/cfg/fish/conf.d/x.fish", "/x/cfg/fish/"),
        ("/x/cfg/autostart/x.desktop", "/x/cfg/autostart/"),
        ("/s/stayer/settings.json", "/s/stayer/"),
        ("/s/claude/settings.json", "/s/claude/"),
        ("/g/gitconfig", "/g/gitconfig"),
        ("/b/env.sh", "/b/env.sh"),
        ("/opt/tools/bin/git", "/opt/tools/bin/"),
        ("/usr/local/bin/python3", "/usr/local/bin/"),
    ],
)
def test_the_places_the_environment_names_are_protected(path: str, part: str) -> None:
    located = environment_places([ENV], roots=(CWD,))
    decision = write(PermissionPolicy(mode="bypassPermissions"), path, located=located)
    assert decision.behavior == "ask"
    assert f"{part} is protected" in decision.reason
    allowed = PermissionPolicy(mode="bypassPermissions", allow=parse_rules([f"Edit(/{path})"]))
    assert write(allowed, path, located=located).behavior == "allow"


def test_path_folders_of_the_project_or_holding_it_stay_ordinary() -> None:
    """A PATH entry inside the working directory is the project's (node_modules/.bin); one
    that is relative, or holds the working directory (`/`), names no place of its own."""
    located = environment_places([ENV], roots=(CWD,))
    policy = PermissionPolicy(mode="acceptEdits")
    for path in ("/w/node_modules/.bin/tool", "/w/src/app.py", "/w/relative/bin/x"):
        assert write(policy, path, located=located).behavior == "allow", path
    assert write(policy, "/x/cfg/app/settings.toml", located=located).behavior == "ask"  # outside
    assert "is protected" not in write(policy, "/x/cfg/app/s.toml", located=located).reason


def test_the_environment_places_follow_the_environment_and_folders_asked_about() -> None:
    """The answer is remembered between calls (each Write asks), but never across a change:
    another PATH, another working directory, or the same values in another mapping."""

    def guarded(located: tuple[Place, ...]) -> bool:
        decision = write(
            PermissionPolicy(mode="bypassPermissions"), "/opt/tools/bin/git", located=located
        )
        return "/opt/tools/bin/ is protected" in decision.reason

    assert guarded(environment_places([ENV], roots=(CWD,)))
    assert not guarded(environment_places([{**ENV, "PATH": "/usr/local/bin"}], roots=(CWD,)))
    assert not guarded(environment_places([ENV], roots=(Path("/opt/tools"),)))  # holds it
    assert guarded(environment_places([ENV], roots=(Path("/opt/tool"),)))  # a prefix of a name
    assert environment_places([dict(ENV)], roots=(CWD,)) == environment_places([ENV], roots=(CWD,))


def test_a_rule_names_a_located_place_only_inside_it_before_any_wildcard() -> None:
    located = (Place("/w/store/", "it is a git directory"),)
    for rule, behavior in (
        ("Write(store/**)", "allow"),
        ("Write(store/config)", "allow"),
        ("Write(//w/store/config)", "allow"),
        ("Write(**)", "ask"),
        ("Write(*/config)", "ask"),
        ("Write(**/config)", "ask"),
    ):
        policy = PermissionPolicy(mode="bypassPermissions", allow=parse_rules([rule]))
        assert write(policy, "/w/store/config", "Write", located=located).behavior == behavior, rule


@pytest.mark.parametrize(
    ("path", "protected"),
    [
        ("/w/.stayer/worktrees/agent-1a2b/src/a.py", False),  # a subagent's checkout
        ("/w/.stayer/worktrees/agent-1a2b/.stayer/settings.json", True),  # its own settings
        ("/w/.stayer/worktrees/agent-1a2b/.git", True),
        ("/w/.stayer/worktrees/agent-1a2b/../../settings.json", True),
        ("/w/.stayer/worktrees/agent-1a2b", True),  # the folder itself is stayer's
        ("/w/.stayer/worktrees/other/a.py", True),
        ("/w/.stayer/agents/agent-1/x.md", True),
    ],
)
def test_only_what_is_inside_a_subagents_worktree_leaves_stayers_folder(
    path: str, protected: bool
) -> None:
    decision = write(PermissionPolicy(mode="bypassPermissions"), path)
    assert (decision.behavior != "allow") is protected
