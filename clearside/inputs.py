"""Input rules for user text: FR-105, FR-106 (docs/design/requirements.md#fr-100), NFR-402
(docs/design/requirements.md#nfr-400)."""

from __future__ import annotations

import json
import math
import os
import re
import stat
import unicodedata
from typing import Any

from .errors import ConfigError, InputError

MAX_QUESTION = 500
MAX_CONTEXT_FIELD = 120
MAX_TARGET = 500
MAX_TITLE = 300

_BIDI = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
# Invisible characters that no typed text needs: zero-width space, word joiner, byte-order mark, the
# direction marks and the Mongolian vowel separator. The zero-width (non-)joiners stay: scripts such as
# Persian and emoji sequences need them.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u2060\ufeff\u200e\u200f\u061c\u180e"))
_STRIPPED = {**_BIDI, **_INVISIBLE}
_SPACE = re.compile(r"\s+")


def clean(text: str) -> str:
    """Strip control, bidi-override and zero-width characters; collapse runs of whitespace to one space."""
    text = "".join(" " if ch in "\t\n\r\v\f" else ch for ch in text
                   if ch in "\t\n\r\v\f" or unicodedata.category(ch) != "Cc")
    return _SPACE.sub(" ", text.translate(_STRIPPED)).strip()


def visible(text: str) -> bool:
    """Whether ``text`` shows anything: a text of joiners and other format characters alone does not."""
    return any(unicodedata.category(ch) not in ("Cf", "Zs", "Cc") for ch in text)


def shown(value: Any, limit: int = 40) -> str:
    """A value from outside (an id in a link, a name) as a message quotes it: non-printable characters such as
    bidi overrides written as escapes (``\\u202e``), and cut to ``limit`` characters, with its full length."""
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(value))
    if len(text) > limit:
        text = f"{text[:limit - 1]}… ({len(str(value)):,} characters)"
    return text


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
    if not visible(cleaned):
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


CONTEXT_FIELDS = ("geography", "timeframe", "domain")


def context_fields(fields: dict[str, str | None]) -> dict[str, str]:
    """The question's optional context (geography, timeframe, domain), each cleaned; blank ones left out, an unknown
    name or a value too long refused."""
    unknown = sorted(set(fields) - set(CONTEXT_FIELDS))
    if unknown:
        raise InputError(f"Unknown context field {unknown[0]!r}: use {', '.join(CONTEXT_FIELDS)}.")
    return {name: cleaned for name, text in fields.items() if (cleaned := context_field(name, text))}


def target(text: str | None) -> str:
    return question(text, label="Challenge target", limit=MAX_TARGET)


MAX_JSON_MB = 50.0  # the largest JSON file read (an import, an interventions file); CLEARSIDE_MAX_JSON_MB changes it
MAX_JSON_DEPTH = 64  # a ClearSide export nests about 12 levels deep


def max_json_bytes(value: str | None = None) -> int:
    """The size limit for a JSON file, from ``CLEARSIDE_MAX_JSON_MB`` (megabytes), with a clear message when it is
    not a positive number."""
    value = os.environ.get("CLEARSIDE_MAX_JSON_MB") if value is None else value
    if value in (None, ""):
        return int(MAX_JSON_MB * 1024 * 1024)
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = math.nan
    if not math.isfinite(megabytes) or megabytes <= 0:
        raise ConfigError(f"CLEARSIDE_MAX_JSON_MB is {value!r}: set it to a number of megabytes, such as 200 "
                          f"(unset, the limit is {MAX_JSON_MB:g} MB).")
    return int(megabytes * 1024 * 1024)


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):,.1f} MB".replace(".0 MB", " MB")


class _Refused(ValueError):
    """What the JSON reader's hooks found wrong; read_json names the file around it."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"it holds the key {shown(json.dumps(key, ensure_ascii=False))} twice in one object "
                               "(a JSON reader would keep only one of the two values)")
            seen.add(key)
    return data


def _constant(name: str) -> Any:
    raise _Refused(f"it holds {name}, which is not a JSON number (JSON has no NaN or Infinity: write null or a "
                   "number)")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"it holds the number {shown(text)}, too large for a number ClearSide can keep")
    return value


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 30:
        raise _Refused(f"it holds an integer of {digits:,} digits, too large for a number ClearSide can keep")
    return int(text)


def _problem(data: Any) -> str:
    """What is wrong with parsed JSON that the parser let through: nesting past MAX_JSON_DEPTH, or a string that
    holds half of a surrogate pair (an escape such as \\ud800 that encodes no character)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            items = [*node.keys(), *node.values()]
        elif isinstance(node, list):
            items = node
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            return f"it is nested more than {MAX_JSON_DEPTH} levels deep (a ClearSide export has about 12)"
        for item in items:
            if isinstance(item, str):
                if _SURROGATE.search(item):
                    return (f"the text “{shown(item)}” holds half of a surrogate pair (an escape such as \\ud800 "
                            "that encodes no character)")
            elif isinstance(item, dict | list):
                stack.append((item, depth + 1))
    return ""


_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text: str, name: str) -> Any:
    """Parse JSON text strictly: duplicate keys, NaN, Infinity, numbers out of range, lone surrogates and nesting
    past MAX_JSON_DEPTH are refused with an InputError that names ``name`` and says what is wrong."""
    try:
        data = json.loads(text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_float,
                          parse_int=_int)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name} is not JSON: {exc}") from None
    except _Refused as exc:
        raise InputError(f"{name} is not valid JSON: {exc}.") from None
    except RecursionError:
        raise InputError(f"{name} is not valid JSON: it is nested more than {MAX_JSON_DEPTH} levels deep "
                         "(a ClearSide export has about 12).") from None
    if problem := _problem(data):
        raise InputError(f"{name} is not valid JSON: {problem}.")
    return data


def read_json(path: str, what: str = "") -> Any:
    """A JSON file's content, or an InputError saying why it cannot be read (``what`` names the file's role).

    The size is checked before anything is read (``CLEARSIDE_MAX_JSON_MB``, 50 MB unless set), the bytes must be
    UTF-8 (a byte-order mark is allowed), and the JSON must be strict (see :func:`loads`)."""
    name = f"{what} {path}".strip()
    limit = max_json_bytes()
    too_big = (f"Cannot read {name}: it is {{size}}, over the {_megabytes(limit)} limit for a JSON file. Set "
               "CLEARSIDE_MAX_JSON_MB to a larger number of megabytes to read it.")
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > limit:
                raise InputError(too_big.format(size=_megabytes(info.st_size)))
            raw = handle.read(limit + 1)  # a pipe or a device has no size to check first
    except OSError as exc:
        raise InputError(f"Cannot read {name}: {exc.strerror}") from exc
    if len(raw) > limit:
        raise InputError(too_big.format(size=f"more than {_megabytes(limit)}"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if raw.startswith(b"\xef\xbb\xbf") else 0)  # the codec counts after the mark
        line = raw.count(b"\n", 0, start) + 1
        column = start - (raw.rfind(b"\n", 0, start) + 1) + 1
        raise InputError(f"{name} is not UTF-8 text: the byte 0x{raw[start]:02x} at line {line}, column {column} "
                         f"(byte offset {start}) is not UTF-8. Save the file as UTF-8; ClearSide's exports "
                         "always are.") from None
    return loads(text, name)
