"""Keeping secrets out of transcripts: the values of environment variables whose names say
they are secret (`…_KEY`, `…_TOKEN`, `…_SECRET`, `…PASSWORD`, `…_PWD`, …), and passwords
inside URLs in the environment, are replaced by the variable's name wherever they appear in a
record (thinking blocks excepted: their signature covers their text)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from msgspec import Struct

_SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|PASS|CREDENTIALS?|AUTH|AUTH_TOKEN)(_|$)",
    re.IGNORECASE,
)
"""Names whose values are secrets: a whole part of the name (`GIT_AUTHOR_NAME` is not one)."""
_DIRECTORIES = frozenset({"PWD", "OLDPWD"})
"""The shell's working directories: `PWD` is no password, and redacting it would put
`[PWD redacted]` for the working directory all through a transcript."""
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/:@\s]+:([^/@\s]+)@", re.IGNORECASE)
MIN_SECRET_CHARS = 8


class Scrubber(Struct, frozen=True):
    """Replaces the values of secret-looking environment variables with their names."""

    secrets: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, *envs: Mapping[str, str]) -> Scrubber:
        found: dict[str, str] = {}
        for env in envs:
            for name, value in env.items():
                secret = _SECRET_NAME.search(name) and name.upper() not in _DIRECTORIES
                if secret and len(value) >= MIN_SECRET_CHARS:
                    found[value] = name
                password = _URL_PASSWORD.match(value)
                if password and len(password.group(1)) >= 4:  # the password part of a URL
                    found[password.group(1)] = f"{name} password"
        # longest first, so a secret that contains another is replaced whole
        ordered = sorted(found.items(), key=lambda item: -len(item[0]))
        return cls(tuple((value, name) for value, name in ordered))

    def __call__(self, text: str) -> str:
        for value, name in self.secrets:
            text = text.replace(value, f"[{name} redacted]")
        return text

    def record(self, value: Any) -> Any:
        """`value` (a record or part of one) with every string scrubbed, except inside thinking
        blocks: their signature covers their text, and a changed one is refused on resume."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, list):
            return [self.record(item) for item in value]
        if isinstance(value, dict):
            if value.get("type") in ("thinking", "redacted_thinking"):
                return value
            return {key: self.record(item) for key, item in value.items()}
        return value
