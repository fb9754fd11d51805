"""Retrieval: the passages most relevant to a query (the proposition and one side's case), best first.

An :class:`Index` is built once per debate over every passage of its sources. With semantic checks on, it holds
the MiniLM embeddings ClearSide ships (:mod:`clearside.embed`, through the checks'
:class:`~clearside.checks.Embeddings`): L2-normalised, so the score is a cosine, and the search is one numpy
matrix-vector product over every passage. A debate's sources are at most 10 files of 400,000 characters, a few
thousand passages at the most: an exact product over them takes well under a millisecond to a few, so no vector
database or approximate index is needed (or would be faster at this size). With semantic checks off
(``CLEARSIDE_SEMANTIC_CHECKS=0``) or no model installed, the score is lexical: the cosine of the query's and the
passage's stemmed content words (the checks' :func:`~clearside.checks.text.content`, as their ``jaccard``
uses), each word weighted by its inverse document frequency over the passages, so a rare word that the query
and a passage share counts more than a common one.

:func:`budget` keeps the best passages that fit a prompt's character budget.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from ..checks import Embeddings
from ..checks.text import content
from .passages import Passage

T = TypeVar("T", Passage, tuple[Passage, float])


class Index:
    """The passages of a debate's sources, ready to rank against a query."""

    def __init__(self, passages: Sequence[Passage], embeddings: Embeddings | None = None, *,
                 vectors: np.ndarray | None = None) -> None:
        """``embeddings``: the checks' :class:`Embeddings` (None: one that follows ``CLEARSIDE_SEMANTIC_CHECKS``);
        when it is off, or its model cannot load, the index is lexical. ``vectors``: the passages' MiniLM
        vectors kept from an earlier index (its ``vectors``, one row per passage), not computed again: embedding
        is what building costs (about 15-40 passages a second on 2 cores)."""
        self.passages = list(passages)
        self.embeddings = embeddings if embeddings is not None else Embeddings()
        if vectors is not None and len(vectors) != len(self.passages):
            raise ValueError(f"{len(vectors)} vectors for {len(self.passages)} passages")
        if not self.passages or not self.embeddings.enabled:
            self.vectors = None
        elif vectors is not None:
            self.vectors = vectors
        else:
            self.vectors = self.embeddings.vectors([p.text for p in self.passages])
        self.words = [content(p.text) for p in self.passages]
        frequency = Counter(word for words in self.words for word in words)
        total = len(self.passages)
        self.idf = {word: math.log((1 + total) / (1 + count)) + 1 for word, count in frequency.items()}
        self.norms = [math.sqrt(sum(self.idf[w] ** 2 for w in words)) for words in self.words]

    @property
    def mode(self) -> str:
        """"semantic" (MiniLM cosine) or "lexical" (weighted content words), for the quality record."""
        return "semantic" if self.vectors is not None else "lexical"

    def __len__(self) -> int:
        return len(self.passages)

    def scores(self, query: str) -> np.ndarray:
        """Every passage's score against ``query``, in the passages' order."""
        if not self.passages:
            return np.zeros(0, dtype=np.float32)
        if self.vectors is not None:
            found = self.embeddings.vectors([query])
            if found is not None:
                return self.vectors @ found[0]
        asked = content(query)
        weight = math.sqrt(sum(self.idf.get(w, 1.0) ** 2 for w in asked))
        if not weight:
            return np.zeros(len(self.passages), dtype=np.float32)
        return np.array([sum(self.idf[w] ** 2 for w in asked & words) / (weight * norm) if norm else 0.0
                         for words, norm in zip(self.words, self.norms, strict=True)], dtype=np.float32)

    def top(self, query: str, k: int) -> list[tuple[Passage, float]]:
        """The ``k`` best passages for ``query`` with their scores, best first (ties in the sources' order)."""
        if k <= 0 or not self.passages:
            return []
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.passages[i], float(scores[i])) for i in order]


def budget(ranked: Sequence[T], max_chars: int) -> list[T]:
    """The best passages that fit ``max_chars`` of passage text together, in rank order: each in turn is kept
    if it still fits (a long one that does not is passed over for shorter ones after it). Takes passages or
    ``(passage, score)`` pairs, and returns the same."""
    kept, used = [], 0
    for item in ranked:
        passage = item[0] if isinstance(item, tuple) else item
        if used + len(passage.text) <= max_chars:
            kept.append(item)
            used += len(passage.text)
    return kept
