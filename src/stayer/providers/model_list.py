"""The providers' model lists (`GET /v1/models`): reading them, and caching them for a day.

The list is never waited for: start-up reads the cache file (a few hundred bytes) and, when it
is missing, stale or unreadable, `refresh_if_stale` fetches it on a thread of its own while the
first request goes out; a failed fetch says nothing unless `STAYER_DEBUG` is set, and never
fails a run. The cache is one small JSON file per server under the user's stayer folder
(`cache/`), holding the time of the fetch and each model's id, release time and, where the list
gives them, limits. What the lists mean for the aliases is `models`'.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Literal

from msgspec import Struct

from stayer.errors import ConfigError
from stayer.providers.endpoints import (
    ANTHROPIC_BASE_URL,
    ANTHROPIC_VERSION,
    OPENAI_BASE_URL,
    tls_context,
)
from stayer.switches import env_flag

CACHE_FRESH_S = 24 * 3600.0
"""How long a fetched list stands for the server's models."""
FETCH_TIMEOUT_S = 10.0
EXIT_GRACE_S = 1.0
"""How long a finishing process waits for a refresh still under way, so a short run leaves a
fresh cache behind rather than a fetch cut off at exit."""
_NO_LIST = frozenset({404, 405, 501})
"""Answers that say the server has no model list, rather than that it failed this time."""
_PAGES = 10
"""At most this many pages of Anthropic's list (1,000 models each) are read."""


class Listed(Struct, frozen=True):
    """One model of a provider's list."""

    id: str
    created: float
    """Release time, seconds since the epoch (0 when the list does not say)."""
    max_input_tokens: int | None = None
    max_tokens: int | None = None


class Listing(Struct, frozen=True):
    """A provider's model list as fetched at `fetched_at` (seconds since the epoch)."""

    fetched_at: float
    models: tuple[Listed, ...]

    def fresh(self, now: float) -> bool:
        """Whether the list is recent enough to stand for the server's models (a time in the
        future, from a clock set back, is not)."""
        return 0 <= now - self.fetched_at < CACHE_FRESH_S


class ListEndpoint(Struct, frozen=True):
    """Where a provider's model list is read, and the headers that let us read it."""

    provider: Literal["anthropic", "openai"]
    base_url: str
    headers: Mapping[str, str]

    @property
    def url(self) -> str:
        """The list's address."""
        return self.base_url + ("/v1/models" if self.provider == "anthropic" else "/models")


def _get(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def list_endpoint(provider: str, env: Mapping[str, str]) -> ListEndpoint:
    """The model list of the server `provider`'s requests go to, with the same credentials."""
    if provider == "anthropic":
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if key := _get(env, "ANTHROPIC_API_KEY"):
            headers["x-api-key"] = key
        if token := _get(env, "ANTHROPIC_AUTH_TOKEN"):
            headers["authorization"] = f"Bearer {token}"
        base = _get(env, "ANTHROPIC_BASE_URL") or ANTHROPIC_BASE_URL
        return ListEndpoint("anthropic", base.rstrip("/"), headers)
    headers = {}
    if key := _get(env, "OPENAI_API_KEY"):
        headers["authorization"] = f"Bearer {key}"
    base = _get(env, "OPENAI_BASE_URL") or OPENAI_BASE_URL
    return ListEndpoint("openai", base.rstrip("/"), headers)


# --- the cache --------------------------------------------------------------------------------


def cache_path(endpoint: ListEndpoint, env: Mapping[str, str]) -> Path:
    """The cache file of one server's list: one per provider and base URL."""
    # Imported here: `stayer.config` brings the settings' pydantic models, which the way from
    # launch to the first request must not wait for.
    from stayer.config.dirs import config_root

    root_env = env if "STAYER_CONFIG_DIR" in env else os.environ
    digest = hashlib.sha256(endpoint.base_url.encode()).hexdigest()[:16]
    return config_root(root_env) / "cache" / f"models-{endpoint.provider}-{digest}.json"


NONESSENTIAL_OFF = "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"
"""Claude Code's switch for traffic a run can do without: set, no model list is fetched."""

_LEAST_LIMIT = 1_024
"""A limit below this is taken for a server's placeholder (Anthropic's examples show 0), not a
model's: a tiny window would compact the conversation after every call."""


_MOST_LIMIT = 100_000_000
"""A limit above this is no model's either (the largest windows are a few million tokens): it
would turn compaction off, so the table's figure stands."""


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if _LEAST_LIMIT <= value <= _MOST_LIMIT else None
    return None


def _listed_from_cache(item: object) -> Listed | None:
    if not isinstance(item, dict):
        return None
    model_id, created = item.get("id"), item.get("created")
    if not isinstance(model_id, str) or not isinstance(created, int | float):
        return None
    limits = _count(item.get("max_input_tokens")), _count(item.get("max_tokens"))
    return Listed(model_id, float(created), *limits)


_read: dict[Path, tuple[tuple[int, int, int], Listing | None]] = {}
"""Each cache file as last read, under its inode, modification time and size (a refresh
replaces the file whole, so a new version is a new inode): a run asks for the
list several times as it starts (each alias, the limits, the refresh), and reads it once."""


def read_cache(path: Path) -> Listing | None:
    """The list cached at `path`; None when there is none or it cannot be read whole."""
    try:
        stat = path.stat()
        version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        known = _read.get(path)
        if known is not None and known[0] == version:
            return known[1]
        # A file nested past the parser's depth, or a number past a float's range, is as
        # unreadable as one cut short: the table answers rather than the run failing.
        listing = _listing_from_cache(json.loads(path.read_bytes()))
    except (OSError, ValueError, RecursionError, OverflowError):
        return None
    _read[path] = (version, listing)
    return listing


def _listing_from_cache(data: object) -> Listing | None:
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        return None
    fetched = data.get("fetched_at")
    if not isinstance(fetched, int | float) or isinstance(fetched, bool):
        return None
    models = [_listed_from_cache(item) for item in data["models"]]
    if any(model is None for model in models):
        return None
    return Listing(float(fetched), tuple(m for m in models if m is not None))


def write_cache(path: Path, listing: Listing) -> None:
    """Write the list whole or not at all (a reader never sees half a file)."""
    models = [
        {
            "id": m.id,
            "created": m.created,
            **({"max_input_tokens": m.max_input_tokens} if m.max_input_tokens else {}),
            **({"max_tokens": m.max_tokens} if m.max_tokens else {}),
        }
        for m in listing.models
    ]
    text = json.dumps({"fetched_at": listing.fetched_at, "models": models})
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".models-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def fresh_listing(provider: str, env: Mapping[str, str]) -> Listing | None:
    """The cached list of `provider`'s server when it is fresh; None otherwise."""
    try:
        endpoint = list_endpoint(provider, env)
        listing = read_cache(cache_path(endpoint, env))
    except ConfigError:  # a STAYER_CONFIG_DIR that cannot be: the table answers
        return None
    return listing if listing is not None and listing.fresh(time.time()) else None


# --- fetching ---------------------------------------------------------------------------------


def _created(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return 0.0


def parse_page(provider: str, body: object) -> tuple[list[Listed], str | None]:
    """The models of one page of a list and, for Anthropic's, the cursor of the next page
    (None at the end); raises `ValueError` for an answer that is not a model list."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise ValueError("the answer is not a model list")
    models: list[Listed] = []
    for item in body["data"]:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise ValueError("a model in the list has no id")
        created = item.get("created_at" if provider == "anthropic" else "created")
        limits = _count(item.get("max_input_tokens")), _count(item.get("max_tokens"))
        models.append(Listed(item["id"], _created(created), *limits))
    more = provider == "anthropic" and body.get("has_more") is True
    last = body.get("last_id")
    return models, (last if more and isinstance(last, str) and last else None)


def fetch_listing(endpoint: ListEndpoint) -> Listing:
    """Read the whole list from the server; raises `OSError` or `ValueError` (httpx's errors
    are `OSError`s here) when it cannot."""
    import httpx

    verify = tls_context() if endpoint.base_url.startswith("https:") else False
    models: list[Listed] = []
    cursor: str | None = None
    with httpx.Client(timeout=FETCH_TIMEOUT_S, verify=verify) as client:
        for _ in range(_PAGES):
            params = {"limit": "1000"} if endpoint.provider == "anthropic" else {}
            if cursor:
                params["after_id"] = cursor
            try:
                response = client.get(endpoint.url, headers=dict(endpoint.headers), params=params)
            except httpx.HTTPError as error:
                raise OSError(str(error) or type(error).__name__) from error
            if response.status_code in _NO_LIST and not models:
                # A server with no list (a gateway, a local server): asked again tomorrow.
                return Listing(time.time(), ())
            if response.status_code != 200:
                raise OSError(f"HTTP {response.status_code}")
            page, cursor = parse_page(endpoint.provider, response.json())
            models.extend(page)
            if cursor is None:
                break
    return Listing(time.time(), tuple(models))


def _debug(line: str) -> None:
    """One line on standard error, only under STAYER_DEBUG (the run itself reports nothing)."""
    sys.stderr.write(f"stayer: {line}\n")


_refreshing: dict[Path, threading.Thread] = {}
_lock = threading.Lock()


def _refresh(endpoint: ListEndpoint, path: Path, debug: bool) -> None:
    try:
        write_cache(path, fetch_listing(endpoint))
    except Exception as error:  # never a run's failure: the table still answers
        if debug:
            _debug(f"the model list at {endpoint.url} was not refreshed: {error}")


def _wait_at_exit() -> None:
    deadline = time.monotonic() + EXIT_GRACE_S
    for thread in list(_refreshing.values()):
        thread.join(max(0.0, deadline - time.monotonic()))


def refresh_if_stale(provider: str, env: Mapping[str, str]) -> threading.Thread | None:
    """Refresh the cached list of `provider`'s server on a thread of its own unless it is
    fresh or already being refreshed; returns the thread, if one was started."""
    try:
        endpoint = list_endpoint(provider, env)
        path = cache_path(endpoint, env)
    except ConfigError:
        return None
    if env_flag(env, NONESSENTIAL_OFF):  # the table, or a list already cached, answers
        return None
    listing = read_cache(path)
    debug = env_flag(env, "STAYER_DEBUG")
    if listing is None and debug and path.exists():
        _debug(f"{path} could not be read; the built-in model table answers")
    if listing is not None and listing.fresh(time.time()):
        return None
    with _lock:
        running = _refreshing.get(path)
        if running is not None and running.is_alive():
            return None
        if not _refreshing:
            atexit.register(_wait_at_exit)
        thread = threading.Thread(
            target=_refresh, args=(endpoint, path, debug), name="stayer-models", daemon=True
        )
        _refreshing[path] = thread
    thread.start()
    return thread
