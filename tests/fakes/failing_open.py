"""`python -m tests.fakes.failing_open ARGS`: stayer's command line whose sessions cannot open:
opening one raises `OSError` (what a disk or a descriptor limit could do anywhere under it),
for tests of what a front end says when the error is not one of stayer's own."""

from __future__ import annotations

from typing import Any, NoReturn

from stayer.driver import Driver

REASON = "a planted open failure"


async def _failing(*args: Any, **kwargs: Any) -> NoReturn:
    raise OSError(28, REASON)


if __name__ == "__main__":  # planted only in the process run so, never in a test importing it
    from stayer.cli import main

    setattr(Driver, "open", _failing)  # noqa: B010
    main()
