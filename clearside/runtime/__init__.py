"""The durable runtime: ClearSide's long work as DBOS workflows that survive crashes and spread over processes.

It knows no mode:

- :mod:`~clearside.runtime.host`: this process as a host (DBOS launched, queues served, heartbeats, the takeover
  of stopped hosts' work), or an in-process host for a command that runs its work here;
- :mod:`~clearside.runtime.client`: queue, start, follow, cancel, resume and message a job from any process;
- :mod:`~clearside.runtime.jobs`: the one job contract and the one status vocabulary;
- :mod:`~clearside.runtime.events`: the one event type every mode emits, and the fold into agents' progress;
- :mod:`~clearside.runtime.steps`: what every mode's workflow steps share (providers, queues, the sink);
- :mod:`~clearside.runtime.progress`: a running job's progress as rows any process can follow.

The names below (``runtime.state``, ``runtime.enqueue``, ``runtime.STATUSES``...) are imported from those modules
on first use, so that importing a light part of the runtime (its events, say) does not import DBOS.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import (
        JobState,
        cancel,
        dbos_client,
        enqueue,
        job_state,
        recover,
        resume,
        send,
        start,
        state,
        states,
        wait,
    )
    from .host import (
        APP_VERSION,
        BATCH_QUEUE,
        DEAD_AFTER,
        LIVE_QUEUE,
        LOCAL_QUEUE,
        SCHEMA,
        SERVER_QUEUE,
        Host,
        alive,
        current_host,
        exit_after_stop,
        exit_with_main_thread,
        on_reset,
        reset,
        start_host,
        stop_host,
        system_engine,
        system_url,
    )
    from .jobs import FINISHED, STATUSES, UNDER_WAY, Job, JobRegistry, Status

# Where each name of the runtime's API lives: the client side (any process), hosting, the job contract.
_API = {
    "client": ("JobState", "cancel", "dbos_client", "enqueue", "job_state", "recover", "resume", "send", "start",
               "state", "states", "wait"),
    "host": ("APP_VERSION", "BATCH_QUEUE", "DEAD_AFTER", "LIVE_QUEUE", "LOCAL_QUEUE", "SCHEMA", "SERVER_QUEUE",
             "Host", "alive", "current_host", "exit_after_stop", "exit_with_main_thread", "on_reset", "reset",
             "start_host", "stop_host", "system_engine", "system_url"),
    "jobs": ("FINISHED", "STATUSES", "UNDER_WAY", "Job", "JobRegistry", "Status"),
}
_WHERE = {name: module for module, names in _API.items() for name in names}
__all__ = ["APP_VERSION", "BATCH_QUEUE", "DEAD_AFTER", "FINISHED", "Host", "Job", "JobRegistry", "JobState",
           "LIVE_QUEUE", "LOCAL_QUEUE", "SCHEMA", "SERVER_QUEUE", "STATUSES", "Status", "UNDER_WAY", "alive",
           "cancel", "current_host", "dbos_client", "enqueue", "exit_after_stop", "exit_with_main_thread",
           "job_state", "on_reset", "recover", "reset", "resume", "send", "start", "start_host", "state", "states",
           "stop_host", "system_engine", "system_url", "wait"]
assert sorted(_WHERE) == __all__, "every name of the API is listed once"


def __getattr__(name: str) -> Any:
    if name in _API:  # a submodule used as an attribute (``runtime.host.HEARTBEAT_SECONDS``)
        return importlib.import_module(f".{name}", __name__)
    module = _WHERE.get(name) or ("host" if name.isupper() else None)  # host's settings (SERVER_CONCURRENCY) too
    if module is not None:
        found = importlib.import_module(f".{module}", __name__)
        if hasattr(found, name):
            return getattr(found, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")  # a submodule's name: imported as one


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
