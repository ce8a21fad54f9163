"""Request bodies built from JSON encoded once: each message's bytes are kept and reused.

A conversation grows by a message or two per model call, and its messages are frozen
structs: a message sent before has the same JSON now. Encoding the whole history again for
every request made the harness's cost per turn grow with the session, so a provider keeps the
bytes of each message it sent, in each form it sends it in (for Anthropic: with or without a
cache breakpoint on a block; for OpenAI: with or without thinking blocks), keyed by the message
object (`EncodedMessages`), remembers the last request's list of them (`EncodedHistory`), and
joins the body once. An entry lives as long as its message (a weak reference each): once a
compaction drops old messages and nothing holds them, their bytes go.

Items of an array are kept *separated*: with the comma that puts them after another item
(empty for a message that sends nothing), so a body is one join of parts that already exist;
with a history of a megabyte, each extra copy of it costs more than all the rest.

The encoding is what httpx sends for `json=`: compact separators, UTF-8, no ASCII escapes.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from msgspec import Struct, field

from stayer import json_text
from stayer.messages import JSON, Message

Form = TypeVar("Form", bound=Hashable)


def dumps(value: JSON) -> bytes:
    """`value` as compact UTF-8 JSON."""
    return json_text.dumps(value, allow_nan=False).encode()


def separated(encoded: bytes) -> bytes:
    """An encoded array item (or several, comma-separated) with the comma that goes before it;
    nothing stays nothing."""
    return b"," + encoded if encoded else b""


def json_array(items: list[bytes]) -> list[bytes]:
    """The parts of a JSON array of `separated` items, for `json_object`."""
    for index, item in enumerate(items):
        if item:  # the first item that sends something loses its comma
            return [b"[", *items[:index], item[1:], *items[index + 1 :], b"]"]
    return [b"[]"]


def json_object(fields: Iterable[tuple[str, bytes | list[bytes]]]) -> bytes:
    """A JSON object from keys and values that are encoded already (a value may come in parts,
    see `json_array`), in this order, joined once."""
    parts: list[bytes] = []
    for key, value in fields:
        parts += (b"," if parts else b"{", dumps(key), b":")
        if isinstance(value, bytes):
            parts.append(value)
        else:
            parts += value
    parts.append(b"}" if parts else b"{}")
    return b"".join(parts)


class _Entry(Struct):
    ref: weakref.ref[Message]
    forms: dict[Hashable, bytes] = field(default_factory=dict[Hashable, bytes])


class EncodedMessages:
    """The encoded forms of the messages a provider sent, while the messages live."""

    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, message: Message, form: Form, encode: Callable[[Message, Form], bytes]) -> bytes:
        """`message` in `form`, `separated`: from `encode(message, form)` the first time."""
        key = id(message)
        entry = self._entries.get(key)
        if entry is None or entry.ref() is not message:
            entry = _Entry(weakref.ref(message, self._forget(key)))
            self._entries[key] = entry
        encoded = entry.forms.get(form)
        if encoded is None:
            encoded = entry.forms[form] = separated(encode(message, form))
        return encoded

    def _forget(self, key: int) -> Callable[[weakref.ref[Message]], None]:
        entries = self._entries  # not self: an entry must not keep its cache alive

        def forget(dead: weakref.ref[Message]) -> None:
            entry = entries.get(key)
            if entry is not None and entry.ref is dead:
                del entries[key]

        return forget


class EncodedHistory:
    """The conversation as a provider last sent it, message by message, so the next request
    takes the same leading messages' bytes as they are and encodes only what is new.

    Each message goes out in a form (`form_of`): the request's few exceptions are `marks`
    (the Anthropic breakpoints); the other messages' forms depend only on the message and on
    `context` (OpenAI's thinking switch). A message whose mark came or went is looked up again;
    with a new context, or a history that is not the last one grown, every message is looked up
    (in the bytes kept per message, `EncodedMessages`). Holds the last request's messages until
    the next one.
    """

    def __init__(self) -> None:
        self.cache = EncodedMessages()
        self._sent: tuple[Message, ...] = ()
        self._fragments: list[bytes] = []
        self._context: object = _UNSET
        self._marks: frozenset[int] = frozenset()

    def fragments(
        self,
        messages: tuple[Message, ...],
        form_of: Callable[[int, Message], Form],
        encode: Callable[[Message, Form], bytes],
        *,
        marks: Iterable[int] = (),
        context: object = None,
    ) -> list[bytes]:
        """Each message's bytes, `separated`, in order."""
        marked = frozenset(marks)
        sent = self._sent
        kept = 0
        if context == self._context and messages[: len(sent)] == sent:
            kept = len(sent)  # compared by identity first: a grown history costs a pointer each
        fragments = self._fragments[:kept]
        get = self.cache.get
        for index in self._marks | marked:
            if index < kept:
                fragments[index] = get(messages[index], form_of(index, messages[index]), encode)
        for index in range(kept, len(messages)):
            fragments.append(get(messages[index], form_of(index, messages[index]), encode))
        self._sent, self._fragments = messages, fragments
        self._context, self._marks = context, marked
        return fragments


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
