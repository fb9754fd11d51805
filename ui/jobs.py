"""The process-wide job registry and the store, shared by every page (a job's id is its saved debate's id)."""

from __future__ import annotations

import streamlit as st

from clearside.engine import DebateRun
from clearside.jobs import DebateJob, JobRegistry, debate_job
from clearside.live.exchange import adopt_live_files as adopt
from clearside.providers import Provider
from clearside.store import Store, open_store


@st.cache_resource
def registry() -> JobRegistry:
    return JobRegistry()


def store() -> Store:
    """The store ``DATABASE_URL`` (or the SQLite file) names; ``open_store`` keeps one per URL."""
    return open_store()


@st.cache_resource
def _adopted(url: str) -> list[str]:
    return adopt(open_store(url))


def adopt_live_files() -> list[str]:
    """Once per database and server: adopt the live transcripts an earlier ClearSide kept as JSON files
    (``clearside.live.exchange.adopt_live_files``). ``app.py`` calls this before any page draws."""
    return _adopted(store().url)


def start_static(run: DebateRun, provider: Provider, *, temperature: float, strategy: str | None = None,
                 debate_id: str | None = None, parent_id: str | None = None, owner: str | None = None) -> DebateJob:
    """Generate (or, with ``debate_id``, complete) a static debate on a worker, saving it as it goes;
    ``strategy``: the sidebar's generation strategy (``None``: automatic); ``owner``: the starting browser's
    token (ui/owner.py)."""
    job = debate_job(store(), run, provider, temperature=temperature, strategy=strategy, debate_id=debate_id,
                     parent_id=parent_id, owner=owner)
    return registry().add(job.start())


def running(debate_id: str | None) -> bool:
    """Whether this server is generating that debate right now."""
    job = registry().get(debate_id)
    if job is None:
        return False
    snapshot = job.snapshot()
    return getattr(snapshot, "status", getattr(snapshot, "state", "")) in ("running", "pausing", "waiting")
