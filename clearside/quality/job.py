"""Regression batches and comparisons on the runtime, held the way a page holds a job.

:class:`RegressionJob` and :class:`CompareJob` queue a batch (:mod:`clearside.quality.workflow`: a parent workflow whose
items, one scored debate each, any host runs) and read it back for the page that polls them: the batch's state
from the runtime, each finished debate from the store's ``runs`` rows, and each running debate's agents from this
process's memory while its step runs here, otherwise from its progress rows (another host runs it). Nothing lives
only in the page's process: a crash leaves the batch on its queues, and the next host finishes it unasked.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .. import runtime
from ..agents import AGENT_ORDER
from ..providers import Provider
from ..runtime import steps
from ..runtime.events import AgentProgress
from ..runtime.progress import Follower
from ..store import Store
from . import compare
from . import workflow as batches
from .batch import builtin_suite
from .suites import Suite


@dataclass(frozen=True)
class BatchSnapshot:
    """Where a batch stands (``status``: :data:`clearside.runtime.STATUSES`), and once it ended whether it passed
    and its report (a regression's :func:`clearside.quality.regress.batch_report`, a comparison's
    :func:`clearside.quality.compare.load` report)."""

    status: str
    error: str = ""
    passed: bool | None = None
    report: dict[str, Any] | None = None
    started: float = 0.0  # when it was queued (seconds since the epoch; 0: not known)

    @property
    def finished(self) -> bool:
        return self.status in runtime.FINISHED


class _BatchJob(ABC):
    """What both kinds share: the batch's runtime state, its rows, its running items' agents."""

    kind: ClassVar[str]
    suite = ""

    def __init__(self, store: Store, labels: list[str]) -> None:
        self.store, self.labels = store, labels  # one label per item, in item order
        self.id = ""
        self._followers: dict[str, Follower] = {}

    def _state(self) -> runtime.JobState:
        return runtime.state(self.id, self.store.url)

    def rows(self) -> list[dict[str, Any]]:
        """The batch's ``runs`` rows (one per item that started), in item order where the item is known."""
        return [r for r in self.store.runs(self.suite) if (r.get("data") or {}).get("batch") == self.id]

    @abstractmethod
    def start(self, *, here: bool = False) -> Self:
        """Queue the batch for any host (``here``: run it in this process, on its host)."""

    def retry(self) -> Self:
        """Run the batch again, as a new batch of the same items and settings (its finished runs stay saved)."""
        return self.start()

    def snapshot(self) -> BatchSnapshot:
        now = self._state()
        result = now.result or {}
        return BatchSnapshot(status=now.status, error=now.error, passed=result.get("passed"),
                             report=result.get("report"), started=now.created_at)

    def wait(self, timeout: float | None = None) -> BatchSnapshot:
        """Block until the batch ends (or ``timeout`` seconds pass); its snapshot."""
        runtime.wait(self.id, timeout, self.store.url)
        return self.snapshot()

    def agents(self) -> dict[str, dict[str, str]]:
        """Each running item's agents (``{label: {agent: status}}``: pending, waiting, running, retrying, done,
        failed), in item order."""
        finished = {self._label(r) for r in self.rows() if r["status"] != "running"}
        out: dict[str, dict[str, str]] = {}
        for n, label in enumerate(self.labels):
            if label in finished:
                continue
            job_id = batches.item_id(self.id, n)
            source: dict[str, AgentProgress] | None = steps.LOCAL.get(job_id)  # its step runs here
            if source is None:
                source = self._followers.setdefault(job_id, Follower(job_id, self.store.url)).update()
            # an agent started but not yet streaming stays "waiting" (for a model that serves one call at a time,
            # such as the in-process one, still writing the other side), as the Debate page says it
            statuses = {agent: p.status for agent, p in list(source.items()) if agent in AGENT_ORDER}
            if any(s != "pending" for s in statuses.values()):
                out[label] = statuses
        return out

    @abstractmethod
    def _label(self, row: dict[str, Any]) -> str:
        """The label of the item a ``runs`` row belongs to."""


class RegressionJob(_BatchJob):
    """A regression batch of ``suite`` on ``provider``, ``runs`` debates per item, run by any host."""

    kind = "regression"

    def __init__(self, suite: str | Suite, provider: Provider, store: Store, *, runs: int = 3,
                 concurrency: int | None = None, temperature: float = 0.4, swap_check: bool = False,
                 strategy: str | None = None) -> None:
        """``suite``: a built-in's name or a loaded suite (a suite file's). ``concurrency``: debates under way at once
        (across every host), and requests sent to the provider's endpoint at once. ``swap_check``: each debate
        also gets the swap check (one more moderator call). ``strategy``: how the agents write (None: the
        provider's default)."""
        self.loaded = suite if isinstance(suite, Suite) else builtin_suite(suite)  # an unknown name is refused here
        super().__init__(store, [f"{case.name} #{i + 1}" for i in range(max(runs, 0)) for case in self.loaded.cases])
        self.suite, self.provider, self.runs, self.temperature = self.loaded.name, provider, runs, temperature
        self.concurrency = concurrency
        self.swap_check, self.strategy = swap_check, strategy
        if concurrency:
            provider.concurrency = concurrency
        self.total = len(self.labels)

    def start(self, *, here: bool = False) -> RegressionJob:
        settings = batches.RegressSettings(runs=self.runs, temperature=self.temperature, window=self.concurrency,
                                           swap_check=self.swap_check, strategy=self.strategy)
        self.id = batches.enqueue_regress(self.loaded, self.provider, settings, here=here, store_url=self.store.url)
        return self

    def _label(self, row: dict[str, Any]) -> str:
        data = row.get("data") or {}
        return f"{data.get('item')} #{int(data.get('index', 0)) + 1}"

    @property
    def finished(self) -> list[dict[str, Any]]:
        """Each finished debate's row of the report (item, index, status, seconds, metrics, error)."""
        out = []
        for row in self.rows():
            if row["status"] in ("done", "failed"):
                data = row.get("data") or {}
                out.append({"id": row["id"], "debate_id": row["debate_id"], "status": row["status"],
                            "metrics": row.get("metrics") or {}, "item": data.get("item"),
                            "index": data.get("index", 0), "wall_seconds": data.get("wall_seconds"),
                            "error": data.get("error") or ""})
        return sorted(out, key=lambda r: (r["index"], str(r["item"])))

    def cancel(self) -> None:
        """Start no more debates; those under way finish (a batch's runs are scored whole). Finished runs stay."""
        batches.cancel_batch(self.id, self.store.url, in_flight=False)

    def progress(self) -> tuple[int, int]:
        return len(self.finished), self.total

    @property
    def report(self) -> dict[str, Any] | None:
        """The batch's report once it is done (:func:`clearside.quality.regress.batch_report`)."""
        result = self._state().result or {}
        return result.get("report")


class CompareJob(_BatchJob):
    """One question on 2-4 providers (each at its temperature), one debate per model, run by any host."""

    kind = "comparison"
    suite = compare.SUITE

    def __init__(self, question: str, providers: list[Provider], store: Store, *,
                 temperatures: list[float] | None = None, temperature: float = 0.4, retries: int = 2,
                 window: int | None = None, strategies: list[str | None] | None = None,
                 strategy: str | None = None) -> None:
        """``window``: debates under way at once (default: all of them); ``strategies``: one generation strategy
        per model (or ``strategy`` for all; None: the provider's default)."""
        self.settings = compare.Settings(temperatures=tuple(temperatures) if temperatures is not None else None,
                                         temperature=temperature, retries=retries, window=window,
                                         strategies=tuple(strategies) if strategies is not None else None,
                                         strategy=strategy)
        # refuses what a comparison refuses, before it runs
        super().__init__(store, compare.checked(providers, self.settings).labels)
        self.question, self.providers = question, providers
        self._documents: dict[str, dict[str, Any]] = {}
        self._agreement: list[dict[str, Any]] | None = None

    def start(self, *, here: bool = False) -> CompareJob:
        """Queue the comparison for any host (``here``: run it in this process, on its host)."""
        self.id = batches.enqueue_compare(self.question, self.providers, self.settings, here=here,
                                          store_url=self.store.url)
        return self

    def _label(self, row: dict[str, Any]) -> str:
        return (row.get("data") or {}).get("label", "")

    def cancel(self) -> None:
        """Stop every debate at its next token and start no more; finished debates and sections stay saved,
        and each unfinished debate can be resumed from the Library."""
        batches.cancel_batch(self.id, self.store.url)

    def report(self) -> dict[str, Any]:
        """Each model's status (waiting until its debate starts) and result, in the models' order, and, once every
        debate is over, the arguments the models share (:func:`compare.agreement`)."""
        now = self.snapshot()  # read first: once over, every row is final
        running = not now.finished
        # a model whose debate never started: waiting, or cancelled once the comparison is over
        results: dict[str, dict[str, Any]] = {label: {"status": "waiting" if running else "cancelled"}
                                              for label in self.labels}
        for row in self.rows():
            result = compare.row_result(row)
            if (row.get("data") or {}).get("error"):  # written by run_scored when the debate failed
                result["error"] = row["data"]["error"]
            results[self._label(row)] = result
        if not running and self._agreement is None:
            documents = self.documents()
            self._agreement = compare.agreement(documents) if len(documents) >= 2 else []
        return {"question": self.question, "batch": self.id, "models": list(results), "results": results,
                "agreement": self._agreement, "error": now.error or None,
                "state": "running" if running else "done"}

    def documents(self) -> dict[str, dict[str, Any]]:
        """The finished debates' documents by label, in the models' order (each read from the store once)."""
        for row in self.rows():
            label = self._label(row)
            if row["status"] == "done" and label not in self._documents and row["debate_id"]:
                document = self.store.get(row["debate_id"]).document
                if document is not None:
                    self._documents[label] = document
        return {label: self._documents[label] for label in self.labels if label in self._documents}
