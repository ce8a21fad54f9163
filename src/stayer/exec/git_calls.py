"""How a git command line is judged: which calls only look, which run commands, which print
what the repository's history holds.

A git call is read-only when its subcommand only looks (status, log, diff, show, …) within that
subcommand's rules, and nothing points git at another repository or configuration: no ``-C``,
``--git-dir``, ``--work-tree``, ``-c``, ``--config-env``, ``--exec-path`` (a repository named
elsewhere brings its own config, whose fsmonitor, filters or pager git would run). ``GIT_*``
variables are refused by the caller with every other assignment that is not harmless.

Subcommand options that write (``--output``) or run a program (``grep -O``) are refused in any
form git would take for them: git's option parser accepts a unique prefix of a long option, so
every prefix of such an option is refused, and a bundle of short options holding such a letter.
An option given a value in the next word is judged as a word of its own too, which can only
refuse more. Options git does not know make git fail; options known to be harmless pass.

Some calls run a command given on their line whatever the subcommand: ``-c alias.x='!…'``,
``submodule foreach``, ``bisect run``, ``rebase --exec``, ``difftool --extcmd``,
``filter-branch``, ``--upload-pack``/``--receive-pack``; `git_runs_code` names them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from msgspec import Struct

from .shell_words import Word

_GLOBAL_SAFE = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
     "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch",
     "--version", "--help"}
)  # fmt: skip
"""Options before the subcommand that change nothing about which repository or config git
uses (git reads these by exact name)."""

_GLOBAL_ELSEWHERE = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path",
     "--super-prefix", "--bare", "-p", "--paginate", "--list-cmds"}
)  # fmt: skip


class GitCall(Struct, frozen=True):
    """A git call's global options and subcommand, split."""

    globals: tuple[str, ...]
    settings: tuple[str, ...]
    """The values of ``-c`` (``key=value``)."""
    subcommand: str | None
    arguments: tuple[Word, ...]


def split_git(words: tuple[Word, ...]) -> GitCall | None:
    """Split git's arguments at its subcommand; None when a word before it is known only at
    run time."""
    found: list[str] = []
    settings: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word.dynamic:
            return None
        text = word.text
        if not text.startswith("-"):
            return GitCall(tuple(found), tuple(settings), text, words[index + 1 :])
        found.append(text)
        takes_value = text in ("-C", "-c", "--git-dir", "--work-tree", "--namespace",
                               "--config-env", "--super-prefix")  # fmt: skip
        if takes_value and index + 1 < len(words):
            if words[index + 1].dynamic:
                return None
            if text == "-c":
                settings.append(words[index + 1].text)
        index += 2 if takes_value else 1
    return GitCall(tuple(found), tuple(settings), None, ())


class _Options(Struct, frozen=True):
    """A subcommand's options that write or run, matched as git's parser would take them."""

    short: str = ""
    long: tuple[str, ...] = ()

    def refused(self, words: tuple[Word, ...]) -> str | None:
        for word in words:
            text = word.text
            if word.dynamic and self.long + tuple(self.short):
                return f"{text} is known only when it runs and could be an option that writes"
            if text == "--":
                return None
            if text.startswith("--") and len(text) > 2:
                name = text[2:].split("=", 1)[0]
                hit = next((option for option in self.long if option.startswith(name)), None)
                if hit is not None:
                    return f"--{hit} writes a file or runs a program"
            elif text.startswith("-") and not text.startswith("--"):
                letter = next((c for c in text[1:] if c in self.short), None)
                if letter is not None:
                    return f"-{letter} writes a file or runs a program"
        return None


_OUTPUT = _Options(long=("output",))
_NOTHING = _Options()

Subcommand = Callable[[tuple[Word, ...]], str | None]


def _options_rule(refusing: _Options) -> Subcommand:
    return refusing.refused


def _listing(
    changes: _Options, listing: tuple[str, ...], *, one_operand_reads: bool = False
) -> Subcommand:
    """A subcommand that lists unless given a name (which would create or set it)."""

    def rule(words: tuple[Word, ...]) -> str | None:
        refused = changes.refused(words)
        if refused is not None:
            return refused
        texts = [word.text for word in words]
        if any(text.split("=", 1)[0] in listing for text in texts):
            return None
        operands = [text for text in texts if not text.startswith("-")]
        if not operands or (one_operand_reads and len(operands) == 1):
            return None
        return "given a name, it creates or changes it"

    return rule


_IMPLY_LIST = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
               "--show-current")  # fmt: skip
"""Options with which `git branch` and `git tag` only list (git's own rule: they imply
`--list`), whatever names follow."""

_BRANCH = _listing(
    _Options(
        "dDmMcCfu",
        ("delete", "move", "copy", "force", "set-upstream-to", "unset-upstream",
         "edit-description", "track", "no-track", "create-reflog", "set-upstream"),
    ),
    ("--list", "-l", *_IMPLY_LIST),
)  # fmt: skip
_TAG = _listing(
    _Options("dasfmFeuv", ("delete", "annotate", "sign", "force", "message", "file", "edit",
                           "local-user", "create-reflog", "cleanup", "verify", "trailer")),
    ("--list", "-l", "-n", *_IMPLY_LIST),
)  # fmt: skip
_CONFIG = _listing(
    _Options("e", ("edit", "add", "unset", "unset-all", "replace-all", "rename-section",
                   "remove-section", "global", "system", "worktree")),
    ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
     "--get-colorbool"),
    one_operand_reads=True,
)  # fmt: skip


def _remote(words: tuple[Word, ...]) -> str | None:
    texts = [word.text for word in words]
    operands = [text for text in texts if not text.startswith("-")]
    if any(word.dynamic for word in words):
        return "a word known only when it runs could be a subcommand that changes remotes"
    if not operands or operands[0] == "get-url":
        return None
    return "it changes remotes or contacts one"


def _subcommand_verb(verbs: tuple[str, ...], default_reads: bool) -> Subcommand:
    """`git stash list`, `git reflog show`: read-only verbs of a subcommand with verbs."""

    def rule(words: tuple[Word, ...]) -> str | None:
        if any(word.dynamic for word in words):
            return "a word known only when it runs could be a verb that changes things"
        operands = [word.text for word in words if not word.text.startswith("-")]
        if not operands:
            return None if default_reads else "with no verb it changes things"
        return None if operands[0] in verbs else f"{operands[0]} changes things"

    return rule


READ_ONLY_SUBCOMMANDS: dict[str, Subcommand] = {
    **dict.fromkeys(
        (
            "status",
            "rev-parse",
            "ls-files",
            "ls-tree",
            "blame",
            "annotate",
            "describe",
            "cat-file",
            "merge-base",
            "shortlog",
            "rev-list",
            "for-each-ref",
            "show-ref",
            "name-rev",
            "count-objects",
            "check-ignore",
            "check-attr",
            "var",
            "version",
            "show-branch",
            "cherry",
            "range-diff",
            "verify-commit",
            "verify-tag",
        ),
        _options_rule(_NOTHING),
    ),
    **dict.fromkeys(
        ("diff", "log", "show", "whatchanged", "diff-tree", "diff-index", "diff-files"),
        _options_rule(_OUTPUT),
    ),
    "grep": _options_rule(_Options("O", ("open-files-in-pager",))),
    "branch": _BRANCH,
    "tag": _TAG,
    "config": _CONFIG,
    "remote": _remote,
    "stash": _subcommand_verb(("list", "show"), default_reads=False),
    "reflog": _subcommand_verb(("show",), default_reads=True),
}
"""Subcommands that only look, each with its rule: why a call of it is not read-only, or
None. `verify-commit` and `log --show-signature` run gpg, which the user's own config names."""

NO_CONTENT = frozenset(
    {"status", "rev-parse", "ls-files", "ls-tree", "branch", "tag", "remote", "config",
     "describe", "merge-base", "show-ref", "for-each-ref", "name-rev", "count-objects",
     "check-ignore", "check-attr", "var", "version", "add", "commit", "push", "fetch", "init",
     "mv", "rm", "restore", "checkout", "switch", "reset", "pull", "merge", "rebase",
     "cherry-pick", "revert", "gc", "prune", "fsck", "clean", "update-index", "symbolic-ref",
     "update-ref", "verify-pack", "check-ref-format"}
)  # fmt: skip
"""Subcommands that print no file's content, and put what history holds back only where it
was (a checkout restores `secrets/key` as `secrets/key`, which the read rules still name).
Any other subcommand (an alias too) may print what files hold or held, or copy it elsewhere
(`checkout-index --prefix`, `worktree add`, `unpack-file`, `archive`): a read of every file
the repository ever tracked."""

_METADATA_WHEN_PLAIN = frozenset({"log", "shortlog", "rev-list", "reflog", "cherry", "diff",
                                  "show", "whatchanged", "diff-tree", "diff-index",
                                  "diff-files", "stash"})  # fmt: skip
_LOG_METADATA_ONLY = frozenset(
    {"--oneline", "--graph", "--decorate", "--no-decorate", "--stat", "--shortstat",
     "--name-only", "--name-status", "--all", "--reverse", "--first-parent", "--no-merges",
     "--merges", "--abbrev-commit", "--no-abbrev-commit", "--topo-order", "--date-order",
     "--left-right", "--boundary", "--no-color", "--relative-date", "--follow", "--numstat",
     "--summary", "--no-patch", "-s", "--branches", "--tags", "--remotes", "--no-walk",
     "--dirstat", "--compact-summary", "--cached", "--staged", "--quiet", "--exit-code"}
)  # fmt: skip
_LOG_METADATA_VALUES = ("--format=", "--pretty=", "--date=", "--since=", "--until=",
                        "--after=", "--before=", "--author=", "--committer=", "--grep=",
                        "--max-count=", "--skip=", "-n", "--abbrev=", "--color=",
                        "--decorate=", "--stat=", "--dirstat=")  # fmt: skip
_PRINTS_BY_DEFAULT = frozenset({"diff", "show", "whatchanged", "diff-tree", "diff-index",
                                "diff-files"})  # fmt: skip
_CONTENT_FREE_SHOW = frozenset({"--stat", "--shortstat", "--name-only", "--name-status",
                                "--numstat", "--summary", "--no-patch", "-s", "--dirstat",
                                "--compact-summary", "--quiet", "--exit-code"})  # fmt: skip


def reads_history(subcommand: str, arguments: tuple[Word, ...]) -> bool:
    """Whether a call may print (or copy elsewhere) what some file holds or held: `git log`
    only with options that show changes or search them, `git diff` and `git show` unless
    they only name files or count changes, `git stash` only to show one; subcommands that
    print no content never; anything else always."""
    if subcommand in NO_CONTENT:
        return False
    if subcommand not in _METADATA_WHEN_PLAIN:
        return True
    texts = [word.text for word in arguments]
    if any(word.dynamic for word in arguments):
        return True
    if subcommand == "stash":
        operands = [t for t in texts if not t.startswith("-")]
        return bool(operands) and operands[0] == "show" and _shows_changes(texts[1:], True)
    return _shows_changes(texts, subcommand in _PRINTS_BY_DEFAULT)


def _shows_changes(texts: list[str], by_default: bool) -> bool:
    """Whether options make a log or diff print what changed, not only which files."""
    summarised = False
    for text in texts:
        if text == "--":
            break
        if not text.startswith("-"):
            continue
        if text in _CONTENT_FREE_SHOW:
            summarised = True
            continue
        if text in _LOG_METADATA_ONLY or text.startswith(_LOG_METADATA_VALUES):
            continue
        if text[1:].isdigit():
            continue
        return True  # -p, -S, -G, --patch, --word-diff, --raw, --objects, anything unknown
    return by_default and not summarised


def git_read_only(words: tuple[Word, ...], fed: bool) -> str | None:
    """Why a git call (its arguments, after `git`) is not read-only; None when it is."""
    if fed:
        return "it is given more arguments when it runs, which could be options"
    call = split_git(words)
    if call is None:
        return "a word before its subcommand is known only when it runs"
    elsewhere = next((g for g in call.globals if g.split("=", 1)[0] not in _GLOBAL_SAFE), None)
    if elsewhere is not None:
        return f"{elsewhere} can point git at another repository or configuration"
    if call.subcommand is None:
        return None if call.globals else "git alone prints its help"
    rule = READ_ONLY_SUBCOMMANDS.get(call.subcommand)
    if rule is None:
        return f"git {call.subcommand} is not a subcommand that only looks"
    # any subcommand that shows revisions takes --output (`git reflog --output=…`)
    return _OUTPUT.refused(call.arguments) or rule(call.arguments)


_HARMLESS_SETTING = re.compile(
    r"^(?:user\.(?:name|email)|color\.[\w.]+|core\.quotepath|advice\.\w+|"
    r"init\.defaultbranch|(?:commit|tag)\.gpgsign|log\.showsignature|"
    r"diff\.(?:noprefix|renames|algorithm|context|interhunkcontext)|"
    r"pull\.(?:rebase|ff)|merge\.ff|core\.autocrlf|safe\.directory)=[^\n]*$",
    re.IGNORECASE,
)
"""`-c` settings that make git run nothing (names, colours, defaults); any other could name a
command (an alias with `!`, a pager, an editor, a hook path, fsmonitor, a filter)."""

_RUNS_GIVEN = {
    "submodule": ("foreach",),
    "bisect": ("run",),
}
_RUNNING_OPTIONS = ("exec", "extcmd", "upload-pack", "receive-pack", "tree-filter",
                    "index-filter", "env-filter", "parent-filter", "msg-filter",
                    "commit-filter", "tag-name-filter", "subdirectory-filter", "tool",
                    "sendmail-cmd", "smtp-server", "open-files-in-pager", "config-env",
                    "exec-path", "ext-diff", "upload-archive")  # fmt: skip
_RUNNING_SHORT = {"rebase": "x", "difftool": "xt", "clone": "u", "grep": "O",
                  "fetch": "", "pull": "", "archive": ""}  # fmt: skip


def git_runs_code(words: tuple[Word, ...]) -> str | None:
    """Why a git call may run a command given on its line (or one a word known only at run
    time could give); None when it runs none of its own words."""
    call = split_git(words)
    if call is None:
        return "git is given words known only when it runs before its subcommand"
    glued = any(g.startswith("-c") and g != "-c" for g in call.globals)
    if (
        glued
        or any(g.startswith("--config-env") for g in call.globals)
        or any(not _HARMLESS_SETTING.match(setting) for setting in call.settings)
    ):
        return "git -c sets configuration that can run commands (an alias, a pager, a hook)"
    if call.subcommand is None:
        return None
    verbs = _RUNS_GIVEN.get(call.subcommand, ())
    for word in call.arguments:
        text = word.text
        if word.dynamic and call.subcommand in (*_RUNS_GIVEN, *_RUNNING_SHORT, "filter-branch"):
            return f"git {call.subcommand} is given a word known only when it runs"
        if text in verbs:
            return f"git {call.subcommand} {text} runs a command it is given"
        if (
            text.startswith("--")
            and any(option.startswith(text[2:].split("=", 1)[0]) for option in _RUNNING_OPTIONS)
            and len(text) > 2
        ):
            return f"git {call.subcommand} {text} can run a command it is given"
        short = _RUNNING_SHORT.get(call.subcommand, "")
        if text.startswith("-") and not text.startswith("--") and set(text[1:]) & set(short):
            return f"git {call.subcommand} {text} runs a command it is given"
    if call.subcommand == "filter-branch":
        return "git filter-branch runs the filters it is given"
    return None


def repository_of(folder: Path) -> Path | None:
    """The folder git takes for the repository from `folder`: the first one up from it that
    holds a `.git`, or that is a git directory itself (a bare repository, under any name)."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None
