"""Which model servers are running: Ollama at ``OLLAMA_HOST`` and an OpenAI-compatible server at ``OPENAI_BASE_URL``.

A quick, quiet probe for the dashboard's first run. A server that does not answer
(refused, timed out, unknown host) is not listed; one that answers with an error
is listed with that error, so the user sees why it cannot be used yet; one that answers
with something else than the API's JSON (a web server's HTML page) is listed as ``foreign``:
something answers there, and it is not that server.

:func:`answered` says what a server answered, for a person: its status, what answered (its ``Server``
header, its content type) and what that means; a JSON error keeps its own message, and an HTML page or
any other body is never quoted (the providers' errors and the sidebar's Test connection say it so).

    for server in detect_servers():
        print(server.provider, server.base_url, server.models, server.error)
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Mapping
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
    foreign: bool = False  # something answered there, but not with the API's JSON: not this kind of server


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


EXPECTED = {"ollama": "Ollama", "openai": "an OpenAI-compatible API"}


def api_error(body: str | bytes | None) -> str | None:
    """The error message of an API's JSON error body (Ollama: ``error``; OpenAI: ``error.message``; some servers:
    ``detail`` or ``message``), one line, cut short; None when the body is not such JSON."""
    try:
        parsed = json.loads(body or "")
    except (ValueError, TypeError):
        return None
    if not isinstance(parsed, dict):
        return None
    detail: Any = next((parsed[k] for k in ("error", "detail", "message") if k in parsed), None)
    if isinstance(detail, dict):
        detail = detail.get("message")
    return " ".join(str(detail).split())[:200] if detail else None


def answered(status: int, headers: Mapping[str, str] | None, body: str | bytes | None, *, expected: str) -> str:
    """What a server answered, in words, for a person (a clause: the caller adds what to do): ``HTTP 404: <the
    API's own message>`` for a JSON error; otherwise the status, what answered (its ``Server`` header and content
    type) and what that means for ``expected`` (``"Ollama"``), never the body itself (an HTML page is not shown)."""
    if (detail := api_error(body)) is not None:
        return f"HTTP {status}: {detail}"
    headers = headers or {}
    kind = str(headers.get("content-type") or "").split(";")[0].strip().lower()
    server = " ".join(str(headers.get("server") or "").split())[:60]
    what = ", ".join(filter(None, (f"server: {server}" if server else "", kind)))
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else (body or "")
    if not text.strip():
        page = "an empty body"
    elif "html" in kind or text.lstrip()[:1] == "<":
        page = "an HTML page"
    else:
        page = f"a {kind} body" if kind else "a body that is not JSON"
    if status >= 500:
        meaning = f"an error page of that server or of a proxy in front of it, not {expected}'s own error"
    else:
        meaning = f"not {expected}'s JSON, so what answers at this address is not {expected} (a web server or a proxy?)"
    return f"HTTP {status} with {page}{f' ({what})' if what else ''}: {meaning}"


def fix_for(status: int, field: str) -> str:
    """What to do about an answer :func:`answered` described: the address in ``field`` for a 4xx, the server's
    log for a 5xx."""
    if status >= 500:
        return "check that it runs there and its log; retry once it is fixed, or choose another provider."
    return f"check the address (the sidebar's {field}), or choose another provider."


def _probe(provider: Literal["ollama", "openai"], base_url: str, path: str, headers: dict[str, str],
           timeout: float) -> Detected | None:
    try:
        response = httpx.get(f"{base_url}{path}", headers=headers, timeout=timeout)
    except (httpx.TransportError, httpx.InvalidURL, ValueError):  # nothing answered there
        return None
    if response.is_error:
        words = answered(response.status_code, response.headers, response.text, expected=EXPECTED[provider])
        return Detected(provider, base_url, [], words, foreign=api_error(response.text) is None)
    try:
        body = response.json()
        if provider == "ollama":
            names = [entry.get("model") or entry.get("name") for entry in body["models"]]
        else:
            names = [entry.get("id") for entry in body["data"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return Detected(provider, base_url, [], f"unexpected answer to GET {path}: not a model list", foreign=True)
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
