"""The environment every process stayer starts for the model or the user's configuration gets:
stayer's own, less the credentials stayer itself uses.

Bash (in the foreground and the background), hooks, the ``--done-when`` check, the searches and
the git snapshot all start from `child_env`, so a command the model writes (``printenv``, a
script that posts its environment somewhere) cannot read the keys stayer talks to the model
with. The names are the ones stayer's providers read (`CREDENTIALS`) and Claude Code's own
token, which a person running both may have set.

A user who means a command to have one of them (a test suite that calls the API itself) names
it in ``STAYER_PASS_ENV`` (comma-separated: ``STAYER_PASS_ENV=OPENAI_API_KEY``), in the
environment or a settings file's ``env``; every other variable passes as it is.
"""

from __future__ import annotations

from collections.abc import Mapping

CREDENTIALS = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
    }
)
"""Environment variables holding credentials stayer uses to reach a model."""

PASS_ENV = "STAYER_PASS_ENV"
"""Names the credentials a user lets through to the processes stayer starts."""


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` as a started process should get it: without stayer's credentials, except those
    `STAYER_PASS_ENV` names."""
    passed = {name.strip() for name in env.get(PASS_ENV, "").split(",")}
    withheld = CREDENTIALS - passed
    return {name: value for name, value in env.items() if name not in withheld}
