"""A study saved and its documents made: each (question, arm) document of the ``debate`` and ``single`` arms is a
static debate generated ONCE on the durable runtime (queued as the Debate page's are, on whichever host takes it)
and shared by every participant of the arm, so a participant never waits on a model and any number of them load only
the store. The ``sources`` arm shows the creator's files, kept with the study. The debates are the creator's (their
browser's token), so they are in the creator's Library too.
"""

from __future__ import annotations

import secrets
from typing import Any

from ...providers.base import Provider
from ...runtime.status import debate_statuses
from ...static.job import new_job
from ...static.run import DebateRun
from ...static.workflow import continue_static, enqueue_static
from ...store import Store, new_id
from ...store.studies import StudyRow
from .spec import Plan

STRATEGIES = {"debate": None, "single": "single"}  # the arms a model writes, and the strategy each is written with
AGAIN = ("failed", "cancelled", "interrupted")


def entries(sources: list[Any]) -> list[dict[str, Any]]:
    """Read sources as the store keeps them (its source entries: store/sources.py)."""
    return [{"ref": s.ref, "name": s.name, "sha256": s.id, "kind": s.kind, "pages": s.pages, "size": s.size,
             "text": s.text} for s in sources]


def create(store: Store, plan: Plan, *, owner: str | None, provider: str = "") -> StudyRow:
    """Save a checked study (its documents not yet made: :func:`queue`); ``owner``: the creating browser's token,
    None for the command line."""
    items = [{"question": number, "arm": arm,
              "sources": entries(plan.sources.get(number, [])) if arm == "sources" else None}
             for number in range(1, len(plan.questions) + 1) for arm in plan.arms]
    spec = {"questions": plan.questions, "arms": plan.arms, "provider": provider}
    return store.add_study(new_id(), plan.title, spec, items, owner=owner, join_key=secrets.token_hex(16))


def queue(store: Store, study_id: str, provider: Provider, *, temperature: float = 0.4, lend: bool = True,
          here: bool = False) -> list[str]:
    """Start the documents not started yet (``here``: run them in this process, a command's in-process host);
    a document that failed or was cancelled is continued. Returns the ids of the jobs started."""
    study = store.study(study_id)
    started = []
    for item in store.study_items(study_id):
        if item.arm not in STRATEGIES:
            continue
        options = {"temperature": temperature, "strategy": STRATEGIES[item.arm]}
        if item.debate_id is None:
            run = DebateRun.from_input(study.spec["questions"][item.question - 1])
            debate_id = new_job(store, run, provider, owner=study.owner, **options).id
            store.set_study_item_debate(study_id, item.question, item.arm, debate_id)
            started.append(enqueue_static(debate_id, provider, lend=lend, store=store, here=here, **options))
        elif status_of(store, item.debate_id) in AGAIN:
            started.append(continue_static(item.debate_id, provider, store=store, here=here, **options))
    return started


def status_of(store: Store, debate_id: str) -> str:
    record = store.get(debate_id)
    return debate_statuses(store, [record])[record.id]


def status(store: Store, study_id: str) -> dict[str, Any]:
    """Each item's state (``ready``: its document is made, or its files kept) and whether every one is ready."""
    study = store.study(study_id)
    rows = []
    for item in store.study_items(study_id):
        row = {"question": item.question, "arm": item.arm, "debate_id": item.debate_id}
        if item.arm == "sources":
            row |= {"status": "ready", "ready": True, "files": len(item.sources or [])}
        elif item.debate_id is None:
            row |= {"status": "not started", "ready": False}
        else:
            shown = status_of(store, item.debate_id)
            row |= {"status": "ready" if shown == "done" else shown, "ready": shown == "done"}
        rows.append(row)
    return {"study_id": study.id, "title": study.title, "questions": study.spec["questions"],
            "arms": study.spec["arms"], "items": rows, "ready": all(r["ready"] for r in rows),
            "participants": len(store.participants(study_id))}
