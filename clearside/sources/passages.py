"""A source cut into passages: the units an advocate is shown, cites by id and quotes from.

:func:`split` uses ``semantic-text-splitter`` (Rust, on PyPI as wheels): it cuts at the largest semantic unit
that fits the capacity (paragraphs, then lines, sentences, words by Unicode segmentation) and merges neighbours
up to it, and it gives each chunk's character offset, so ``source.text[p.start:p.end] == p.text`` holds
exactly. Markdown goes through its Markdown splitter (headings, lists and code blocks as units). A PDF is split
page by page, so a passage never spans two pages and names the page it is on. Passages are trimmed of the
whitespace at their ends and cover the text in order; a word is cut only when it is longer than the capacity by
itself (a long URL, a run of characters without a space).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from semantic_text_splitter import MarkdownSplitter, TextSplitter

from .ingest import PAGE_BREAK, Source

MAX_CHARS = 700  # a passage's default capacity: a short paragraph, about 150 MiniLM tokens (it reads 256)


@dataclass(frozen=True)
class Passage:
    """A span of one source's text."""

    id: str  # "S1.3": the source's ref and the passage's number in it, from 1
    source: str  # the source's id (its content hash)
    start: int  # character offsets into the source's text: source.text[start:end] == text
    end: int
    text: str
    page: int | None = None  # a PDF's page the passage is on (from 1), else None


@cache
def _splitter(markdown: bool, capacity: int) -> TextSplitter | MarkdownSplitter:
    return MarkdownSplitter(capacity) if markdown else TextSplitter(capacity)


def split(source: Source, *, max_chars: int = MAX_CHARS) -> list[Passage]:
    """The source's passages in order, each at most ``max_chars`` characters (unless one word is longer)."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    splitter = _splitter(source.kind == "markdown", max_chars)
    if source.kind == "pdf":
        segments, offset = [], 0
        for page in source.text.split(PAGE_BREAK):
            segments.append((offset, page))
            offset += len(page) + len(PAGE_BREAK)
    else:
        segments = [(0, source.text)]
    passages: list[Passage] = []
    for number, (offset, segment) in enumerate(segments, 1):
        for at, chunk in splitter.chunk_indices(segment):
            start = offset + at
            passages.append(Passage(id=f"{source.ref}.{len(passages) + 1}", source=source.id, start=start,
                                    end=start + len(chunk), text=chunk,
                                    page=number if source.kind == "pdf" else None))
    return passages
