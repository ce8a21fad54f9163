"""Hand-run performance benchmarks for stayer; never part of the test suite.

Run from the repository root (the fake model server is imported from `tests.fakes`):

    .venv/bin/python -m benchmarks.run                      # 10 start-ups, 3 runs of 100 turns
    .venv/bin/python -m benchmarks.run --runs 20 --turn-runs 5 --json bench.json
    .venv/bin/python -m benchmarks.run --imports            # also: where start-up time goes
    .venv/bin/python -m benchmarks.run --venv /tmp/prodvenv # a runtime-only install instead
    .venv/bin/python -m benchmarks.recovery                 # what the recovery tree costs a turn
    .venv/bin/python -m benchmarks.compaction               # compaction of a 150k-token history
    .venv/bin/python -m benchmarks.session_turns            # turns 1, 100, 1,000 of a long session
    .venv/bin/python -m benchmarks.request_building         # building each request body
    .venv/bin/python -m benchmarks.transcript_load          # reading back a long transcript
    .venv/bin/python -m benchmarks.streaming_tools          # tool calls started mid-stream
    .venv/bin/python -m benchmarks.run --recovery --compaction --session-turns  # all, one JSON
    .venv/bin/python -m benchmarks.batch                    # stayer batch: rate, CPU, RSS a task
    .venv/bin/python -m benchmarks.client_load              # the model client, 1 to 512 streams

A runtime-only environment (no dev tools, so no click/rich for httpx to pick up) can be made
from the lock with `UV_PROJECT_ENVIRONMENT=/tmp/prodvenv .cache/uv/bin/uv sync --no-dev --frozen`.

Modules:

* `runner`     — what every benchmark shares: options from its `Config` dataclass, interleaved
                 rounds of arms, fixed-width tables, the JSON file, `main`; a benchmark module
                 declares only what it measures;
* `run`        — the entry point: options, the table, pass/fail against the targets, JSON;
* `measure`    — spawning a command against a timed fake server and taking the three figures
                 (start-up to first request, per-turn overhead, peak RSS);
* `timed_server` — the fake Anthropic server with arrival / last-byte timestamps per request
                 (and Nagle off), and the scripted answers (a text reply; N Bash turns, text);
* `floor`      — the toy `while True` loop over httpx + subprocess that sets the floor;
* `imports`    — `python -X importtime` parsed into per-package totals and the import edges
                 (importer → imported package) that cost the most;
* `stats`      — median / p95 summaries;
* `machine`    — when, where and at which commit a benchmark ran (for the JSON files);
* `instant`    — the real loop in this process against an instant model with a clock on each
                 call (`stayer.loop.run.query` with a CLI run's parameters);
* `recovery`   — the in-process A/B of the recovery machinery on a fault-free 100-turn run;
* `decisions`  — the recovery tree's decision points, short-circuited (the A/B's bare arm) or
                 timed one by one;
* `compaction` — the compaction functions on a 150k-token history, and whole autocompactions
                 inside the loop;
* `history`    — that history, made by stayer's loop and tools over this repository;
* `session_turns` — the harness's time per turn at turns 1, 100 and 1,000 of one Session
                 after that history, transcript on, split into the transcript's sync, the
                 request's body and the rest.
* `batch`      — `stayer batch` on 200 tasks of 5 tool turns at several concurrencies, with
                 instant and 150 ms answers, optionally on Ray: tasks a minute, CPU a task
                 (the process's and its children's), RSS a concurrent session;
* `batch_cli`  — one `stayer batch` command run and measured from outside;
* `batch_server` — the fake model server in a process of its own, answering any number of
                 tasks by one stateless rule (the workspace named in the prompt);
* `batch_worker` — the same tasks played in process with `Session.open` (`--engine
                 sessions`; `--profile` for cProfile);
* `client_load` / `sse_server` — the model client with up to 512 streams at once against a
                 bare SSE endpoint: time to first byte, calls a second, connections.
"""
