"""The fleet runner behind `stayer batch`: many agent tasks at once, on one machine or on Ray.

A tasks file (`tasks`) is validated whole before anything runs. Each task is a full `Session`
in a workspace of its own made from its repository (`workspace`), run to its end or its
timeout, then checked (`check`), all by `task_run`, which stops what the task left running
outside its commands' process groups (`leftovers`); its outcome is one line of `results.jsonl`
(`results`), written and flushed as it finishes, so a killed batch loses nothing it wrote and a
re-run skips what is done (`lock` keeps a second batch off the same folder). `local` runs the
sessions of one batch on one event loop, sharing one model client per provider and endpoint
(`pool`), under one rate limiter (`limits`, from the flags and the settings: `rate_limits`)
that each shared client waits at (`limited`) and that slows every worker together when the
provider says so.
`ray` runs the same tasks as Ray tasks and is the one module importing Ray, only when asked to;
each task runs on a worker as it would here (`ray_worker`), under the same limiter hosted by one
actor (`ray_limiter`). Nothing here prints: a front end listens (`listener`) and shows.
"""
