"""The durable runtime: ClearSide's long work as DBOS workflows that survive crashes and spread over processes.

It knows no mode. :mod:`~clearside.runtime.host` launches DBOS, serves the queues and takes over the work of hosts
that died; :mod:`~clearside.runtime.progress` keeps a running job's progress as rows any process can follow;
:mod:`~clearside.runtime.jobs` has what a page polls of a job. The names below (``runtime.state``,
``runtime.enqueue``, ...) are :mod:`~clearside.runtime.host`'s, imported on first use, so that importing a light
part of the runtime (its events, say) does not import DBOS.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .host import (
        APP_VERSION,
        BATCH_QUEUE,
        DEAD_AFTER,
        LOCAL_QUEUE,
        SCHEMA,
        SERVER_QUEUE,
        STATUSES,
        Host,
        JobState,
        cancel,
        client,
        current_host,
        enqueue,
        exit_fast,
        job_state,
        on_reset,
        reset,
        resume,
        send,
        start_host,
        state,
        stop_host,
        system_engine,
        system_url,
    )

__all__ = ["APP_VERSION", "BATCH_QUEUE", "DEAD_AFTER", "LIVE_QUEUE", "LOCAL_QUEUE", "SCHEMA", "SERVER_QUEUE",
           "STATUSES", "Host", "JobState", "cancel", "client", "current_host", "enqueue", "exit_fast", "job_state",
           "on_reset", "reset", "resume", "send", "start_host", "state", "stop_host", "system_engine", "system_url"]


def __getattr__(name: str) -> Any:
    if name == "host":  # the module itself (``runtime.host.HEARTBEAT_SECONDS``)
        return importlib.import_module(".host", __name__)
    if name in __all__ or name.isupper():  # host's settings too (``runtime.SERVER_CONCURRENCY``); never a
        module = importlib.import_module(".host", __name__)  # submodule's name: ``from . import steps`` imports it
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
