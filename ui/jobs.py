"""The process-wide job registry and the store, shared by every page (a job's id is its saved debate's id)."""

from __future__ import annotations

import streamlit as st

from clearside import runtime, workflows
from clearside.engine import DebateRun
from clearside.errors import ClearSideError
from clearside.jobs import AgentProgress, DebateJob, JobRegistry, Snapshot, debate_job
from clearside.live.exchange import adopt_live_files as adopt
from clearside.progress import Follower
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


def queued_job(data: dict | None) -> str | None:
    """The runtime job of a saved debate (``debate --enqueue``, a worker, another replica) while it is queued or
    running; None for a debate the runtime never ran or that has finished."""
    job_id = (data or {}).get("job")
    if not job_id:
        return None
    try:
        return job_id if runtime.state(job_id).status in ("queued", "running") else None
    except ClearSideError:
        return None  # the runtime's database is unreachable: the page shows the saved debate as it is


def followed(job_id: str) -> tuple[runtime.JobState, Snapshot]:
    """A job another process runs, as this page sees it: its state and the agents' progress from its rows
    (one Follower per browser session and job, so each redraw reads only the new rows)."""
    followers = st.session_state.setdefault("followers", {})
    follower = followers.setdefault(job_id, Follower(job_id))
    agents = follower.update()
    state = runtime.state(job_id)
    return state, Snapshot(id=job_id, state="running" if not state.finished else state.status,
                           agents={name: agents.get(name, AgentProgress()) for name in AGENT_ORDER},
                           document=None, error=state.error, exit_code=0)


AGENT_ORDER = ("orchestrator", "pro", "con", "moderator")


def cancel_followed(debate_id: str) -> None:
    """Cancel a debate's runtime job, wherever it runs: its step stops at the next token, finished sections stay."""
    workflows.cancel_static(debate_id, store=store())
