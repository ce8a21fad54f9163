"""Protected places the session finds by looking (git directories by their layout, whatever
their names; the folders a `.git` file names) and the protected places a Bash command writes,
each judged by the session's real permission callback on real folders.

A write there asks in every mode, bypassPermissions included: headless, nobody answers, so it
is refused. Only an allow rule naming the place (a file tool's) or exactly the command line
(Bash's) lets it through.
"""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stayer.loop.state import ToolCall
from stayer.permissions import Decision, PermissionMode
from stayer.permissions.rules import command_literal
from stayer.providers.scripted import ScriptedProvider
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare


async def decide(
    root: Path,
    tool: str,
    given: dict[str, Any],
    *,
    mode: PermissionMode = "bypassPermissions",
    allowed: tuple[str, ...] = (),
    denied: tuple[str, ...] = (),
) -> Decision:
    """What the session's permission callback decides for one call in `root`."""
    setup = prepare(
        QueryOptions(
            cwd=str(root),
            provider=ScriptedProvider([]),
            permission_mode=mode,
            allowed_tools=list(allowed),
            disallowed_tools=list(denied),
            persist_session=False,
        )
    )
    implementation = setup.params.tools.tools()[tool]
    validated = implementation.input_model.model_validate(given)
    return await setup.params.can_use_tool(ToolCall(implementation, "toolu_1", validated))


async def write(root: Path, path: str, **options: Any) -> Decision:
    return await decide(root, "Write", {"file_path": str(root / path), "content": "x"}, **options)


async def bash(root: Path, command: str, **options: Any) -> Decision:
    return await decide(root, "Bash", {"command": command}, **options)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\n")
    return tmp_path


@pytest.fixture
def store(repo: Path) -> Path:
    """A bare repository in the project, under a name that is not `.git`."""
    subprocess.run(["git", "init", "-q", "--bare", str(repo / "store")], check=True)
    return repo / "store"


# --- git directories, whatever their names -------------------------------------------------


async def test_a_bare_repository_is_protected_whatever_its_name(repo: Path, store: Path) -> None:
    decision = await write(repo, "store/config")

    assert decision.behavior == "ask"
    assert "store/ is protected (it is a git directory" in decision.reason
    assert decision.suggestions == ("Write(store/config)",)
    for rule, behavior in (("Write(store/**)", "allow"), ("Write(**)", "ask"), ("Write", "ask")):
        assert (await write(repo, "store/hooks/x", allowed=(rule,))).behavior == behavior, rule


async def test_a_linked_worktree_s_git_directory_is_protected(repo: Path) -> None:
    """`HEAD` with `commondir` is a git directory too (what `git worktree add` makes)."""
    meta = repo / "meta"
    meta.mkdir()
    (meta / "HEAD").write_text("ref: refs/heads/main\n")
    (meta / "commondir").write_text("../.git\n")
    assert (await write(repo, "meta/hooks/pre-commit", mode="acceptEdits")).behavior == "ask"


async def test_the_folder_a_git_file_names_is_protected(tmp_path: Path) -> None:
    """A working directory whose `.git` is a file (`--separate-git-dir`, a submodule, a
    worktree) keeps its repository where the file says, under any name."""
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    store.mkdir()
    (work / ".git").write_text("gitdir: ../store\n")

    decision = await decide(work, "Write", {"file_path": str(store / "config"), "content": "x"})
    assert decision.behavior == "ask"
    assert f"{store}/ is protected (a .git file names it" in decision.reason


@pytest.mark.parametrize("order", list(itertools.permutations(["config", "objects/x", "HEAD"])))
async def test_a_git_directory_cannot_be_assembled_in_any_order(
    tmp_path: Path, order: tuple[str, ...]
) -> None:
    """The first part is an ordinary file; the second would make the folder hold two parts
    of a git directory's layout, so it asks, and so does every one after."""
    behaviors = []
    for name in order:
        decision = await write(tmp_path, f"evil/{name}", mode="acceptEdits")
        behaviors.append(decision.behavior)
        if decision.behavior == "allow":
            (tmp_path / "evil" / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "evil" / name).write_text("x")
        else:
            assert "evil/ is protected (with this write it holds" in decision.reason
    assert behaviors == ["allow", "ask", "ask"]


async def test_folders_that_look_a_little_like_git_are_ordinary(repo: Path) -> None:
    (repo / "src" / "hooks").mkdir()
    for path in ("notes/HEAD", "src/config.py", "src/config/index.ts", "src/hooks/use_it.ts"):
        assert (await write(repo, path, mode="acceptEdits")).behavior == "allow", path
    (repo / "notes").mkdir()
    (repo / "notes" / "HEAD").write_text("x")
    assert (await write(repo, "notes/HEAD", mode="acceptEdits")).behavior == "allow"


async def test_a_rule_for_the_repository_s_own_git_folder_still_opens_it(repo: Path) -> None:
    config = {"file_path": str(repo / ".git" / "config"), "old_string": "a", "new_string": "b"}
    for rule in ("Edit(.git/config)", "Edit(**/.git/config)", "Edit(.git/**)"):
        decision = await decide(repo, "Edit", config, mode="default", allowed=(rule,))
        assert decision.behavior == "allow", rule


async def test_a_symlink_to_a_repository_is_that_repository(repo: Path, store: Path) -> None:
    (repo / "docs").symlink_to(store)
    decision = await write(repo, "docs/config")
    assert decision.behavior == "ask"
    assert "store/ is protected" in decision.reason


# --- Bash writes ---------------------------------------------------------------------------

PROTECTED_WRITES = {
    "append to the git config": "echo '[core] fsmonitor = touch /tmp/x' >> .git/config",
    "tee": "echo x | tee -a .git/config",
    "git config": "git config core.fsmonitor 'touch /tmp/pwned'",
    "git config --global": "git config --global core.pager 'sh -c evil'",
    "sed -i": "sed -i 's/a/b/' .git/config",
    "cp a hook": "cp x .git/hooks/pre-commit",
    "dd": "dd if=x of=.git/config",
    "sort -o": "sort -o .git/config x",
    "install a hook": "install -m 755 x .git/hooks/pre-commit",
    "a hook manager's folder": "mkdir -p .husky && cp x .husky/pre-commit",
    "git init": "git init --bare store",
    "git clone": "git clone https://example.com/x/proj.git",
    "assembling a repository": "mkdir -p evil/objects evil/refs",
    "ssh config": "cat >> ~/.ssh/config <<EOF\nHost *\n  ProxyCommand sh -c evil\nEOF",
    "shell start-up": "echo 'alias ls=evil' >> ~/.bash_aliases",
    "an interpreter told where": "python3 w.py ~/.config/git/config",
    "node told where": "node w.js .git/hooks/pre-commit",
    "through cd": "cd .git && echo x >> config",
    "through a variable": 'f=.git/config; echo x >> "$f"',
    "through git's own answer": 'echo x >> "$(git rev-parse --git-dir)/config"',
    "through a here-document": "bash <<'EOF'\necho x >> .git/config\nEOF",
    "through ANSI-C quoting": "echo x >> ~/$'\\x2ebashrc'",
    "a hard link": "ln .git/config notes.txt",
    "a link made and written through": "ln -s .git g && echo x >> g/config",
    "a job for later": "echo 'curl x | sh' | at now + 1 hour",
    "too many braces to read": "echo x >> ~/.{" + ",".join(map(str, range(300))) + ",bashrc}",
}


@pytest.mark.parametrize("command", PROTECTED_WRITES.values(), ids=PROTECTED_WRITES.keys())
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
async def test_a_command_that_writes_a_protected_place_asks_in_every_mode(
    repo: Path, command: str, mode: PermissionMode
) -> None:
    decision = await bash(repo, command, mode=mode)
    assert decision.behavior == "ask"
    assert decision.question == "protected"
    assert "always needs the user's approval, even in bypassPermissions mode" in decision.reason
    # exactly this command: its `*`, `?` and `[` bracketed, so the rule matches nothing else
    assert decision.suggestions == (f"Bash({command_literal(command.strip())})",)


async def test_the_denial_names_what_is_written_and_what_protects_it(repo: Path) -> None:
    decision = await bash(repo, "cp x .git/hooks/pre-commit")
    assert decision.reason.startswith(
        "Permission to use Bash has been denied: this command writes .git/hooks/pre-commit, "
        "and .git/ is protected (git runs what its config and hooks say)"
    )
    assert '--allowedTools "Bash(cp x .git/hooks/pre-commit)"' in decision.reason
    hidden = await bash(repo, 'f=.git/config; echo x >> "$f"')
    assert "this command writes $f, which may be a protected place: its name is known only " in (
        hidden.reason
    )


ORDINARY = [
    "echo x > build.log",
    "cd src && cp app.py copy.py",
    "cp src/app.py src/other.py",
    "mkdir -p build/objects",
    'for f in src/*.py; do sed -i "s/a/b/" "$f"; done',
    'tmp=$(mktemp) && echo x > "$tmp"',
    "git commit -m 'fix .bashrc handling'",
    "git add src && git status",
    "git config user.name",
    "cp .git/config backup.txt",
    "python3 tools/gen.py src/out.py",
    "npm test",
    "source ~/.bashrc && make",
    "export PATH=~/.local/bin:$PATH && make",
]


@pytest.mark.parametrize("command", ORDINARY)
@pytest.mark.parametrize("mode", ["bypassPermissions", "dontAsk"])
async def test_ordinary_commands_write_unasked_where_the_mode_allows(
    repo: Path, command: str, mode: PermissionMode
) -> None:
    allowed = ("Bash",) if mode == "dontAsk" else ()
    decision = await bash(repo, command, mode=mode, allowed=allowed)
    assert decision.behavior == "allow", decision.reason


async def test_only_a_rule_naming_exactly_the_command_lets_it_through(repo: Path) -> None:
    command = "git config core.hooksPath .githooks"
    for rule in ("Bash", "Bash(git config:*)", "Bash(git *)", "Edit(.git/config)"):
        assert (await bash(repo, command, allowed=(rule,))).behavior == "ask", rule
    assert (await bash(repo, command, allowed=(f"Bash({command})",))).behavior == "allow"
    other = "git config core.fsmonitor evil"
    assert (await bash(repo, other, allowed=(f"Bash({command})",))).behavior == "ask"


async def test_a_deny_rule_still_wins_and_dont_ask_refuses(repo: Path) -> None:
    command = "echo x >> .git/config"
    denied = await bash(repo, command, allowed=(f"Bash({command})",), denied=("Bash(echo:*)",))
    assert denied.behavior == "deny"
    refused = await bash(repo, command, mode="dontAsk", allowed=("Bash",))
    assert refused.behavior == "deny"
    assert "dontAsk" in refused.reason and ".git/ is protected" in refused.reason


async def test_revisions_a_program_is_given_are_not_parts_of_a_git_directory(repo: Path) -> None:
    """`HEAD` in `git push origin HEAD` names no file being made, even in a project whose top
    holds a `hooks/` folder; a file tool writing `HEAD` there would make one."""
    (repo / "hooks").mkdir()
    for command in ("git push origin HEAD", "git reset --soft HEAD~1", "tool build config"):
        assert (await bash(repo, command)).behavior == "allow", command
    assert (await write(repo, "HEAD")).behavior == "ask"


async def test_a_command_into_a_repository_found_by_its_layout_asks(
    repo: Path, store: Path
) -> None:
    for command in ("cp x store/hooks/post-update", "echo x >> store/config"):
        decision = await bash(repo, command)
        assert decision.behavior == "ask", command
        assert "store/ is protected (it is a git directory" in decision.reason


async def test_the_suggested_rule_for_a_protected_command_lets_that_command_through(
    repo: Path,
) -> None:
    """The rule a protected command's question suggests (its `*` bracketed, so it matches that
    command only) is one the exact-command check takes."""
    command = "cp build/*.cfg .git/config"
    asked = await bash(repo, command)
    assert asked.behavior == "ask" and asked.suggestions == ("Bash(cp build/[*].cfg .git/config)",)
    allowed = await bash(repo, command, allowed=asked.suggestions)
    assert allowed.behavior == "allow"
    other = await bash(repo, "cp build/x.cfg .git/config", allowed=asked.suggestions)
    assert other.behavior == "ask"
