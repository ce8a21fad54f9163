"""Model names: the aliases people type, and today's model of each family.

An alias names a family (`sonnet` → Claude Sonnet, `gpt` → OpenAI's general GPT models). What
it stands for is, in order: the user's own choice (`ANTHROPIC_DEFAULT_SONNET_MODEL`, …, as in
Claude Code); else the newest model of the family in the provider's model list, when a list
fetched less than a day ago is cached for that server (`model_list`); else the dated built-in
table below. A list never makes an alias older than the table's choice, so a gateway listing
only old models cannot drag a run back to a retired one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from stayer.providers.model_list import Listing, fresh_listing

Family = Literal["sonnet", "opus", "haiku", "fable", "gpt"]

TABLE_CHECKED = "2026-12-02"
"""The day the built-in table was last compared with the providers' model pages."""
BUILT_IN: dict[Family, str] = {
    "opus": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
    "fable": "claude-fable-5-2",
    "gpt": "gpt-5.5",
}
"""Each family's current model as of `TABLE_CHECKED`: what an alias means offline."""

ALIASES: dict[str, Family] = {
    "sonnet": "sonnet",
    "opus": "opus",
    "best": "opus",
    "haiku": "haiku",
    "fable": "fable",
}
"""The Claude aliases and the family each names, as Claude Code 2.1.332 has them."""
PLAN_ALIAS = "opusplan"
"""Sonnet's model outside plan mode and Opus's in it (see `ModelChoice.plan_model`)."""
DEFAULT_FAMILY: Family = "opus"
"""What a run with no model named uses on Anthropic's protocol, as Claude Code does."""

FAMILY_VARIABLES: dict[Family, str] = {
    "opus": "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "haiku": "ANTHROPIC_DEFAULT_HAIKU_MODEL",
}
"""The variables a person sets to say what an alias stands for (a gateway's own name, say)."""

RETIRED: dict[str, str] = {"claude-sonnet-4-5": "2026-11-30"}
"""Models retired from Anthropic's API and the day each went: a 404 for one names the date."""

_CLAUDE = re.compile(r"^claude-(sonnet|opus|haiku|fable)-(\d+)(?:-(\d{1,2}))?(?:-(\d{8}))?$")
_GPT = re.compile(r"^gpt-(\d+)(?:\.(\d+))?$")
_CLAUDE_FAMILY = re.compile(r"claude-(?:[\d-]+-)?(sonnet|opus|haiku|fable)\b")
_GPT_FAMILY = re.compile(r"^(?:openai:)?gpt-\d")


# --- families and versions --------------------------------------------------------------------


def family_of(model: str) -> Family | None:
    """The family a model id belongs to (dated, gateway and `provider:` spellings too)."""
    name = model.strip().lower()
    if match := _CLAUDE_FAMILY.search(name):
        family: Family = match.group(1)  # type: ignore[assignment]  # the pattern's four names
        return family
    return "gpt" if _GPT_FAMILY.match(name) else None


def _version(family: Family, model: str) -> tuple[int, int] | None:
    """(major, minor) of a plain id of `family` (`claude-sonnet-5-5-20261001`, `gpt-5.5`);
    None for another family or a variant (`gpt-5.5-mini`, `gpt-5.5-pro`)."""
    if family == "gpt":
        match = _GPT.match(model)
        return (int(match.group(1)), int(match.group(2) or 0)) if match else None
    match = _CLAUDE.match(model)
    if match is None or match.group(1) != family:
        return None
    return int(match.group(2)), int(match.group(3) or 0)


def newest_in(family: Family, listing: Listing) -> str:
    """The newest model of `family` the list holds, by release time; the built-in choice when
    the list holds none as new as it."""
    built_in = BUILT_IN[family]
    floor = _version(family, built_in) or (0, 0)
    best: tuple[float, tuple[int, int], str] | None = None
    for model in listing.models:
        version = _version(family, model.id)
        if version is None or version < floor:
            continue
        candidate = (model.created, version, model.id)
        if best is None or candidate > best:
            best = candidate
    return built_in if best is None else best[2]


# --- resolving --------------------------------------------------------------------------------


def current_model(family: Family, env: Mapping[str, str]) -> str:
    """What `family`'s alias stands for now (see the module's docstring for the order)."""
    variable = FAMILY_VARIABLES.get(family)
    if variable and (named := env.get(variable, "").strip()):
        return named
    listing = fresh_listing("openai" if family == "gpt" else "anthropic", env)
    return BUILT_IN[family] if listing is None else newest_in(family, listing)


def alias_model(name: str, env: Mapping[str, str]) -> str | None:
    """The model a Claude alias (`sonnet`, `opus`, `best`, `haiku`, `fable`, `opusplan`
    outside plan mode) stands for; None when `name` is no alias."""
    key = name.strip().lower()
    if key == PLAN_ALIAS:
        return current_model("sonnet", env)
    family = ALIASES.get(key)
    return None if family is None else current_model(family, env)


def listed_limits(model: str, provider: str, env: Mapping[str, str]) -> tuple[int, int] | None:
    """(context window, output limit) of `model` as the fresh cached list gives them; None
    when it gives none (most lists do not carry limits)."""
    listing = fresh_listing(provider, env)
    for listed in listing.models if listing is not None else ():
        if listed.id == model and listed.max_input_tokens and listed.max_tokens:
            return listed.max_input_tokens, listed.max_tokens
    return None


def not_found_advice(model: str, provider: str, env: Mapping[str, str]) -> str | None:
    """The one line for a model the server does not know: when it was retired, if we know,
    and the current model of its family; None for a model of no family we know."""
    family = family_of(model)
    if family is None:
        return None
    replacement = current_model(family, env)
    bare = model.split(":", 1)[1] if model.lower().startswith(f"{provider}:") else model
    bare = bare.strip().lower()
    retired = next(
        (day for old, day in RETIRED.items() if bare == old or bare.startswith(old + "-")), None
    )
    when = f" (retired on {retired})" if retired else ""
    alias = "" if family == "gpt" else f" or --model {family}"
    if replacement.lower() == bare:
        return None  # the current model itself: the server's address or name is what is off
    return f"model {model} was not found{when}; use {replacement}{alias}"
