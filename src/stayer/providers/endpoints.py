"""Where the model APIs are and how to trust them: the providers' default addresses and API
version, and the one verifying TLS context every client shares (loaded once, in the background
as start-up goes on). The clients, the model list and the fallback chain all read them here, so
none has to import another provider's module for a constant."""

from __future__ import annotations

import ssl
import threading

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
OPENAI_BASE_URL = "https://api.openai.com/v1"

_tls_lock = threading.Lock()
_tls_context: ssl.SSLContext | None = None


def tls_context() -> ssl.SSLContext:
    """The one verifying TLS context; the first caller loads it, later ones wait for it."""
    global _tls_context
    with _tls_lock:
        if _tls_context is None:
            import httpx

            _tls_context = httpx.create_ssl_context()
        return _tls_context


def preload_tls(base_url: str) -> None:
    """Load the CA bundle in the background while start-up goes on (it releases the GIL).

    Loading it costs tens of milliseconds, which would otherwise sit between start-up and the
    first request. Plain-HTTP endpoints (local servers) never need it.
    """
    if base_url.startswith("https:"):
        threading.Thread(target=tls_context, name="stayer-tls", daemon=True).start()
