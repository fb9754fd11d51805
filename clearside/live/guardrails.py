"""Quality guardrails checked before a live turn is accepted (docs/design/live-protocol.md#guardrails).

Each check returns violations as ``{"rule", "detail", "text"}``. The checks are
deliberately narrow and explainable: neutrality by lexicon (see
:mod:`clearside.neutrality`), references to the other side by phrase, new
arguments and straw men by word overlap with what was actually said,
missing assumptions by structure, and text that is not language (runs of codes
or numbers, gibberish) by the substance checks' own tests (:func:`garbled`).
A sentence the model left unfinished is no violation: :func:`end_cuts` ends it
at its last whole sentence once the turn is accepted, or marks it as cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .. import neutrality
from ..checks.base import garbage
from ..checks.moderator import listed
from ..checks.text import GIBBERISH, junk
from .protocol import ROUNDS, Step

_OTHER_SIDE = [re.compile(p, re.IGNORECASE) for p in (
    r"\bmy opponents?\b", r"\bthe other side\b", r"\bopposing (side|advocate|team|case|view)\b",
    r"\bthe (pro|con) (advocate|side|team|case)\b", r"\b(pro|con)['’]s\b",
    r"\b(pro|con) (argues|argued|claims|claimed|says|said|contends|believes|will argue|might argue)\b",
    r"\b(rebut|rebuts|rebutting|refute|refutes)\b", r"\bcontrary to what\b",
)]
_STOP_WORDS = """
about above after again against also although among because been before being between both could
does doing during each either every from further have having here into itself just more most much
must only other over same should since some such than that their them then there these they this
those through under until very were what when where which while whose will with would your yours
shall might
"""
_STOP = frozenset(_STOP_WORDS.split())
_PLACEHOLDER = {"", "none", "n/a", "na", "nothing", "no assumptions", "not applicable", "unknown"}
_WORD = re.compile(r"[a-z][a-z'-]{3,}")


def words(text: str) -> set[str]:
    return {w.strip("'-") for w in _WORD.findall(text.casefold())} - _STOP


def overlap(text: str, reference: Iterable[str]) -> float:
    """Share of the content words of ``text`` that occur in the reference texts."""
    mine = words(text)
    if not mine:
        return 1.0
    seen = set().union(*(words(r) for r in reference)) if reference else set()
    return len(mine & seen) / len(mine)


def _violation(rule: str, detail: str, text: str = "") -> dict[str, str]:
    return {"rule": rule, "detail": detail, "text": text[:300]}


def texts_of(fields: dict[str, Any]) -> list[str]:
    """Every string inside a turn's fields, speech included."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(fields)
    return found


def check_turn(step: Step, fields: dict[str, Any], *, opponent_claims: list[str], own_earlier: list[str],
               threshold: float = 0.25, assumptions: dict[str, list[str]] | None = None) -> list[dict[str, str]]:
    """Violations of the rules of ``step``'s phase in a parsed turn (empty when it may be accepted).

    ``assumptions``: for the synthesis, what each side listed (``pro``, ``con``); every assumption conflict
    must pair one of each (the moderator picks them by id, so only a backend that cannot constrain misses)."""
    found: list[dict[str, str]] = []
    if step.kind == "synthesis" and assumptions is not None:
        for conflict in fields.get("assumption_conflicts", []):
            for side, label in (("pro", "Pro"), ("con", "Con")):
                value = str(conflict.get(f"{side}_assumption", ""))
                if not listed(value, assumptions[side]):
                    found.append(_violation("untraceable_conflict",
                                            f"An assumption conflict must cite an assumption the {label} side "
                                            f"listed, by its id; {value[:80]!r} is not one of them.", value))
    if step.kind == "synthesis":
        for hit in neutrality.violations(" ".join(texts_of(fields))):
            found.append(_violation("moderator_neutrality",
                                    f"The moderator must not pick a winner or recommend ({hit.kind}: "
                                    f"\"{hit.phrase}\").", hit.sentence))
    if step.kind in ("opening", "constructive"):
        for text in texts_of(fields):
            for pattern in _OTHER_SIDE:
                match = pattern.search(text)
                if match:
                    found.append(_violation("references_other_side",
                                            f"Openings and constructive turns build a parallel case and may not "
                                            f"mention or rebut the other side (\"{match.group()}\").", text))
                    break
    if step.kind == "constructive":
        allowed = ROUNDS.get(step.round)
        for argument in fields.get("arguments", []):
            assumptions = [a for a in argument.get("assumptions", [])
                           if a.strip(" .").casefold() not in _PLACEHOLDER
                           and a.strip().casefold() != argument.get("claim", "").strip().casefold()]
            if not assumptions:
                found.append(_violation("missing_assumptions",
                                        "Every constructive argument must state the assumptions it rests on.",
                                        argument.get("claim", "")))
            if allowed and argument.get("category") not in allowed:
                found.append(_violation("off_category", f"Round {step.round} takes only {' or '.join(allowed)} "
                                                        f"arguments, not {argument.get('category')}.",
                                        argument.get("claim", "")))
    if step.kind == "rebuttal" and opponent_claims:
        for item in fields.get("rebuttals", []):
            if overlap(item.get("target", ""), opponent_claims) < threshold:
                found.append(_violation("new_argument", "A rebuttal must answer an argument the other side "
                                                        "actually made (no straw man, no new argument).",
                                        item.get("target", "")))
    if step.kind == "closing" and own_earlier:
        for point in fields.get("summary", []):
            if overlap(point, own_earlier) < threshold:
                found.append(_violation("new_argument", "A closing may only summarise points already made; "
                                                        "this one is new.", point))
    found += garbled(fields)
    unique: dict[tuple[str, str], dict[str, str]] = {}
    for item in found:
        unique.setdefault((item["rule"], item["detail"]), item)
    return list(unique.values())


def describe(violations: list[dict[str, str]]) -> str:
    # garbled text is not quoted back: shown it, a small model writes more of the same
    lines = [f"- {v['detail']}" + (f" In: \"{v['text'][:160]}\"" if v.get("text") and v["rule"] != "garbled" else "")
             for v in violations]
    return "\n".join(lines)


def argument_problem(argument: dict[str, Any], flags: Iterable[dict[str, Any]] = ()) -> str | None:
    """Why the checks contradict a live argument's stated confidence, or None: its claim or explanation is not
    content (gibberish, a field name, a numbering fragment: ``checks.text.junk``), or a guardrail flag left on
    its turn quotes its claim. A page shows no confidence (``high`` above all) for such an argument."""
    for key in ("claim", "explanation"):
        value = argument.get(key)
        if isinstance(value, str) and value.strip() and (reason := junk(value)):
            return f"its {key} {reason}"
    if not str(argument.get("claim") or "").strip():
        return "it has no claim"
    claim = str(argument["claim"]).strip().casefold()
    for flag in flags:
        if str(flag.get("text") or "").strip().casefold() == claim:
            return f"a guardrail flagged it ({flag.get('rule', 'flag')})"
    return None


_SOUP = ("code_soup", "number_soup")
_CUT_MARK = " ,;:-–—"


def _prose(text: str) -> bool:
    """A string a reader reads as words: three or more (not an id such as "P1", a category, a confidence)."""
    return len(text.split()) >= 3


def garbled(fields: dict[str, Any]) -> list[dict[str, str]]:
    """Strings of the reply that are not language: a run of codes or numbers ("P1 C2 D3 E4", "2019/3/7/48.56"),
    or gibberish ("C3-DESCRIPCIONEZ ELIMICO AUTORES NOBREZILLA"). The turn is written again."""
    found = []
    for text in filter(_prose, texts_of(fields)):
        finding = garbage((), "", text)
        if finding is not None and finding.check in _SOUP or junk(text) == GIBBERISH:
            found.append(_violation("garbled", "Write plain sentences in English: the reply holds text that is "
                                               "not language (a run of codes or numbers, or made-up words).", text))
    return found


def end_cuts(value: Any) -> tuple[Any, int]:
    """``value`` (a turn's fields) with every string the model left unfinished ended at its last whole sentence
    or clause (:func:`clearside.checks.base.garbage`'s repair: "..., and you can join us in doing so," becomes
    "... the right decision."), or, with none, marked as cut with "…"; and how many strings were ended."""
    if isinstance(value, dict):
        pairs = [(key, end_cuts(item)) for key, item in value.items()]
        return {key: item for key, (item, _) in pairs}, sum(n for _, (_, n) in pairs)
    if isinstance(value, list):
        pairs = [end_cuts(item) for item in value]
        return [item for item, _ in pairs], sum(n for _, n in pairs)
    if not isinstance(value, str) or not _prose(value):
        return value, 0
    finding = garbage((), "", value)
    if finding is None or finding.check != "cut_sentence":
        return value, 0
    if finding.repair == "replace" and isinstance(finding.replacement, str):
        return finding.replacement, 1
    return value.rstrip().rstrip(_CUT_MARK).removesuffix("…") + "…", 1
