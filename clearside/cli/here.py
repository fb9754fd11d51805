"""A command's work run on the runtime in this process, and followed to its end: the one execution path.

A command without ``--enqueue`` (``debate``, ``remap ID``, ``compare``, ``regress``, ``live``, ``perspectives``) makes
this process an in-process host (:func:`hosting`: it beats, but serves no queue and takes nobody's work over),
starts its job's workflow here and follows it as a page does (:func:`follow`): its state from the runtime, its
progress from the job's progress rows, each entry handed to the command's printer. The work is durable like any
job's: a command killed part-way leaves its job to the next host (a worker, a dashboard), which finishes it; Ctrl+C
cancels it, and what finished stays saved.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

POLL_SECONDS = 0.1


@contextmanager
def hosting(store_url: str) -> Iterator[None]:
    """This process as an in-process host while the block runs (a host already here, such as a test's, is used
    and left running)."""
    from .. import modes, runtime

    started = runtime.current_host() is None
    modes.host(store_url, role="cli", serve=False)
    try:
        yield
    finally:
        if started:
            runtime.stop_host()


OnEntry = Callable[[dict[str, Any]], None]


def follow(job_id: str, on_entry: OnEntry | None, *, store_url: str, cancel: Callable[[], None] | None = None,
           also: dict[str, OnEntry] | None = None) -> Any:
    """Wait for ``job_id`` to end, handing each of its progress entries to ``on_entry`` as it is written (the
    rows of :mod:`clearside.runtime.progress`, from whichever host runs it), and those of the jobs in ``also`` (a
    batch's items) to theirs; the job's final state. Ctrl+C calls ``cancel`` (default: cancel the job) before the
    interrupt goes on."""
    from .. import runtime
    from ..runtime import progress, steps

    try:
        with interrupts() as interrupted:
            now = progress.follow({job_id: on_entry, **(also or {})}, job_id, store_url, stop=interrupted,
                                  poll=POLL_SECONDS)
            if now is None:
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        (cancel or (lambda: runtime.cancel(job_id, store_url)))()
        steps.wait_stopped(job_id)  # the step in flight stops at its next token, keeping what finished
        raise
    return now


@contextmanager
def interrupts() -> Iterator[threading.Event]:
    """Ctrl+C as an event the follow loop reads at its next tick, while the block runs in the main thread. Raised
    as an exception, an interrupt that lands in a library's clean-up (a destructor, a connection's finaliser) is
    printed and dropped by Python, and the command ran on to its end as if nobody had asked."""
    asked = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield asked
        return
    previous = signal.signal(signal.SIGINT, lambda *_: asked.set())
    try:
        yield asked
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)


def finished(state: Any) -> None:
    """Nothing when the job is done; else its failure, raised with its own message and exit code."""
    from ..errors import JobFailed

    if state.status != "done":
        raise JobFailed.of(state)
