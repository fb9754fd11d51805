"""What a reader sees in a finished document, and the problems a reader spots at once, measured independently of
ClearSide's own checks (bench/reader.py counts both).

- :func:`shown` lists every string a page shows of what the models wrote: the normalized question and its context,
  each side's (or persona's) summary, arguments, assumptions and uncertainties, and the moderator's synthesis (the
  cruxes are computed, not written, and left out), each with its path and whether it is a sentence or a label.
- :func:`cut_mid_phrase`: any string that ends on a dangling word ("... protecting the.", "... ensuring that all
  data,"), or a sentence as long as a length cap lets it be that ends without terminal punctuation, or that ends
  marked as cut ("... requires careful…": shown as a fragment, still not a sentence).
- :func:`code_soup`: letter-digit codes and runs of dates and numbers ("P1 C2 D3 E4", "2019/3/7/48.56:43.37").
- :func:`items_shown`: the items a reader counts (list entries and the question), by section.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# Fields a page shows as labels, not sentences: no terminal punctuation is expected of them.
LABELS = {"topic", "root_cause", "geography", "timeframe", "domain", "name", "lens"}
# Fields holding a fixed vocabulary (badges): not written text, never counted as cut.
ENUMS = {"category", "evidence_type", "confidence", "stance", "persona", "support", "classification"}
SIDE_LISTS = ("executive_summary", "assumptions", "uncertainties")
MODERATOR_LISTS = ("areas_of_agreement", "evidence_gaps", "decision_hinges", "lens_divergence")
MODERATOR_OBJECTS = ("core_disagreements", "assumption_conflicts")

# A word a complete sentence or label does not end on: articles, conjunctions, determiners, auxiliaries and the
# prepositions that need an object (not the particles of phrasal verbs: "weighed in.", "no room for."; not the
# demonstratives, pronouns at a sentence's end: "You should know better than this.", "all of these.").
_DANGLING_WORDS = """
a an the of and or but nor than because although though whether unless which whose its their our your his her my
such every each very including includes between among towards toward into onto upon via per to
from by at as is are was were be been being has have had will would can could should may might must
"""
DANGLING = frozenset(_DANGLING_WORDS.split())
OWNING = frozenset(["has", "have", "had"])
AUXILIARY_BEFORE = frozenset(["to", "will", "would", "can", "could", "should", "may", "might", "must", "not"])
CAP_CHARS = 100  # the strings' length caps end them at about 100-120 characters (the cuts readers found)
TERMINAL = re.compile(r"[.!?…][\"'”’)\]]*$")
WORD = re.compile(r"[A-Za-z']+$")
CODE = re.compile(r"^(?:[A-Z]{1,3}\d+[A-Za-z0-9]*|\d+[A-Z]+\d*[A-Za-z0-9]*|[A-Z0-9]+(?:-[A-Z0-9]+){2,}|"
                  r"[A-Z]+\d+[A-Z0-9]*(?:-[A-Z0-9]+)+)$")
NUMBER_RUN = re.compile(r"\d+(?:[/.:,;\-]+\d+){3,}")  # a date or number soup in one token: 2019/3/7/48.56:43
DATE_OR_NUMBER = re.compile(r"^[(\[]?\d[\d/.:,;%\-]*[)\]]?[.,;:]?$")


def shown(document: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """``(path, text, kind)`` for every model-written string a page shows; kind is ``sentence`` or ``label``."""
    prop = document.get("proposition") or {}
    if prop.get("normalized_question"):
        yield "proposition/normalized_question", prop["normalized_question"], "sentence"
    for key, value in (prop.get("context") or {}).items():
        if isinstance(value, str):
            yield f"proposition/context/{key}", value, "label"
    for side in ("pro", "con"):
        if document.get(side):
            yield from _case(side, document[side])
    for i, case in enumerate(document.get("personas") or []):
        yield from _case(f"personas/{i}", case)
    moderator = document.get("moderator") or {}
    for key in MODERATOR_LISTS:
        for i, text in enumerate(moderator.get(key) or []):
            yield f"moderator/{key}/{i}", text, "sentence"
    for key in MODERATOR_OBJECTS:
        for i, item in enumerate(moderator.get(key) or []):
            yield from _fields(f"moderator/{key}/{i}", item)


def _case(prefix: str, case: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    for key in SIDE_LISTS:
        for i, text in enumerate(case.get(key) or []):
            yield f"{prefix}/{key}/{i}", text, "sentence"
    for i, argument in enumerate(case.get("arguments") or []):
        yield from _fields(f"{prefix}/arguments/{i}", argument)


def _fields(prefix: str, item: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    for key, value in item.items():
        if isinstance(value, str) and value.strip() and key not in ENUMS:
            yield f"{prefix}/{key}", value, "label" if key in LABELS else "sentence"


def cut_reason(text: str, kind: str = "sentence") -> str:
    """Why ``text`` stops mid-phrase, or "": ``dangling`` (it ends on a comma, colon or dash, or on a word such as
    an article, a conjunction or a preposition that needs an object), ``marked`` (a sentence of :data:`CAP_CHARS`
    characters or more ending in "…", ClearSide's mark of a string its cap ended) or ``unpunctuated`` (a sentence
    of :data:`CAP_CHARS` characters or more that ends without terminal punctuation: where a length cap stops it; a
    shorter bullet without a full stop is the spec's own style, its example has 25)."""
    stripped = text.strip()
    if not stripped:
        return ""
    if stripped[-1] in ",;:-–—(/&":
        return "dangling"
    last = stripped.rstrip(".!?…\"'”’)] ").split()
    # a hyphenated compound ends on its last part by right ("well-being", "follow-up"): not a dangling "being"
    # "have" ends a clause as a main verb ("how much money you have."), not after a modal or "to" ("will have.")
    if last and "-" not in last[-1] and (word := WORD.search(last[-1])) and word.group(0).lower() in DANGLING and (
            word.group(0).lower() not in OWNING or len(last) > 1 and last[-2].lower() in AUXILIARY_BEFORE):
        return "dangling"
    at_cap = len(stripped) >= CAP_CHARS
    if kind == "sentence" and at_cap and stripped.endswith("…"):
        return "marked"
    return "unpunctuated" if kind == "sentence" and at_cap and not TERMINAL.search(stripped) else ""


def cut_mid_phrase(text: str, kind: str = "sentence") -> bool:
    """Whether ``text`` stops mid-phrase (:func:`cut_reason`)."""
    return bool(cut_reason(text, kind))


def code_soup(text: str) -> bool:
    """Whether ``text`` is made of letter-digit codes or runs of dates and numbers rather than words: three codes or
    more, codes and numbers making up at least 60% of its tokens (three at least), a string that is one or two
    codes alone, or one token that is a run of four numbers and more joined by separators."""
    if NUMBER_RUN.search(text):
        return True
    tokens = [t.strip(".,;:!?()[]\"'") for t in text.split()]
    tokens = [t for t in tokens if t]
    if not tokens:
        return False
    codes = sum(bool(CODE.match(t)) for t in tokens)
    numbers = sum(bool(DATE_OR_NUMBER.match(t)) for t in tokens)
    if codes and codes == len(tokens) and len(tokens) <= 2:  # an identifier alone: "C1-D2A4B3E05"
        return True
    return codes >= 3 or (codes + numbers >= 3 and (codes + numbers) / len(tokens) >= 0.6)


def items_shown(document: dict[str, Any]) -> dict[str, int]:
    """The items a reader counts, by section: the question, each list entry of each case, the synthesis's."""
    counts = {"proposition": 1 if (document.get("proposition") or {}).get("normalized_question") else 0}
    cases = [(s, document[s]) for s in ("pro", "con") if document.get(s)]
    cases += [(f"persona {i + 1}", c) for i, c in enumerate(document.get("personas") or [])]
    for name, case in cases:
        counts[name] = sum(len(case.get(k) or []) for k in (*SIDE_LISTS, "arguments"))
    moderator = document.get("moderator") or {}
    counts["moderator"] = sum(len(moderator.get(k) or []) for k in (*MODERATOR_LISTS, *MODERATOR_OBJECTS))
    return counts


def item_of(path: str) -> str:
    """The item a string belongs to: ``pro/arguments/2/claim`` -> ``pro/arguments/2``."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part.isdigit():
            return "/".join(parts[: i + 1])
    return path


def reader_problems(document: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    """The shown strings cut mid-phrase (with the reason) and the code soup, each ``{"path", "text"}``."""
    found: dict[str, list[dict[str, str]]] = {"cut_mid_phrase": [], "code_soup": []}
    for path, text, kind in shown(document):
        if reason := cut_reason(text, kind):
            found["cut_mid_phrase"].append({"path": path, "text": text, "reason": reason})
        if code_soup(text):
            found["code_soup"].append({"path": path, "text": text})
    return found
