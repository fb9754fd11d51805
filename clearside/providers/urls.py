"""Server addresses a user types: checked before anything connects, so a typo reads as a typo, not as
"not reachable"."""

from __future__ import annotations

import re

import httpx

from ..errors import ConfigError

_AUTHORITY = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+)(:\d{1,5})?$")  # host or [v6], then :port


def checked_url(url: str, *, what: str, example: str, env: str, field: str) -> str:
    """``url`` if it is an http(s) URL with a host; otherwise a ConfigError naming the setting to fix
    (``env`` on the command line, the sidebar's ``field`` in the dashboard)."""
    problem = ""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        problem = str(exc)
    else:
        if parsed.scheme not in ("http", "https"):
            problem = f"it must start with http:// or https://, not {parsed.scheme or 'nothing'}"
        elif not parsed.host:
            problem = "it has no host name"
        elif any(ch.isspace() for ch in url):
            problem = "it contains spaces"
        elif not _AUTHORITY.match(url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2]):
            problem = "the port after ':' must be a number"
    if not problem:
        return url
    shown = url if len(url) <= 80 else url[:79] + "…"
    message = f"{shown!r} is not a valid {what} URL ({problem}): use one like {example}"
    raise ConfigError(f"{message}, in {env}.", dashboard=f"{message}, in the sidebar's {field} field.")
