"""Flags given where they do nothing: one line each on standard error, said the same way by
every front end that reads them (`-p`, stream-json input), so nobody relies on one silently."""

from __future__ import annotations

import sys

from stayer.session.options import QueryOptions


def say_unused(options: QueryOptions) -> None:
    """One line for each option of `options` that another one it needs is missing for."""
    if options.fork_session and options.resume is None and not options.continue_session:
        print("stayer: --fork-session does nothing without --resume or --continue", file=sys.stderr)
    if options.sandbox_network and not options.sandbox:
        print("stayer: --sandbox-network does nothing without --sandbox", file=sys.stderr)
