"""One `stayer batch` command measured from outside: the batch benchmark's subject.

The command runs as a user runs it (`stayer batch TASKS --out DIR --concurrency N
--permission-mode acceptEdits --output-format json`), in a clean environment pointing at the
benchmark's model server. While it runs, its own CPU (user + system, from /proc/<pid>/stat)
and its peak RSS (VmHWM) are read every few milliseconds; when it ends, `os.wait4` gives its
CPU with that of every child it reaped (git, the tools' commands), so the children's share is
the difference. Its results file is checked: one line per task, each completed, 5 turns of
tools (6 model calls' worth), a diff holding the notes the Writes left.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.batch_server import task_prompt

REPO = Path(__file__).resolve().parent.parent
STAYER = REPO / ".venv" / "bin" / "stayer"
MODEL = "claude-sonnet-4-5"
TICK = os.sysconf("SC_CLK_TCK")


def write_tasks(path: Path, out: Path, repo: Path, count: int) -> None:
    """`count` tasks of the benchmark's shape, each prompt naming its workspace."""
    lines = []
    for number in range(count):
        task_id = f"t{number:04d}"
        workspace = out.absolute() / "workspaces" / task_id
        prompt = task_prompt(task_id, str(workspace))
        lines.append(json.dumps({"id": task_id, "prompt": prompt, "repo": str(repo)}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


class _Watch:
    """Reads one pid's own CPU seconds and VmHWM (KiB) until told to stop."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self.self_cpu_s = 0.0
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        stat, status = Path(f"/proc/{self._pid}/stat"), Path(f"/proc/{self._pid}/status")
        while not self._stop.is_set():
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                lines = status.read_text().splitlines()
            except OSError:
                return
            # fields[0] is the state (field 3); utime and stime are fields 14 and 15
            if fields[0] != "Z":
                self.self_cpu_s = (int(fields[11]) + int(fields[12])) / TICK
            for line in lines:
                if line.startswith("VmHWM:"):
                    self.peak_kib = max(self.peak_kib, int(line.split()[1]))
            self._stop.wait(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_cli(
    url: str, repo: Path, out: Path, tasks: int, concurrency: int, *, ray: bool = False
) -> dict[str, Any]:
    """Run `stayer batch` on `tasks` tasks; its figures, as `batch_worker` reports them. With
    `ray`, on a local Ray instance the command starts, each task asking for the share of the
    machine's CPUs that lets `concurrency` run at once (its children are then Ray's processes
    too: the head, the raylet and the workers running the tasks)."""
    tasks_file = out.parent / f"{out.name}.jsonl"
    write_tasks(tasks_file, out, repo, tasks)
    home = out.parent / f"{out.name}-home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "STAYER_CONFIG_DIR": str(home / "config"),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    if "PYTHONPATH" in os.environ:  # to measure another checkout's stayer with this one's venv
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    argv = [str(STAYER), "batch", str(tasks_file), "--out", str(out)]
    argv += ["--concurrency", str(concurrency), "--model", MODEL]
    argv += ["--permission-mode", "acceptEdits", "--output-format", "json"]
    if ray:
        share = max(0.01, (os.cpu_count() or 1) / concurrency)
        argv += ["--ray", "--ray-cpus-per-task", f"{share:g}"]
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=out.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    watch = _Watch(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    watch.stop()
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr = proc.stdout.read().decode(), proc.stderr.read().decode()
    total = usage.ru_utime + usage.ru_stime
    problems = _problems(out, tasks, os.waitstatus_to_exitcode(status), stderr)
    return {
        "tasks": tasks,
        "concurrency": concurrency,
        "wall_s": wall,
        "self_cpu_s": watch.self_cpu_s,
        "children_cpu_s": max(0.0, total - watch.self_cpu_s),
        "peak_rss_kib": watch.peak_kib,
        "ok": tasks - len(problems),
        "problems": problems[:5],
        "summary": stdout[-2000:],
    }


def _problems(out: Path, tasks: int, status: int, stderr: str) -> list[str]:
    if status != 0:
        return [f"exit status {status}: {stderr[-1500:]}"]
    lines = (out / "results.jsonl").read_text().splitlines()
    results = [json.loads(line) for line in lines]
    problems = [] if len(results) == tasks else [f"{len(results)} results for {tasks} tasks"]
    for result in results:
        if result["is_error"] or result["terminal_reason"] != "completed":
            problems.append(f"{result['id']}: {result['terminal_reason']} {result.get('error')}")
        elif "note-1.txt" not in result["diff"] or result["turns"] != 6:
            problems.append(f"{result['id']}: turns {result['turns']}, diff {result['diff']!r:.80}")
    return problems
