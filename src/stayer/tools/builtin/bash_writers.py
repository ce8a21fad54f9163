"""The programs known to write only some of their words, and which (see `bash_writes`).

Each entry reads one simple command's words, as getopt would (options anywhere, bundles such as
``-sSLo file``, ``--opt=value``, ``--`` ending them), and reports what it writes to `Found`:
its destination operands, the files its options name (``sort -o``, ``curl -o``, ``dd of=``),
and the places it writes of its own accord (``git config --global`` writes ``~/.gitconfig``,
``crontab`` the user's crontab, ``git init`` a git directory). A word that is not known to be
written is not reported: ``cp .git/config backup`` only reads ``.git/config``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from stayer.exec.sed_scripts import sed_call
from stayer.exec.shell_syntax import SimpleCommand, Word
from stayer.tools.builtin.bash_args import options, read_args
from stayer.tools.builtin.bash_config_writes import (
    crontab,
    npm,
    scheduler,
    ssh_copy_id,
    ssh_keygen,
    systemctl,
    yarn,
)
from stayer.tools.builtin.bash_download_writes import curl, wget
from stayer.tools.builtin.bash_found import UNKNOWN, Found, tree
from stayer.tools.builtin.bash_git_writes import git

Writer = Callable[[Found, SimpleCommand], None]


def each_operand(*with_value: str) -> Writer:
    """A program that writes every operand it is given (`touch`, `rm`, `tee`, `chmod`)."""
    values = frozenset(with_value)

    def write(found: Found, command: SimpleCommand) -> None:
        for word in read_args(command.words[1:], values).operands:
            found.word(word)

    return write


def named_by(*options: str, with_value: tuple[str, ...] = ()) -> Writer:
    """A program that writes only the files some of its options name (`sort -o`, `time -o`)."""
    values = frozenset((*options, *with_value))

    def write(found: Found, command: SimpleCommand) -> None:
        for word in read_args(command.words[1:], values).of(*options):
            found.word(word)

    return write


_COPY_VALUES = options(
    *("-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g"),
    "--group",
)
_RSYNC_VALUES = options(
    *("-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--exclude-from"),
    *("--include-from", "--files-from", "-T", "--temp-dir", "--backup-dir", "--suffix"),
    *("--chmod", "--chown", "-B", "--block-size", "--timeout", "--partial-dir", "--log-file"),
    *("--compare-dest", "--copy-dest", "--link-dest", "-M", "--remote-option", "--rsync-path"),
    *("--password-file", "--port", "--max-size", "--min-size", "--out-format", "--write-batch"),
    *("--only-write-batch", "--read-batch", "-i", "-P", "-F", "-o", "-l", "-c", "-S", "-J"),
)
_RSYNC_WRITES = ("--log-file", "--write-batch", "--only-write-batch", "--backup-dir", "-T")
_REMOTE = re.compile(r"^[^/]*?:(?P<path>.*)$")


def copy(found: Found, command: SimpleCommand) -> None:
    """`cp`, `mv`, `ln`, `install`, `rsync`, `scp`: the destination, and in it the name of
    each source and of everything inside a source folder; `mv` empties its sources too, and a
    link (`ln`, `cp -l`, `cp -s`) lets a write through its new name, later in the line or in a
    later call, change the source."""
    program = command.program
    remote = program in ("rsync", "scp")
    args = read_args(command.words[1:], _RSYNC_VALUES if remote else _COPY_VALUES)
    operands = args.operands
    if program == "install" and args.has("-d", "--directory"):
        for word in operands:
            found.word(word)
        return
    for word in args.of(*_RSYNC_WRITES) if remote else ():
        found.word(word)
    destinations = args.of("-t", "--target-directory")
    sources = operands
    if not destinations and len(operands) >= 2:
        destinations, sources = [operands[-1]], operands[:-1]
    elif not destinations and operands and program == "ln":
        destinations, sources = [Word(".")], operands  # `ln -s target`: a link named as it
    for destination in destinations:
        destination = _remote_path(destination) if remote else destination
        found.word(destination)
        for source in sources:
            if not source.dynamic:
                _copied(found, destination, source.text)
    linked = program == "ln" or (
        program == "cp" and args.has("-l", "--link", "-s", "--symbolic-link")
    )
    if program == "mv" or linked:  # moved away, or given a second name to write it by
        for source in sources:
            found.word(source)


def _copied(found: Found, destination: Word, source: str) -> None:
    name = os.path.basename(source.rstrip("/"))
    inside = list(tree(source, found.bases))
    found.into(destination, iter([name] if name else []))
    found.into(destination, iter(inside))  # `cp -r src/. dest`, `rsync src/ dest`
    found.into(destination, (os.path.join(name, entry) for entry in inside))


def _remote_path(word: Word) -> Word:
    """A `host:path` destination as the path on that host, which may be this one (under
    its home when relative)."""
    match = _REMOTE.match(word.text)
    if word.dynamic or match is None:
        return word
    path = match.group("path")
    return Word(path if path.startswith(("/", "~")) else "~/" + path)


_SED_VALUES = options("-e", "--expression", "-f", "--file", "-l", "--line-length")


def sed(found: Found, command: SimpleCommand) -> None:
    """`sed -i` writes its files; any sed may write a file its script names (`w file`, the
    `w` flag of `s///`), so those, and the path-like pieces of a script, count as written."""
    words = command.words[1:]
    args = read_args(words, _SED_VALUES)
    scripts = args.of("-e", "--expression")
    operands = args.operands
    if not scripts and not args.of("-f", "--file") and operands:
        scripts, operands = [operands[0]], operands[1:]
    for script in scripts:
        found.pieces(script)
        for target in re.findall(r"[wW]\s*(\S+)", script.text):
            found.path(target)
    call = sed_call(words)
    for target in () if call is None else call.writes:
        found.path(target)
    if call is None or call.in_place or _in_place(words):
        for word in operands:
            found.word(word)


def _in_place(words: tuple[Word, ...]) -> bool:
    """Whether sed edits its files in place: `-i` (alone or in a bundle, before an option
    that takes the rest of the word), `--in-place`; or a word known only when it runs, which
    may be either."""
    for word in words:
        text = word.text
        if word.dynamic or text == "--in-place" or text.startswith("--in-place="):
            return True
        if text.startswith("-") and not text.startswith("--"):
            for letter in text[1:]:
                if letter == "i":
                    return True
                if letter in "efl":
                    break
    return False


def dd(found: Found, command: SimpleCommand) -> None:
    """`dd of=FILE`."""
    for word in command.words[1:]:
        if word.text.startswith("of="):
            found.word(Word(word.text[3:], word.dynamic))


def second_operand(*with_value: str) -> Writer:
    """`uniq IN OUT` writes OUT."""
    values = frozenset(with_value)

    def write(found: Found, command: SimpleCommand) -> None:
        for word in read_args(command.words[1:], values).operands[1:2]:
            found.word(word)

    return write


_FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})


def find(found: Found, command: SimpleCommand) -> None:
    """`find -fprint FILE` (and its kin) writes FILE; `-delete` deletes under its roots.
    What `-exec` runs is judged on its own."""
    words = command.words[1:]
    roots = []
    for word in words:
        if word.text.startswith(("-", "(", "!", ")")):
            break
        roots.append(word)
    for index, word in enumerate(words[:-1]):
        if word.text in _FIND_WRITES:
            found.word(words[index + 1])
    if any(word.text == "-delete" for word in words):
        for root in roots or [Word(".")]:
            found.word(root)


_TAR_VALUES = options(
    *("-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-b"),
    *("--blocking-factor", "-H", "--format", "-K", "--starting-file", "-N", "--newer", "-V"),
    *("--label", "-g", "--listed-incremental", "-I", "--use-compress-program", "-L"),
    *("--tape-length", "-F", "--info-script", "--to-command", "--owner", "--group", "--mode"),
    *("--mtime", "--exclude", "--transform", "--xform", "--index-file"),
)
_TAR_EXTRACTS = ("-x", "--extract", "--get")
_TAR_CREATES = ("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate")


def tar(found: Found, command: SimpleCommand) -> None:
    """`tar -x` writes into its folder (`-C`, else where it runs): the members it names and
    whatever else the archive holds; `tar -c` (and `-r`, `-u`) writes its archive."""
    words = list(command.words[1:])
    if words and not words[0].dynamic and not words[0].text.startswith("-"):
        words[0] = Word("-" + words[0].text)  # the old form: `tar xzf a.tgz`
    args = read_args(tuple(words), _TAR_VALUES)
    if args.has(*_TAR_CREATES, "--delete"):
        for word in args.of("-f", "--file"):
            found.word(word)
    for word in args.of("-g", "--listed-incremental", "--index-file"):
        found.word(word)
    if args.has(*_TAR_EXTRACTS):
        for folder in args.of("-C", "--directory") or [Word(".")]:
            _extracted(found, folder, args.operands)


def _extracted(found: Found, folder: Word, members: list[Word]) -> None:
    """An archive unpacked into `folder`: the folder, the members named, and the rest,
    which the words do not show."""
    found.word(folder)
    found.into(folder, iter([member.text for member in members if not member.dynamic]))
    found.into(folder, iter([UNKNOWN]))


def unzip(found: Found, command: SimpleCommand) -> None:
    """`unzip ARCHIVE [MEMBER…] [-d FOLDER]` writes into the folder."""
    args = read_args(command.words[1:], options("-d", "-P", "-I", "-O"))
    for folder in args.of("-d") or [Word(".")]:
        _extracted(found, folder, args.operands[1:])


_SUFFIXES = (".gz", ".tgz", ".bz2", ".xz", ".zst", ".lz4", ".lzma", ".z", ".br")


def compressor(found: Found, command: SimpleCommand) -> None:
    """`gzip`, `gunzip` and their kin write each file beside itself, with the suffix added or
    taken away (`gunzip .bashrc.gz` writes `.bashrc`), unless they write to standard output."""
    args = read_args(command.words[1:], options("-S", "--suffix", "-o", "--output"))
    for word in args.of("-o", "--output"):
        found.word(word)
    if args.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"):
        return
    for word in args.operands:
        found.word(word)
        stem, suffix = os.path.splitext(word.text)
        if suffix.casefold() in _SUFFIXES:
            found.word(Word(stem, word.dynamic))


def patch(found: Found, command: SimpleCommand) -> None:
    """`patch FILE` writes FILE; otherwise it writes the files the patch names, which its
    words do not show."""
    args = read_args(
        command.words[1:],
        options("-o", "--output", "-i", "--input", "-d", "--directory", "-p", "--strip", "-r"),
    )
    for word in (*args.of("-o", "--output", "-r"), *args.operands[:1]):
        found.word(word)
    for folder in args.of("-d", "--directory") or [Word(".")]:
        found.into(folder, iter([UNKNOWN]))


WRITERS: dict[str, Writer] = {
    **dict.fromkeys(("cp", "mv", "ln", "install", "rsync", "scp"), copy),
    "tee": each_operand(),
    "touch": each_operand("-r", "--reference", "-d", "--date", "-t"),
    "mkdir": each_operand("-m", "--mode"),
    **dict.fromkeys(("rm", "rmdir", "unlink"), each_operand()),
    "shred": each_operand("-n", "--iterations", "-s", "--size", "--random-source"),
    "truncate": each_operand("-s", "--size", "-r", "--reference"),
    **dict.fromkeys(("mkfifo", "mknod"), each_operand("-m", "--mode")),
    **dict.fromkeys(("chmod", "chown", "chgrp", "chattr", "setfacl"), each_operand()),
    "sed": sed,
    "dd": dd,
    "sort": named_by(
        "-o",
        "--output",
        with_value=("-k", "--key", "-t", "-S", "-T", "--field-separator", "--buffer-size"),
    ),
    "uniq": second_operand("-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"),
    "time": named_by("-o", "--output", with_value=("-f", "--format")),
    "find": find,
    "tar": tar,
    "unzip": unzip,
    **dict.fromkeys(
        ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "brotli"),
        compressor,
    ),
    "curl": curl,
    "wget": wget,
    "git": git,
    "crontab": crontab,
    **dict.fromkeys(("at", "batch", "systemd-run", "launchctl"), scheduler),
    "systemctl": systemctl,
    "ssh-keygen": ssh_keygen,
    "ssh-copy-id": ssh_copy_id,
    "npm": npm,
    "yarn": yarn,
    "patch": patch,
    "ssh-add": lambda found, command: None,  # it reads the keys it is given
}
