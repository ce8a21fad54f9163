"""What programs that download write (see `bash_writes`): `curl -o` and `wget -O` write the
file named, and without one they name it after the URL (`curl -O https://x/.bashrc` writes
`.bashrc`), or after what the server and the pages say (`wget -r`), which the words do not show.
"""

from __future__ import annotations

import os

from stayer.exec.shell_syntax import SimpleCommand, Word
from stayer.tools.builtin.bash_args import options, read_args
from stayer.tools.builtin.bash_found import UNKNOWN, Found

_CURL_VALUES = options(
    *("-A", "-b", "-c", "-C", "-d", "-D", "-e", "-E", "-F", "-H", "-K", "-m", "-o", "-P", "-Q"),
    *("-r", "-t", "-T", "-u", "-U", "-w", "-x", "-X", "-y", "-Y", "-z", "--output"),
    *("--output-dir", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"),
    *("--etag-save", "--hsts", "--alt-svc", "--libcurl", "--url", "--data", "--header"),
    *("--user-agent", "--referer", "--request", "--user", "--proxy", "--max-time", "--config"),
    *("--connect-timeout", "--retry", "--form", "--upload-file", "--cookie", "--write-out"),
)
_CURL_WRITES = (
    *("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace"),
    *("--trace-ascii", "--stderr", "--etag-save", "--hsts", "--alt-svc", "--libcurl"),
)


def curl(found: Found, command: SimpleCommand) -> None:
    """`curl -o FILE` and the other files curl writes; with `-O`, each URL's last name, in
    `--output-dir` when given; with `-J`, a name the server picks."""
    args = read_args(command.words[1:], _CURL_VALUES)
    folders = args.of("--output-dir") or [Word(".")]
    for word in args.of(*_CURL_WRITES):
        if word.dynamic:
            found.word(word)
        for folder in folders if not word.dynamic else ():
            found.into(folder, iter([word.text]))
    if args.has("-O", "--remote-name", "--remote-name-all"):
        names = [_url_name(w.text) for w in command.words[1:] if "://" in w.text]
        for folder in folders:
            found.into(folder, iter(name for name in names if name))
    if args.has("-J", "--remote-header-name"):
        for folder in folders:
            found.into(folder, iter([UNKNOWN]))


def _url_name(url: str) -> str:
    """The last name of a URL's path, as `curl -O` and `wget` save it (without its query)."""
    path = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    _, _, rest = path.partition("/")
    return os.path.basename(rest) or "index.html"


_WGET_VALUES = options(
    *("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P"),
    *("--directory-prefix", "-e", "--execute", "-i", "--input-file", "-B", "--base", "-t"),
    *("--tries", "-T", "--timeout", "-w", "--wait", "-U", "--user-agent", "--header", "-l"),
    *("--level", "-A", "--accept", "-R", "--reject", "-D", "--domains", "-X", "-I"),
    *("--post-data", "--post-file", "--body-data", "--body-file", "--method", "--user"),
    *("--password", "-Q", "--quota", "--save-cookies", "--load-cookies", "--cut-dirs"),
)
_WGET_UNKNOWN = (
    *("-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites", "-x"),
    *("--force-directories", "--content-disposition", "--trust-server-names", "-i"),
    "--input-file",
)


def wget(found: Found, command: SimpleCommand) -> None:
    """`wget -O FILE`, its logs, and otherwise each URL's last name in its folder (`-P`),
    or names the server and the pages choose (`-r`, `--content-disposition`)."""
    args = read_args(command.words[1:], _WGET_VALUES)
    for word in args.of("-O", "--output-document", "-o", "--output-file", "-a"):
        found.word(word)
    for word in args.of("--append-output", "--save-cookies"):
        found.word(word)
    for word in args.of("-e", "--execute"):
        found.pieces(word)
    folders = args.of("-P", "--directory-prefix") or [Word(".")]
    if args.of("-O", "--output-document"):
        return
    names = [_url_name(w.text) for w in args.operands if not w.dynamic]
    if args.has(*_WGET_UNKNOWN) or any(w.dynamic for w in args.operands):
        names.append(UNKNOWN)
    for folder in folders:
        found.into(folder, iter(names))
