"""Orchestrator checks: the context the model inferred is grounded, and the question keeps its meaning.

``geography`` and ``timeframe`` that the user did not type must either be supported
by the user's text or be a generic scope ("Global", "the next few years"). A past
year is never a scope for a question about what to do. An inferred ``domain`` names a
field of knowledge related to the question, never a year or a place the user's text lacks. ``normalized_question``
must stay close to the user's question, add no loaded words and keep its polarity (a negation added or removed
puts the user's own question back).
"""

from __future__ import annotations

import re
from typing import Any

from . import substance as s
from . import text as t
from .base import LEXICAL_ONLY, Embeddings, Finding

KEEPS_MEANING = 0.60  # cosine of the normalised question to the user's question (paraphrases: 0.8-0.95)
KEEPS_WORDS = 0.5  # without embeddings: share of the user's content words kept
HORIZON = 10  # years ahead a timeframe may name without the user's text naming them
# Cosine of an inferred domain to the user's question below which it is about something else: fields that fit
# reach 0.16-0.48 ("Software development", "Urban planning", "AI safety"), unrelated ones -0.08-0.04 ("Tropical
# Countries" for continuous deployment, "Medicine" for a car ban). A domain is optional, so dropping one that is
# merely too broad ("Economics", 0.03-0.04) loses little, while a wrong one steers every later agent.
DOMAIN_ON_TOPIC = 0.10

GENERIC_PLACES = frozenset({"global", "worldwide", "international", "world", "not specified", "unspecified",
                            "any", "general", "universal", "everywhere", "various", "n a", "none"})
# Generic horizons: every word of the value is one of these (years are judged separately).
_HORIZON_WORDS = frozenset([
    "not", "specified", "unspecified", "the", "a", "an", "next", "coming", "few", "several", "many", "some", "near",
    "short", "medium", "long", "term", "terms", "future", "present", "current", "today", "now", "ongoing",
    "indefinite", "years", "year", "decades", "decade", "months", "month", "weeks", "week", "foreseeable",
    "immediate", "upcoming", "era", "period", "time", "times", "day", "days", "to", "and", "of", "within", "over",
    "1", "2", "3", "4", "5", "10", "one", "two", "three", "five", "ten"
])
# Names for the same place: a question naming any of a group grounds every other ("the US" grounds
# "United States" and back).
PLACE_GROUPS = (
    frozenset({"us", "u s", "usa", "u s a", "united states", "united states of america", "america", "american"}),
    frozenset({"uk", "u k", "united kingdom", "britain", "great britain", "british"}),
    frozenset({"eu", "european union", "europe", "european"}),
    frozenset({"un", "united nations"}),
)
_FILLER = frozenset({"the", "a", "an", "of", "and", "in"})


def _place_words(text: str) -> set[str]:
    """Every word of a place name but articles ("US" stays: as a place it is no stopword)."""
    return {t.stem(w) for w in t.words(text) if w not in _FILLER}


def _grounded_words(value: str, source: str) -> bool:
    """Every word of ``value`` appears in ``source``, directly or through another name for the same place."""
    folded_source = f" {t.folded(source)} "
    missing = _place_words(value) - _place_words(source)
    for group in PLACE_GROUPS:
        if any(f" {name} " in folded_source for name in group):
            for name in group:
                if f" {name} " in f" {t.folded(value)} ":
                    missing -= _place_words(name)
    return not missing


def geography(value: str, source: str) -> str | None:
    if t.folded(value) in GENERIC_PLACES or _grounded_words(value, source):
        return None
    return (f"geography {value!r} names a place the user's text does not mention: use a place named in the "
            "question or \"Global\"")


def timeframe(value: str, source: str, year_now: int) -> str | None:
    stated = set(t.years(source))
    named = [year for year in t.years(value) if year not in stated]
    for year in named:
        if year < year_now and max(named) < year_now:  # a range reaching the present ("2025-2027") looks ahead
            return (f"timeframe {value!r} names {year}, a past year the user's text does not mention: a "
                    "question about what to do looks ahead; use \"the next few years\" or the user's own period")
        if year > year_now + HORIZON:
            return f"timeframe {value!r} names {year}, a date the user's text does not support"
    rest = re.sub(r"\d{4}s?", " ", value)
    if all(w in _HORIZON_WORDS for w in t.words(rest)) or _grounded_words(rest, source):
        return None
    return (f"timeframe {value!r} names a period the user's text does not support: use a generic horizon such "
            "as \"the next few years\", or the period the user named")


def domain(value: str, source: str, places: list[str]) -> str | None:
    """A domain is a field of knowledge ("Urban planning"): it names no year and no place the user's text lacks.
    ``places``: names the model used elsewhere without grounding (its ungrounded geography), and known places."""
    stated = set(t.years(source))
    if invented := [year for year in t.years(value) if year not in stated]:
        return (f"domain {value!r} names {invented[0]}, a year the user's text does not mention: name the field "
                "of knowledge only")
    folded = f" {t.folded(value)} "
    named = [name for group in PLACE_GROUPS for name in group
             if f" {name} " in folded and not _grounded_words(name, source)]
    # the words of an ungrounded place the source lacks ("london" of "The City of London" for "a city")
    invented_words = set().union(*(_place_words(place) - _place_words(source) for place in places))
    named += sorted(invented_words & _place_words(value))
    if named:
        return (f"domain {value!r} names {named[0]!r}, a place the user's text does not mention: name the field "
                "of knowledge only")
    return None


def check(data: dict[str, Any], *, raw_input: str, user_context: dict[str, str], year_now: int,
          embeddings: Embeddings = LEXICAL_ONLY) -> list[Finding]:
    """Findings on a proposition dict (``normalized_question``, ``context``)."""
    findings: list[Finding] = []
    source = " ".join([raw_input, *user_context.values()])
    context = data.get("context") or {}
    for name, test in (("geography", lambda v: geography(v, source)),
                       ("timeframe", lambda v: timeframe(v, source, year_now))):
        value = context.get(name)
        if value and name not in user_context and (problem := test(value)):
            findings.append(Finding(f"ungrounded_{name}", ("context", name), problem, value))
    ungrounded = [f.text for f in findings if f.check == "ungrounded_geography"]
    if (value := context.get("domain")) and "domain" not in user_context:
        if problem := domain(value, source, ungrounded):
            findings.append(Finding("ungrounded_domain", ("context", "domain"), problem, value))
        elif not t.label_problem(value, max_words=5) and (
                sims := embeddings.similarities([value], [source])) is not None and sims[0, 0] < DOMAIN_ON_TOPIC:
            findings.append(Finding("ungrounded_domain", ("context", "domain"),
                                    f"domain {value!r} is not a field the question is about: name the field of "
                                    "knowledge the question belongs to, or leave it empty", value))
    for name, value in context.items():  # a timeframe may be years alone: its own check judges those
        if value and name != "timeframe" and name not in user_context and (
                problem := t.label_problem(value, max_words=5)):
            findings.append(Finding("junk", ("context", name), f"context {name} {value!r} {problem}", value))
    question = data.get("normalized_question") or ""
    fallback = raw_input.strip()
    if question and s.negations(question) % 2 != s.negations(raw_input) % 2:
        # "Should our team rewrite ...?" normalized to "We should not rewrite ...": the headline would say the
        # opposite of what the user asked while FOR argues for it. The user's own question goes back.
        findings.append(Finding("polarity_flip", ("normalized_question",),
                                "normalized_question adds or removes a negation and so asks the opposite of the "
                                "user's question: keep its polarity", question, "replace", fallback))
        return findings
    loaded = t.loaded_words(question, raw_input)
    if loaded:
        findings.append(Finding("loaded_question", ("normalized_question",),
                                f"normalized_question adds loaded words the user did not use "
                                f"({', '.join(loaded)}): keep the user's neutral wording", question, "reask",
                                fallback, final="replace"))
    sims = embeddings.similarities([question], [raw_input])
    drifted = (sims[0, 0] < KEEPS_MEANING) if sims is not None else (t.containment(raw_input, question) < KEEPS_WORDS)
    if question and drifted:
        findings.append(Finding("question_meaning", ("normalized_question",),
                                "normalized_question changes the meaning of the user's question: rewrite the "
                                "same question, keeping its key words", question, "reask", fallback,
                                final="replace"))
    return findings


def inferred(context: dict[str, str] | None, user_context: dict[str, str]) -> list[str]:
    """Context fields whose value the model inferred rather than the user typed."""
    return [name for name in ("geography", "timeframe", "domain") if (context or {}).get(name)
            and name not in user_context]
