"""Which model servers are running: Ollama at ``OLLAMA_HOST`` and an OpenAI-compatible server at ``OPENAI_BASE_URL``.

A quick, quiet probe for the dashboard's first run. A server that does not answer
(refused, timed out, unknown host) is not listed; one that answers with an error
is listed with that error, so the user sees why it cannot be used yet.

    for server in detect_servers():
        print(server.provider, server.base_url, server.models, server.error)
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

OLLAMA_PORT = 11434
DEFAULT_OLLAMA = f"http://127.0.0.1:{OLLAMA_PORT}"


@dataclass(frozen=True)
class Detected:
    provider: Literal["ollama", "openai"]
    base_url: str
    models: list[str] = field(default_factory=list)
    error: str = ""


def ollama_url(host: str | None) -> str:
    """``OLLAMA_HOST`` as a URL, read as the ollama client reads it: ``host``, ``host:port`` or a full URL;
    no scheme means http, no port means 11434 (80 or 443 when the scheme is written out)."""
    host, port = (host or "").strip(), OLLAMA_PORT
    scheme, _, hostport = host.partition("://")
    if not hostport:
        scheme, hostport = "http", host
    elif scheme in ("http", "https"):
        port = 80 if scheme == "http" else 443
    split = urlsplit(f"{scheme}://{hostport}")
    name = split.hostname or "127.0.0.1"
    try:
        port = split.port or port
    except ValueError:  # not a port: kept as written, so the probe finds nothing there (the client refuses it)
        return f"{scheme}://{hostport.rstrip('/')}"
    try:
        if isinstance(ipaddress.ip_address(name), ipaddress.IPv6Address):
            name = f"[{name}]"
    except ValueError:
        pass
    path = split.path.strip("/")
    return f"{scheme}://{name}:{port}" + (f"/{path}" if path else "")


def ollama_probe_url() -> str:
    """Where :func:`detect_servers` looks for Ollama: ``OLLAMA_HOST`` as a URL (default http://127.0.0.1:11434)."""
    return ollama_url(os.environ.get("OLLAMA_HOST"))


def _error_text(response: httpx.Response) -> str:
    """The server's own error message where it gives one (Ollama: ``error``; OpenAI: ``error.message``)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    detail: Any = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict):
        detail = detail.get("message")
    text = " ".join(str(detail or response.text or response.reason_phrase).split())[:200]
    return f"HTTP {response.status_code}: {text}" if text else f"HTTP {response.status_code}"


def _probe(provider: Literal["ollama", "openai"], base_url: str, path: str, headers: dict[str, str],
           timeout: float) -> Detected | None:
    try:
        response = httpx.get(f"{base_url}{path}", headers=headers, timeout=timeout)
    except (httpx.TransportError, httpx.InvalidURL, ValueError):  # nothing answered there
        return None
    if response.is_error:
        return Detected(provider, base_url, [], _error_text(response))
    try:
        body = response.json()
        if provider == "ollama":
            names = [entry.get("model") or entry.get("name") for entry in body["models"]]
        else:
            names = [entry.get("id") for entry in body["data"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return Detected(provider, base_url, [], f"unexpected answer to GET {path}: not a model list")
    return Detected(provider, base_url, sorted({n for n in names if isinstance(n, str) and n}))


def detect_servers(timeout: float = 0.6, *, api_key: str | None = None) -> list[Detected]:
    """Probe Ollama (``OLLAMA_HOST``, default http://127.0.0.1:11434) with ``GET /api/tags`` and, when
    ``OPENAI_BASE_URL`` is set, that server with ``GET {base}/models`` (bearer ``api_key``, else
    ``OPENAI_API_KEY``). Never raises for a server that is down."""
    found = [_probe("ollama", ollama_probe_url(), "/api/tags", {}, timeout)]
    base = (os.environ.get("OPENAI_BASE_URL") or "").strip().rstrip("/")
    if base:
        key = api_key or os.environ.get("OPENAI_API_KEY")
        found.append(_probe("openai", base, "/models", {"Authorization": f"Bearer {key}"} if key else {}, timeout))
    return [server for server in found if server is not None]
