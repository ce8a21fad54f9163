"""The REPL as a person feels it: the real `stayer` at a terminal against the fake model
server, each figure beside its target (issue 17) and Claude Code's own, measured there.

    .venv/bin/python -m benchmarks.repl_latency [--runs 5] [--tokens 24] [--keys 20]
                                                [--messages 1000] [--idle-s 5] [--json PATH]

Most figures read the program's own output: stayer runs under a pseudo-terminal this process
owns (`benchmarks.pty_terminal`), every chunk it writes timestamped as it is read, and the
fake server (`benchmarks.timed_server`, instant, Nagle off) timestamps each frame it sends,
on the same clock. So:

* **token → screen**: a streamed paragraph of `--tokens` words, each frame held 40 ms after
  the last; for each word, the moment its frame went to the socket to the moment stayer wrote
  the word to the terminal. Its first word is the first partial line of the paragraph.
* **frames per line**: synchronized frames (`CSI ? 2026 h`, one per redraw) written while that
  paragraph streamed, per streamed line: the flicker measure (its spinner ticks included).
* **a running tool shown**: the last frame of a Bash call (bypass mode) to "Bash" written.
* **a permission prompt shown**: the last frame of a Bash call that asks to "Do you want to".
* **keystroke echo**: a letter typed to the next output holding it, at an empty prompt and
  after `--continue` on a saved conversation of `--messages` messages (written by the
  session's own `TranscriptWriter`, shown by the REPL as history): flat is the target.
* **CPU idle**: the process's CPU time (/proc) over `--idle-s` seconds at an empty prompt.

Some need the screen as a terminal shows it: whether the input box is back once a run's answer
has come (the process's first run, then its second), or after Escape or Ctrl+C (a run held
mid-stream), and whether a slash command (`/cost`) has answered. Those run
in a tmux pane (`tests.tty.harness`) polled as fast as `capture-pane` answers; the key's
moment is when `send-keys` returned, so each figure includes up to one poll (its median is
reported as the resolution).

Every figure is over `--runs` fresh stayer processes; the report gives medians and p95.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.model_server import Receive, RecordedRequest, Send
from tests.fakes.sse import Stream, Text, ToolCall, anthropic_stream, reply
from tests.tty.harness import Pane, idle, make_repo, pane_env, running, tail

from benchmarks.pty_terminal import PtyProgram, PtyTimeout
from benchmarks.runner import Benchmark, Column, option, progress, table_lines
from benchmarks.stats import Summary, summarize
from benchmarks.timed_server import TimedServer
from stayer.messages import AssistantMessage, Message, TextBlock, UserMessage
from stayer.session.paths import project_slug
from stayer.session.transcript import TranscriptWriter

MS = 1e3
TOKEN_GAP_S = 0.04
PER_LINE = 6
"""Words per streamed line."""
RULE = "─".encode()
SYNC_BEGIN = b"\x1b[?2026h"


@dataclass(frozen=True, slots=True)
class Measure:
    """One figure: its key, what it is, its target and Claude Code's figure (issue 17)."""

    key: str
    what: str
    unit: str
    target: float
    claude_code: str


MEASURES = (
    Measure("token", "token at the socket -> on screen", "ms", 50, "~1 s first, 0.5-0.6 s/chunk"),
    Measure("tool", "a running tool shown", "ms", 50, "82-97 ms"),
    Measure("permission", "a permission prompt shown", "ms", 100, "~0.5 s"),
    Measure("first_end", "first answer at the socket -> prompt back", "ms", 50, "-"),
    Measure("next_end", "next answer at the socket -> prompt back", "ms", 50, "-"),
    Measure("escape", "Escape -> back at the prompt", "ms", 50, "80-130 ms"),
    Measure("ctrl_c", "Ctrl+C -> back at the prompt", "ms", 50, "55-62 ms"),
    Measure("slash", "/cost answered", "ms", 100, "~0.36 s"),
    Measure("echo_empty", "keystroke echo, empty conversation", "ms", 16, "-"),
    Measure("echo_long", "keystroke echo, long conversation", "ms", 16, "-"),
    Measure("cpu_idle", "CPU while idle at the prompt", "%", 1, "-"),
    Measure("frames_per_line", "frames per streamed line", "", float("nan"), "-"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    runs: int = option(5, "fresh stayer processes per figure", at_least=1)
    tokens: int = option(24, "words timed per streamed paragraph", at_least=1)
    keys: int = option(20, "keystrokes timed per process", at_least=1)
    messages: int = option(1000, "messages in the long conversation", at_least=2)
    idle_s: float = option(5.0, "seconds of idle CPU measured per run", at_least=1)


@dataclass
class Samples:
    """Every sample of every figure, and the tmux poll's round trips."""

    figures: dict[str, list[float]] = field(default_factory=dict)
    poll_ms: list[float] = field(default_factory=list)
    missed: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, values: Sequence[float]) -> None:
        self.figures.setdefault(key, []).extend(values)

    def miss(self, key: str) -> None:
        self.missed[key] = self.missed.get(key, 0) + 1


# --- the server ---------------------------------------------------------------------------------


class FrameClock(TimedServer):
    """The instant fake that also notes when each piece of a response went to the socket."""

    def __init__(self) -> None:
        super().__init__()
        self._sent: list[tuple[float, bytes]] = []

    async def handle(self, request: RecordedRequest, receive: Receive, send: Send) -> None:
        async def clocked(message: Any) -> None:
            body = message.get("body") if message.get("type") == "http.response.body" else None
            if body:  # noted as it is handed to the socket, before the client can have it
                with self._clock_lock:
                    self._sent.append((time.perf_counter(), body))
            await send(message)

        await super().handle(request, receive, clocked)

    def __enter__(self) -> FrameClock:
        self.start()
        return self

    def drop_queued(self) -> None:
        """Forget the answers a missed sample left unasked, so they answer no later one."""
        with self._lock:
            self._queue.clear()

    def forget_frames(self) -> None:
        """Start noting afresh (each sample looks for its own frames)."""
        with self._clock_lock:
            self._sent.clear()

    def sent_at(self, needle: bytes, *, after: float = 0.0) -> float:
        """When the first frame holding `needle` was sent (at or after `after`) since the
        last `forget_frames`."""
        with self._clock_lock:
            return next(t for t, body in self._sent if needle in body and t >= after)


# --- the program under a pty ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Place:
    """Where stayer runs: its repository, home and environment."""

    repo: Path
    home: Path
    env: dict[str, str]


def _place(workdir: Path, server: FrameClock) -> Place:
    root = workdir / secrets.token_hex(4)
    home = root / "home"
    home.mkdir(parents=True)
    env = pane_env(server, home, plain=False)
    for name in ("TMUX", "TMUX_PANE"):
        env.pop(name, None)
    return Place(make_repo(root / "repo"), home, env)


def _started(place: Place, *args: str) -> PtyProgram:
    program = PtyProgram(
        [sys.executable, "-m", "stayer", *args],
        cwd=place.repo,
        env=place.env,
        stderr=place.home / f"stderr-{secrets.token_hex(3)}.txt",
    )
    program.wait_for(RULE, 0, timeout=30)  # the live tail is drawn: keys are read from now
    return program


def _words(first: int, count: int) -> list[str]:
    return [f"w{first + n:03d}q" for n in range(count)]


def _paragraph(words: list[str]) -> Stream:
    lines = [" ".join(words[i : i + PER_LINE]) for i in range(0, len(words), PER_LINE)]
    stream = anthropic_stream(Text("\n".join(lines) + "\n"))
    for word in words:
        stream = stream.stalled(at=stream.index_of(word), seconds=TOKEN_GAP_S)
    return stream


def _stream_run(server: FrameClock, place: Place, config: Config, samples: Samples) -> None:
    words = _words(0, config.tokens)
    _fresh(server)
    server.enqueue(_paragraph(words))
    program = _started(place)
    try:
        start = program.offset
        program.write(b"stream a paragraph\r")
        latencies: list[float] = []
        end = start
        for word in words:
            shown, end = program.wait_for(word.encode(), start)
            latencies.append((shown - server.sent_at(word.encode())) * MS)
        samples.add("token", latencies)
        frames = program.output(start, end).count(SYNC_BEGIN)
        samples.add("frames_per_line", [frames / -(-len(words) // PER_LINE)])
    finally:
        program.close()


def _shown_after_call(server: FrameClock, place: Place, marker: bytes, *args: str) -> float:
    """Milliseconds from the last frame of a Bash call to `marker` written.

    The Bash call is the run's second model call: a Glob goes first, so what a process pays
    once, on its first answer, is not counted here (`first_end` shows it)."""
    _fresh(server)
    command = f"touch made-{secrets.token_hex(3)}.txt"
    server.enqueue(
        reply(ToolCall("toolu_glob", "Glob", {"pattern": "*.md"})),
        reply(ToolCall("toolu_bash", "Bash", {"command": command})),
        reply("Done."),
    )
    program = _started(place, *args)
    try:
        start = program.offset
        program.write(b"make a file\r")
        shown, _ = program.wait_for(marker, start)
        announced = server.sent_at(b"toolu_bash")
        return (shown - server.sent_at(b"message_stop", after=announced)) * MS
    finally:
        program.close()


def _fresh(server: FrameClock) -> None:
    """Nothing left from an earlier sample: no answers queued, no frames noted."""
    server.drop_queued()
    server.forget_frames()
    server.take_unexpected()


def _echo_run(place: Place, config: Config, *args: str) -> list[float]:
    program = _started(place, *args)
    try:
        latencies: list[float] = []
        for number in range(config.keys):
            letter = bytes([ord("a") + number % 26])
            start = program.offset
            typed = program.write(letter)
            shown, _ = program.wait_for(letter, start)
            latencies.append((shown - typed) * MS)
        return latencies
    finally:
        program.close()


def _idle_cpu(place: Place, config: Config) -> float:
    program = _started(place)
    try:
        time.sleep(0.5)  # past start-up's last work: the figure is the prompt's, not the start's
        before = program.cpu_seconds()
        time.sleep(config.idle_s)  # the span measured, not a wait for a signal
        return (program.cpu_seconds() - before) / config.idle_s * 100
    finally:
        program.close()


def _saved_conversation(place: Place, messages: int) -> None:
    """A conversation of `messages` messages saved where `--continue` finds it."""
    built: list[Message] = []
    for number in range(messages):
        if number % 2 == 0:
            built.append(
                UserMessage((TextBlock(f"Question {number}: what does step {number} do?"),))
            )
        else:
            answer = f"Step {number} reads the **input**, checks it, and writes `out_{number}.txt`."
            built.append(AssistantMessage((TextBlock(answer),), id=f"msg_{number:05d}"))
    if messages % 2:
        built.pop()
    session_id = "00000000-0000-4000-8000-" + secrets.token_hex(6)
    folder = Path(place.env["STAYER_CONFIG_DIR"]) / "projects" / project_slug(place.repo)
    folder.mkdir(parents=True, exist_ok=True)
    writer = TranscriptWriter(
        folder / f"{session_id}.jsonl",
        session_id=session_id,
        cwd=str(place.repo),
        git_branch="main",
    )
    writer.sync(tuple(built))
    writer.close()


# --- the program in tmux ---------------------------------------------------------------------


def _polled(pane: Pane, check: Callable[[str], bool], samples: Samples) -> float:
    """When `check` first held for the pane's screen (fails after 10 s)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        before = time.perf_counter()
        screen = pane.screen()
        after = time.perf_counter()
        samples.poll_ms.append((after - before) * MS)
        if check(screen):
            return after
    raise PtyTimeout("the screen never showed what was waited for")


def _run_end(server: FrameClock, pane: Pane, samples: Samples, answer: str) -> float:
    """A run's answer: its last frame at the socket to the input box back."""
    _fresh(server)
    server.enqueue(reply(answer))
    pane.submit("answer briefly")
    back = _polled(pane, lambda screen: answer in screen and idle(screen), samples)
    return (back - server.sent_at(b"message_stop")) * MS


def _interrupt_once(server: FrameClock, pane: Pane, key: str, samples: Samples) -> float:
    _fresh(server)
    stream = anthropic_stream(Text("Holding here: alpha beta gamma delta epsilon."))
    server.enqueue(stream.paused(stream.index_of("gamma")))
    pane.submit("hold the stream")
    pane.wait_for(lambda s: "alpha beta" in s and running(s), timeout=10)
    pane.send(key)
    pressed = time.perf_counter()
    return (_polled(pane, idle, samples) - pressed) * MS


def _answered(command: str) -> Callable[[str], bool]:
    def check(screen: str) -> bool:
        lines = screen.splitlines()
        echoed = [i for i, line in enumerate(lines) if line.startswith(f"> {command}")]
        if not echoed:
            return False
        box, footer = tail(screen)
        below = lines[echoed[-1] + 1 : len(lines) - len(box) - len(footer) - 2]
        return any(line.strip() for line in below)

    return check


def _tmux_run(server: FrameClock, workdir: Path, samples: Samples) -> None:
    place = _place(workdir, server)
    panes = place.home / "pane"
    panes.mkdir()
    pane = Pane(place.repo, place.env, (), cols=120, rows=40, workdir=panes)
    try:
        pane.wait_idle(timeout=30)
        samples.add("first_end", [_run_end(server, pane, samples, "Warm and ready.")])
        samples.add("next_end", [_run_end(server, pane, samples, "Second answer here.")])
        for key, name in (("Escape", "escape"), ("C-c", "ctrl_c")):
            samples.add(name, [_interrupt_once(server, pane, key, samples)])
        _fresh(server)
        pane.type("/cost")
        pane.send("Enter")
        pressed = time.perf_counter()
        samples.add("slash", [(_polled(pane, _answered("/cost"), samples) - pressed) * MS])
    finally:
        pane.close()
        if "Traceback (most recent call last)" in pane.stderr:
            progress(f"stayer wrote a traceback:\n{pane.stderr}")


# --- collecting ------------------------------------------------------------------------------


def _guarded(key: str, server: FrameClock, samples: Samples, measure: Callable[[], None]) -> None:
    """One sample of `key`; one that never showed is counted as missed, not fatal."""
    try:
        measure()
    except (PtyTimeout, AssertionError, StopIteration) as error:
        samples.miss(key)
        server.drop_queued()
        said = (str(error) or type(error).__name__).splitlines()[0]
        progress(f"  {key}: missed ({said})")


def _one_round(server: FrameClock, workdir: Path, config: Config, samples: Samples) -> None:
    place = _place(workdir, server)
    _guarded("token", server, samples, lambda: _stream_run(server, place, config, samples))
    _guarded("tool", server, samples, lambda: samples.add(
        "tool", [_shown_after_call(server, place, b"Bash", "--dangerously-skip-permissions")]
    ))  # fmt: skip
    _guarded("permission", server, samples, lambda: samples.add(
        "permission", [_shown_after_call(server, place, b"want")]
    ))  # fmt: skip
    _guarded(
        "echo_empty", server, samples, lambda: samples.add("echo_empty", _echo_run(place, config))
    )
    long_place = _place(workdir, server)
    _saved_conversation(long_place, config.messages)
    _guarded("echo_long", server, samples, lambda: samples.add(
        "echo_long", _echo_run(long_place, config, "--continue")
    ))  # fmt: skip
    _guarded(
        "cpu_idle", server, samples, lambda: samples.add("cpu_idle", [_idle_cpu(place, config)])
    )
    _guarded("tmux", server, samples, lambda: _tmux_run(server, workdir, samples))


async def collect(config: Config, workdir: Path) -> Samples:
    """Every figure over `config.runs` rounds of fresh processes."""
    samples = Samples()
    with FrameClock() as server:
        server.allow_unused = True  # a missed figure leaves its answers unasked
        for number in range(config.runs):
            progress(f"round {number + 1}/{config.runs}")
            _one_round(server, workdir, config, samples)
            server.take_violations()
            server.take_unexpected()
    return samples


# --- the report ------------------------------------------------------------------------------


def summaries(samples: Samples) -> dict[str, Summary]:
    """Each figure's median, p95 and extremes."""
    return {m.key: summarize(samples.figures.get(m.key, [])) for m in MEASURES}


def _passes(measure: Measure, summary: Summary) -> str:
    if measure.target != measure.target:  # NaN: no target, a figure to watch
        return ""
    if summary.n == 0:
        return "none"
    return "pass" if summary.median < measure.target else "FAIL"


def render(samples: Samples, config: Config) -> str:
    """The table: each figure's median and p95 beside its target and Claude Code's."""
    found = summaries(samples)
    columns = (
        Column("figure", 42, "<", ""), Column("median", 8), Column("p95", 8), Column("n", 4),
        Column("target", 8), Column("Claude Code", 28, "<", "  "), Column("", 5, "<"),
    )  # fmt: skip
    rows = []
    for measure in MEASURES:
        summary = found[measure.key]
        target = "" if measure.target != measure.target else f"<{measure.target:g}{measure.unit}"
        rows.append((
            measure.what, f"{summary.median:.1f}", f"{summary.p95:.1f}", str(summary.n),
            target, measure.claude_code, _passes(measure, summary),
        ))  # fmt: skip
    poll = summarize(samples.poll_ms)
    notes = [
        f"{config.runs} rounds; long conversation: {config.messages} messages; "
        f"tmux poll round trip: median {poll.median:.1f} ms (the resolution of Escape, Ctrl+C "
        "and /cost)",
    ]
    if samples.missed:
        notes.append("missed: " + ", ".join(f"{k} x{n}" for k, n in samples.missed.items()))
    return "\n".join([*table_lines(columns, rows), *notes])


def as_json(samples: Samples, config: Config) -> dict[str, Any]:
    """Every sample and summary."""
    return {
        "config": {
            "runs": config.runs, "tokens": config.tokens, "keys": config.keys,
            "messages": config.messages, "idle_s": config.idle_s,
        },
        "summaries": {key: summary.as_dict() for key, summary in summaries(samples).items()},
        "samples": samples.figures,
        "poll_ms": samples.poll_ms,
        "missed": samples.missed,
    }  # fmt: skip


def _status(samples: Samples, config: Config) -> int:
    found = summaries(samples)
    verdicts = [_passes(measure, found[measure.key]) for measure in MEASURES]
    return 1 if any(verdict in ("FAIL", "none") for verdict in verdicts) else 0


BENCHMARK = Benchmark(
    prog="python -m benchmarks.repl_latency",
    doc=__doc__,
    config=Config,
    workdir_prefix="stayer-bench-repl-",
    collect=collect,
    report=render,
    as_json=as_json,
    status=_status,
)

if __name__ == "__main__":
    sys.exit(BENCHMARK.main())
