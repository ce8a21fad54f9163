"""Places no permission mode writes unasked: writing them makes other programs run code later,
without the user choosing to run it, or changes the rules the agent itself works under.

No mode (`acceptEdits`, even `bypassPermissions`) writes these unasked, with a file tool or a
shell command: such a write asks the user, as Claude Code's does, and with nobody to ask it is
denied. Only an allow rule that names the place itself lets it through without asking: for a
file tool one whose pattern names it (`Edit(.git/config)`, `Write(.claude/**)`; `Edit(**)`
does not), for Bash one that names exactly the command line.

A place is protected by its name, at any depth (`.git/` in `vendor/lib/` too), or by where it
is (under the home directory, in `/etc`, in a folder the environment names), or by what it
holds (a git directory, whatever it is called). Names are compared case-folded, as macOS and
Windows file systems compare them. What is on the disk and in the environment is looked at by
the session (`stayer.session.protected_look`) and handed in as `located` places: this module
does no I/O.

What is protected, and why:

* git directories: `.git/`, and any folder git would take for one, whatever its name (one
  holding `HEAD` with `objects/` and `refs/`, or `HEAD` with `commondir`; one a `.git` file
  names with `gitdir:`), and a folder about to become one (a write of `HEAD`, `config`,
  `objects/`, `refs/`, `hooks/`, `info/`, `commondir`, `gitdir`, `packed-refs` or
  `config.worktree` into a folder that already holds another of them, or two at once): git
  runs what a repository's config says (`core.fsmonitor` on the next `git status`, a pager,
  an editor, filter drivers) and its hooks on commit. Also `.gitmodules` (git fetches and
  checks out what it names).
* git's other configs: `.gitconfig` anywhere, `.config/git/` (and `$XDG_CONFIG_HOME/git/`),
  `/etc/gitconfig`, and the files `GIT_CONFIG_GLOBAL` and `GIT_CONFIG_SYSTEM` name.
* hook managers: `.husky/`, `.githooks/`, `.lefthook/`, lefthook's config in each of its
  spellings, `.pre-commit-config.yaml`, `.overcommit.yml`, husky 4's and simple-git-hooks'
  configs: each runs its commands on the next commit.
* ssh and gpg: `.ssh/` (`config` can hold a `ProxyCommand`, `authorized_keys` lets others
  in), `/etc/ssh/`, `.gnupg/` (an agent config names programs gpg starts).
* shell start-up: every file a shell reads as it starts (`.bashrc`, `.bash_profile`,
  `.bash_login`, `.bash_aliases`, `.profile`, the zsh and csh files, `.config/fish/`, X
  session files, `.pam_environment`, `.config/environment.d/`), the system ones
  (`/etc/profile`, `/etc/profile.d/`, `/etc/bash.bashrc`, `/etc/zsh*`, `/etc/environment`,
  …), and the files `BASH_ENV` and `ENV` name; `.envrc` (direnv runs it on entering the
  folder, and `.config/direnv/` on every one); `.tmux.conf`.
* editors: `.vscode/` and `.idea/` run tasks and run configurations; vim's and emacs's
  start-up files (`.vimrc`, `.exrc`, `.vim/`, `.config/nvim/`, `.emacs`, `.emacs.d/`).
* the agent's own settings: `.claude/`, `.stayer/` (but for what is inside a subagent's git
  worktree, `.stayer/worktrees/agent-<id>/`), `.mcp.json` (it starts MCP servers),
  `.claude.json`, and `STAYER_CONFIG_DIR` and `CLAUDE_CONFIG_DIR` when set.
* what the system starts by itself: `.config/autostart/`, `.config/systemd/`,
  `Library/LaunchAgents/` and `LaunchDaemons/`, crontabs (`/var/spool/cron/`, `/etc/cron*`),
  `/etc/systemd/`, `/etc/xdg/autostart/`, `/etc/init.d/`, `/etc/rc.local`; and what changes
  every program or command: `/etc/ld.so.preload`, `/etc/sudoers*`.
* commands found on the `PATH`: `.local/bin/`, and every other `PATH` folder outside the
  working directories (a new file there shadows a command the user runs); Python's
  `sitecustomize.py` and `usercustomize.py`, and `.pth` files in `site-packages` (Python
  runs them at every start); `.ripgreprc` (its `--pre` runs a program on every search).
* user-wide package manager configs: `~/.npmrc`, `~/.yarnrc`, `~/.yarnrc.yml` (they can make
  every npm or yarn command run a program: `node-options`, `script-shell`, `yarnPath`),
  `~/.cargo/config.toml` (a wrapper for every build) and `~/.gradle/init.d/` (scripts every
  build runs). A project's own `.npmrc`, `Makefile` or `package.json` is ordinary work: it
  holds no more power than the project's code, which the user runs knowingly.

The list is not exhaustive: a program can read configuration from anywhere, and a shell
command can write through a program (`python x.py`) what its words do not show. `--sandbox`
keeps commands' writes inside the working directories, where `.git/` still is.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePath

from msgspec import Struct

_GIT = "git runs what its config and hooks say"
_SHELL = "the shell runs it at start-up"
_HOOKS = "its commands run on the next commit"
_AGENT = "it holds the agent's settings, hooks and commands"
_STARTS = "the system runs what it holds without being asked"
_EDITOR = "the editor runs it at start-up"
_PATH = "a command put there runs in place of the one the user meant"


class Place(Struct, frozen=True):
    """A protected place and why it is protected.

    `part` is how the place is known: by its name at any depth (`.git/`, `.bashrc`,
    `.config/git/`; a folder ends with `/`), or, when it starts with `/`, by where it is (the
    absolute path of a file, or of a folder ending with `/`)."""

    part: str
    why: str

    @property
    def located(self) -> bool:
        """Whether the place is known by where it is rather than by its name."""
        return self.part.startswith("/")


class Writes(Struct, frozen=True):
    """What the resolve step found out about one call's writes, for `evaluate` to judge.

    `paths` are every name (resolved, and as written) of each path a command writes besides
    its subject; `unknown` the destinations it writes that are known only when it runs, as
    written (`"$f"`, the names `xargs` feeds); `located` the places known by where they are
    that the environment names or the disk shows (git directories, whatever their names)."""

    paths: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    located: tuple[Place, ...] = ()


PROTECTED_DIRECTORIES: dict[str, str] = {
    ".git": _GIT,
    ".stayer": "it holds stayer's own settings",
    ".claude": _AGENT,
    ".vscode": "the editor runs its tasks and settings",
    ".idea": "the IDE runs its run configurations",
    ".husky": _HOOKS,
    ".githooks": _HOOKS,
    ".lefthook": _HOOKS,
    ".lefthook-local": _HOOKS,
    ".ssh": "ssh runs what its config says (ProxyCommand) and lets in the keys it lists",
    ".gnupg": "gpg starts the programs its agent config names",
    ".vim": _EDITOR,
    ".emacs.d": _EDITOR,
}

PROTECTED_TRAILS: dict[tuple[str, ...], str] = {
    (".config", "git"): _GIT,
    (".config", "fish"): _SHELL,
    (".config", "environment.d"): "the session's environment is read from it at login",
    (".config", "direnv"): "direnv runs it in every folder it loads",
    (".config", "nvim"): _EDITOR,
    (".config", "autostart"): _STARTS,
    (".config", "systemd"): _STARTS,
    ("library", "launchagents"): _STARTS,
    ("library", "launchdaemons"): _STARTS,
    (".local", "bin"): _PATH,
}
"""Folders known by the names of the folders they are in, at any depth (`~/.config/git/`)."""

_LEFTHOOK = tuple(
    f"{dot}lefthook{local}.{ext}"
    for dot in ("", ".")
    for local in ("", "-local")
    for ext in ("yml", "yaml", "toml", "json", "jsonc")
)

PROTECTED_FILES: dict[str, str] = {
    ".mcp.json": "it starts MCP servers for the agent",
    ".claude.json": "it holds the agent's settings",
    ".gitconfig": _GIT,
    ".gitmodules": "git fetches and checks out what it names",
    ".envrc": "direnv runs it on entering the directory",
    ".ripgreprc": "the search tool runs the programs its options name",
    ".tmux.conf": "tmux runs the commands it holds at start-up",
    "sitecustomize.py": "Python runs it at every start",
    "usercustomize.py": "Python runs it at every start",
    **dict.fromkeys(
        (
            ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases",
            ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc",
            ".tcshrc", ".login", ".kshrc", ".mkshrc", "config.fish", ".xprofile", ".xinitrc",
            ".xsession", ".xsessionrc", ".pam_environment",
        ),
        _SHELL,
    ),
    **dict.fromkeys((".vimrc", ".gvimrc", ".exrc", ".nvimrc", ".nvim.lua", ".emacs"), _EDITOR),
    **dict.fromkeys(
        (
            *_LEFTHOOK, ".pre-commit-config.yaml", ".pre-commit-config.yml", ".overcommit.yml",
            ".huskyrc", ".huskyrc.json", ".huskyrc.js", ".huskyrc.cjs", "husky.config.js",
            *(f"{dot}simple-git-hooks.{ext}" for dot in ("", ".")
              for ext in ("json", "js", "cjs", "mjs")),
        ),
        _HOOKS,
    ),
}  # fmt: skip

_PACKAGE_RC = "every command of that package manager can be made to run a program it names"
HOME_PLACES: dict[str, str] = {
    ".npmrc": _PACKAGE_RC,
    ".yarnrc": _PACKAGE_RC,
    ".yarnrc.yml": _PACKAGE_RC,
    ".cargo/config": "every cargo build runs the wrappers it names",
    ".cargo/config.toml": "every cargo build runs the wrappers it names",
    ".gradle/init.d/": "every Gradle build runs the scripts it holds",
}
"""Places under the home directory only: the same name in a project is the project's own."""

_ETC_SHELL = (
    "profile", "profile.d/", "bash.bashrc", "bashrc", "bash_completion.d/", "environment",
    "zshenv", "zshrc", "zprofile", "zlogin", "zlogout", "zsh/", "fish/", "csh.cshrc",
    "csh.login",
)  # fmt: skip
SYSTEM_PLACES: dict[str, str] = {
    "/etc/gitconfig": _GIT,
    **{f"/etc/{name}": _SHELL for name in _ETC_SHELL},
    "/etc/ssh/": "ssh and its server run what their configs say",
    **dict.fromkeys(
        (
            "/etc/crontab", "/etc/cron.d/", "/etc/cron.hourly/", "/etc/cron.daily/",
            "/etc/cron.weekly/", "/etc/cron.monthly/", "/var/spool/cron/", "/etc/systemd/",
            "/etc/xdg/autostart/", "/etc/init.d/", "/etc/rc.local",
        ),
        _STARTS,
    ),
    "/etc/ld.so.preload": "every program loads the libraries it names",
    "/etc/sudoers": "it says who may run what as root",
    "/etc/sudoers.d/": "it says who may run what as root",
}  # fmt: skip

_SITE_FOLDERS = frozenset({"site-packages", "dist-packages"})

GIT_LAYOUT_FILES = frozenset(
    {"head", "config", "commondir", "gitdir", "packed-refs", "config.worktree"}
)
GIT_LAYOUT_FOLDERS = frozenset({"objects", "refs", "hooks", "info"})
"""What a git directory holds (case-folded): the files and folders whose presence together
makes a folder one (git's own test is `HEAD` with `objects/` and `refs/`, or with
`commondir`), and the ones that make git run code (`config`, `hooks/`, `info/attributes`)."""


def layout_name(entry: str) -> str:
    """A (case-folded) part of git's layout as git names it on the disk (`HEAD`, `refs`)."""
    return "HEAD" if entry == "head" else entry


def protected_places(path: str, located: Iterable[Place] = ()) -> list[Place]:
    """Every protected place `path` is in or is, outermost first by kind: its names, then
    the places known by where they are (the built-in ones, and `located`).

    `path` is absolute for located places to apply; a rule's pattern may be judged too."""
    text = path.casefold()
    folded = PurePath(text).parts
    found = _named(folded)
    for place in (*_fixed_places(), *located):
        if _within(text, place.part.casefold()):
            found.append(place)
    if len(folded) > 1 and folded[-1].endswith(".pth") and _SITE_FOLDERS & set(folded[:-1]):
        found.append(Place(folded[-1], "Python runs it at every start"))
    return list(dict.fromkeys(found))


def _named(parts: Sequence[str]) -> list[Place]:
    found = [
        Place(part + "/", PROTECTED_DIRECTORIES[part])
        for at, part in enumerate(parts)
        if part in PROTECTED_DIRECTORIES and not _in_worktree(parts, at)
    ]
    for trail, why in PROTECTED_TRAILS.items():
        size = len(trail)
        if any(tuple(parts[i : i + size]) == trail for i in range(len(parts) - size + 1)):
            found.append(Place("/".join(trail) + "/", why))
    if parts and parts[-1] in PROTECTED_FILES:
        found.append(Place(parts[-1], PROTECTED_FILES[parts[-1]]))
    return found


def _in_worktree(parts: Sequence[str], at: int) -> bool:
    """Whether the `.stayer` at `parts[at]` only holds a subagent's git worktree, something
    inside `.stayer/worktrees/agent-<id>/` (stayer reads no settings from there; the child
    writes its work there). A `..` after it could climb back out, so then it does not count;
    a protected name further in (the worktree's own `.git`, `.stayer`) still counts."""
    rest = parts[at + 1 :]
    return (
        parts[at] == ".stayer"
        and len(rest) > 2
        and rest[0] == "worktrees"
        and rest[1].startswith("agent-")
        and not {".", ".."} & set(rest)
    )


def _within(path: str, place: str) -> bool:
    """Whether the (case-folded, absolute) `path` is the place or lies inside it."""
    if place.endswith("/"):
        return (path.rstrip("/") + "/").startswith(place)
    return path == place


def _fixed_places() -> tuple[Place, ...]:
    """The places known by where they are, whatever the environment: the system's, and the
    ones under the home directory."""
    home = str(Path.home()).rstrip("/")
    under_home = tuple(Place(f"{home}/{name}", why) for name, why in HOME_PLACES.items())
    return (*under_home, *(Place(part, why) for part, why in SYSTEM_PLACES.items()))


def protected_parts(path: str) -> list[tuple[str, str]]:
    """Every protected place in `path` (see `protected_places`) as its name and why."""
    return [(place.part, place.why) for place in protected_places(path)]


def protected_part(path: str) -> tuple[str, str] | None:
    """The outermost protected place in `path` and why; None if there is none."""
    found = protected_parts(path)
    return found[0] if found else None


_XDG_FOLDERS = {"git": _GIT, "fish": _SHELL, "environment.d": _SHELL, "direnv": _SHELL,
                "nvim": _EDITOR, "autostart": _STARTS, "systemd": _STARTS}  # fmt: skip


_NAMED_BY_ENV = ("STAYER_CONFIG_DIR", "CLAUDE_CONFIG_DIR", "GIT_CONFIG_GLOBAL",
                 "GIT_CONFIG_SYSTEM", "BASH_ENV", "ENV", "XDG_CONFIG_HOME", "PATH")  # fmt: skip
"""The variables `environment_places` reads, in the order `_environment_places` takes them."""


def environment_places(
    environments: Iterable[Mapping[str, str]], *, roots: Sequence[Path] = ()
) -> tuple[Place, ...]:
    """The places the environment names: the agent's and git's config locations, the files
    shells source, and the `PATH` folders outside the working directories (`roots`), whose
    own files are the project's.

    Every Write, Edit and command asks, and the answer depends only on these few variables,
    the roots and the home directory, which a batch's sessions mostly share: it is worked out
    once for each (a millisecond with a PATH of 20 folders) and remembered."""
    values = tuple(tuple(env.get(name) for name in _NAMED_BY_ENV) for env in environments)
    return _environment_places(values, tuple(str(root) for root in roots), str(Path.home()))


@functools.lru_cache(maxsize=256)
def _environment_places(
    environments: tuple[tuple[str | None, ...], ...], roots: tuple[str, ...], home: str
) -> tuple[Place, ...]:
    found: list[Place] = []
    for values in environments:
        env = dict(zip(_NAMED_BY_ENV, values, strict=True))
        for name, why in (
            ("STAYER_CONFIG_DIR", "it holds stayer's own settings"),
            ("CLAUDE_CONFIG_DIR", _AGENT),
        ):
            found += _folder(env[name], why)
        for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
            found += _file(env[name], _GIT)
        for name in ("BASH_ENV", "ENV"):
            found += _file(env[name], _SHELL)
        xdg = env["XDG_CONFIG_HOME"]
        for folder, why in _XDG_FOLDERS.items():
            found += _folder(f"{xdg}/{folder}" if xdg else None, why)
        for folder in (env["PATH"] or "").split(":"):
            if _stands_apart(folder, roots, home):
                found += _folder(folder, _PATH)
    return tuple(dict.fromkeys(found))


def _folder(value: str | None, why: str) -> list[Place]:
    if not value or not value.startswith("/"):
        return []  # a relative one means something else in every folder: it names no place
    return [Place(_normal(value).rstrip("/") + "/", why)] if _normal(value) != "/" else []


def _file(value: str | None, why: str) -> list[Place]:
    if not value or not value.startswith("/"):
        return []
    return [Place(_normal(value), why)]


def _normal(value: str) -> str:
    return os.path.normpath(value)


def _stands_apart(folder: str, roots: Sequence[str], home: str) -> bool:
    """Whether a `PATH` folder is neither a working directory's own (its `node_modules/.bin`
    is the project's) nor one holding a working directory, nor the home directory."""
    if not folder.startswith("/"):
        return False
    path = _normal(folder)
    if path in ("/", home):
        return False
    return not any(_under(path, root) or _under(root, path) for root in roots)


def _under(inner: str, outer: str) -> bool:
    """Whether the absolute path `inner` is `outer` or lies under it (by its components, as
    `PurePath.is_relative_to` compares them)."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def git_entries(path: str) -> list[tuple[str, str]]:
    """Each (folder, entry) where `path` writes a part of a git directory's layout: a
    layout folder at any depth (`x/objects/ab/cd` puts `objects` in `x`), a layout file only
    as the last component (`x/config`, not `x/config/app.ts`). Entries are case-folded."""
    parts = PurePath(path).parts
    found: list[tuple[str, str]] = []
    for index in range(1, len(parts)):
        entry = parts[index].casefold()
        last = index == len(parts) - 1
        if entry in GIT_LAYOUT_FOLDERS or (last and entry in GIT_LAYOUT_FILES):
            found.append((str(PurePath(*parts[:index])), entry))
    return found


def rule_names(pattern: str, needed: Iterable[Place], located: Iterable[Place] = ()) -> bool:
    """Whether a rule's absolute path `pattern` names every one of the `needed` places
    itself: holds a name-known place among its components, or lies inside a located one
    before any wildcard (`evil/**` names `evil/`; `**` does not)."""
    named = set(protected_places(pattern, located))
    return all(place in named for place in needed)


_DYNAMIC = ("$", "`", "\u2026", "*", "?", "[")
_UNREAD_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_TOKEN_BREAKS = re.compile(r"[\s'\"`(){}\[\],;=<>|&:$]+")


def named_in(text: str, located: Iterable[Place] = (), *, home: str | None = None) -> Place | None:
    """The first protected place a word of `text` names (a command line, a program's code):
    its words are split wherever a path could not go on (quotes, brackets, `=`, `:`, `$`), so
    `open('.git/config')` and `--out=~/.ssh/config` name theirs."""
    home = home if home is not None else str(Path.home())
    for token in _TOKEN_BREAKS.split(text):
        if not token:
            continue
        absolute = home + token[1:] if token == "~" or token.startswith("~/") else token
        found = protected_places(absolute, located)
        if found:
            return found[0]
    return None


def unknown_place(text: str, line: str, located: Iterable[Place] = ()) -> Place | None:
    """Why a destination known only when the command runs may be a protected place, or None.

    It may be when its fixed part names one (`"$HOME/.ssh/config"` once `$HOME` is known,
    `"$d/.git/hooks/x"`), when what follows a part known only at run time is part of git's
    layout (`"$(git rev-parse --git-dir)/hooks/x"`, `"$d/config"`), or when the command line
    names a protected place anywhere, which a variable or a loop may carry into it
    (`f=.git/config; echo … >> "$f"`)."""
    fixed = re.sub(r"[\"'`)]", "", text)
    found = protected_places(fixed, located)
    if found:
        return found[0]
    if _UNREAD_BRACES.search(fixed):
        return Place(text, "its name comes from more brace expansions than can be read")
    parts = PurePath(fixed).parts
    dynamic = next((i for i, part in enumerate(parts) if any(c in part for c in _DYNAMIC)), None)
    if dynamic is not None:
        for folder, entry in git_entries(fixed):
            if len(PurePath(folder).parts) > dynamic:
                return Place(
                    text,
                    f"its folder is known only when the command runs, and {layout_name(entry)}"
                    " is part of a git directory, whose config and hooks git runs",
                )
    named = named_in(line, located)
    if named is not None:
        return Place(
            text,
            f"its name is known only when the command runs, and the command names "
            f"{named.part} ({named.why}), which a variable can carry into it",
        )
    return None
