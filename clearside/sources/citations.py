"""Citations from the user's own sources, in a debate (docs/design/requirements.md#us-010).

ClearSide runs offline and never invents a source: an advocate may cite only passages of the files the user
attached (:mod:`clearside.sources`), and every quote is checked against its passage.

- :class:`Library`: a debate's sources cut into passages and indexed once. The advocates are *offered* the
  passages most relevant to the proposition and each side (:meth:`Library.offer`: MiniLM cosine, after a
  cheap word-overlap pre-ranking when there are many), as many as the prompt's budget holds: both sides the same
  ones (:func:`offer`: each side's ranking taken in turns), so the passages sit in the prompt prefix the two
  advocates share (docs/design/agents.md#prompt-contracts; :func:`clearside.agents.topic`).
- The offered passages go into the advocates' prompt as quoted data (:func:`prompt_block`, before their role; how to
  cite them, :func:`cite_block`, after their task), and the wire gains
  ``citations`` per argument (:func:`side_wire`): ``{"passage": "S1.3", "quote": "..."}``, at most two. Where the
  provider constrains decoding, each citation is decoded as one of the offered passages with one of *that
  passage's own sentences* as its quote, so a constrained model quotes verbatim by construction.
- :func:`settle`, after the advocate's reply passed its checks: every quote is verified against its passage
  (whitespace and Unicode normalised, :func:`clearside.sources.verify`). An unverifiable one is asked for again
  once, alone; if the answer does not verify either, it is removed. Each argument is then marked ``cited`` (at
  least one verified quote) or ``unsupported``; an unsupported argument whose evidence type is ``fact`` is
  flagged "fact claimed, no source". All of it goes to the advocate's quality record.
- :func:`document_sources`: the document's ``sources``: each source with the passages the arguments cite, so
  every quote can be checked again from the document alone.
- A challenge may target a citation (:func:`challenged`, by its :func:`target` text ``[S1.3] "quote"`` or its
  passage id): the challenge agent is shown the passage (:func:`challenge_block`), quotes it under the same
  constrained decoding (:func:`challenge_wire`), and :func:`settle_answer` keeps only verified quotes, falling
  back to the challenged quote itself, so the answer always cites the passage it discusses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from .. import checks, prompts
from ..errors import ClearSideError, InputError
from ..schema import Citation, QualityItem, ResponseBody, Side
from ..wire import array, obj, one_of, string
from . import Index, Passage, Source, budget, problem, split

MAX_CITATIONS = 2  # per argument
BUDGET, SMALL_BUDGET = 5000, 1400  # characters of passages an advocate is shown (a small model's context is 4k)
PRE_RANK = 150  # with more passages than this, word overlap picks this many for MiniLM to rank
QUOTE_WORDS = (4, 60)  # a candidate quote: one sentence of a passage, in words
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")


@dataclass
class Library:
    """A debate's sources, their passages and the index over them."""

    sources: list[Source]
    passages: list[Passage]
    embeddings: checks.Embeddings
    by_id: dict[str, Passage] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {p.id: p for p in self.passages}
        self._words = Index(self.passages, checks.LEXICAL_ONLY)
        self._vectors: dict[str, Any] = {}  # passage id -> its MiniLM vector, computed once for both advocates
        self._offers: dict[tuple[str, int], list[Passage]] = {}  # an advocate's prompt, mend and check ask alike

    @classmethod
    def build(cls, sources: Sequence[Source], embeddings: checks.Embeddings | None = None) -> Library:
        passages = [p for source in sources for p in split(source)]
        return cls(list(sources), passages, embeddings or checks.Embeddings())

    def offer(self, query: str, max_chars: int) -> list[Passage]:
        """The passages most relevant to ``query`` that fit ``max_chars``, best first (ranked once per query)."""
        if (query, max_chars) not in self._offers:
            self._offers[query, max_chars] = self._ranked(query, max_chars)
        return list(self._offers[query, max_chars])

    def _ranked(self, query: str, max_chars: int) -> list[Passage]:
        pool = self.passages
        if len(pool) > PRE_RANK:
            pool = [p for p, _ in self._words.top(query, PRE_RANK)]
        index = Index(pool, self.embeddings, vectors=self._known(pool))
        if index.vectors is not None:
            self._vectors.update(zip((p.id for p in pool), index.vectors, strict=True))
        return budget([p for p, _ in index.top(query, len(pool))], max_chars)

    def _known(self, pool: Sequence[Passage]) -> Any:
        """The pool's vectors when every one was computed before (else None: the index computes them)."""
        if pool and all(p.id in self._vectors for p in pool):
            return np.stack([self._vectors[p.id] for p in pool])
        return None

    def source(self, passage: Passage) -> Source:
        return next(s for s in self.sources if s.id == passage.source)


def query(question: str, side: str) -> str:
    """What an advocate's passages are ranked against: the proposition and its direction."""
    return f"{question} Reasons {'for' if side == 'pro' else 'against'} it."


def offer(library: Library, question: str, max_chars: int) -> list[Passage]:
    """The passages offered to both advocates: each side's ranking (:func:`query`) taken in turns (pro's best, con's
    best, pro's second ...), each passage once, as many as fit ``max_chars``.

    One list for both sides, so it can sit in the prefix their prompts share (:func:`clearside.agents.topic`): a
    server caching evaluated prompts by prefix evaluates the passages once. Where both rankings keep the same
    passages (the usual case: the two queries differ by one word), each side is offered exactly the passages its
    own ranking keeps; where they differ, each side still gets its best ones, beside the other side's."""
    ranked = [library.offer(query(question, side), max_chars) for side in ("pro", "con")]
    turns = {p.id: p for pair in zip_longest(*ranked) for p in pair if p is not None}
    return budget(list(turns.values()), max_chars)


def sentences(passage: Passage) -> list[str]:
    """The passage's sentences that can stand as a quote (4 to 60 words), each exactly as the passage has it."""
    out = []
    for piece in _SENTENCE_END.split(passage.text):
        piece = piece.strip()
        if QUOTE_WORDS[0] <= len(piece.split()) <= QUOTE_WORDS[1] and piece not in out:
            out.append(piece)
    return out


def prompt_block(library: Library, offered: Sequence[Passage]) -> str:
    """The offered passages as the advocates read them: quoted data, with their ids (the end of the topic block
    both advocates share, :func:`clearside.agents.topic`)."""
    lines = []
    for passage in offered:
        source = library.source(passage)
        where = f"{source.name}, page {passage.page}" if passage.page else source.name
        lines.append(f"[{passage.id}] ({prompts.quote(where)}) {prompts.quote(passage.text)}")
    return prompts.render(prompts.load("advocate").tasks["sources"], passages="\n".join(lines))


def cite_block() -> str:
    """How an advocate cites the passages it was offered: the end of its user message, after its task."""
    return prompts.render(prompts.load("advocate").tasks["cite"], most=str(MAX_CITATIONS))


def citation_wire(offered: Sequence[Passage]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One citation's wire schema (a passage id, a bounded quote) and its decode schema (an offered passage with
    one of its own sentences). The wire is loose on purpose: a citation of a passage that was not offered, or a
    quote that is not in its passage, is :func:`settle`'s to ask for again alone, not a reason to send the
    whole reply back."""
    schema = obj(passage={"type": "string", "minLength": 1, "maxLength": 20}, quote=string(400, 12))
    branches = [obj(passage={"type": "string", "const": p.id}, quote=one_of(quotes))
                for p in offered if (quotes := sentences(p))]
    return schema, ({"anyOf": branches} if branches else schema)


def side_wire(base: dict[str, Any], offered: Sequence[Passage]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An advocate's wire and decode schemas with ``citations`` (0 to 2) on every argument."""
    item, decoded = citation_wire(offered)

    def with_citations(citation: dict[str, Any]) -> dict[str, Any]:
        wire = _copy(base)
        argument = wire["properties"]["arguments"]["items"]
        argument["properties"]["citations"] = array(citation, 0, MAX_CITATIONS)
        argument["required"].append("citations")
        return wire

    return with_citations(item), with_citations(decoded)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def prepare(data: Any) -> Any:
    """A reply's citations as the contract has them: each with its source (the passage id's prefix); an empty
    list left out (an argument without a citation has none)."""
    if not isinstance(data, dict):
        return data
    for argument in data.get("arguments") or []:
        if not isinstance(argument, dict) or "citations" not in argument:
            continue
        cited = [{"source": _source_ref(c.get("passage")), **c} for c in argument["citations"] or []
                 if isinstance(c, dict)]
        if cited:
            argument["citations"] = cited
        else:
            del argument["citations"]
    return data


def findings(side: Side, library: Library, offered: Sequence[Passage]) -> list[tuple[int, int, str]]:
    """(argument, citation, why) for every quote that is not in its passage (or cites a passage not offered)."""
    allowed = {p.id for p in offered}
    out = []
    for i, argument in enumerate(side.arguments):
        for j, citation in enumerate(argument.citations or []):
            passage = library.by_id.get(citation.passage)
            if passage is None or citation.passage not in allowed:
                out.append((i, j, f"cites {citation.passage}, which is not one of the passages you were given"))
            elif why := problem(citation.quote, passage.text):
                out.append((i, j, why))
    return out


def settle(engine, run, spec, side: Side, library: Library, offered: Sequence[Passage],
           base: list[dict[str, str]]) -> Side:
    """``side`` with every quote verified: one that fails is asked for again once (alone), then removed; each
    argument marked cited or unsupported; everything recorded in the agent's quality record."""
    record = run.quality.get(spec.name)
    items: list[QualityItem] = []
    data = side.dump()
    failing = findings(side, library, offered)
    wire, decode = citation_wire(offered)
    for i, j, why in failing:
        argument = data["arguments"][i]
        cited = argument["citations"][j]
        where = f"arguments/{i}/citations/{j}"
        items.append(QualityItem(check="unverified_quote", path=where, action="reasked", text=cited["quote"][:300],
                                 message=f"argument {i + 1}'s quote {why}"))
        instruction = prompts.render(prompts.load("advocate").tasks["cite_again"], claim=prompts.quote(
            argument["claim"]), passage=cited["passage"], problem=why)
        again = None
        try:
            call = engine.call_spec(spec, model=_Again, schema=obj(citations=array(wire, 0, 1)),
                                    decode=obj(citations=array(decode, 0, 1)), max_tokens=200, retries=0,
                                    prepare=_with_source)
            reply = engine.call(run, call, [*base, {"role": "user", "content": instruction}], fresh=False,
                                reask=True)
            again = reply.citations[0] if reply.citations else None
        except ClearSideError as exc:  # the call failed: the quote is removed, the debate goes on
            items.append(QualityItem(check="unverified_quote", path=where, action="dropped",
                                     message=f"asking again failed: {exc}"[:300]))
            again = None
        passage = library.by_id.get(again.passage) if again else None
        if again and passage is not None and again.passage in {p.id for p in offered} \
                and not problem(again.quote, passage.text):
            argument["citations"][j] = again.model_dump(mode="json")
        else:
            argument["citations"][j] = None
            items.append(QualityItem(check="unverified_quote", path=where, action="dropped",
                                     message=f"argument {i + 1}'s quote was removed: it is not in its passage"))
    for i, argument in enumerate(data["arguments"]):
        kept = [c for c in argument.get("citations") or [] if c]
        if kept:
            argument["citations"], argument["support"] = kept, "cited"
        else:
            argument.pop("citations", None)
            argument["support"] = "unsupported"
            if argument["evidence_type"] == "fact":
                items.append(QualityItem(check="fact_without_source", path=f"arguments/{i}", action="flagged",
                                         message=f"argument {i + 1} claims a fact and cites no passage of the "
                                                 "sources: shown as 'fact claimed, no source'",
                                         text=argument["claim"][:300]))
    if record is not None:
        record.items += items
    return Side.model_validate(data)


class _Again(BaseModel):
    """The reply to asking for one citation again: that citation, or none."""

    model_config = ConfigDict(extra="forbid")
    citations: list[Citation]


def _with_source(data: Any) -> Any:
    if isinstance(data, dict):
        data["citations"] = [{"source": _source_ref(c.get("passage")), **c}
                             for c in data.get("citations") or [] if isinstance(c, dict)]
    return data


def _source_ref(passage: Any) -> str:
    """S1 from S1.3."""
    return str(passage or "").split(".")[0]


def document_sources(library: Library, sides: Sequence[Side]) -> list[dict[str, Any]]:
    """The document's ``sources``: every source, with the passages the arguments cite (in the sources' order)."""
    cited = {c.passage for side in sides for a in side.arguments for c in a.citations or []}
    out = []
    for source in library.sources:
        passages = [{"id": p.id, "text": p.text, **({"page": p.page} if p.page else {})}
                    for p in library.passages if p.source == source.id and p.id in cited]
        out.append({"ref": source.ref, "sha256": source.id, "name": source.name, "kind": source.kind,
                    **({"pages": source.pages} if source.pages else {}), "passages": passages})
    return out


# -- a challenge of a citation ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cited:
    """A citation a challenge targets, found in the document: the claim it supports, its passage and source."""

    side: str  # "pro" or "con"
    claim: str
    citation: dict[str, Any]  # {"source", "passage", "quote"}
    passage: dict[str, Any]  # the document's cited passage: {"id", "text", "page"?}
    source: dict[str, Any]  # the document's source: {"ref", "name", "kind", ...}


def target(citation: Citation | dict[str, Any]) -> str:
    """A citation as a challenge target: ``[S1.3] "the quote"``."""
    data = citation.model_dump(mode="json") if isinstance(citation, Citation) else citation
    return f'[{data["passage"]}] "{data["quote"]}"'


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def challenged(document: dict[str, Any], wanted: str) -> Cited | None:
    """The citation ``wanted`` names (its :func:`target` text, or its passage id when one citation quotes that
    passage), or None when ``wanted`` is not a citation. A passage id several citations quote is refused, naming
    each one's target."""
    passages = {p["id"]: (s, p) for s in document.get("sources") or [] for p in s.get("passages", [])}
    found: list[Cited] = []
    for side in ("pro", "con"):
        for argument in (document.get(side) or {}).get("arguments", []):
            for citation in argument.get("citations") or []:
                if citation["passage"] in passages:
                    source, passage = passages[citation["passage"]]
                    found.append(Cited(side, argument["claim"], citation, passage, source))
    flat = _flat(wanted)
    exact = [c for c in found if _flat(target(c.citation)) == flat]
    if exact:
        return exact[0]
    by_passage = [c for c in found if c.citation["passage"].casefold() == flat]
    quotes = {target(c.citation) for c in by_passage}
    if len(quotes) > 1:
        raise InputError(f"Passage {by_passage[0].citation['passage']} is quoted by {len(quotes)} citations: name "
                         "one as the target, " + " or ".join(sorted(quotes)) + ".")
    return by_passage[0] if by_passage else None


def _where(cited: Cited) -> str:
    page = f", page {cited.passage['page']}" if cited.passage.get("page") else ""
    return f"{cited.source['name']}{page}"


def challenge_origin(cited: Cited) -> str:
    """Where the challenged citation comes from, in words (the challenge prompt's WHERE IT COMES FROM)."""
    side = "the case FOR" if cited.side == "pro" else "the case AGAINST"
    return (f"a citation in {side}: the claim {prompts.quote(cited.claim)} quotes passage {cited.passage['id']} "
            f"of the user's source {prompts.quote(_where(cited))}")


def challenge_block(cited: Cited) -> str:
    """The cited passage as the challenge agent reads it: quoted data, and how to cite it."""
    return prompts.render(prompts.load("challenge").tasks["source"], id=cited.passage["id"],
                          where=prompts.quote(_where(cited)), passage=prompts.quote(cited.passage["text"]),
                          most=str(MAX_CITATIONS))


def _passage(cited: Cited) -> Passage:
    text = cited.passage["text"]
    return Passage(cited.passage["id"], cited.source["sha256"], 0, len(text), text, cited.passage.get("page"))


def challenge_wire(base: dict[str, Any], cited: Cited) -> tuple[dict[str, Any], dict[str, Any]]:
    """The challenge agent's wire and decode schemas with ``citations``: 1 or 2 quotes of the cited passage
    (decoded as that passage's own sentences where the provider constrains decoding)."""
    item, decoded = citation_wire([_passage(cited)])
    wire, decode = _copy(base), _copy(base)
    for schema, citation in ((wire, item), (decode, decoded)):
        schema["properties"]["citations"] = array(citation, 1, MAX_CITATIONS)
        schema["required"].append("citations")
    return wire, decode


def prepare_answer(data: Any) -> Any:
    """A challenge reply's citations with their source; none at all left out (:func:`settle_answer` adds one)."""
    data = _with_source(data)
    if isinstance(data, dict) and not data.get("citations"):
        data.pop("citations", None)
    return data


def settle_answer(body: ResponseBody, cited: Cited) -> tuple[ResponseBody, list[QualityItem]]:
    """``body`` citing only verified quotes of the challenged passage; when none verifies, the challenged quote
    itself (verified again here), so the answer always cites the passage it discusses."""
    items: list[QualityItem] = []
    kept: list[dict[str, Any]] = []
    for j, citation in enumerate(body.citations or []):
        why = (f"cites {citation.passage}, not the challenged passage {cited.passage['id']}"
               if citation.passage != cited.passage["id"] else problem(citation.quote, cited.passage["text"]))
        if why:
            items.append(QualityItem(check="unverified_quote", path=f"citations/{j}", action="dropped",
                                     text=citation.quote[:300], message=f"the answer's quote {why}"[:300]))
        elif (data := citation.model_dump(mode="json")) not in kept:
            kept.append(data)
    if not kept and not problem(cited.citation["quote"], cited.passage["text"]):
        kept.append({k: cited.citation[k] for k in ("source", "passage", "quote")})
    data = body.model_dump(mode="json", exclude_none=True)
    data.pop("citations", None)
    return ResponseBody.model_validate({**data, **({"citations": kept} if kept else {})}), items
