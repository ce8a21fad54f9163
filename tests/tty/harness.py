"""The REPL driven as a person drives it: the real `stayer` in a tmux pane, against the fake
model server.

Each `Pane` has a tmux server of its own (`tmux -L <unique socket> -f /dev/null`), so tests
never see each other's panes, nor a user's tmux or its configuration. The pane runs a small
shell script in a fresh git repository: `python -m stayer ARGS`, its standard error to a file,
then `EXITED <status>` and the terminal's line discipline as `stty -a` sees it (`TTY icanon
echo` when stayer gave the terminal back as it found it). The pane stays after the program
ends (remain-on-exit), so those lines can be read. HOME and stayer's config folder are the
test's own; the model variables point at the fake; TERM is xterm-256color (NO_COLOR only when
a test asks for plain output).

Waiting is polling the screen (`wait_for`): what the screen shows is the signal a person
waits on. Closing the pane fails the test when stayer left a Python traceback on its standard
error, then kills its tmux server (the terminal going away, which stayer must survive quietly
too: `test_repl_exit`) and waits for stayer to end.
"""

from __future__ import annotations

import difflib
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path

import pytest
from msgspec import Struct

from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer
from tests.unit.tools.helpers import is_running

TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(
    TMUX is None,
    reason="tmux is not installed (scripts/bootstrap.py installs it): the REPL's terminal "
    "tests drive stayer in a tmux pane",
)

POLL_S = 0.02
"""How often `wait_for` looks at the screen."""

WAIT_S = 10.0
"""How long `wait_for` waits unless told: far past what any step takes, well inside a test's
budget."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Not anchored to the start of a line: a terminal left raw does not return the carriage.
_EXITED = re.compile(r"EXITED (\d+)")
_TTY = re.compile(r"TTY ([-a-z ]+)")

Check = Callable[[str], bool]
OpenPane = Callable[..., AbstractContextManager["Pane"]]
"""The `open_pane` fixture: `open_pane(*args, cols=, rows=, plain=, env=, repo=)`."""


class Exited(Struct, frozen=True):
    """How stayer ended: its status, and the terminal's modes after it (`icanon`, `echo`, or
    their `-` forms when it left the terminal raw)."""

    status: int
    modes: tuple[str, ...]

    @property
    def restored(self) -> bool:
        """Whether the terminal reads lines and echoes again, as before stayer ran."""
        return set(self.modes) == {"icanon", "echo"}


def make_repo(path: Path) -> Path:
    """A fresh git repository at `path` (stayer opens in one, as a person's project is)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def pane_env(
    server: FakeModelServer, home: Path, *, plain: bool, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment stayer runs with: no model variables but the fake's, HOME and the
    config folder under `home`, colours on unless `plain`."""
    env = clean_env({**server.env(), **(extra or {})})
    env.pop("NO_COLOR", None)
    env.update(
        HOME=str(home),
        STAYER_CONFIG_DIR=str(home / ".stayer-config"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        TERM="xterm-256color",
    )
    if plain:
        env["NO_COLOR"] = "1"
    env.update(extra or {})
    return env


class Pane:
    """One tmux pane running `stayer ARGS` in `repo`; see the module."""

    def __init__(
        self,
        repo: Path,
        env: Mapping[str, str],
        args: Sequence[str] = (),
        *,
        cols: int = 100,
        rows: int = 30,
        workdir: Path,
        stderr_file: bool = True,
    ) -> None:
        assert TMUX is not None
        self.repo = repo
        self._stderr_file = stderr_file
        self.socket = f"stayer-test-{os.getpid()}-{secrets.token_hex(4)}"
        self.stderr_path = workdir / "stderr.txt"
        self.pid_path = workdir / "stayer.pid"
        self._env = {k: v for k, v in env.items() if _NAME.match(k)}
        script = workdir / "launch.sh"
        script.write_text(self._script(args), encoding="utf-8")
        self._tmux(
            "start-server", ";",
            "set-option", "-g", "remain-on-exit", "on", ";",
            "set-option", "-g", "history-limit", "100000", ";",
            "new-session", "-d", "-s", "main", "-x", str(cols), "-y", str(rows),
            "-c", str(repo), f"sh {shlex.quote(str(script))}",
        )  # fmt: skip
        self._socket_path = Path(self.show("#{socket_path}"))

    def _script(self, args: Sequence[str]) -> str:
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(self._env.items()))
        argv = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "stayer", *args))
        pid = shlex.quote(str(self.pid_path))
        # The inner shell writes its pid and becomes stayer, so signals reach stayer itself.
        errors = f" 2>{shlex.quote(str(self.stderr_path))}" if self._stderr_file else ""
        run = f"echo $$ > {pid}; exec {argv}{errors}"
        # Ctrl-C that reaches the terminal's whole foreground group (a program not in raw mode,
        # such as `stayer batch`) must not end this shell too: it says how stayer ended.
        return (
            f"trap : INT\n{exports}cd {shlex.quote(str(self.repo))}\n"
            f"sh -c {shlex.quote(run)}\n"
            'echo "EXITED $?"\n'
            "echo TTY $(stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo "
            "-e -echo)\n"
        )

    def _tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-L", self.socket, "-f", os.devnull, *args],
            capture_output=True,
            text=True,
            env=self._env,
            timeout=10,
        )
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    # --- looking ---

    def screen(self, *, joined: bool = False) -> str:
        """What the pane shows now, one line per row (`joined`: lines the terminal wrapped
        joined again), trailing blanks trimmed."""
        join = ("-J",) if joined else ()
        return _trimmed(self._tmux("capture-pane", "-p", *join, "-t", "main"))

    def scrollback(self) -> str:
        """Everything the terminal holds, its history and the screen, lines the terminal
        wrapped joined again."""
        return _trimmed(self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main"))

    def scrollback_unjoined(self) -> str:
        """The scrollback as the terminal holds it, a line it wrapped as several rows."""
        return _trimmed(self._tmux("capture-pane", "-p", "-S", "-", "-t", "main"))

    def show(self, fmt: str) -> str:
        """A tmux format about the pane (`#{alternate_on}`, `#{pane_width}`)."""
        return self._tmux("display-message", "-p", "-t", "main", fmt).strip()

    @property
    def stderr(self) -> str:
        """What stayer wrote to its standard error so far."""
        try:
            return self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    @property
    def pid(self) -> int:
        """stayer's process id."""
        return int(self.pid_path.read_text().strip())

    def wait_for(self, what: str | Check, timeout: float = WAIT_S) -> str:
        """The screen once it shows `what` (text on it, or a check of it is true); fails with
        the screen as it was when the time ran out."""
        check: Check = (lambda screen: what in screen) if isinstance(what, str) else what
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                wanted = repr(what) if isinstance(what, str) else getattr(what, "__doc__", "")
                raise AssertionError(
                    f"the screen never showed {wanted or 'what was wanted'} in {timeout:g}s; "
                    f"it shows:\n{screen}\n--- stayer's stderr:\n{self.stderr}"
                )
            time.sleep(POLL_S)

    def wait_idle(self, timeout: float = WAIT_S) -> str:
        """The screen once no run is going: the input box is back and the footer no longer
        offers to interrupt."""
        return self.wait_for(idle, timeout)

    def wait_exit(self, timeout: float = WAIT_S) -> Exited:
        """How stayer ended, once it has."""
        screen = self.wait_for(lambda s: bool(_TTY.search(s)), timeout)
        status = _EXITED.search(screen)
        modes = _TTY.search(screen)
        assert status is not None and modes is not None
        return Exited(int(status.group(1)), tuple(modes.group(1).split()))

    # --- doing ---

    def send(self, *keys: str) -> None:
        """Keys by tmux's names (`Enter`, `Escape`, `C-c`, `BTab`)."""
        self._tmux("send-keys", "-t", "main", *keys)

    def type(self, text: str) -> None:
        """`text` typed, character by character as tmux sends it."""
        self._tmux("send-keys", "-t", "main", "-l", text)

    def submit(self, text: str) -> None:
        """`text` typed, then Enter."""
        self.type(text)
        self.send("Enter")

    def paste(self, text: str) -> None:
        """`text` pasted as a terminal pastes (bracketed when the program asked for it,
        line breaks sent as CR)."""
        source = self.stderr_path.with_name(f"paste-{secrets.token_hex(4)}.txt")
        source.write_bytes(text.encode("utf-8"))
        self._tmux("load-buffer", "-b", "pasted", str(source))
        self._tmux("paste-buffer", "-p", "-d", "-b", "pasted", "-t", "main")

    def record(self) -> Path:
        """From now on, every byte the program writes to the terminal is appended to the file
        returned (tmux pipe-pane: the raw output, before the terminal acts on it)."""
        path = self.stderr_path.with_name(f"output-{secrets.token_hex(4)}.bin")
        path.touch()
        self._tmux("pipe-pane", "-o", "-t", "main", f"cat >> {shlex.quote(str(path))}")
        return path

    def resize(self, cols: int, rows: int) -> None:
        """The window made `cols` by `rows`, as a person dragging its corner would."""
        self._tmux("resize-window", "-t", "main", "-x", str(cols), "-y", str(rows))

    def wait_gone(self, timeout: float = 5.0) -> bool:
        """Whether stayer has ended (waiting up to `timeout` for it to)."""
        if not self.pid_path.exists():
            return True  # it never started
        deadline = time.monotonic() + timeout
        while is_running(self.pid):
            if time.monotonic() > deadline:
                return False
            time.sleep(POLL_S)
        return True

    def close(self) -> None:
        """Kill the tmux server (and so stayer, if it still runs), and remove its socket
        (a killed server leaves it behind)."""
        with suppress(AssertionError):  # already gone
            self._tmux("kill-server")
        self._socket_path.unlink(missing_ok=True)


def _is_rule(line: str) -> bool:
    return len(line) >= 10 and set(line) == {"─"}


def tail(screen: str) -> tuple[list[str], list[str]]:
    """The live tail's input area (what is between its two rules: the input box, or a
    question in its place) and what is under it (the footer)."""
    lines = screen.splitlines()
    rules = [index for index, line in enumerate(lines) if _is_rule(line)]
    if len(rules) < 2:
        return [], []
    top, bottom = rules[-2], rules[-1]
    return lines[top + 1 : bottom], lines[bottom + 1 :]


def idle(screen: str) -> bool:
    """No run is going: the input box (`> `) is back and the footer does not offer to
    interrupt."""
    box, _ = tail(screen)
    return bool(box) and box[0].startswith(">") and not running(screen)


def running(screen: str) -> bool:
    """The footer says a run is going ("esc to interrupt")."""
    return any("esc to interrupt" in line for line in tail(screen)[1])


def asking(screen: str) -> bool:
    """A permission question is open above the input box, its options numbered, and takes an
    answer now: its footnote shows once it does (after 0.4 s on screen with no typing)."""
    lines = screen.splitlines()
    rules = [index for index, line in enumerate(lines) if _is_rule(line)]
    if len(rules) < 2:
        return False
    above = "\n".join(lines[: rules[-2]])
    return all(words in above for words in ("Do you want to", "1. Yes", "Esc to say no"))


def _trimmed(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines()).rstrip("\n")


@contextmanager
def opened(
    tmp_path: Path,
    server: FakeModelServer,
    *args: str,
    cols: int = 100,
    rows: int = 30,
    plain: bool = False,
    env: Mapping[str, str] | None = None,
    repo: Path | None = None,
    stderr_file: bool = True,
) -> Iterator[Pane]:
    """A pane running `stayer ARGS` (see `Pane`), closed afterwards; the test fails if stayer
    wrote a traceback on its standard error (`stderr_file` False: standard error is the
    pane's too, for what stayer draws there, and the traceback is looked for on the screen)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    project = repo or make_repo(tmp_path / "repo")
    workdir = Path(tmp_path / f"pane-{secrets.token_hex(3)}")
    workdir.mkdir()
    pane = Pane(
        project,
        pane_env(server, home, plain=plain, extra=env),
        args,
        cols=cols,
        rows=rows,
        workdir=workdir,
        stderr_file=stderr_file,
    )
    try:
        yield pane
    finally:
        # What closing the terminal makes it say is another test's matter.
        left = pane.stderr if stderr_file else pane.scrollback()
        pane.close()
        pane.wait_gone()
        if "Traceback (most recent call last)" in left:
            pytest.fail(f"stayer left a traceback on standard error:\n{left}")


SCREENS = Path(__file__).parent / "screens"
UPDATE_SCREENS = "STAYER_UPDATE_SCREENS"

_VOLATILE = (
    (re.compile(r"stayer \d+\.\d+\.\d+\S*"), "stayer <version>"),
    (re.compile(r"\$\d+(?:\.\d+)?"), "<cost>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|m)\b"), "<time>"),
    (re.compile(r"\b\d+\.\d+\b"), "<number>"),
)


def normalized(screen: str, pane: Pane) -> str:
    """`screen` with what differs from run to run (the repository's path, the version, times,
    costs) as placeholders."""
    text = screen.replace(str(pane.repo), "<repo>")
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text + "\n"


def assert_screen(name: str, pane: Pane) -> None:
    """The pane's screen (lines joined, volatile parts as placeholders) is the one kept in
    `screens/NAME.txt`; with STAYER_UPDATE_SCREENS=1 in the environment, it is kept there."""
    shown = normalized(pane.screen(joined=True), pane)
    kept = SCREENS / f"{name}.txt"
    if os.environ.get(UPDATE_SCREENS) == "1":
        kept.write_text(shown, encoding="utf-8")
        return
    assert kept.exists(), f"no screen kept as {kept}; run with {UPDATE_SCREENS}=1 to keep one"
    expected = kept.read_text(encoding="utf-8")
    if shown != expected:
        diff = "\n".join(
            difflib.unified_diff(
                expected.splitlines(), shown.splitlines(), "kept", "shown", lineterm=""
            )
        )
        raise AssertionError(
            f"the screen differs from {kept.name} (if the change is meant, run the test with "
            f"{UPDATE_SCREENS}=1 and review the diff of tests/tty/screens):\n{diff}"
        )
