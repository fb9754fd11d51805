"""Substance checks of a perspectives session (docs/modes/perspectives.md#quality-checks).

The clarifier's questions: a question that hands the person's own question back ("Should I co-sign my sister's
mortgage?" asked of someone who asked exactly that), that asks nothing specific ("What should I do?", "Can you tell
me more?"), that is junk or asks another question again (the same content words) is dropped while another
question is left, and re-asked when none is. The perspectives' and the synthesis's text: junk, gibberish,
label-only text ("DISCIPLINARY DEMOCRACY 2018-2023 (S.A.)" as a conclusion) and the debates' garbage (codes, number
runs, empty statements, a sentence cut mid-phrase: :func:`clearside.checks.base.garbage`; a cut one is ended at its
last whole clause where that still says something) is dropped from a list that keeps an item, else re-asked;
what is still wrong on the last attempt is kept and *flagged* (:class:`Flagging`), so the page never shows it as a
clean result.

The measures are the shared ones of :mod:`clearside.checks.text` and the MiniLM of :class:`clearside.checks.Embeddings`
(read-only use: these checks belong to this mode).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from ..checks import Embeddings, Finding, Review, quality_item, repair
from ..checks import text as t
from ..checks.base import LEXICAL_ONLY, garbage
from ..checks.substance import generic, roots

# Cosine of a clarifying question to the person's situation (or one sentence of it) from which it only hands the
# situation back: measured with this MiniLM, echoes reach 0.93-1.00 ("Should you co-sign your sister's mortgage?"
# 0.98), while specific questions about the same situation stay under 0.60 ("Were you offered a job abroad?" 0.59).
ECHO = 0.85
ECHO_WORDS = 0.8  # a yes/no question whose content words are this share of the situation's asks it back
_AUXILIARY = re.compile(r"(?i)^\s*(should|shall|do|does|did|is|are|was|were|can|could|will|would|have|has|had|"
                        r"may|might|must|am)\b")
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
CLARIFIER_FLOORS = {"questions": 1}


def echoes(question: str, situation: str, similarity: float | None) -> bool:
    """It hands the situation back: the same words (or, by similarity, the same question), or a yes/no question
    whose content words the person already wrote."""
    sentences = [s for s in _SENTENCE.split(situation.strip()) if s]
    if any(t.folded(question).rstrip("?") == t.folded(s).rstrip("?") for s in [situation, *sentences]):
        return True
    if similarity is not None and similarity >= ECHO:
        return True
    asked = roots(question)
    return bool(_AUXILIARY.match(question)) and bool(asked) and len(asked & roots(situation)) / len(asked) >= ECHO_WORDS


def clarifier_check(situation: str, embeddings: Embeddings = LEXICAL_ONLY):
    """The check of the clarifier's reply (``{"questions": [...]}``) for the person's ``situation``."""

    def check(data: dict[str, Any]) -> list[Finding]:
        questions = list(data.get("questions", []))
        sentences = [situation, *[s for s in _SENTENCE.split(situation.strip()) if s]]
        sims = embeddings.similarities(questions, sentences)
        findings, kept = [], []
        for i, question in enumerate(questions):
            where, number = ("questions", i), i + 1
            if problem := t.junk(question):
                findings.append(Finding("junk", where, f"question {number} {problem}", question))
            elif echoes(question, situation, float(sims[i].max()) if sims is not None else None):
                findings.append(Finding("echoed_question", where, f"question {number} hands the person's own "
                                        "question back: ask about something the situation does not say yet",
                                        question))
            elif generic(question):
                findings.append(Finding("generic_question", where, f"question {number} asks nothing specific: ask "
                                        "about one concrete thing (who, what happened, how often, what the person "
                                        "wants)", question))
            elif any(roots(question) == roots(k) for k in kept):
                findings.append(Finding("duplicate_question", where, f"question {number} repeats another question",
                                        question))
            else:
                kept.append(question)
        return findings

    return check


# -- the perspectives' and the synthesis's text -------------------------------------------------------------------

SENTENCE, ITEM, STEP = "sentence", "item", "step"  # a statement; a short item; an option (may be imperative)
A_FIELDS = {"emotional_reality": SENTENCE, "interpretations": ITEM, "actions": STEP, "script_brief": ITEM,
            "script_extended": ITEM, "boundary": ITEM}
B_FIELDS = {"best_interpretation": SENTENCE, "known_facts": ITEM, "assumptions": ITEM, "boundary": ITEM,
            "script_brief": ITEM, "script_extended": ITEM, "next_steps": STEP}
SYNTHESIS_FIELDS = {"debate_evolution": SENTENCE, "conclusions": SENTENCE, "next_steps": STEP,
                    "open_questions": ITEM, "framing": ITEM}
FIELDS = {"A": A_FIELDS, "B": B_FIELDS, "synthesis": SYNTHESIS_FIELDS}
# the least items each list keeps (the contracts' minimum): below it an item is re-asked, not dropped
FLOORS = {"A": {"interpretations": 1, "actions": 1}, "B": {"known_facts": 1, "assumptions": 1, "next_steps": 1},
          "synthesis": {"conclusions": 1, "next_steps": 1, "open_questions": 1}}


def _capitals(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(t.words(text)) >= 2 and len(letters) >= 8 and sum(c.isupper() for c in letters) / len(letters) >= 0.7


def text_problem(text: str, kind: str) -> str | None:
    """Why ``text`` is not something a reader can use: junk, gibberish, a heading in capitals, a label (with dates)
    where a sentence belongs."""
    if problem := t.statement_problem(text, min_words=2, verb=kind == SENTENCE, fragment=False):
        return problem
    if _capitals(text):
        return "is a heading in capital letters, not a sentence"
    tokens = t.words(text)
    if kind == SENTENCE and not t.has_verb(tokens) and (t.years(text) or len(tokens) <= 8):
        return "is a label, not a sentence: say what follows, in a sentence"
    return None


def _field_findings(field: str, kind: str, value: Any) -> list[Finding]:
    label = field.replace("_", " ")
    if isinstance(value, str):
        if (found := garbage((field,), label, value)) is not None:
            # a cut text ended at its last whole clause stays; other garbage in a single text is asked again
            return [found if found.repair == "replace" else dataclasses.replace(found, repair="reask")]
        problem = text_problem(value, kind)
        return [Finding("junk", (field,), f"{label} {problem}", value, repair="reask")] if problem else []
    found = []
    for i, item in enumerate(value if isinstance(value, list) else []):
        # a next step {"if": ..., "then": ...} (``if_`` as the model dumps it) is checked part by part; the
        # condition of a step is a clause ("if she says no"), never shortened
        keys = [("if_" if "if_" in item else "if"), "then"] if isinstance(item, dict) else [None]
        for key in keys:
            text = item.get(key, "") if key else item
            if not isinstance(text, str):
                continue
            path = (field, i, key) if key else (field, i)
            if (bad := garbage(path, f"{label} item {i + 1}", text, whole=key in (None, "then"))) is not None:
                found.append(bad)
                break
            if problem := text_problem(text, STEP if key else kind):
                found.append(Finding("junk", path, f"{label} item {i + 1} {problem}", text))
                break
    return found


def output_check(agent: str):
    """The check of ``agent``'s reply ("A", "B" or "synthesis")."""
    fields = FIELDS[agent]

    def check(data: dict[str, Any]) -> list[Finding]:
        found = []
        for field, kind in fields.items():
            found += _field_findings(field, kind, data.get(field))
        if agent == "B":
            for key, value in (data.get("checklist") or {}).items():
                if problem := text_problem(value, ITEM):
                    found.append(Finding("junk", ("checklist", key), f"checklist {key.replace('_', ' ')} {problem}",
                                         value, repair="reask"))
        return found

    return check


class Flagging(Review):
    """A review whose last attempt keeps what its checks still find wrong, flagged for the reader (the record's
    items with ``action="flagged"``), rather than failing the whole step: list items are dropped while a list
    keeps one, the rest stays and the page says what was flagged."""

    def __call__(self, parsed, last_attempt: bool):
        kept, messages = super().__call__(parsed, last_attempt)
        if kept is not None or not last_attempt:
            return kept, messages
        data = parsed.model_dump(mode="json", exclude_none=True)
        outcome = repair(data, self.findings(data), self.floors, last_attempt=True)
        self.record.items += [quality_item(finding, "flagged") for finding in outcome.reask]
        return type(parsed).model_validate(outcome.data), []
