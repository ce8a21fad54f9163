"""The stand-in model of the chaos test: a short task, and how a careful model goes about it.

A task is a few tool calls in a folder (Write a note, Bash appending a line to an effects log,
Read a note back), each introduced by a sentence, then a final answer whose words the test
checks. The model decides every reply from the conversation it is sent (`conversation`), never
from what the harness did to it:

* a step is done when a call of it came back with the output it should have (or with output
  the harness cleared to save room: the call ran), or when the model's own notes say so;
* what it wrote since its last tool result is carried on from where it stopped, so a reply
  cut short and continued reads as one text (and when asked to go on from a cut that fell after
  its last word, it adds nothing);
* after the history was replaced by a summary it goes by that summary, which it wrote itself
  (`summary`) when the harness asked for one; if the task is nowhere in what it is sent, it
  says it lost track, and the test sees that answer.

So it carries on correctly after a continuation message, a retried request or a compacted
history, whichever recovery the harness chose.
"""

from __future__ import annotations

import json
import random
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stayer.context.compact import CLEARED_PREFIX
from stayer.loop.stream_cut import STREAM_CUT_TEXT
from stayer.messages import JSON
from tests.chaos.conversation import Result, Turn

NOTES_MARK = "chaos steps done:"
LOST = "I have lost track of the task: nothing I was sent says what it is."
EFFECTS_LOG = "effects.log"

StepKind = Literal["write", "bash", "read", "failing"]


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of a task, the sentence that introduces it, and what shows it worked."""

    number: int
    kind: StepKind
    name: str
    input: dict[str, JSON]
    intro: str
    expect: str

    def worked(self, result: Result) -> bool:
        """Whether this result says the call did its job."""
        if result.is_error:
            return False
        return result.text.startswith(CLEARED_PREFIX) or self.expect in result.text


@dataclass(frozen=True, slots=True)
class Task:
    """A short piece of work in `folder`."""

    id: int
    folder: Path
    steps: tuple[Step, ...]

    @property
    def mark(self) -> str:
        """The words that name the task; the model looks for them in what it is sent."""
        return f"[chaos task {self.id}]"

    @property
    def prompt(self) -> str:
        """What the user asks, on one line."""
        todo = " ".join(step.intro for step in self.steps)
        return f"{self.mark} Do these {len(self.steps)} steps in order, then report: {todo}"

    @property
    def answer(self) -> str:
        """The final answer, word for word."""
        kinds = [step.kind for step in self.steps]
        return (
            f"Task {self.id} is done: {len(self.steps)} steps, {kinds.count('write')} notes "
            f"written, {kinds.count('bash')} commands run and {kinds.count('read')} notes "
            "read back, each once."
        )

    def effects(self) -> list[str]:
        """The lines the effects log must hold at the end, each exactly once."""
        return [f"task {self.id} step {s.number}" for s in self.steps if s.kind == "bash"]

    def files(self) -> dict[Path, str]:
        """The notes that must exist at the end, with their contents."""
        return {
            Path(str(s.input["file_path"])): str(s.input["content"])
            for s in self.steps
            if s.kind == "write"
        }

    def step_for(self, name: str, tool_input: JSON) -> Step | None:
        """The step this call makes, if it is one (same tool, same input)."""
        return next((s for s in self.steps if (s.name, s.input) == (name, tool_input)), None)


def make_task(
    task_id: int,
    folder: Path,
    rng: random.Random,
    *,
    steps: int | None = None,
    output_lines: int = 0,
) -> Task:
    """A task of 2 to 4 steps (or `steps`), chosen by `rng`; a Read reads back a note written
    before and not read yet, so no two steps are the same call. With `output_lines`, every
    step is a Bash that prints that many lines too: output worth clearing."""
    count = steps or rng.randint(2, 4)
    made: list[Step] = []
    for number in range(1, count + 1):
        read = {str(s.input["file_path"]) for s in made if s.kind == "read"}
        unread = [s for s in made if s.kind == "write" and s.input["file_path"] not in read]
        kinds: list[StepKind] = ["write", "bash", "read"] if unread else ["write", "bash"]
        kind = "bash" if output_lines else rng.choice(kinds)
        made.append(_step(task_id, folder, number, kind, unread, rng, output_lines))
    return Task(task_id, folder, tuple(made))


def failing_task(task_id: int, folder: Path) -> Task:
    """A task whose one step fails the same way every time it is tried."""
    missing = folder / "never-there.txt"
    step = Step(
        1,
        "failing",
        "Bash",
        {"command": f"cat {missing}"},
        "Step 1: show the notes file.",
        f"notes of task {task_id}",
    )
    return Task(task_id, folder, (step,))


def _step(
    task_id: int,
    folder: Path,
    number: int,
    kind: StepKind,
    written: list[Step],
    rng: random.Random,
    output_lines: int,
) -> Step:
    if kind == "write":
        path = folder / f"note-{task_id}-{number}.txt"
        content = f"note {number} of task {task_id}\n"
        intro = f"Step {number}: write {path.name} with its one line."
        tool_input: dict[str, JSON] = {"file_path": str(path), "content": content}
        return Step(number, kind, "Write", tool_input, intro, f"{path.name} (1 line)")
    if kind == "read":
        source = rng.choice(written)
        path = Path(str(source.input["file_path"]))
        intro = f"Step {number}: read {path.name} back to check it."
        line = str(source.input["content"]).rstrip("\n")
        return Step(number, kind, "Read", {"file_path": str(path)}, intro, line)
    line = f"task {task_id} step {number}"
    command = f"echo '{line}' >> {folder / EFFECTS_LOG} && echo ok-{task_id}-{number}"
    if output_lines:
        command += f" && seq {output_lines}"
    intro = f"Step {number}: add a line to {EFFECTS_LOG}."
    return Step(number, kind, "Bash", {"command": command}, intro, f"ok-{task_id}-{number}")


# --- deciding the next reply ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Move:
    """What the model says next: text still to write, then the step's call (None: the answer)."""

    text: str
    step: Step | None


def next_move(task: Task, turns: Sequence[Turn]) -> Move:
    """The reply a careful model gives to this conversation."""
    if not any(task.mark in turn.text for turn in turns if turn.role == "user"):
        return Move(LOST, None)
    done = steps_done(task, turns)
    step = next((s for s in task.steps if s.number not in done), None)
    planned = step.intro if step is not None else task.answer
    written = "".join(turn.text for turn in _since_last_results(turns) if turn.role == "assistant")
    rest = planned[len(written) :] if planned.startswith(written) else planned
    if step is None and not rest and not _continuing_a_cut(turns):
        rest = planned  # asked again after answering (a check said no): the same answer
    return Move(rest, step)


def _continuing_a_cut(turns: Sequence[Turn]) -> bool:
    """Whether the model is asked to go on from a reply a broken stream cut: it adds only what
    is missing, which is nothing when the cut fell right after its last word."""
    last_user = next((turn for turn in reversed(turns) if turn.role == "user"), None)
    return last_user is not None and STREAM_CUT_TEXT in last_user.text


def steps_done(task: Task, turns: Sequence[Turn]) -> set[int]:
    """The steps whose calls came back as they should, or that the model's notes list."""
    results = {result.tool_use_id: result for turn in turns for result in turn.results}
    done = {number for turn in turns if turn.role == "user" for number in _noted(turn.text)}
    for call in (call for turn in turns for call in turn.calls):
        step = task.step_for(call.name, call.input)
        result = results.get(call.id)
        if step is not None and result is not None and step.worked(result):
            done.add(step.number)
    return done


def _since_last_results(turns: Sequence[Turn]) -> Sequence[Turn]:
    last = max((i for i, turn in enumerate(turns) if turn.results), default=-1)
    return turns[last + 1 :]


def _noted(text: str) -> set[int]:
    return {
        int(number)
        for listed in re.findall(rf"{re.escape(NOTES_MARK)} ([\d, ]*)", text)
        for number in re.findall(r"\d+", listed)
    }


# --- the notes it writes when the harness compacts --------------------------------------------


def summary(task: Task, transcript: str) -> str:
    """The model's notes on a transcript: the request word for word, and which steps are done.

    The request is quoted only if the transcript holds it: a summary cannot know what it was
    not shown.
    """
    request = next((line for line in transcript.splitlines() if task.mark in line), None)
    done = sorted(_done_in_transcript(task, transcript) | _noted(transcript))
    pending = [f"step {s.number}" for s in task.steps if s.number not in done]
    quoted = json.dumps(request.removeprefix("User: ")) if request else "(not in the transcript)"
    return "\n".join(
        [
            f"1. Requests: {quoted}",
            f"5. Pending: {', '.join(pending) or 'the final report'}.",
            f"6. Where the work stopped: {NOTES_MARK} {', '.join(map(str, done))}.",
        ]
    )


def _done_in_transcript(task: Task, transcript: str) -> set[int]:
    """Steps whose call in the transcript is answered by a result that shows it worked."""
    waiting: deque[Step | None] = deque()
    done: set[int] = set()
    for line in transcript.splitlines():
        called = re.match(r"Assistant called (\w+): (.*)$", line)
        if called:
            try:
                waiting.append(task.step_for(called[1], json.loads(called[2])))
            except json.JSONDecodeError:
                waiting.append(None)
        elif line.startswith("Tool result") and waiting:
            step = waiting.popleft()
            head, _, text = line.partition(": ")
            result = Result("", text, head.endswith("(error)"))
            if step is not None and step.worked(result):
                done.add(step.number)
    return done
