"""How long work takes on this machine: the time a job has run, and an estimate from the history of its stages.

A stage is one part of a job that the history times (a static debate's agents: the orchestrator, the advocates, the
moderator). A :class:`History` holds the median seconds of each stage over the last finished jobs of the same kind
on the same provider and model; with it a page says how long the job has run, about how long such a job takes here
and about how much is left, and before a batch how long its runs will take. With no history it says only how long
the job has run: nothing is guessed from another model or machine. Nothing here knows a mode.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

HISTORY = 20  # the last finished jobs an estimate is made from


def clock(seconds: float) -> str:
    """``0:42``, ``12:05``, ``1:02:09``."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass(frozen=True)
class History:
    """The median seconds of each stage (``stages``) over ``count`` finished jobs."""

    stages: Mapping[str, float]
    count: int

    @property
    def total(self) -> float:
        """About how long one whole job takes here: its stages one after the other (a model that serves one
        request at a time, as the embedded one does, runs them so; a server that runs the advocates side by side
        finishes sooner)."""
        return sum(self.stages.values())

    def left(self, elapsed: float, pending: Iterable[str]) -> float:
        """About how many seconds are left after ``elapsed``, while the stages ``pending`` have not begun: at least
        what those take, and at least what the whole takes less the time gone."""
        return max(sum(self.stages.get(stage, 0.0) for stage in pending), self.total - elapsed, 0.0)


def history(samples: Iterable[Mapping[str, float]]) -> History | None:
    """The history of finished jobs, each as the seconds its stages took (a stage a job did not run is left out of
    that job); None without any."""
    samples = [sample for sample in samples if sample]
    if not samples:
        return None
    stages: dict[str, list[float]] = {}
    for sample in samples:
        for stage, seconds in sample.items():
            if seconds > 0:
                stages.setdefault(stage, []).append(float(seconds))
    if not stages:
        return None
    return History({stage: statistics.median(values) for stage, values in stages.items()}, len(samples))


def _from(past: History, noun: str) -> str:
    return f"the median of the last {past.count} {noun}{'s' if past.count != 1 else ''} with this model here"


def running_line(elapsed: float, past: History | None, pending: Iterable[str] = (), *, noun: str = "debate",
                 verb: str = "Running") -> str:
    """``Running for 0:42 · about 1:10 in all, about 0:28 left (the median of the last 7 debates with this model
    here)``; past the usual time, it says so; with no history, only the time it has run (``verb``: ``Queued``
    for work that waits its turn)."""
    line = f"{verb} for {clock(elapsed)}"
    if past is None or past.total <= 0:
        return f"{line} · no {noun} with this model has finished here yet, so no estimate"
    left = past.left(elapsed, pending)
    if left < 1:
        return f"{line} · longer than usual: about {clock(past.total)} in all ({_from(past, noun)})"
    return f"{line} · about {clock(past.total)} in all, about {clock(left)} left ({_from(past, noun)})"


def batch_line(runs: int, past: History | None, *, concurrency: int = 1, done: int = 0,
               elapsed: float | None = None) -> str:
    """A batch of ``runs`` debates (``done`` of them finished, ``concurrency`` at a time): ``15 debates: about
    12:30 in all here (a debate takes about 0:50, ...)``; while it runs, the time it has run and about how long is
    left."""
    ran = f"Running for {clock(elapsed)} · " if elapsed is not None else ""
    plural = "s" if runs != 1 else ""
    if past is None or past.total <= 0:
        return f"{ran}{runs} debate{plural}: no debate with this model has finished here yet, so no estimate"
    waves = -(-max(runs - done, 0) // max(concurrency, 1))  # rounds of ``concurrency`` debates still to run
    left = waves * past.total
    at_once = f", {concurrency} at a time" if concurrency > 1 else ""
    what = "left" if elapsed is not None else "in all here"
    return (f"{ran}{runs} debate{plural}{at_once}: about {clock(left)} {what} (a debate takes about "
            f"{clock(past.total)}, {_from(past, 'debate')})")
