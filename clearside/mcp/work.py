"""What each MCP tool does, with the operations the command line and the dashboard use: a debate saved and run on
the durable runtime (:func:`clearside.static.job.new_job`) and followed from its progress rows
(:func:`clearside.runtime.progress.follow`), a challenge answered on the runtime
(:class:`clearside.static.job.ChallengeJob`), the store's documents rendered (:func:`clearside.render.render`), the
cruxes computed afresh (:mod:`clearside.cruxes`) and the store's list (:func:`clearside.runtime.status.listing`).

Everything here blocks (the store, the runtime, a model): the tools call it on a worker thread. Every refusal is a
:class:`clearside.errors.ClearSideError` with the command line's message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..agents import AGENT_ACTIVITIES
from ..errors import InputError, JobFailed
from ..inputs import shown
from ..providers import Provider
from ..render import render
from ..runtime import progress
from ..runtime.events import Event, agent_line
from ..runtime.status import listing as saved
from ..schema import Document
from ..static import workflow
from ..static.exchange import finished_document
from ..static.job import ChallengeJob, StaticJob, new_job
from ..static.run import DebateRun
from ..store import Store
from . import auth, summary
from .auth import Caller

MAX_LISTED = 100


@dataclass(frozen=True)
class Settings:
    """What the server's tools run with: its store, the provider ``--provider`` chose, the temperature."""

    store: Store
    provider: Provider
    temperature: float = 0.4


def start_map(settings: Settings, question: str, context: dict[str, str | None],
              who: Caller | None = None) -> StaticJob:
    """Save a new debate of ``question`` (its input rules applied first: nothing is saved for a refused one) and
    queue it on the runtime; this process's host runs it, or any other host if this one stops. ``who``: the token
    it is made with over HTTP (its owner; its start counted)."""
    run = DebateRun.from_input(question, **context)
    with auth.starts(who):
        return new_job(settings.store, run, settings.provider, temperature=settings.temperature,
                       owner=who.owner if who is not None else None).start()


def follow(job_id: str, store_url: str, on_line: Callable[[str], None], stop: threading.Event) -> Any:
    """Wait for a job to end, each agent's progress handed to ``on_line`` as ``debate`` prints it; its final state,
    or None once ``stop`` is set (the job goes on)."""

    def on_entry(entry: dict[str, Any]) -> None:
        if (line := agent_line(Event.of(entry), AGENT_ACTIVITIES)) is not None:
            on_line(line)

    return progress.follow({job_id: on_entry}, job_id, store_url, stop=stop)


def cancel_map(job: StaticJob) -> None:
    """Stop the debate as Ctrl+C stops ``debate``: what finished stays saved, to resume."""
    workflow.cancel_static(job.id, store=job.store)


def mapped(job: StaticJob, state: Any) -> Document:
    """The finished debate's document, or its job's failure raised with its own message, which says how to
    resume it (its finished sections are saved)."""
    if state.status != "done":
        failure = JobFailed.of(state)
        raise JobFailed(f"{failure} Debate {job.id} keeps its finished sections: `python -m clearside debate "
                        f"--resume {job.id}` completes it.", exit_code=failure.exit_code)
    return document_of(job.store, job.id)


def document_of(store: Store, debate_id: str, who: Caller | None = None) -> Document:
    """A saved debate's finished document (an unknown id or an unfinished debate: the command line's message; over
    HTTP, another token's debate is an unknown one)."""
    auth.visible(store, debate_id, who)
    return Document.model_validate(finished_document(store, debate_id))


def start_challenge(settings: Settings, debate_id: str, action: str, target: str,
                    who: Caller | None = None) -> ChallengeJob:
    """One challenge of a saved debate queued on the runtime, as the dashboard asks it (``target``: an element's id
    from the summary, whose text is what is challenged, or any text); saved with the debate once answered."""
    saved = auth.visible(settings.store, debate_id, who).document  # unfinished: ChallengeJob refuses it, in its words
    if saved is not None:
        target = element_text(Document.model_validate(saved), target)
    job = ChallengeJob(settings.store, debate_id, action, target, settings.provider, temperature=settings.temperature)
    with auth.challenges(who):
        return job.start()


def answered(job: ChallengeJob, state: Any) -> dict[str, Any]:
    """The challenge's answer as it was saved with the debate, or its job's failure with its own message."""
    if state.status != "done":
        raise JobFailed.of(state)
    response = document_of(job.store, job.debate_id).challenges.responses[-1]
    return summary.answer(job.debate_id, response)


def element_text(document: Document, target: str) -> str:
    """The text of the element whose ClearSide id is ``target``, or ``target`` itself (an element's own words, free
    text)."""
    from ..render.argmap import PROPOSITION, argument_map

    wanted = target.strip() if isinstance(target, str) else target
    for node in argument_map(document).nodes:
        if node.id == wanted and node.id != PROPOSITION:
            return node.text
    return target


def fetch(store: Store, debate_id: str, fmt: str, who: Caller | None = None) -> tuple[str, dict[str, Any]]:
    """A saved debate as its summary (``summary``) or rendered as ``render --format`` renders it; the document
    itself comes back as data with ``json``."""
    document = document_of(store, debate_id, who)
    if fmt == "summary":
        data = summary.summary(debate_id, document)
        return summary.summary_text(data), data
    text = render(document, fmt)
    return text, {"debate_id": debate_id, "format": fmt, **({"document": document.dump()} if fmt == "json" else {})}


def cruxes(store: Store, debate_id: str, who: Caller | None = None) -> tuple[str, dict[str, Any]]:
    """The decision hinges by load, as ``cruxes ID`` prints them (text) and ``cruxes ID --json`` (data)."""
    from .. import cruxes as found
    from ..checks import Embeddings

    embeddings = Embeddings()
    document = found.attach(document_of(store, debate_id, who), embeddings)
    semantic = embeddings.enabled
    return found.text(document, semantic=semantic), {"debate_id": debate_id,
                                                     **found.report(document, semantic=semantic)}


def listing(store: Store, search: str, limit: int, who: Caller | None = None) -> tuple[str, dict[str, Any]]:
    """Saved debates, newest first, as ``list --format json`` has them, and one line each (over HTTP, the token's
    own, or all with an admin token)."""
    if not 1 <= limit <= MAX_LISTED:
        raise InputError(f"limit is {shown(limit)}: give 1 to {MAX_LISTED}.")
    found = saved(store, search, limit=limit, owner=None if who is None or who.admin else who.owner)
    rows = found.rows()
    lines = [f"{row['id']}  {row['state']}{' (partial)' if row.get('missing') else ''}  {row['kind']}  "
             f"{row['created_at'][:16].replace('T', ' ')}  {row['title']}" for row in rows]
    if not rows:
        lines = ["No saved debates match."]
    elif found.total > len(rows):
        lines.append(f"({len(rows)} of {found.total}; raise limit or narrow the search)")
    return "\n".join(lines) + "\n", {"debates": rows, "total": found.total}
