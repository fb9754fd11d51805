"""Formatting helpers every view shares: text shown literally (:func:`esc`), times, shortened labels, bullet lists,
download names, and the two sides' titles and colours. A leaf: it imports no other module of the dashboard.

User and model text is always shown through :func:`esc` (or as a plain-text option label, a dataframe cell, an
escaped Plotly label), never as HTML.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from clearside.agents import AGENT_NAMES
from clearside.inputs import clean

_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&^=\"'@%])")
# GitHub-flavoured Markdown links a bare "https://...", "www..." or "name@host" after parsing, whatever was
# escaped. Shown as inline code, an address stays text (code is never linked), reads and copies as typed.
_ADDRESS = re.compile(r"(?i)\b(?:(?:https?|ftp)://|www\.|mailto:)[^\s`<>]*\w[^\s`<>]*|[-.\w+]+@[-\w]+(?:\.[-\w]+)+")
# What a table shows in a cell with no value (st.dataframe's own placeholder is the word "None")
MISSING = "—"
# The two sides of a debate as the views title them: (agent, title, the colour of its column)
SIDES = (("pro", AGENT_NAMES["pro"], "green"), ("con", AGENT_NAMES["con"], "red"))


def _literal(text: str) -> str:
    return _PUNCT.sub(r"\\\1", text)


def esc(text: str) -> str:
    """Text shown literally: Markdown, Streamlit directives, HTML, LaTeX and bare links are all neutralised, and
    control, bidi-override and zero-width characters dropped (an override would show the text after it reversed)."""
    text = clean(str(text))
    parts, start = [], 0
    for match in _ADDRESS.finditer(text):
        address = match.group(0).rstrip(".,:;!?)]'\"")  # a sentence's own punctuation is not the address's
        parts += [_literal(text[start:match.start()]), f"`{address}`"]
        start = match.start() + len(address)
    return "".join([*parts, _literal(text[start:])])


def bullets(items: Iterable[object]) -> str:
    """A Markdown bullet list, each item escaped."""
    return "\n".join(f"- {esc(item)}" for item in items)


def lines(text: str) -> str:
    """Text of several lines (one refusal a line) escaped line by line, each kept on its own line."""
    return "  \n".join(esc(line) for line in str(text).splitlines() if line.strip())


def when(stamp: str) -> str:
    """``2026-11-22T04:52:29Z`` (or with milliseconds) → ``2026-11-22 04:52 UTC``."""
    return f"{stamp[:10]} {stamp[11:16]} UTC" if len(stamp) >= 16 else stamp


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def short(text: str, width: int = 60) -> str:
    """``text`` on one line (its whitespace runs made single spaces), cut to ``width``."""
    return cut(" ".join(str(text).split()), width)


def short_spec(spec: str, width: int = 40) -> str:
    """A provider:model for a legend or a label: long ones (file paths) keep their start and their end."""
    spec = " ".join(str(spec).split())
    if len(spec) <= width:
        return spec
    head = width // 3
    return f"{spec[:head]}…{spec[-(width - head - 1):]}"


def plural(count: int, word: str) -> str:
    """``1 re-ask``, ``2 re-asks``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def file_stem(kind: str, title: str, debate_id: str | None) -> str:
    """A download's name that says which debate it is, so two exports never overwrite each other:
    ``clearside-debate-should-cities-ban-cars-downtown-1a2b3c4d``."""
    words = re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower())
    slug = ""
    for word in words:
        if len(slug) + len(word) + 1 > 48:
            break
        slug = f"{slug}-{word}" if slug else word
    return "-".join(part for part in ("clearside", kind, slug, (debate_id or "")[:8]) if part)


def download_name(stem: str, fmt: str, extension: str) -> str:
    """A download's file name: the stem and the extension, the format named only where the extension does not say
    it (``…-quick.md``, ``…-aif.json``; never ``…-md.md``)."""
    return f"{stem}.{extension}" if fmt == extension else f"{stem}-{fmt}.{extension}"


_TOKEN = re.compile(r"[^\W_]+")


def reads_as_words(text: str) -> bool:
    """Whether a title is words, not an id or code soup ("C1-D2A4B3E05", "P1 C2 D3 E4"): at least half of its
    tokens are words (letters only) or years, and one of them is a word."""
    tokens = _TOKEN.findall(str(text))
    letters = [t for t in tokens if t.isalpha()]
    years = [t for t in tokens if t.isdigit() and len(t) == 4 and t[0] in "12"]
    return bool(letters) and 2 * (len(letters) + len(years)) >= len(tokens)


def readable_title(topic: str, description: str, words: int = 6) -> str:
    """``topic`` when it reads as words; else the first ``words`` words of ``description`` (an ellipsis marking
    the cut), or ``Untitled`` when neither reads as words. Plain text: escape it where it is shown."""
    if reads_as_words(topic):
        return topic
    if reads_as_words(description):
        head = str(description).split()
        return " ".join(head[:words]).rstrip(",;:") + ("…" if len(head) > words else "")
    return "Untitled"
