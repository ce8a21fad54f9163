"""Request bodies built from JSON encoded once: each message's bytes are kept and reused.

A conversation grows by a message or two per model call, and its messages are frozen
dataclasses: a message sent before has the same JSON now. Encoding the whole history again for
every request made the harness's cost per turn grow with the session, so a provider keeps the
bytes of each message it sent, in each form it sends it in (for Anthropic: with or without a
cache breakpoint on its last block; for OpenAI: with or without thinking blocks), keyed by the
message object, and joins them into the body. An entry lives as long as its message (a weak
reference each): once a compaction drops old messages and nothing holds them, their bytes go.

The encoding is what httpx sends for `json=`: compact separators, UTF-8, no ASCII escapes.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from stayer.messages import JSON, Message

Form = TypeVar("Form", bound=Hashable)


def dumps(value: JSON) -> bytes:
    """`value` as compact UTF-8 JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def json_object(fields: Iterable[tuple[str, bytes]]) -> bytes:
    """A JSON object from keys and values that are encoded already, in this order."""
    return b"{" + b",".join(dumps(key) + b":" + value for key, value in fields) + b"}"


def json_array(items: Iterable[bytes]) -> bytes:
    """A JSON array from encoded items; an empty item (a message that sends nothing) is left
    out, and one item may hold several, comma-separated."""
    return b"[" + b",".join(item for item in items if item) + b"]"


@dataclass(slots=True)
class _Entry:
    ref: weakref.ref[Message]
    forms: dict[Hashable, bytes] = field(default_factory=dict[Hashable, bytes])


class EncodedMessages:
    """The encoded forms of the messages a provider sent, while the messages live."""

    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, message: Message, form: Form, encode: Callable[[Message, Form], bytes]) -> bytes:
        """The bytes of `message` in `form`, from `encode(message, form)` the first time."""
        key = id(message)
        entry = self._entries.get(key)
        if entry is None or entry.ref() is not message:
            entry = _Entry(weakref.ref(message, self._forget(key)))
            self._entries[key] = entry
        encoded = entry.forms.get(form)
        if encoded is None:
            encoded = entry.forms[form] = encode(message, form)
        return encoded

    def _forget(self, key: int) -> Callable[[weakref.ref[Message]], None]:
        entries = self._entries  # not self: an entry must not keep its cache alive

        def forget(dead: weakref.ref[Message]) -> None:
            entry = entries.get(key)
            if entry is not None and entry.ref is dead:
                del entries[key]

        return forget


class Memo:
    """The last value encoded for a key that rarely changes (the system prompt, the tools)."""

    def __init__(self) -> None:
        self._key: object = _UNSET
        self._value = b""

    def get(self, key: object, encode: Callable[[], bytes]) -> bytes:
        """The bytes for `key`, encoded again only when it differs from the last one (compared,
        never hashed: tool schemas are dicts)."""
        if self._key is _UNSET or self._key != key:
            self._key, self._value = key, encode()
        return self._value


_UNSET = object()
