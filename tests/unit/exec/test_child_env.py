"""The processes stayer starts get its environment without the credentials it talks to models
with, unless the user names one in STAYER_PASS_ENV; and the list covers every credential the
providers read."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from stayer.exec.child_env import CREDENTIALS, child_env

KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-1",
    "ANTHROPIC_AUTH_TOKEN": "tok-2",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth-3",
    "OPENAI_API_KEY": "sk-4",
}


def test_credentials_are_withheld_and_everything_else_passes() -> None:
    given = {**KEYS, "PATH": "/usr/bin", "ANTHROPIC_BASE_URL": "http://gw", "MY_TOKEN": "mine"}
    assert child_env(given) == {
        "PATH": "/usr/bin",
        "ANTHROPIC_BASE_URL": "http://gw",
        "MY_TOKEN": "mine",  # not one of stayer's: the user's own, for their own commands
    }


def test_stayer_pass_env_lets_named_credentials_through() -> None:
    given = {**KEYS, "STAYER_PASS_ENV": "OPENAI_API_KEY, CLAUDE_CODE_OAUTH_TOKEN"}
    assert child_env(given) == {
        "OPENAI_API_KEY": "sk-4",
        "CLAUDE_CODE_OAUTH_TOKEN": "oauth-3",
        "STAYER_PASS_ENV": "OPENAI_API_KEY, CLAUDE_CODE_OAUTH_TOKEN",
    }


def test_every_credential_a_provider_reads_is_withheld() -> None:
    providers = Path(__file__).parents[3] / "src" / "stayer" / "providers"
    named: set[str] = set()
    for source in providers.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named |= set(re.findall(r"\b[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET)\b", node.value))
    assert named and named <= CREDENTIALS, named - CREDENTIALS
