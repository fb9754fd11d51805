"""Re-map a debate under the user's value weights and assumption stances (docs/design/requirements.md#us-011).

:func:`remap` reruns only the moderator (:meth:`clearside.static.engine.Engine.moderate`: the same prompt, substance
and neutrality checks, repairs and re-asks) with the user's conditions stated in its request: which argument
categories they care most or least about, and which listed assumptions (P1.. of the case FOR, C1.. of the case
AGAINST) they accept, reject or are unsure of. The result is a new document: the same cases, a new synthesis,
and ``remap`` holding the conditions and the synthesis it replaced. The document passed in is not changed.

The conditions reach the moderator through its provider: :class:`Conditioned` wraps the engine's provider and
adds them to the user message of every ``moderator`` request (mends and re-asks included), since the engine has
no hook for extra moderator text. Weights are never a score: nothing here sums, ranks or compares the sides.

:func:`diff` compares two syntheses (pure); :func:`weighted_order` orders one side's arguments for the view by
the user's weights (pure, no model call). Weight 0 sets a category aside: its arguments go last, marked
``set_aside`` (the view collapses them), never dropped, so each case stays whole in the view.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import checks, cruxes, prompts
from ..checks.text import jaccard
from ..contract import stamped, utc_stamp, validate_document
from ..errors import InputError
from ..providers.base import ChatRequest, Completion, OnDelta, Provider
from ..schema import CATEGORY_VALUES, AssumptionStance, Document, Moderator, Remap, Side, Weights
from .engine import Engine

DEFAULT_WEIGHT = 1
MAX_WEIGHT = 3
STANCES = ("accept", "reject", "unsure")
EMPHASIS = {0: "set_aside", 1: "normal", 2: "raised", 3: "high"}
# what a re-map writes afresh: the conditions change which disagreements matter and which hinges are decisive
REMAPPED = ("core_disagreements", "decision_hinges")
SECTIONS = ("decision_hinges", "core_disagreements", "areas_of_agreement", "assumption_conflicts", "evidence_gaps")
MATCH = 0.65  # cosine at which two items are one point reworded (as swap.py and the comparison page)
MATCH_LEXICAL = 0.4
_LABEL = {"pro": ("P", "the case FOR"), "con": ("C", "the case AGAINST")}


# -- the user's conditions --------------------------------------------------------------------------------------

def parse_weights(text: str) -> Weights:
    """``economic=3,ethical=1`` as :class:`Weights`; InputError names what to fix."""
    values: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        name, sep, value = (s.strip() for s in part.partition("="))
        name = name.lower()
        if not sep or not name or not value:
            raise InputError(f"Weight {part!r} is not CATEGORY=N: write e.g. economic=3,ethical=1.")
        if name not in CATEGORY_VALUES:
            raise InputError(f"Unknown category {name!r} in --weights: use {', '.join(CATEGORY_VALUES)}.")
        if name in values:
            raise InputError(f"Category {name!r} is weighted twice in --weights: give each category once.")
        if not value.isdigit() or not 0 <= int(value) <= MAX_WEIGHT:
            raise InputError(f"Weight {value!r} for {name} is out of range: use a whole number from 0 to "
                             f"{MAX_WEIGHT} (1 is the default).")
        values[name] = int(value)
    if not values:
        raise InputError("--weights is empty: write e.g. economic=3,ethical=1.")
    return Weights(**values)


def weight_of(weights: Weights | dict[str, int] | None, category: str) -> int:
    """A category's weight (unset: 1)."""
    values = weights.dump() if isinstance(weights, Weights) else (weights or {})
    return int(values.get(category, DEFAULT_WEIGHT))


def assumption_ids(document: Document) -> list[tuple[str, int, str, str]]:
    """Every listed assumption as (side, index, id, text): P1.. for the case FOR, C1.. for the case AGAINST."""
    return [(side, i, f"{_LABEL[side][0]}{i + 1}", text) for side in ("pro", "con")
            for i, text in enumerate(getattr(document, side).assumptions)]


def match_assumption(document: Document, text: str) -> tuple[str, int, str]:
    """The listed assumption ``text`` names: its id (P2), its exact text, or an unambiguous prefix or substring
    (case-insensitive). Returns (side, index, listed text); InputError when none or several match."""
    wanted = " ".join((text or "").split()).casefold()
    listed = assumption_ids(document)
    if not wanted:
        raise InputError("An assumption stance needs the assumption's text (or its id, P1 or C1).")
    for rule in (lambda a: a[2].casefold() == wanted, lambda a: " ".join(a[3].split()).casefold() == wanted,
                 lambda a: a[3].casefold().startswith(wanted), lambda a: wanted in a[3].casefold()):
        hits = [a for a in listed if rule(a)]
        if len(hits) == 1:
            return hits[0][0], hits[0][1], hits[0][3]
        if len(hits) > 1:
            raise InputError(f"{text!r} matches {len(hits)} assumptions ({', '.join(h[2] for h in hits)}): give more "
                             "of its text, or its id.")
    raise InputError(f"{text!r} matches no listed assumption: use its id or text, one of: "
                     + "; ".join(f"{a[2]} {a[3]}" for a in listed))


def stances_for(document: Document, *, accept: Iterable[str] = (), reject: Iterable[str] = (),
                unsure: Iterable[str] = ()) -> list[AssumptionStance]:
    """The user's stances from assumption texts (see :func:`match_assumption`); one stance per assumption."""
    out: dict[tuple[str, int], AssumptionStance] = {}
    for stance, texts in (("accept", accept), ("reject", reject), ("unsure", unsure)):
        for text in texts:
            side, index, listed = match_assumption(document, text)
            if (side, index) in out and out[side, index].stance != stance:
                raise InputError(f"{listed!r} is given two stances ({out[side, index].stance} and {stance}): "
                                 "keep one.")
            out[side, index] = AssumptionStance(side=side, index=index, assumption=listed, stance=stance)
    return list(out.values())


@dataclass(frozen=True)
class Conditions:
    """What a re-map is asked under: the user's value weights and assumption stances; ``whole``: rewrite every
    section of the synthesis rather than those the conditions change (see :func:`remap`)."""

    weights: Weights | None = None
    stances: tuple[AssumptionStance, ...] = ()
    whole: bool = False


def conditions(document: Document, weights: Weights | None, stances: Sequence[AssumptionStance]) -> str:
    """The user's conditions as the moderator reads them (empty when there are none)."""
    lines = []
    set_weights = {name: weight_of(weights, name) for name in CATEGORY_VALUES if weight_of(weights, name) != 1}
    most = sorted((n for n, w in set_weights.items() if w > 1), key=lambda n: -set_weights[n])
    least = [n for n, w in set_weights.items() if w == 0]
    if most:
        lines.append("- The user cares most about: " + ", ".join(f"{n} ({set_weights[n]} of 3)" for n in most) + ".")
    if least:
        lines.append("- The user sets aside: " + ", ".join(least) + " (weight 0 of 3).")
    verbs = {"accept": "accepts", "reject": "rejects", "unsure": "is unsure about"}
    for s in stances:
        listed = getattr(document, s.side).assumptions
        if s.index >= len(listed):
            raise InputError(f"Assumption {_LABEL[s.side][0]}{s.index + 1} does not exist in {_LABEL[s.side][1]}.")
        lines.append(f"- The user {verbs[s.stance]} assumption {_LABEL[s.side][0]}{s.index + 1} of "
                     f"{_LABEL[s.side][1]}: {prompts.quote(listed[s.index])}.")
    if not lines:
        return ""
    return ("USER'S PRIORITIES FOR THIS RE-MAP (the user's own conditions: not evidence, not a verdict):\n"
            + "\n".join(lines) + "\nMap the same disagreement under these conditions, still without taking a "
            "side: list first the decision hinges that become decisive for someone with these priorities and "
            "stances, and last the disagreements that matter less to them. Where a rejected assumption carried "
            "an argument, say which question then stays open. Never say which side wins, is stronger or should "
            "be chosen.")


class Conditioned(Provider):
    """``inner`` with the user's conditions added to every moderator request's first user message."""

    def __init__(self, inner: Provider, note: str) -> None:
        self.inner, self.note = inner, note
        self.name, self.model, self.small = inner.name, inner.model, inner.small  # type: ignore[misc]
        self.supports_schema, self.can_stream = inner.supports_schema, inner.can_stream  # type: ignore[misc]
        self.concurrency = inner.concurrency

    def _with_note(self, request: ChatRequest) -> ChatRequest:
        if request.agent != "moderator" or not self.note:
            return request
        messages = [dict(m) for m in request.messages]
        first = next((m for m in messages if m["role"] == "user"), None)
        if first is None:
            messages.append(first := {"role": "user", "content": ""})
        first["content"] = f"{first['content']}\n\n{self.note}".strip()
        return replace(request, messages=messages)

    def complete(self, request: ChatRequest, on_delta: OnDelta | None = None) -> Completion:
        return self.inner.complete(self._with_note(request), on_delta)

    def _complete(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        return self.complete(request, on_delta)

    def constrain(self, schema: dict[str, Any]) -> dict[str, Any]:
        return self.inner.constrain(schema)

    @property
    def spec(self) -> str:
        return self.inner.spec


def remap(document: Document | dict[str, Any], engine: Engine, *, weights: Weights | None = None,
          stances: Sequence[AssumptionStance] = (), whole: bool = False) -> Document:
    """A new document whose synthesis is the moderator rerun under ``weights`` and ``stances``; ``remap`` holds
    them and the synthesis before. Raises InputError without conditions, the moderator's typed error on failure.

    The moderator writes afresh the sections the user's conditions change, :data:`REMAPPED` (which disagreements
    matter and which hinges become decisive), one call each on its own prompt with the conditions; the agreements,
    assumption conflicts, evidence gaps (and a persona debate's lens divergence) describe the two cases, which
    the conditions leave as they are, and are kept from the original synthesis. ``whole``: rerun the whole
    synthesis instead (every section, as the debate's moderator ran; about three times the output).
    ``engine.last_usage`` and ``last_violations`` are the rerun's, as after :meth:`Engine.moderate`; the new
    document's quality record gains the re-map's own checks as the agent ``remap``."""
    doc = document if isinstance(document, Document) else validate_document(copy.deepcopy(document))
    note = conditions(doc, weights, stances)
    if not note:
        raise InputError("Nothing to re-map with: set a weight other than 1 or a stance on an assumption.")
    rerun = Engine(Conditioned(engine.provider, note), retries=engine.retries, temperature=engine.temperature,
                   on_event=engine.on_event, substance=engine.substance, strategy=engine.strategy,
                   embeddings=engine.embeddings, mend=engine.mending)
    moderator = rerun.moderate(doc, None if whole else REMAPPED)
    engine.last_usage, engine.last_violations = rerun.last_usage, rerun.last_violations
    data = doc.dump()
    data["moderator"] = moderator.dump()
    record: dict[str, Any] = {"stances": [s.dump() for s in stances], "original": doc.moderator.dump(),
                              "remapped_at": utc_stamp()}
    if weights is not None and weights.dump():
        record["weights"] = weights.dump()
    data["remap"] = Remap.model_validate(record).dump()
    if data.get("quality") and "moderator" in rerun.last_quality:
        data["quality"]["agents"]["remap"] = rerun.last_quality["moderator"].dump()
    notes = data["meta"].get("notes", "")
    what = "the whole synthesis" if whole else "its disagreements and decision hinges"
    data["meta"]["notes"] = f"{notes} Re-mapped under the user's weights and assumption stances: {what}.".strip()
    return cruxes.attach(validate_document(stamped(data)), engine.embeddings)  # the new hinges' cruxes


# -- what changed ------------------------------------------------------------------------------------------------

def _text(section: str, item: Any) -> str:
    if section == "core_disagreements":
        return " ".join(filter(None, (f"{item['topic']}: {item['description']}", item.get("root_cause"))))
    if section == "assumption_conflicts":
        return " / ".join(filter(None, (item["pro_assumption"], item["con_assumption"],
                                        item.get("conflict_description"))))
    return item


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def diff(original: Moderator | dict[str, Any], new: Moderator | dict[str, Any],
         embeddings: checks.Embeddings | None = None) -> dict[str, Any]:
    """What changed from ``original`` to ``new``, per section: items ``added``, ``removed``, ``reworded``
    (paired one to one, most similar first, at cosine ``MATCH`` or lexically ``MATCH_LEXICAL``) and ``moved``
    (kept or reworded, at another place in the list: the hinges listed first are the decisive ones)."""
    before = original.dump() if isinstance(original, Moderator) else original
    after = new.dump() if isinstance(new, Moderator) else new
    texts = {s: ([_text(s, i) for i in before.get(s) or []], [_text(s, i) for i in after.get(s) or []])
             for s in SECTIONS}
    unique = list(dict.fromkeys(t for a, b in texts.values() for t in (*a, *b)))
    vectors = (embeddings or checks.Embeddings()).vectors(unique) if unique else None
    where = {t: i for i, t in enumerate(unique)}

    def sim(a: str, b: str) -> float:
        return float(vectors[where[a]] @ vectors[where[b]]) if vectors is not None else jaccard(a, b)

    threshold = MATCH if vectors is not None else MATCH_LEXICAL
    out: dict[str, Any] = {"semantic": vectors is not None, "sections": {}}
    for section, (a, b) in texts.items():
        pairs = sorted(((1.0 if _same(x, y) else sim(x, y), i, j) for i, x in enumerate(a) for j, y in enumerate(b)),
                       key=lambda p: (-p[0], p[1], p[2]))
        used_a: dict[int, int] = {}
        used_b: set[int] = set()
        reworded = []
        for score, i, j in pairs:
            if score < threshold or i in used_a or j in used_b:
                continue
            used_a[i] = j
            used_b.add(j)
            if not _same(a[i], b[j]):
                reworded.append({"before": a[i], "after": b[j], "similarity": round(score, 3)})
        kept = sorted(used_a)  # original ranks of the matched items, and their new ranks in the same order
        new_rank = {i: sorted(used_a.values()).index(used_a[i]) for i in kept}
        moved = [{"text": b[used_a[i]], "from": kept.index(i) + 1, "to": new_rank[i] + 1}
                 for i in kept if new_rank[i] != kept.index(i)]
        out["sections"][section] = {
            "added": [b[j] for j in range(len(b)) if j not in used_b],
            "removed": [a[i] for i in range(len(a)) if i not in used_a],
            "reworded": reworded, "moved": moved, "kept": len(used_a) - len(reworded)}
    out["changed"] = any(s["added"] or s["removed"] or s["reworded"] or s["moved"] for s in out["sections"].values())
    return out


# -- the view's order --------------------------------------------------------------------------------------------

def weighted_order(side: Side | dict[str, Any], weights: Weights | dict[str, int] | None) -> list[dict[str, Any]]:
    """One side's arguments in the order the user's weights give them: heavier categories first, the side's own
    order kept within a weight, weight 0 last and marked ``set_aside``. Each entry: ``index`` (into the side's
    arguments, unchanged), ``argument``, ``weight``, ``emphasis`` (set_aside, normal, raised, high)."""
    arguments = side.dump()["arguments"] if isinstance(side, Side) else side["arguments"]
    entries = [{"index": i, "argument": a, "weight": weight_of(weights, a["category"])}
               for i, a in enumerate(arguments)]
    for entry in entries:
        entry["emphasis"] = EMPHASIS[entry["weight"]]
    return sorted(entries, key=lambda e: (-e["weight"], e["index"]))


# -- versions ----------------------------------------------------------------------------------------------------

def describe(remapped: Document) -> str:
    """A re-map's conditions in a few words (the label of its version)."""
    record = remapped.remap
    weights = [f"{k} {v}" for k, v in (record.weights.dump() if record and record.weights else {}).items()]
    stances = [f"{s.stance} {_LABEL[s.side][0]}{s.index + 1}" for s in (record.stances if record else [])]
    return "; ".join(filter(None, (", ".join(weights), ", ".join(stances)))) or "no conditions"


def save_version(store: Any, debate_id: str, remapped: Document, provider: Provider | None = None, *,
                 name: str = "", model: str = "") -> int:
    """Save ``remapped`` as the next version of the saved debate ``debate_id`` (the debate is not changed);
    ``provider``: the one that re-mapped it (or its ``name`` and ``model``, as a runtime job recorded them)."""
    record = remapped.remap
    body = {"weights": record.weights.dump() if record and record.weights else {},
            "stances": [s.dump() for s in record.stances] if record else [], "document": remapped.dump()}
    return store.add_version(debate_id, "remap", body, label=describe(remapped),
                             provider=provider.name if provider else name, model=provider.model if provider else model)
