"""Every exception stayer raises on purpose, in one tree.

    StayerError
    ├── ConfigError            a setting, flag or environment variable is wrong or missing
    ├── ModelError             a model call failed (after the provider decoded the failure)
    │   ├── Overloaded         the service is over capacity (HTTP 529, `overloaded_error`)
    │   ├── RateLimited        too many requests (HTTP 429)
    │   ├── ServerError        any other 5xx, 408 or 409
    │   ├── ConnectionLost     could not connect, timed out, or the stream was cut
    │   │   └── ToolInputCut   a stream said it was done inside a tool call's arguments
    │   ├── BadResponse        the server's answer broke off or made no sense
    │   │   └── ProtocolMismatch   the server does not speak the streaming format at all
    │   ├── PromptTooLong      the conversation no longer fits the model's context window
    │   ├── InvalidRequest     the API refused the request as malformed (400, 404, 413, 422)
    │   └── AuthenticationFailed   the key is missing, wrong, revoked or lacks permission
    └── ScriptError            a scripted model was used other than as scripted (tests, demo)

`ModelError.retryable` says whether sending the same request again may succeed;
`retry_limit`, when set, caps how often that is worth trying whatever the retry policy allows;
`retry_after` is how long the server asked us to wait first (any status may carry it: 429,
529, 503). Errors a model can fix (bad tool input, a failing command) are never exceptions:
they travel back to the model as `is_error` tool results.
"""

from __future__ import annotations


class StayerError(Exception):
    """Base of every error stayer raises on purpose; `str()` is one line meant for people."""


class ConfigError(StayerError):
    """A setting, flag or environment variable is wrong or missing."""


class ModelError(StayerError):
    """A model call failed."""

    retryable: bool = False
    retry_limit: int | None = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        """Seconds the server asked us to wait before trying again; None if it did not say."""
        if retryable is not None:  # this instance knows better than its class
            self.retryable = retryable


class Overloaded(ModelError):
    """The model service is over capacity."""

    retryable = True


class RateLimited(ModelError):
    """The model service asked us to slow down."""

    retryable = True

    def __init__(
        self, message: str, *, status: int | None = 429, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status, retry_after=retry_after)


class ServerError(ModelError):
    """The model service failed on its side."""

    retryable = True


class ConnectionLost(ModelError):
    """The connection could not be made, timed out, or was cut mid-stream."""

    retryable = True


class ToolInputCut(ConnectionLost):
    """The stream said it was finished, but a tool call's arguments break off mid-JSON.

    Some gateways report a stream that broke inside the arguments as a normal end. It is
    retried as a cut stream, but only twice: a server that always cuts them will not stop.
    """

    retry_limit = 2


class BadResponse(ModelError):
    """The server's answer broke the wire protocol (garbage, truncated JSON, wrong order)."""

    retryable = True


class ProtocolMismatch(BadResponse):
    """The server answered HTTP 200 with a stream that is not the expected format.

    A proxy may garble one answer, so it is retried, but only twice: a server that speaks
    something else will not learn our format by being asked ten times over three minutes.
    """

    retry_limit = 2


class PromptTooLong(ModelError):
    """The request no longer fits the model's context window."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = 400,
        tokens: int | None = None,
        limit: int | None = None,
    ) -> None:
        super().__init__(message, status=status)
        self.tokens = tokens
        self.limit = limit


class InvalidRequest(ModelError):
    """The API refused the request itself; sending it again will not help."""


class AuthenticationFailed(ModelError):
    """The credentials were refused."""


class ScriptError(StayerError):
    """A scripted model was called more often, or less often, than its script says."""
