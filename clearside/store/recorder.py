"""Saving a static debate while the engine generates it: each section as it lands, then the document.

The CLI (``debate --save``) and the dashboard's worker both use this, so a debate
killed half-way leaves every finished section in the store, marked unfinished,
and ``Store.load_run`` gives the engine what it needs to complete it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .. import prompts
from ..engine import DebateRun
from ..providers import Provider, Usage
from ..schema import Document
from .store import Store

PROMPTS = ("orchestrator", "advocate", "moderator")


def usage_summary(usage: dict[str, Usage]) -> dict[str, dict[str, Any]]:
    """Tokens and seconds per agent, without the raw attempts."""
    return {agent: {k: v for k, v in asdict(u).items() if k != "attempts"} for agent, u in usage.items()}


class StaticRecorder:
    """Binds one run to one saved debate: a new one, or ``debate_id`` when resuming."""

    def __init__(self, store: Store, run: DebateRun, provider: Provider, *, debate_id: str | None = None,
                 parent_id: str | None = None, owner: str | None = None) -> None:
        """``owner``: the token of the browser that started it (see ui/owner.py), kept in ``data["owner"]``."""
        self.store = store
        stamp = {"owner": owner} if owner else {}
        if debate_id is None:
            debate_id = store.start_static(run, provider=provider.name, model=provider.model, parent_id=parent_id,
                                           prompt_versions=prompts.versions(*PROMPTS), data=stamp)
        else:
            store.update(debate_id, status="running", provider=provider.name, model=provider.model,
                         **({"data": stamp} if stamp else {}))
        self.id = debate_id

    def on_section(self, run: DebateRun, name: str) -> None:
        self.store.save_section(self.id, name, getattr(run, name).dump())
        if run.quality:  # the checks' record so far, so a resumed debate keeps what earlier agents caught
            self.store.save_section(self.id, "quality", {agent: q.dump() for agent, q in run.quality.items()})

    def finish(self, document: Document, run: DebateRun) -> None:
        self.store.finish_static(self.id, document.dump(), usage=usage_summary(run.usage),
                                 violations=len(run.violations))

    def fail(self, error: str) -> None:
        self.store.update(self.id, status="failed", data={"error": error})

    def pause(self, note: str) -> None:
        """Stopped by the user: unfinished, and resumable like a failure."""
        self.store.update(self.id, status="paused", data={"error": note})
