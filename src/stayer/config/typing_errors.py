"""A settings value of the wrong type, as one phrase a person fixing the file can act on.

msgspec checks the values (`msgspec.convert`) and stops at the first bad one with a message
like ``Expected `array`, got `str` - at `$.permissions.deny```. `located` turns that into the
value's path in the document (`("permissions", "deny")`, with the real key where msgspec
writes `[...]` for an entry of a mapping, such as `env` or `hooks`) and a phrase that says
what the value should be and what it was: ``permissions.deny: input should be a valid array
(got "Read(.env)")``. A value limited to a few words (a permission mode, a hook type) lists
them.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

from .locate import Path as KeyPath

_AT = re.compile(r"(?P<what>.*) - at `\$(?P<path>.*)`", re.S)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_EXPECTED = re.compile(r"Expected `(?P<kind>[^`]+)`, got `[^`]+`")
_BOUND = re.compile(r"Expected `\w+` (?P<op>>=|>|<=|<) (?P<bound>\S+)")
_SHORT = re.compile(r"Expected `str` of length >= (?P<least>\d+)")
_MISSING = re.compile(r"Object missing required field `(?P<key>[^`]+)`")
_KINDS = {
    "str": "a valid string",
    "array": "a valid array",
    "object": "an object",
    "bool": "a valid boolean",
    "int": "a valid integer",
    "float": "a valid number",
}
_BOUNDS = {
    ">=": "greater than or equal to",
    ">": "greater than",
    "<=": "less than or equal to",
    "<": "less than",
}


def located(error: msgspec.ValidationError, data: Any, root: type) -> tuple[KeyPath, str]:
    """Where in `data` (the decoded document `root` failed to type) the bad value is, and
    `path: what is wrong (got value)`."""
    match = _AT.fullmatch(str(error))
    if match is None:  # msgspec places every error it raises while typing
        return (), _sentence(str(error))
    path, kind, value = _walk(match["path"], data, root)
    missing = _MISSING.fullmatch(match["what"])
    if missing:
        path = (*path, missing["key"])
        return path, f"{dotted(path)}: a required key is missing"
    where = f"{dotted(path)}: " if path else ""
    return path, f"{where}{_said(match['what'], kind)} (got {_shown(value)})"


def dotted(path: Sequence[str | int]) -> str:
    """`permissions.deny[2]`."""
    joined = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
    return joined.lstrip(".")


def _walk(raw: str, data: Any, kind: Any) -> tuple[KeyPath, Any, Any]:
    """Follow msgspec's path through the document and its type, naming each key it hid; where
    the two part (they cannot), stop and place the problem at what encloses it."""
    path: list[str | int] = []
    for name, index in _SEGMENT.findall(raw):
        kind = _bare(kind)
        key: str | int | None
        if name:  # a field of a struct, by its name in the file
            fields = {field.encode_name: field.type for field in msgspec.structs.fields(kind)}
            kind, key = fields.get(name), name
        elif index == "...":  # an entry of a mapping: the first one that does not fit
            kind = get_args(kind)[1]
            key = next((k for k, v in data.items() if not _fits(v, kind)), None)
        else:
            kind, key = get_args(kind)[0], int(index)
        if key is None or kind is None:
            break
        data = data[key]
        path.append(key)
    return tuple(path), _bare(kind), data


def _fits(value: Any, kind: Any) -> bool:
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return False
    return True


def _bare(kind: Any) -> Any:
    """The type without `| None` and without its `Annotated` limits."""
    if get_origin(kind) in (Union, types.UnionType):
        kinds = [arg for arg in get_args(kind) if arg is not type(None)]
        kind = kinds[0] if len(kinds) == 1 else kind
    return get_args(kind)[0] if get_origin(kind) is Annotated else kind


def _said(what: str, kind: Any) -> str:
    if get_origin(kind) is Literal:
        words = [repr(word) for word in get_args(kind)]
        listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
        return f"input should be {listed}"
    if expected := _EXPECTED.fullmatch(what):
        named = expected["kind"].removesuffix(" | null")
        return f"input should be {_KINDS.get(named, named)}"
    if bound := _BOUND.fullmatch(what):
        number = float(bound["bound"])
        shown = int(number) if number.is_integer() else number
        return f"input should be {_BOUNDS[bound['op']]} {shown}"
    if short := _SHORT.fullmatch(what):
        least = int(short["least"])
        return f"string should have at least {least} character{'s' if least != 1 else ''}"
    return _sentence(what)


def _sentence(what: str) -> str:
    return what[:1].lower() + what[1:]


def _shown(value: Any) -> str:
    shown = json.dumps(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
