"""Quote verification: a quote counts only when its words stand, verbatim, in the passage it cites.

Both sides are folded the same way by :func:`normalise`: Unicode NFKC (so the ligature "ﬁ" is "fi", a no-break
space a space, "…" three dots), curly quotes and apostrophes straight, every dash and the minus sign "-", soft
hyphens and zero-width characters gone, whitespace runs (line breaks included) one space, the ends stripped.
Case is kept. :func:`verify` then asks for a plain substring, starting and ending at word boundaries, of at
least :data:`MIN_QUOTE_WORDS` words. So a paraphrase fails, a quote spliced from two passages fails (it stands
in neither alone), and a reflowed or retyped exact quote passes. The quote may be wrapped in quotation marks
or end on a full stop or comma that the passage does not have: those are trimmed before matching.

NFKC is applied per character cluster (a character and its combining marks), which is what lets
:func:`locate` map a match in the folded text back to the original offsets, for the page to highlight.
A word hyphenated across a line break in a PDF ("infor-\\nmation") is not joined: such a quote fails.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from functools import lru_cache

MIN_QUOTE_WORDS = 4

_TABLE = str.maketrans({
    **dict.fromkeys("‘’‚‛′‵`", "'"),
    **dict.fromkeys("“”„‟″‶«»", '"'),
    **dict.fromkeys("‐‑‒–—―−⁃﹘﹣－", "-"),
    **dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e", None),
})
_ASCII_RUN = re.compile(r"[\x21-\x7e]+")
_SPACE_RUN = re.compile(r"\s+")
_SPACE_SPLIT = re.compile(r"(\s+)")
_WORD = re.compile(r"\w+(?:[.,'-]\w+)*")  # "4.2", "council's" and "well-known" are one word each
_TRIM = " \"'.,;:…"


def _fold(text: str) -> tuple[str, array, array]:
    """The normalised text, and for each of its characters the original span it came from (starts, ends)."""
    out: list[str] = []
    starts, ends = array("q"), array("q")
    space: tuple[int, int] | None = None  # a pending whitespace run, written before the next visible character

    def visible(piece: str, start: int, end: int, spans: tuple[range, range] | None = None) -> None:
        nonlocal space
        if space and out:
            out.append(" ")
            starts.append(space[0])
            ends.append(space[1])
        space = None
        out.append(piece)
        if spans:
            starts.extend(spans[0])
            ends.extend(spans[1])
        else:
            starts.extend([start] * len(piece))
            ends.extend([end] * len(piece))

    pos, n = 0, len(text)
    while pos < n:
        run = _ASCII_RUN.match(text, pos)
        end = run.end() if run else pos
        if end < n and end > pos and unicodedata.combining(text[end]):
            end -= 1  # the run's last character goes with its combining marks
        if end > pos:  # printable ASCII: one character for one (only ` is translated)
            visible(text[pos:end].translate(_TABLE), pos, end, (range(pos, end), range(pos + 1, end + 1)))
            pos = end
            continue
        blank = _SPACE_RUN.match(text, pos)
        if blank:
            space = space or (pos, blank.end())
            pos = blank.end()
            continue
        end = pos + 1
        while end < n and unicodedata.combining(text[end]):
            end += 1
        piece = unicodedata.normalize("NFKC", text[pos:end]).translate(_TABLE)
        for k, part in enumerate(_SPACE_SPLIT.split(piece)):  # odd parts are whitespace NFKC made
            if k % 2:
                space = space or (pos, end)
            elif part:
                visible(part, pos, end)
        pos = end
    return "".join(out), starts, ends


@lru_cache(maxsize=4)
def _folded_source(text: str) -> tuple[str, array, array]:
    """A source's folded text and offset maps, kept for the few sources a page highlights in turn."""
    return _fold(text)


def normalise(text: str) -> str:
    """``text`` folded for comparison (see the module's doc); case kept."""
    return _fold(text)[0]


def _core(quote: str) -> str:
    """The normalised quote without wrapping quotation marks, ellipses or a trailing stop."""
    return normalise(quote).strip(_TRIM)


def _find(needle: str, haystack: str) -> int:
    """The first place ``needle`` stands in ``haystack`` on word boundaries, or -1."""
    at = haystack.find(needle)
    while at >= 0:
        before = haystack[at - 1] if at else " "
        after = haystack[at + len(needle)] if at + len(needle) < len(haystack) else " "
        if not (before.isalnum() and needle[0].isalnum()) and not (after.isalnum() and needle[-1].isalnum()):
            return at
        at = haystack.find(needle, at + 1)
    return -1


def problem(quote: str, passage_text: str) -> str | None:
    """Why ``quote`` does not verify against the passage (for a re-ask), or None when it does."""
    core = _core(quote)
    count = len(_WORD.findall(core))
    if count < MIN_QUOTE_WORDS:
        return (f"the quote has {count} word{'' if count == 1 else 's'}: quote at least {MIN_QUOTE_WORDS} "
                "consecutive words of the passage")
    if _find(core, normalise(passage_text)) < 0:
        return "the quote is not in the passage word for word: copy the passage's words exactly"
    return None


def verify(quote: str, passage_text: str) -> bool:
    """True only when the quote (at least MIN_QUOTE_WORDS words) stands verbatim in the passage, after
    normalisation."""
    return problem(quote, passage_text) is None


def locate(quote: str, source_text: str) -> tuple[int, int] | None:
    """The quote's span ``(start, end)`` in the original ``source_text`` (its first occurrence on word
    boundaries after normalisation), or None when it is not there."""
    core = _core(quote)
    if not core:
        return None
    folded, starts, ends = _folded_source(source_text)
    at = _find(core, folded)
    if at < 0:
        return None
    return starts[at], ends[at + len(core) - 1]
