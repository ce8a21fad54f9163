"""What programs that set things up for later write of their own accord (see `bash_writes`):
`crontab`, `at` and timers queue jobs, `systemctl enable` links units, `ssh-keygen` writes keys
and `known_hosts`, `ssh-copy-id` an `authorized_keys`, `npm config set` and `yarn config set`
the user's config. None of these places is in the command's words.
"""

from __future__ import annotations

from stayer.exec.shell_syntax import SimpleCommand, Word
from stayer.tools.builtin.bash_args import options, read_args
from stayer.tools.builtin.bash_found import Found


def crontab(found: Found, command: SimpleCommand) -> None:
    """`crontab FILE`, `crontab -`, `-e` and `-r` replace the user's crontab; `-l` reads."""
    args = read_args(command.words[1:], options("-u"))
    if args.has("-l") and not args.operands:
        return
    found.path("/var/spool/cron/crontabs")


_UNIT_CHANGES = frozenset(
    {"enable", "disable", "reenable", "link", "edit", "set-property", "preset", "preset-all",
     "revert", "mask", "unmask", "add-wants", "add-requires", "set-default"}
)  # fmt: skip


def systemctl(found: Found, command: SimpleCommand) -> None:
    """`systemctl enable` and its kin write unit links (the user's with `--user`)."""
    args = read_args(command.words[1:], options("-t", "--type", "-p", "--property", "-H"))
    if not any(w.text in _UNIT_CHANGES for w in args.operands[:1]):
        return
    found.path("~/.config/systemd/user" if args.has("--user") else "/etc/systemd/system")


_KEYGEN_VALUES = options(
    *("-f", "-t", "-b", "-C", "-N", "-P", "-F", "-R", "-n", "-I", "-s", "-V", "-z", "-O"),
    *("-a", "-m", "-Y", "-E", "-w", "-D", "-r", "-M", "-J", "-j", "-K", "-T", "-S", "-G"),
)


def ssh_keygen(found: Found, command: SimpleCommand) -> None:
    """`ssh-keygen` writes the key `-f` names (and its `.pub`), else one in `~/.ssh/` (or
    `~/.ssh/known_hosts`, for `-R`); listing and reading keys writes nothing."""
    args = read_args(command.words[1:], _KEYGEN_VALUES)
    if args.has("-l", "-y", "-F", "-Q", "-L", "-B") and not args.has("-R"):
        return
    keys = args.of("-f")
    for key in keys:
        found.word(key)
        found.word(Word(key.text + ".pub", key.dynamic))
    if not keys:
        found.path("~/.ssh/")


_TIMERS = ("--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-calendar")


def scheduler(found: Found, command: SimpleCommand) -> None:
    """`at` and `batch` queue a job, `systemd-run` with a timer and `launchctl load` (and its
    kin) a service: each runs code later, so each writes the place such jobs are kept."""
    program, texts = command.program, [w.text for w in command.words[1:]]
    if program in ("at", "batch") and not {"-l", "-d", "-r", "-c"} & set(texts):
        found.path("/var/spool/cron/atjobs")
    elif program == "systemd-run" and any(t.split("=")[0] in _TIMERS for t in texts):
        found.path("~/.config/systemd/user" if "--user" in texts else "/etc/systemd/system")
    elif program == "launchctl" and {"load", "bootstrap", "enable", "submit"} & set(texts[:2]):
        found.path("~/Library/LaunchAgents")


def ssh_copy_id(found: Found, command: SimpleCommand) -> None:
    """`ssh-copy-id` adds a key to `~/.ssh/authorized_keys` on a host, which may be this one."""
    found.path("~/.ssh/authorized_keys")


def npm(found: Found, command: SimpleCommand) -> None:
    """`npm config set` (and `delete`, `edit`) writes `~/.npmrc` (the project's with
    `--location=project`); other npm commands write what any program might."""
    args = read_args(command.words[1:])
    texts = [w.text for w in args.operands]
    if texts[:1] in (["set"], ["delete"]) or (
        texts[:1] in (["config"], ["c"]) and texts[1:2] in (["set"], ["delete"], ["edit"])
    ):
        location = args.of("--location")
        project = any(w.text == "project" for w in location)
        found.path(".npmrc" if project else "~/.npmrc")
        for word in args.of("--userconfig"):
            found.word(word)
        return
    found.every_word(command)


def yarn(found: Found, command: SimpleCommand) -> None:
    """`yarn config set` (and `delete`, `unset`) writes the user's yarn config."""
    texts = [w.text for w in read_args(command.words[1:]).operands]
    if texts[:1] == ["config"] and texts[1:2] in (["set"], ["delete"], ["unset"]):
        found.path("~/.yarnrc")
        found.path("~/.yarnrc.yml")
        found.path(".yarnrc.yml")
        return
    found.every_word(command)
