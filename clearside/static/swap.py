"""The swap check: does the moderator's synthesis depend on which case is presented as FOR?

The moderator is rerun (only the moderator, :meth:`clearside.static.engine.Engine.moderate`) on the same proposition
with the two cases exchanged, labels and order: the AGAINST case is shown first as the CASE FOR and its
assumptions are P1, P2 ...; the FOR case is shown second as the CASE AGAINST with C1, C2 .... A synthesis that
maps the disagreement rather than favouring a position should come back the same once read in the original
frame. The measures, precisely:

- **Synthesis items**: every entry of four sections of the moderator: ``decision_hinges``,
  ``core_disagreements``, ``assumption_conflicts`` and ``areas_of_agreement`` (evidence gaps name missing data,
  not a side, and are not compared).
- **Original and swapped synthesis.** The original is the document's own moderator section when the document
  was written by the model doing the check (``meta.model_info`` names the same provider and model); otherwise
  (a hand-structured reference, a debate from another model) the moderator is also run once on the original
  order, so that both syntheses come from one model and only the order differs (the report says which).
- **Back to the original frame.** The swapped synthesis is read back before any comparison: each conflict's
  ``pro_assumption`` and ``con_assumption`` are exchanged (the swapped run's "FOR assumption" is the original
  AGAINST's), and in every text the side labels are exchanged: FOR/AGAINST, Pro/Con (whole words) and the
  assumption ids P<n>/C<n>.
- **Similarity** of two items: cosine of their MiniLM embeddings (:mod:`clearside.embed`, loaded once per
  process, offline); without the model (``CLEARSIDE_SEMANTIC_CHECKS=0`` or not installed), the Jaccard overlap of
  their stemmed content words, and the report says ``"semantic": false``. A hinge or an agreement is its text;
  a disagreement is ``topic: description root_cause``; a conflict is its pair of assumptions: the similarity is
  the larger of *straight* (mean of FOR-to-FOR and AGAINST-to-AGAINST assumption similarity) and *crossed*
  (FOR-to-AGAINST and AGAINST-to-FOR).
- **Matched**: items of one section are paired one to one, greedily from the most similar pair down, while the
  similarity is at least ``MATCH`` (0.65, the cosine at which the comparison page calls two arguments the same
  point; lexically ``MATCH_LEXICAL``, 0.4).
- **Vanished**: an original item with no match. **Appeared**: a swapped item with no match (reported, not in
  the rate: the rate asks what of the original synthesis survives).
- **Lean** of a hinge, a disagreement or a conflict's description: its largest similarity to the FOR case's
  texts (summary, claims, assumptions) minus its largest similarity to the AGAINST case's, both cases as the
  document has them. Above 0 the item is framed in FOR's terms, below 0 in AGAINST's. (``LEAN``, 0.05, is
  ours and not yet calibrated on repeated model runs.)
- **Flipped**: a matched hinge, disagreement or conflict whose lean changed sign with both leans at least
  ``LEAN`` (0.05) away from 0 (it now attaches to the other side), or a matched conflict whose crossed
  similarity beats its straight one (its FOR and AGAINST assumptions swapped meaning). Agreements belong to
  both sides by definition: they can vanish, not flip.
- **Flip rate** (the headline): (flipped + vanished) / original items, over the four sections; per section
  the same ratio. With ``runs`` > 1 every swapped run is compared with the same original, and the rates are
  means over runs (the denominator is the same in each run, so pooled counts give the same figure).

The original and the swapped synthesis are two samples of the moderator (temperature included), so the flip
rate holds the moderator's run-to-run variation as well as any position effect: it is an upper bound on the
effect of the swap, and a neutral moderator at temperature 0 on a deterministic backend scores 0. Published
LLM judges flip about 13.6% of pairwise verdicts under a position swap ("The Coin Flip Judge", 2026): a
different task and measure, printed as context only.
"""

from __future__ import annotations

import copy
import re
import statistics
import time
from typing import Any

from .. import checks
from ..checks.text import jaccard
from ..contract import validate_document
from ..errors import InputError
from ..schema import Document
from .engine import Engine

SECTIONS = ("decision_hinges", "core_disagreements", "assumption_conflicts", "areas_of_agreement")
SIDED = ("decision_hinges", "core_disagreements", "assumption_conflicts")  # items that can attach to a side
MATCH = 0.65
MATCH_LEXICAL = 0.4
LEAN = 0.05
PUBLISHED = {"flip_rate": 0.136, "source": "The Coin Flip Judge (2026)",
             "what": "share of pairwise verdicts LLM judges flip under a position swap",
             "note": "a different task and measure: context, not a like-for-like comparison"}

_LABEL = re.compile(r"(?<![\w-])(FOR|AGAINST|PRO|Pro|pro|CON|Con|con|[PC]\d+)(?![\w-])")
_OTHER = {"FOR": "AGAINST", "AGAINST": "FOR", "PRO": "CON", "Pro": "Con", "pro": "con", "CON": "PRO",
          "Con": "Pro", "con": "pro"}


def swapped(document: dict[str, Any]) -> dict[str, Any]:
    """The document with its FOR and AGAINST cases exchanged (the moderator's input for the swapped run)."""
    data = copy.deepcopy(document)
    data["pro"], data["con"] = data["con"], data["pro"]
    for case in data.get("personas") or []:  # a persona debate: each persona's stance in the swapped frame too
        case["stance"] = {"for": "against", "against": "for"}.get(case["stance"], case["stance"])
    return data


def swap_labels(text: str) -> str:
    """``text`` with the side labels exchanged: FOR/AGAINST, Pro/Con (whole words), P<n>/C<n>."""

    def other(match: re.Match[str]) -> str:
        word = match.group(1)
        if word[0] in "PC" and word[1:].isdigit():
            return ("C" if word[0] == "P" else "P") + word[1:]
        return _OTHER[word]

    return _LABEL.sub(other, text)


def original_frame(moderator: dict[str, Any]) -> dict[str, Any]:
    """A synthesis of the swapped document read in the original frame: each conflict's two assumptions
    exchanged, and the side labels of the moderator's own words exchanged back."""

    def back(value: Any) -> Any:
        if isinstance(value, str):
            return swap_labels(value)
        if isinstance(value, list):
            return [back(v) for v in value]
        if isinstance(value, dict):
            return {k: back(v) for k, v in value.items()}
        return value

    data = back({k: v for k, v in moderator.items() if k != "assumption_conflicts"})
    # the assumptions are the sides' listed text, quoted: exchanged, never rewritten
    data["assumption_conflicts"] = [{**back(c), "pro_assumption": c["con_assumption"],
                                     "con_assumption": c["pro_assumption"]} for c in moderator["assumption_conflicts"]]
    return data


class _Space:
    """Similarities between the texts of one comparison, embedded in one batch (or lexical without MiniLM)."""

    def __init__(self, texts: list[str], embeddings: checks.Embeddings) -> None:
        self.index = {text: i for i, text in enumerate(dict.fromkeys(texts))}
        self.vectors = embeddings.vectors(list(self.index)) if self.index else None
        self.semantic = self.vectors is not None

    def sim(self, a: str, b: str) -> float:
        if self.vectors is None:
            return jaccard(a, b)
        return float(self.vectors[self.index[a]] @ self.vectors[self.index[b]])

    def nearest(self, text: str, anchors: list[str]) -> float:
        return max((self.sim(text, anchor) for anchor in anchors), default=0.0)


def _items(moderator: dict[str, Any], section: str) -> list[dict[str, str]]:
    if section == "core_disagreements":
        return [{"text": " ".join(filter(None, (f"{d['topic']}: {d['description']}", d.get("root_cause"))))}
                for d in moderator[section]]
    if section == "assumption_conflicts":
        return [{"text": c.get("conflict_description") or "", "pro": c["pro_assumption"], "con": c["con_assumption"]}
                for c in moderator[section]]
    return [{"text": text} for text in moderator[section]]


def _texts(items: list[dict[str, str]]) -> list[str]:
    return [t for item in items for t in item.values() if t]


def _r(x: float) -> float:
    return round(float(x), 3)


def compare(document: dict[str, Any], original: dict[str, Any], rerun: dict[str, Any],
            embeddings: checks.Embeddings | None = None) -> dict[str, Any]:
    """How far ``rerun`` (a swapped synthesis already in the original frame) moved from ``original``, both
    moderator sections of ``document``'s debate (see the module doc for every measure)."""
    embeddings = embeddings or checks.Embeddings()
    sides = {side: [*document[side]["executive_summary"], *(a["claim"] for a in document[side]["arguments"]),
                    *document[side]["assumptions"]] for side in ("pro", "con")}
    before = {s: _items(original, s) for s in SECTIONS}
    after = {s: _items(rerun, s) for s in SECTIONS}
    space = _Space([*sides["pro"], *sides["con"], *(t for s in SECTIONS for t in _texts(before[s]) + _texts(after[s]))],
                   embeddings)
    match = MATCH if space.semantic else MATCH_LEXICAL

    def lean(text: str) -> float | None:
        return space.nearest(text, sides["pro"]) - space.nearest(text, sides["con"]) if text else None

    sections: dict[str, dict[str, Any]] = {}
    pairs, vanished, appeared = [], [], []
    for section in SECTIONS:
        a, b = before[section], after[section]
        scores: dict[tuple[int, int], tuple[float, bool]] = {}
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                if section == "assumption_conflicts":
                    straight = (space.sim(x["pro"], y["pro"]) + space.sim(x["con"], y["con"])) / 2
                    crossed = (space.sim(x["pro"], y["con"]) + space.sim(x["con"], y["pro"])) / 2
                    scores[i, j] = (max(straight, crossed), crossed > straight)
                else:
                    scores[i, j] = (space.sim(x["text"], y["text"]), False)
        used_a: set[int] = set()
        used_b: set[int] = set()
        flipped = 0
        for (i, j), (score, reversed_) in sorted(scores.items(), key=lambda kv: -kv[1][0]):
            if score < match or i in used_a or j in used_b:
                continue
            used_a.add(i)
            used_b.add(j)
            why = None
            leans = (lean(a[i]["text"]), lean(b[j]["text"])) if section in SIDED else (None, None)
            if reversed_:
                why = "its FOR and AGAINST assumptions swapped"
            elif leans[0] is not None and leans[1] is not None and leans[0] * leans[1] < 0 and min(
                    abs(leans[0]), abs(leans[1])) >= LEAN:
                why = f"its framing moved from {'FOR' if leans[0] > 0 else 'AGAINST'} to " \
                      f"{'FOR' if leans[1] > 0 else 'AGAINST'}"
            flipped += why is not None
            pairs.append({"section": section, "original": _label(a[i]), "swapped": _label(b[j]),
                          "similarity": _r(score), "lean": [None if v is None else _r(v) for v in leans],
                          "flipped": why})
        gone = [_label(a[i]) for i in range(len(a)) if i not in used_a]
        new = [_label(b[j]) for j in range(len(b)) if j not in used_b]
        vanished += [{"section": section, "original": text} for text in gone]
        appeared += [{"section": section, "swapped": text} for text in new]
        sections[section] = {"items": len(a), "matched": len(used_a), "flipped": flipped, "vanished": len(gone),
                             "appeared": len(new),
                             "flip_rate": _r((flipped + len(gone)) / len(a)) if a else 0.0}
    items = sum(s["items"] for s in sections.values())
    moved = sum(s["flipped"] + s["vanished"] for s in sections.values())
    return {"flip_rate": _r(moved / items) if items else 0.0, "items": items, "sections": sections,
            "pairs": pairs, "vanished": vanished, "appeared": appeared, "semantic": space.semantic}


def _label(item: dict[str, str]) -> str:
    if "pro" in item:
        return f"FOR: {item['pro']} / AGAINST: {item['con']}" + (f" ({item['text']})" if item["text"] else "")
    return item["text"]


def _same_model(document: Document, engine: Engine) -> bool:
    info = document.meta.model_info
    return info.provider == engine.provider.name and info.model == engine.provider.model


def swap_check(document: dict[str, Any] | Document, engine: Engine, *, runs: int = 1, name: str = "",
               original: str = "auto", control: bool = False) -> dict[str, Any]:
    """Rerun ``engine``'s moderator ``runs`` times on ``document`` with its cases exchanged and report how far
    the synthesis moved. ``original``: ``document`` (compare with the document's own synthesis), ``rerun``
    (run the moderator once on the original order too) or ``auto`` (rerun unless the document was written by
    the engine's provider and model). ``control``: also rerun it ``runs`` times on the original order, measured
    the same way: that rate is the moderator's run-to-run variation, and ``swap_effect`` (the flip rate minus
    it) what the swap itself moved. Raises the moderator's typed error when a run fails."""
    if runs < 1:
        raise InputError(f"--runs must be at least 1 (got {runs}).")
    if original not in ("auto", "document", "rerun"):
        raise InputError(f"Unknown original {original!r}: use auto, document or rerun.")
    doc = document if isinstance(document, Document) else validate_document(copy.deepcopy(document))
    data = doc.dump()
    started, seconds, calls = time.perf_counter(), 0.0, 0
    if original == "document" or (original == "auto" and _same_model(doc, engine)):
        base, why = data["moderator"], "the document's own synthesis"
    else:
        base = engine.moderate(doc).dump()
        seconds += sum(u.seconds for u in engine.last_usage.values())
        calls += sum(u.calls for u in engine.last_usage.values())
        info = doc.meta.model_info
        why = (f"a fresh synthesis on the original order (the document was written by {info.provider}"
               f"{':' + info.model if info.model else ''}, the check runs {engine.provider.spec})")
    done = []
    for _ in range(runs):
        rerun = original_frame(engine.moderate(swapped(data)).dump())
        run_seconds = sum(u.seconds for u in engine.last_usage.values())
        seconds += run_seconds
        calls += sum(u.calls for u in engine.last_usage.values())
        result = {**compare(data, base, rerun, engine.embeddings), "swapped_moderator": rerun,
                  "model_seconds": round(run_seconds, 2)}
        done.append(result)
    controls = []
    for _ in range(runs if control else 0):
        again = engine.moderate(doc).dump()
        seconds += sum(u.seconds for u in engine.last_usage.values())
        calls += sum(u.calls for u in engine.last_usage.values())
        controls.append(compare(data, base, again, engine.embeddings)["flip_rate"])
    sections = {s: {k: sum(r["sections"][s][k] for r in done) for k in ("items", "matched", "flipped", "vanished",
                                                                         "appeared")} for s in SECTIONS}
    for s in sections.values():
        s["flip_rate"] = _r((s["flipped"] + s["vanished"]) / s["items"]) if s["items"] else 0.0
    rates = [r["flip_rate"] for r in done]
    return {"debate": name, "proposition": data["proposition"]["normalized_question"],
            "provider": engine.provider.spec, "original": why, "runs": runs,
            "flip_rate": _r(statistics.fmean(rates)), "flip_rates": rates,
            "spread": _r(statistics.stdev(rates)) if len(rates) > 1 else 0.0,
            "sections": sections, "semantic": all(r["semantic"] for r in done),
            "thresholds": {"match": MATCH if done[0]["semantic"] else MATCH_LEXICAL, "lean": LEAN},
            "model_seconds": round(seconds, 2), "model_calls": calls,
            "wall_seconds": round(time.perf_counter() - started, 2), "details": done,
            **({"control_flip_rate": _r(statistics.fmean(controls)), "control_flip_rates": controls,
                "swap_effect": _r(statistics.fmean(rates) - statistics.fmean(controls))} if controls else {})}


def batch(results: list[dict[str, Any]], failures: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """Several debates' swap checks: each one's, their mean flip rate and the published figure beside it."""
    rates = [r["flip_rate"] for r in results]
    controls = [r for r in results if "control_flip_rate" in r]
    means = {"mean_control_flip_rate": _r(statistics.fmean(r["control_flip_rate"] for r in controls)),
             "mean_swap_effect": _r(statistics.fmean(r["swap_effect"] for r in controls))} if controls else {}
    return {"debates": results, "failed": failures or [], **means,
            "mean_flip_rate": _r(statistics.fmean(rates)) if rates else None,
            "published": PUBLISHED}


def markdown(report: dict[str, Any]) -> str:
    """The batch report as text."""
    p = report["published"]
    lines = ["# Swap check: the moderator rerun with FOR and AGAINST exchanged", ""]
    for r in report["debates"]:
        lines += [f"## {r['debate'] or 'debate'}: {r['proposition']}", "",
                  f"Flip rate **{r['flip_rate']:.1%}** over {r['runs']} swapped run(s) on {r['provider']}"
                  + (f" (runs: {', '.join(f'{x:.1%}' for x in r['flip_rates'])})" if r["runs"] > 1 else "")
                  + f"; compared with {r['original']}; "
                  f"{'MiniLM' if r['semantic'] else 'lexical (no embedding model)'} matching at "
                  f"{r['thresholds']['match']:g}; {r['model_calls']} model call(s), {r['model_seconds']:g} s."
                  + (f" Control (the original order again): {r['control_flip_rate']:.1%}, the moderator's own "
                     f"variation; swap effect **{r['swap_effect']:+.1%}**." if "control_flip_rate" in r else ""), "",
                  "| section | items | matched | flipped | vanished | appeared | flip rate |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {name} | {s['items']} | {s['matched']} | {s['flipped']} | {s['vanished']} | {s['appeared']} | "
                  f"{s['flip_rate']:.1%} |" for name, s in r["sections"].items()]
        last = r["details"][-1]
        flips = [f"- {x['section']}: “{x['original']}” → “{x['swapped']}”: {x['flipped']}"
                 for x in last["pairs"] if x["flipped"]]
        gone = [f"- {x['section']}: “{x['original']}”" for x in last["vanished"]]
        if flips:
            lines += ["", "Flipped (last run):", *flips]
        if gone:
            lines += ["", "Vanished (last run):", *gone]
        lines.append("")
    for f in report["failed"]:
        lines += [f"## {f['debate']}: failed", "", f["error"], ""]
    if report["mean_flip_rate"] is not None:
        lines.append(f"Mean flip rate over {len(report['debates'])} debate(s): **{report['mean_flip_rate']:.1%}**.")
    if report.get("mean_swap_effect") is not None:
        lines.append(f"Mean control flip rate {report['mean_control_flip_rate']:.1%}; mean swap effect "
                     f"**{report['mean_swap_effect']:+.1%}**.")
    lines.append(f"Context: {p['what']} is about {p['flip_rate']:.1%} ({p['source']}); {p['note']}.")
    return "\n".join(lines).rstrip() + "\n"
