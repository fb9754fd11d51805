"""The process-wide job registry and the store, shared by every page (a job's id is its saved debate's id)."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime import Runtime, RuntimeState

from clearside import modes, runtime
from clearside.agents import AGENT_ORDER
from clearside.errors import ClearSideError
from clearside.live.exchange import adopt_live_files as adopt
from clearside.providers import Provider
from clearside.runtime.events import AgentProgress
from clearside.runtime.jobs import JobRegistry
from clearside.runtime.progress import Follower
from clearside.static import workflow as workflows
from clearside.static.job import Snapshot, StaticJob, new_job
from clearside.static.run import DebateRun
from clearside.store import Store, open_store
from clearside_ui.state import App


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


def host() -> runtime.Host:
    """This dashboard process as a host of the durable runtime: it runs queued debates (its own and any other
    replica's or ``--enqueue``'s) and, started after a crash, finishes the work a stopped host left. Raises a
    ClearSideError naming the fix when the runtime's database cannot be reached."""
    hosted = modes.host(store().url, role="dashboard")
    if served_by_streamlit():
        runtime.exit_with_main_thread()  # stopped (SIGTERM, Ctrl+C), it exits at once: the next host takes over
        runtime.exit_after_stop(stopping)  # and if the web server's shutdown hangs, a few seconds later
    return hosted


def stopping() -> bool:
    """Whether the Streamlit server this process runs has begun to stop (SIGTERM, Ctrl+C)."""
    return Runtime.instance().state in (RuntimeState.STOPPING, RuntimeState.STOPPED)


def served_by_streamlit() -> bool:
    """True in the process ``streamlit run`` serves the dashboard from (``python -m streamlit``, the ``streamlit``
    command), False where another program runs the pages (AppTest under pytest keeps its own exit status)."""
    return Runtime.exists() and type(Runtime.instance()) is Runtime  # AppTest puts a stand-in there


def hosting() -> str:
    """Start hosting at the top of every run (``app.py``): "" or why this dashboard cannot run debates."""
    try:
        host()
    except ClearSideError as exc:
        return exc.for_dashboard()
    return ""


def start_static(run: DebateRun, provider: Provider, *, temperature: float, strategy: str | None = None,
                 parent_id: str | None = None, owner: str | None = None) -> StaticJob:
    """Save a new static debate and queue it on the durable runtime (this process hosts it; a crash leaves it
    queued for the next host); ``strategy``: the sidebar's generation strategy (``None``: automatic);
    ``owner``: the starting browser's token (clearside_ui/owner.py)."""
    host()
    job = new_job(store(), run, provider, temperature=temperature, strategy=strategy, parent_id=parent_id,
                  owner=owner)
    return registry().add(job.start())


def start_job(job):
    """Start (or resume) a job of any kind on the runtime, which this process hosts, and keep it by its id."""
    host()
    return registry().add(job.start())


def running(debate_id: str | None) -> bool:
    """Whether that debate is being generated now: by this server, or on the runtime by any host."""
    job = registry().get(debate_id, ("static", "live", "perspectives"))
    if job is not None:
        return job.snapshot().status in (*runtime.UNDER_WAY, "pausing", "waiting")
    if not debate_id:
        return False
    try:
        data = store().get(debate_id).data
    except ClearSideError:
        return False
    return queued_job(data) is not None


def queued_job(data: dict | None) -> str | None:
    """The runtime job of a saved debate (``debate --enqueue``, a worker, another replica) while it is queued or
    running; None for a debate the runtime never ran or that has finished."""
    job_id = (data or {}).get("job")
    if not job_id:
        return None
    try:
        return job_id if runtime.state(job_id).status in runtime.UNDER_WAY else None
    except ClearSideError:
        return None  # the runtime's database is unreachable: the page shows the saved debate as it is


def followed(job_id: str) -> tuple[runtime.JobState, Snapshot]:
    """A job another process runs, as this page sees it: its state and the agents' progress from its rows
    (one Follower per browser session and job, so each redraw reads only the new rows), a persona debate's
    personas after the four agents."""
    followers = st.session_state.setdefault(App.FOLLOWERS, {})
    follower = followers.setdefault(job_id, Follower(job_id))
    agents = follower.update()
    state = runtime.state(job_id)
    shown = {name: agents.get(name, AgentProgress()) for name in AGENT_ORDER}
    shown.update((name, agents[name]) for name in sorted(agents) if name.startswith("persona-"))
    return state, Snapshot(id=job_id, status=state.status, agents=shown, document=None, error=state.error,
                           exit_code=0, started=state.created_at)



def cancel_followed(debate_id: str) -> None:
    """Cancel a debate's runtime job, wherever it runs: its step stops at the next token, finished sections stay."""
    workflows.cancel_static(debate_id, store=store())
