"""Input rules for user text (FR-105/106, NFR-402)."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from .errors import InputError

MAX_QUESTION = 500
MAX_CONTEXT_FIELD = 120
MAX_TARGET = 500
MAX_TITLE = 300

_BIDI = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
_SPACE = re.compile(r"\s+")


def clean(text: str) -> str:
    """Strip control and bidi-override characters; collapse runs of whitespace to one space."""
    text = "".join(" " if ch in "\t\n\r\v\f" else ch for ch in text
                   if ch in "\t\n\r\v\f" or unicodedata.category(ch) != "Cc")
    return _SPACE.sub(" ", text.translate(_BIDI)).strip()


def over_limit(cleaned: str, limit: int, label: str) -> str:
    """The message for text over its limit, saying by how much to shorten it; empty when it fits."""
    extra = len(cleaned) - limit
    if extra <= 0:
        return ""
    return (f"{label} is {len(cleaned)} characters long; the limit is {limit}. "
            f"Shorten it by {extra} character{'s' if extra > 1 else ''}.")


def question(text: str | None, *, label: str = "Question", limit: int = MAX_QUESTION) -> str:
    """A cleaned, non-empty question of at most ``limit`` characters, or an InputError saying why not."""
    if text is None or not isinstance(text, str):
        raise InputError(f"{label} is missing: type a question or claim to debate.")
    cleaned = clean(text)
    if not cleaned:
        raise InputError(f"{label} is empty: type a question or claim to debate.")
    if message := over_limit(cleaned, limit, label):
        raise InputError(message)
    return cleaned


def context_field(name: str, text: str | None) -> str | None:
    """An optional context value: cleaned, ``None`` when blank, refused when too long."""
    if text is None:
        return None
    cleaned = clean(text)
    if message := over_limit(cleaned, MAX_CONTEXT_FIELD, f"Context {name}"):
        raise InputError(message)
    return cleaned or None


def target(text: str | None) -> str:
    return question(text, label="Challenge target", limit=MAX_TARGET)


def read_json(path: str, what: str = "") -> Any:
    """A JSON file's content, or an InputError saying why it cannot be read (``what`` names the file's role)."""
    name = f"{what} {path}".strip()
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"Cannot read {name}: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{name} is not JSON: {exc}") from exc
