"""The model clients of one batch: one per provider and endpoint, shared by every task.

A task's model is resolved as a session would resolve it (`stayer.providers.select`: aliases,
`anthropic:`/`openai:` prefixes, the environment's keys and base URLs), and the task is handed
the client of that provider and endpoint, made on first use and kept for the whole batch, so
the batch's sessions share one HTTP connection pool per provider instead of opening one each.
The pool is sized from the batch's concurrency: httpx's default (100 connections, 20 kept
alive) would queue the streams of a larger batch and reopen connections at every turn.

`wrap` lets the batch put something between every session and the client (the fleet rate
limiter). Sessions never close a client they were given; the batch closes the pool once, at
its end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from msgspec import Struct

from stayer.providers.base import Provider
from stayer.providers.select import ModelChoice, choose_model, provider_for

MIN_CONNECTIONS = 100
"""httpx's own default: a small batch keeps it."""
CONNECTIONS_PER_TASK = 2
"""A session has one stream at a time, but its subagents and side calls (a title, a web page's
summary) may add one: room for two each keeps any from queueing behind another task's."""

_ENDPOINT_VARIABLES = ("ANTHROPIC_", "OPENAI_", "API_TIMEOUT_MS", "CLAUDE_", "DISABLE_PROMPT")
"""The environment that decides who a client talks to and how (keys, base URLs, timeouts,
prompt caching): two tasks whose values differ get clients of their own."""

Wrap = Callable[[Provider], Provider]


class Client(Struct, frozen=True):
    """What a task's session is handed: the shared client and what its model name stands for."""

    provider: Provider
    choice: ModelChoice


class ProviderPool:
    """The batch's clients, by provider and endpoint; see the module."""

    def __init__(self, *, concurrency: int, wrap: Wrap | None = None) -> None:
        self.max_connections = max(MIN_CONNECTIONS, CONNECTIONS_PER_TASK * concurrency)
        self._wrap = wrap
        self._made: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Provider, Provider]] = {}
        self._closed = False

    def client(self, model: str | None, env: Mapping[str, str]) -> Client:
        """The shared client for `model` (None: the environment's default) under `env`; raises
        `ConfigError` in one line when no provider serves it or none is configured."""
        if self._closed:
            raise RuntimeError("the batch's model clients are closed")
        choice = choose_model(model, env)
        key = (choice.provider, _endpoint(env))
        made = self._made.get(key)
        if made is None:
            built = provider_for(choice, env, max_connections=self.max_connections)
            made = (built, built if self._wrap is None else self._wrap(built))
            self._made[key] = made
        return Client(made[1], choice)

    @property
    def size(self) -> int:
        """How many clients the pool has made (a property, not `len`: an empty pool is no
        false value to an `or`)."""
        return len(self._made)

    async def aclose(self) -> None:
        """Close every client this pool made (the wrappers are not closed: the batch owns
        what they hold); later calls to `client` are refused."""
        self._closed = True
        made, self._made = list(self._made.values()), {}
        for built, _ in made:
            await built.aclose()


def _endpoint(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(endpoint_environment(env).items()))


def endpoint_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of `env` that decide a model client (what a Ray worker is sent)."""
    return {name: value for name, value in env.items() if name.startswith(_ENDPOINT_VARIABLES)}
