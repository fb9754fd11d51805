"""Cruxes: what rests on each decision hinge, how much of each side's case, and what each answer would test.

Computed deterministically from the finished document, with no model call (a debate's time budget is already
spent by then, and the embedded model is a 135M one):

- **Dependants.** An argument (its claim and explanation) or an assumption of either side *depends on* a hinge
  when its similarity to the hinge is at least a floor and within a margin of its similarity to its closest
  hinge. So an item rests on the hinge it is nearest to, and on any other hinge almost as near (an item can
  rest on several), never on a hinge it is only loosely on-topic with. Similarity is the cosine of MiniLM
  embeddings (:mod:`clearside.embed`, the checks' :class:`~clearside.checks.Embeddings`); with semantic checks
  off (``CLEARSIDE_SEMANTIC_CHECKS=0``) or no model installed, the Jaccard overlap of stemmed content words,
  with its own floor and margin.
- **Load** of a hinge on a side: that side's dependent arguments / that side's argument count (``CruxLoad``).
  It says how much of a case rests on the question; it is not a score of the case.
- **If yes / if no.** Which of both sides' items a yes (a no) would test, named by number with their claim.
  It does not say which answer favours which side: MiniLM cannot tell a statement from its negation
  ("Institutions can adapt quickly enough." and "... cannot adapt ..." are at cosine 0.93; "harms are
  reversible" and "irreversible" at 0.98), so a direction read off the embeddings would be a guess presented
  as a finding. Each item holds if it assumed the answer given, and loses its footing if it assumed the other.

**Thresholds, and the figures they were measured on** (bench/cruxes.py reproduces them):

- the flagship reference (``clearside/quality/references/flagship.json``): 4 hinges x 34 items (18 arguments, 16
  assumptions), 19 dependencies labelled by hand;
- ArgKP dev (its arguments, key points and labels; the labels are not in the repository): 3,458 labelled
  argument / key point pairs (738 matches) over 4 topics, a key point standing in for a hinge (the nearest
  public stand-in: an argument "matches" a key point when it rests on that point).

At ``FLOOR`` 0.30 and ``MARGIN`` 0.05 (MiniLM): flagship precision 0.36, recall 0.63, F1 0.46; ArgKP dev
precision 0.47, recall 0.70, F1 0.56. A plain cosine threshold does worse (flagship best F1 0.46 at 0.33 with
precision 0.33; ArgKP dev best F1 0.39 at 0.37, precision 0.24): every item of one debate is on its topic, so
only the comparison across hinges separates them. Margin 0 scores about the same (0.49 / 0.57) but lets an
item rest on one hinge only. Lexically (``FLOOR_LEXICAL`` 0.05, ``MARGIN_LEXICAL`` 0): flagship precision
0.39, recall 0.37, F1 0.38; ArgKP dev precision 0.58, recall 0.39, F1 0.47. So roughly half of what the views
list as resting on a hinge is a true dependant: a guide to where to look, which the views say (``CAVEAT``).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .checks.base import Embeddings
from .checks.text import jaccard
from .contract import stamped, validate_document
from .errors import InputError
from .schema import Crux, CruxLoad, Document

FLOOR = 0.30
MARGIN = 0.05
FLOOR_LEXICAL = 0.05
MARGIN_LEXICAL = 0.0
SIDES = {"pro": "FOR", "con": "AGAINST"}
NO_DEPENDANTS = "No argument of either side rests on this hinge."
_ROUNDING = 1e-6  # float32 cosines: a tie within rounding is a tie
QUOTE = 60  # characters of a claim or an assumption quoted in a counterfactual
LOAD_NOTE = "Load: the share of each side's arguments that rest on the hinge; the most load-bearing first."
CAVEAT = ("What rests on a hinge is found by text similarity, not by a model (36-58% of it a true dependant in "
          "bench/cruxes.py): a guide to where to look, never a verdict on either side.")


def argument_text(argument: dict[str, Any]) -> str:
    """What an argument is compared on: its claim and its explanation."""
    return f"{argument['claim']} {argument['explanation']}"


def _items(data: dict[str, Any]) -> list[tuple[str, str, int, str]]:
    """(side, "arguments" | "assumptions", index, text) of every item that can rest on a hinge."""
    return [(side, kind, i, argument_text(item) if kind == "arguments" else item)
            for side in SIDES for kind in ("arguments", "assumptions") for i, item in enumerate(data[side][kind])]


def similarities(hinges: list[str], texts: list[str], embeddings: Embeddings) -> tuple[np.ndarray, bool]:
    """Hinge (rows) by text (columns) similarities, and whether they are semantic (MiniLM) or lexical."""
    matrix = embeddings.similarities(hinges, texts)
    if matrix is not None:
        return np.asarray(matrix, dtype=float), True
    lexical = np.array([[jaccard(h, t) for t in texts] for h in hinges], dtype=float)
    return lexical.reshape(len(hinges), len(texts)), False


def depends(matrix: np.ndarray, *, semantic: bool) -> np.ndarray:
    """Which items (columns) rest on which hinges (rows): at least the floor, and within the margin of the
    item's closest hinge."""
    floor, margin = (FLOOR, MARGIN) if semantic else (FLOOR_LEXICAL, MARGIN_LEXICAL)
    if matrix.size == 0:
        return matrix.astype(bool)
    closest = matrix.max(axis=0, keepdims=True)
    return (matrix >= floor) & (matrix >= closest - margin - _ROUNDING)


def _numbers(indices: list[int]) -> str:
    numbers = [str(i + 1) for i in indices]
    return numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} and {numbers[-1]}"


def _quote(text: str) -> str:
    text = " ".join(text.split()).rstrip(".")
    return f"“{text if len(text) <= QUOTE else text[:QUOTE - 1].rstrip() + '…'}”"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _named(data: dict[str, Any], side: str, kind: str, indices: list[int], *, quoted: bool) -> str:
    """``FOR's arguments 1 and 3 (“…”; “…”)``, or without the quotes."""
    noun = kind[:-1] if len(indices) == 1 else kind
    if not quoted:
        return f"{SIDES[side]}'s {noun} {_numbers(indices)}"
    texts = [data[side][kind][i]["claim"] if kind == "arguments" else data[side][kind][i] for i in indices]
    return f"{SIDES[side]}'s {noun} {_numbers(indices)} ({'; '.join(_quote(t) for t in texts)})"


def counterfactual(data: dict[str, Any], crux: dict[str, list[int]]) -> tuple[str, str]:
    """``if_yes`` and ``if_no`` of a hinge from what rests on it: both sides' items named, no side favoured."""
    groups = [(side, kind) for kind in ("arguments", "assumptions") for side in SIDES if crux[f"{side}_{kind}"]]
    if not groups:
        return NO_DEPENDANTS, NO_DEPENDANTS
    count = sum(len(crux[f"{side}_{kind}"]) for side, kind in groups)
    full = _join([_named(data, side, kind, crux[f"{side}_{kind}"], quoted=True) for side, kind in groups])
    short = _join([_named(data, side, kind, crux[f"{side}_{kind}"], quoted=False) for side, kind in groups])
    without = [SIDES[side] for side in SIDES if not crux[f"{side}_arguments"]]
    lacking = ""
    if len(without) == 2:
        lacking = " No argument of either side rests on it directly."
    elif without:
        lacking = f" No argument of {without[0]} rests on it."
    it, holds, loses = ("it", "holds", "loses") if count == 1 else ("they", "hold", "lose")
    return (f"If yes, the answer tests {full}: each holds if it assumed yes and loses its footing if it assumed "
            f"no.{lacking}",
            f"If no, {short} {holds} if {it} assumed no and {loses} {'its' if count == 1 else 'their'} footing if "
            f"{it} assumed yes.{lacking}")


def cruxes(document: dict[str, Any] | Document, embeddings: Embeddings | None = None) -> tuple[list[Crux], bool]:
    """One :class:`~clearside.schema.Crux` per decision hinge, in the hinges' order, and whether the
    dependencies are semantic (MiniLM) or lexical."""
    return _compute(_data(document), embeddings or Embeddings())


def _compute(data: dict[str, Any], embeddings: Embeddings) -> tuple[list[Crux], bool]:
    hinges = data["moderator"]["decision_hinges"]
    items = _items(data)
    matrix, semantic = similarities(hinges, [text for *_, text in items], embeddings)
    found = depends(matrix, semantic=semantic)
    out = []
    for h in range(len(hinges)):
        crux: dict[str, list[int]] = {f"{side}_{kind}": [] for side in SIDES for kind in ("arguments", "assumptions")}
        for column, (side, kind, index, _) in enumerate(items):
            if found[h, column]:
                crux[f"{side}_{kind}"].append(index)
        load = CruxLoad(**{side: round(len(crux[f"{side}_arguments"]) / len(data[side]["arguments"]), 3)
                           for side in SIDES})
        if_yes, if_no = counterfactual(data, crux)
        out.append(Crux(hinge=h, **crux, load=load, if_yes=if_yes, if_no=if_no))
    return out, semantic


def attach(document: dict[str, Any] | Document, embeddings: Embeddings | None = None) -> Document:
    """``document`` with ``moderator.cruxes`` set (computed afresh) and its schema version stamped."""
    data = _data(document)
    found, _ = _compute(data, embeddings or Embeddings())
    data["moderator"]["cruxes"] = [c.dump() for c in found]
    return Document.model_validate(stamped(data))


def sorted_by_load(document: Document) -> list[tuple[str, Crux]]:
    """(hinge text, crux) by load, the most load-bearing first: both sides' shares summed, so neither side's
    share counts more; equal loads keep the moderator's order. Empty when the document has no cruxes."""
    mod = document.moderator
    found = [c for c in mod.cruxes or [] if c.hinge < len(mod.decision_hinges)]
    ranked = sorted(found, key=lambda c: (-(c.load.pro + c.load.con), c.hinge))
    return [(mod.decision_hinges[c.hinge], c) for c in ranked]


def load_line(document: Document, crux: Crux) -> str:
    """``FOR 2 of 9 arguments (22%) · AGAINST 1 of 9 (11%)``: the views' load label."""
    parts = []
    for side, share in (("pro", crux.load.pro), ("con", crux.load.con)):
        count, total = len(getattr(crux, f"{side}_arguments")), len(getattr(document, side).arguments)
        parts.append(f"{SIDES[side]} {count} of {total}{' arguments' if side == 'pro' else ''} ({share:.0%})")
    return " · ".join(parts)


def dependants_line(crux: Crux) -> str:
    """``FOR: arguments 1, 3; assumption 2 · AGAINST: none``, numbered from 1 as the views number them."""
    parts = []
    for side in SIDES:
        kinds = [f"{kind[:-1] if len(ids) == 1 else kind} {', '.join(str(i + 1) for i in ids)}"
                 for kind in ("arguments", "assumptions") if (ids := getattr(crux, f"{side}_{kind}"))]
        parts.append(f"{SIDES[side]}: {'; '.join(kinds) or 'none'}")
    return " · ".join(parts)


def dependants(document: Document, crux: Crux) -> list[tuple[str, str]]:
    """(``FOR argument 8``, its claim or the assumption's text) of every item resting on the hinge, FOR's
    first, arguments before assumptions, numbered from 1."""
    out = []
    for side in SIDES:
        case = getattr(document, side)
        out += [(f"{SIDES[side]} argument {i + 1}", case.arguments[i].claim)
                for i in getattr(crux, f"{side}_arguments") if i < len(case.arguments)]
        out += [(f"{SIDES[side]} assumption {i + 1}", case.assumptions[i])
                for i in getattr(crux, f"{side}_assumptions") if i < len(case.assumptions)]
    return out


def report(document: Document, *, semantic: bool) -> dict[str, Any]:
    """The hinges by load as plain data (``cruxes --json``)."""
    return {"proposition": document.proposition.normalized_question, "semantic": semantic,
            "thresholds": {"floor": FLOOR if semantic else FLOOR_LEXICAL,
                           "margin": MARGIN if semantic else MARGIN_LEXICAL},
            "hinges": [{"text": text, **crux.dump()} for text, crux in sorted_by_load(document)]}


def text(document: Document, *, semantic: bool) -> str:
    """The hinges by load as plain text (``cruxes``), with how dependants were found (``semantic``: by MiniLM)."""
    how = (f"MiniLM similarity at least {FLOOR:g} and within {MARGIN:g} of the item's closest hinge"
           if semantic else f"word overlap at least {FLOOR_LEXICAL:g} with the item's closest hinge (no "
                            "embedding model)")
    lines = [f"Decision hinges of: {document.proposition.normalized_question}", LOAD_NOTE,
             f"{CAVEAT} Here: {how}.", ""]
    for rank, (hinge, crux) in enumerate(sorted_by_load(document), start=1):
        lines += [f"{rank}. {hinge}  (hinge {crux.hinge + 1})", f"   Load: {load_line(document, crux)}",
                  f"   Rests on it: {dependants_line(crux)}"]
        lines += [f"   {crux.if_yes}"] if crux.if_yes == crux.if_no else [f"   {crux.if_yes}", f"   {crux.if_no}"]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _data(document: dict[str, Any] | Document) -> dict[str, Any]:
    if isinstance(document, Document):
        return document.dump()
    if not isinstance(document, dict):
        raise InputError("Cruxes need a ClearSide v1 document (a JSON object with proposition, pro, con and "
                         "moderator).")
    return validate_document(copy.deepcopy(document)).dump()
