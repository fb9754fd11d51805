"""A source file injected as evidence in a live debate (docs/design/live-protocol.md#interventions): read, labelled,
quoted, verified.

The user may inject a file (the Debate page's types and limits: :func:`clearside.sources.read_source`, whose
refusals name the file and the reason) instead of, or beside, typed evidence. The intervention carries the file
(:class:`~clearside.live.transcript.EvidenceSource`: name, kind, SHA-256, the text read), so it is saved with the
transcript, survives a restart of the runtime and travels in its exports; :func:`sync_store` also links the
debate's injected files through the store's sources tables, as a static debate's are.

A turn that acknowledges such evidence is offered the passages of the file most relevant to the turn
(:class:`Quoting`: :meth:`clearside.citations.Library.offer` within a small budget), and its wire gains
``evidence_quote``: ``{"passage": "S1.3", "quote": "..."}``, decoded, where the provider constrains decoding, as
one offered passage and one of *that passage's own sentences* (:func:`clearside.citations.citation_wire`). The
quote is then verified against its passage (:func:`clearside.sources.problem`); one that fails is asked for again
once, alone (:func:`settle`), and removed if the answer fails too. The turn keeps only a verified quote, with its
source's label; a re-ask is a note of the turn, a removal a flag (rule ``unverified_quote``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import delete

from .. import prompts
from ..enforce import CallSpec, run_structured
from ..errors import ClearSideError
from ..sources import Passage, Source, problem, read_source
from ..sources.citations import BUDGET, SMALL_BUDGET, Library, citation_wire, query, sentences
from ..store import Store
from ..store.sources import drop_unheld_texts, held_texts, link_sources
from ..store.tables import DebateSource
from ..wire import obj
from .transcript import EvidenceSource, Intervention, Transcript

LIVE_BUDGET = BUDGET // 2  # characters of passages a turn is shown: a live conversation keeps every prompt
QUOTE_TOKENS = 120  # a passage id and a sentence of at most 60 words
RULE = "unverified_quote"


def injected(transcript: Transcript) -> list[EvidenceSource]:
    """The files injected as evidence, each once (by file hash), in the order they were first injected."""
    seen: dict[str, EvidenceSource] = {}
    for item in transcript.interventions:
        if item.source is not None and item.source.sha256 not in seen:
            seen[item.source.sha256] = item.source
    return list(seen.values())


def labelled(source: Source, transcript: Transcript) -> EvidenceSource:
    """``source`` as the intervention carries it, labelled among the debate's injected files: the label it already
    has when the same file was injected before, else the next one (S1, S2, ...)."""
    files = injected(transcript)
    ref = next((s.ref for s in files if s.sha256 == source.id), None)
    if ref is None:
        taken = {s.ref for s in files}
        ref = next(f"S{n}" for n in range(len(files) + 1, len(files) + len(taken) + 2) if f"S{n}" not in taken)
    return EvidenceSource(ref=ref, name=source.name, sha256=source.id, kind=source.kind, pages=source.pages,
                          size=source.size, text=source.text)


def read_file(name: str, data: bytes, transcript: Transcript) -> EvidenceSource:
    """An attached file read within the sources' limits and labelled for ``transcript``; an InputError naming the
    file and the reason (empty, unreadable, encrypted, too big, unsupported type) when it cannot be used."""
    return labelled(read_source(name, data), transcript)


def note_for(source: EvidenceSource) -> str:
    """The intervention's text when the user attached a file without typing anything."""
    return f"The attached file {source.name}"


def _source(entry: EvidenceSource) -> Source:
    return Source(id=entry.sha256, name=entry.name, kind=entry.kind, text=entry.text, pages=entry.pages,
                  size=entry.size, ref=entry.ref)


def store_entries(transcript: Transcript) -> list[dict[str, Any]]:
    """The injected files as the store's sources functions take them."""
    return [{"ref": s.ref, "name": s.name, "sha256": s.sha256, "kind": s.kind, "pages": s.pages, "size": s.size,
             "text": s.text} for s in injected(transcript)]


def sync_store(store: Store, transcript: Transcript) -> int:
    """Link the debate's injected files to its saved row through the store's sources tables (each text stored
    once), so the saved debate lists them as a static debate lists its attached files; nothing is written when the
    store already holds exactly these. Returns how many files the debate has."""
    entries = store_entries(transcript)
    have = [(s["ref"], s["sha256"]) for s in store.sources(transcript.id, texts=False)]
    if have == [(e["ref"], e["sha256"]) for e in entries]:
        return len(entries)
    with store.write() as session:  # all or nothing: the old links replaced by the whole list, in order
        row = store.debate_row(session, transcript.id, lock=True)
        before = held_texts(session, row.id)
        session.execute(delete(DebateSource).where(DebateSource.debate_id == row.id))
        link_sources(session, row.id, entries, key="injected evidence")
        drop_unheld_texts(session, before)
    return len(entries)


class _Again(BaseModel):
    model_config = ConfigDict(extra="forbid")
    evidence_quote: dict[str, Any]


@dataclass
class Quoting:
    """What one turn may quote: the files among its evidence, the passages it is offered, the quote's schemas."""

    library: Library
    offered: list[Passage]
    wire: dict[str, Any]
    decode: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @classmethod
    def prepare(cls, items: Sequence[Intervention], proposition: str, speaker: str, *, small: bool,
                embeddings: Any = None) -> Quoting | None:
        """The quoting for a turn delivering ``items``; None when none of them carries a file, or when no passage
        offered holds a sentence that can stand as a quote (4 to 60 words)."""
        files: dict[str, EvidenceSource] = {}
        for item in items:
            if item.source is not None:
                files.setdefault(item.source.sha256, item.source)
        if not files:
            return None
        library = Library.build([_source(s) for s in files.values()], embeddings)
        notes = " ".join(i.text for i in items if i.source is not None)
        side = query(proposition, speaker) if speaker in ("pro", "con") else proposition
        offered = [p for p in library.offer(f"{notes} {side}".strip(), SMALL_BUDGET if small else LIVE_BUDGET)
                   if sentences(p)]
        if not offered:
            return None
        wire, decode = citation_wire(offered)
        return cls(library, offered, wire, decode)

    def block(self) -> str:
        """The offered passages as the agent reads them: quoted data, with their ids."""
        lines = []
        for passage in self.offered:
            source = self.library.source(passage)
            where = f"{source.name}, page {passage.page}" if passage.page else source.name
            lines.append(f"[{passage.id}] ({prompts.quote(where)}) {prompts.quote(passage.text)}")
        return prompts.render(prompts.load("live").tasks["evidence_source"], passages="\n".join(lines))

    def problem(self, quote: Any) -> str | None:
        """Why ``quote`` (the reply's ``evidence_quote``) is not a verbatim quote of an offered passage, or None."""
        if not isinstance(quote, dict) or not isinstance(quote.get("quote"), str):
            return "is missing"
        passage = next((p for p in self.offered if p.id == quote.get("passage")), None)
        if passage is None:
            return f"cites {str(quote.get('passage'))[:20]!r}, which is not one of the passages you were given"
        return problem(quote["quote"], passage.text)

    def kept(self, quote: dict[str, Any]) -> dict[str, Any]:
        """A verified quote as the turn keeps it: its source's label and name, the passage, the quote."""
        passage = self.library.by_id[quote["passage"]]
        source = self.library.source(passage)
        return {"source": source.ref, "name": source.name, "passage": passage.id, "quote": quote["quote"],
                **({"page": passage.page} if passage.page else {})}


def settle(provider, speaker: str, quoting: Quoting, quote: Any, conversation: list[dict[str, str]], raw: str, *,
           temperature: float, violations: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, list[dict], list[str]]:
    """The turn's quote verified: ``(kept quote or None, flags, notes)``. A quote that fails is asked for again
    once, alone (the agent sees its reply and why the quote failed); if the new one fails too, or the call fails,
    the quote is removed and the turn flagged."""
    why = quoting.problem(quote)
    if why is None:
        return quoting.kept(quote), [], []
    shown = str(quote.get("quote", "")) if isinstance(quote, dict) else ""
    notes = [f"The quote of the user's source was not accepted ({why}): asked for it again once."]
    again, failure = None, ""
    instruction = prompts.render(prompts.load("live").tasks["quote_again"], problem=why)
    messages = [*conversation, {"role": "assistant", "content": raw}, {"role": "user", "content": instruction}]
    try:
        reply = run_structured(provider, CallSpec(speaker, _Again, obj(evidence_quote=quoting.wire),
                                                  decode=obj(evidence_quote=quoting.decode),
                                                  max_tokens=QUOTE_TOKENS + 40, retries=0, temperature=temperature),
                               messages, violations=violations)
        again = reply.evidence_quote
    except ClearSideError as exc:
        failure = f"asking again failed ({exc})"[:300]
    second = quoting.problem(again) if again is not None else None
    if again is not None and second is None:
        notes.append("The quote asked for again is in its passage word for word: kept.")
        return quoting.kept(again), [], notes
    reason = failure or f"asked again: {second}"
    flag = {"rule": RULE, "detail": f"The quote of the user's source was removed ({why}; {reason}).",
            "text": shown[:300]}
    return None, [flag], notes
