"""Saving a static debate while the engine generates it: each section as it lands, then the document.

The CLI (``debate --save``) and the dashboard's worker both use this, so a debate
killed half-way leaves every finished section in the store, marked unfinished,
and :func:`load_run` gives the engine what it needs to complete it. The store
itself only sees plain dicts: this module turns a :class:`DebateRun` into them and back.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .. import prompts
from ..errors import InputError
from ..providers import Provider, Usage
from ..schema import AgentQuality, Context, Document, Moderator, Proposition, Side
from ..sources import Source
from ..store import NewDebate, Store
from ..store.records import missing_parts
from .personas import Panel, spec
from .run import DebateRun

PROMPTS = ("orchestrator", "advocate", "moderator")


def summed_usage(saved: dict[str, dict[str, Any]], more: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Two usage summaries added up, agent by agent and figure by figure."""
    total = {agent: dict(figures) for agent, figures in saved.items()}
    for agent, figures in more.items():
        mine = total.setdefault(agent, {})
        for name, value in figures.items():
            mine[name] = round(mine.get(name, 0) + value, 3) if isinstance(value, float) else mine.get(name, 0) + value
    return total


def usage_summary(usage: dict[str, Usage]) -> dict[str, dict[str, Any]]:
    """Tokens and seconds per agent, without the raw attempts."""
    return {agent: {k: v for k, v in asdict(u).items() if k != "attempts"} for agent, u in usage.items()}


def start_static(store: Store, run: DebateRun, *, provider: str, model: str, parent_id: str | None = None,
                 prompt_versions: dict[str, str] | None = None, data: dict[str, Any] | None = None,
                 debate_id: str | None = None) -> str:
    """Save a static debate before its agents run, with any sections ``run`` already has (``data``: more
    keys for its data, e.g. its owner token; ``debate_id``: the id to save it under, else a new one); returns
    its id."""
    sections = run.sections()
    files = [{"ref": s.ref, "name": s.name, "sha256": s.id, "kind": s.kind, "text": s.text, "pages": s.pages,
              "size": s.size} for s in run.sources or []]
    if files:  # with the sources, whether the advocates quote them (a resume on any host does the same)
        data = {**(data or {}), "citations": run.citations}
    debate = NewDebate("static", run.raw_input, provider=provider, model=model, prompt_versions=prompt_versions,
                       data=data, parent_id=parent_id, debate_id=debate_id)
    return store.start_static(debate, context=run.context.dump() if run.context else {}, sections=sections,
                              sources=files or None)


def load_run(store: Store, debate_id: str) -> DebateRun:
    """The unfinished (or finished) static debate as a run the engine can complete."""
    record = store.get(debate_id)
    if record.kind != "static":
        raise InputError(f"Debate {debate_id} is a {record.kind} debate; resume it on its own page or command.")
    context = (record.data or {}).get("context") or None
    run = DebateRun(raw_input=record.question, context=Context(**context) if context else None)
    models = {"proposition": Proposition, "pro": Side, "con": Side, "moderator": Moderator}
    sections = store.sections(debate_id)
    for name, body in sections.items():
        if name in models:
            setattr(run, name, models[name].model_validate(body))
    if "personas" in sections:  # a persona debate: its personas and the cases that landed
        run.personas = Panel.load(sections["personas"])
    files = store.sources(debate_id)
    if files:  # the user's sources, exactly as read when the debate started
        run.sources = [Source(id=f["sha256"], name=f["name"], kind=f["kind"], text=f["text"], pages=f["pages"],
                              size=f["size"], ref=f["ref"]) for f in files]
        run.citations = bool((record.data or {}).get("citations", True))
    # the quality record of the agents that finished (an agent that did not finish runs again, afresh)
    finished = {"orchestrator" if name == "proposition" else name for name in models if name in sections}
    finished |= set(run.personas.finished_agents() if run.personas else ())
    finished |= {spec(i).name for i in (run.personas.dropped if run.personas else ())}  # their drop notes
    run.quality = {agent: AgentQuality.model_validate(body)
                   for agent, body in sections.get("quality", {}).items() if agent in finished}
    run.violations = list((record.data or {}).get("violations") or [])  # the outputs rejected so far
    return run


class StaticRecorder:
    """Binds one run to one saved debate: a new one, or ``debate_id`` when resuming."""

    def __init__(self, store: Store, run: DebateRun, provider: Provider, *, debate_id: str | None = None,
                 parent_id: str | None = None, owner: str | None = None) -> None:
        """``owner``: the token of the browser that started it (clearside_ui/owner.py), kept in ``data["owner"]``."""
        self.store = store
        stamp = {"owner": owner} if owner else {}
        if debate_id is None:
            debate_id = start_static(store, run, provider=provider.name, model=provider.model, parent_id=parent_id,
                                     prompt_versions=prompts.versions(*PROMPTS), data=stamp)
        else:
            store.update(debate_id, status="running", provider=provider.name, model=provider.model,
                         **({"data": stamp} if stamp else {}))
        self.id = debate_id

    def on_section(self, run: DebateRun, name: str) -> None:
        self.store.save_section(self.id, name, getattr(run, name).dump())
        if run.quality:  # the checks' record so far, so a resumed debate keeps what earlier agents caught
            self.store.save_section(self.id, "quality", {agent: q.dump() for agent, q in run.quality.items()})

    def add_stage(self, run: DebateRun) -> None:
        """Keep what one stage's agents used and the outputs the checks rejected: a runtime step runs one stage on a
        run of its own (loaded by :func:`load_run`, the violations so far included), so the step adds its usage to
        the saved sum and saves the violations with its own, and the finishing step, which generates nothing,
        keeps both."""
        changes: dict[str, Any] = {}
        if run.usage:
            saved = (self.store.get(self.id).data or {}).get("usage") or {}
            changes["usage"] = summed_usage(saved, usage_summary(run.usage))
        if run.violations:
            changes["violations"] = run.violations
        if changes:
            self.store.update(self.id, data=changes)

    def finish(self, document: Document, run: DebateRun) -> None:
        self.store.finish_static(self.id, document.dump(), usage=usage_summary(run.usage),
                                 violations=len(run.violations))
        self.store.update(self.id, data={"missing": missing_parts(document.dump())})  # a persona dropped: partial

    def fail(self, error: str) -> None:
        stopped(self.store, self.id, "failed", error)

    def pause(self, note: str) -> None:
        """Stopped by the user: unfinished, and resumable like a failure."""
        stopped(self.store, self.id, "paused", note)


def stopped(store: Store, debate_id: str, status: str, error: str) -> None:
    """A saved debate that stopped (``failed`` or ``paused``) with ``error`` saying why, and ``data["missing"]``
    what it lacks (:func:`~clearside.store.records.missing_parts`) once it holds a proposition: the lists label it
    partial. Nothing held: nothing to show, only the failure."""
    sections = store.sections(debate_id)
    gone = missing_parts(sections) if sections.get("proposition") else []
    store.update(debate_id, status=status, data={"error": error, "missing": gone})
