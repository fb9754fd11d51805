"""One question on 2-4 provider:model choices: debates side by side, their metrics, shared arguments.

Each debate is saved as it runs and gets a ``runs`` row in the ``compare`` suite
with the comparison's batch id, so a comparison can be reopened from the store.
``agreement`` groups the claims of every model's side by meaning and says, for
each point, in how many of the n models it appears.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import PureWindowsPath
from typing import Any

from .. import embed
from ..errors import Cancelled, ClearSideError, InputError
from ..inputs import shown
from ..providers import Provider
from ..runtime.events import Event
from ..store import Store
from . import metrics
from .scored import run_scored

SUITE = "compare"
SAME_POINT = 0.65  # raw cosine: ArgKP's best-F1 threshold for "this argument makes this key point" (guide §3.1)
MAX_MODELS = 4
LABEL_CHARS = 40  # a label longer than this is shortened in the middle (charts and column heads stay readable)


def check_specs(specs: list[str]) -> list[str]:
    """The non-blank specs, 2 to MAX_MODELS of them (the same model twice is refused by :class:`Comparison`,
    unless at two temperatures)."""
    cleaned = [s.strip() for s in specs if s and s.strip()]
    _check_count(len(cleaned))
    return cleaned


def _check_count(n: int) -> None:
    if not 2 <= n <= MAX_MODELS:
        raise InputError(f"Compare 2 to {MAX_MODELS} provider:model choices (got {n}).")


def short(spec: str) -> str:
    """A model's label: a file path (a GGUF, a script) becomes its file name, and a long name loses its middle."""
    name, _, model = spec.partition(":")
    if name in ("embedded", "scripted") and ("/" in model or "\\" in model):
        spec = f"{name}:{PureWindowsPath(model).name}"  # splits at slashes and backslashes
    if len(spec) > LABEL_CHARS:
        half = (LABEL_CHARS - 1) // 2
        spec = f"{spec[:half]}…{spec[-half:]}"
    return spec


def labels(providers: list[Provider], temperatures: list[float]) -> list[str]:
    """One distinct label per model: its short spec, with its temperature where the temperatures differ."""
    out = [short(p.spec) for p in providers]
    if len(set(temperatures)) > 1:
        out = [f"{label} · T {t:g}" for label, t in zip(out, temperatures, strict=True)]
    alike = {label for label in out if out.count(label) > 1}  # two long names that shorten alike
    return [f"{label} ({n + 1})" if label in alike else label for n, label in enumerate(out)]


def same_model(providers: list[Provider], temperatures: list[float]) -> tuple[int, int] | None:
    """The first two positions that run one model at one temperature (``embedded`` and that GGUF's path, say)."""
    seen: dict[tuple[str, float], int] = {}
    for n, (provider, t) in enumerate(zip(providers, temperatures, strict=True)):
        if (provider.identity, t) in seen:
            return seen[provider.identity, t], n
        seen[provider.identity, t] = n
    return None


def agreement(documents: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Points by side: a representative claim, the models that made it (k of n) and each model's wording.

    Models are taken in label order, so a comparison gives the same points whether its debates finished in
    one order or another, or were reloaded from the store."""
    documents = dict(sorted(documents.items()))
    n = len(documents)
    out: list[dict[str, Any]] = []
    for side in ("pro", "con"):
        claims = [(label, a["claim"]) for label, doc in documents.items() for a in doc[side]["arguments"]]
        if not claims:
            continue
        vectors = embed.encode([c for _, c in claims])
        clusters: list[list[int]] = []
        for i in range(len(claims)):  # greedy, in order: join the cluster whose members are all close enough
            for members in clusters:
                if claims[i][0] not in {claims[m][0] for m in members} and min(
                        float(vectors[i] @ vectors[m]) for m in members) >= SAME_POINT:
                    members.append(i)
                    break
            else:
                clusters.append([i])
        for members in clusters:
            models = [claims[m][0] for m in members]
            out.append({"side": side, "claim": claims[members[0]][1], "models": models, "k": len(models), "n": n,
                        "wording": {claims[m][0]: claims[m][1] for m in members}})
    return sorted(out, key=lambda row: (row["side"], -row["k"]))


class Comparison:
    """Runs the debates in this process (concurrently where asked), then scores them: ``compare`` on the
    command line. The dashboard and ``compare --enqueue`` run comparisons on the runtime
    (:class:`clearside.batch_jobs.CompareJob`), checked by this class first."""

    def __init__(self, question: str, providers: list[Provider], store: Store, *, concurrency: int | None = None,
                 retries: int = 2, temperature: float = 0.4, temperatures: list[float] | None = None,
                 on_event: Callable[[str, Event], None] | None = None):
        """``temperatures``: one per provider (a configuration each: the same model may then appear at two
        temperatures); otherwise ``temperature`` for all."""
        _check_count(len(providers))
        temperatures = list(temperatures) if temperatures is not None else [temperature] * len(providers)
        if len(temperatures) != len(providers):
            raise InputError(f"Give one temperature per model ({len(providers)}), not {len(temperatures)}.")
        for t in temperatures:
            if not 0.0 <= t <= 2.0:
                raise InputError(f"A temperature must be between 0 and 2 (got {t:g}).")
        if (pair := same_model(providers, temperatures)) is not None:
            first, second = (providers[n].spec for n in pair)
            raise InputError(f"{first} and {second} name the same model at the same temperature: choose another "
                             "model, or another temperature for one of them.")
        self.question = question
        self.providers = providers
        self.temperatures = temperatures
        self.labels = labels(providers, temperatures)
        self.store = store
        self.concurrency = concurrency or len(providers)
        self.retries, self.temperature = retries, temperature
        self.on_event = on_event or (lambda label, event: None)
        self.batch = uuid.uuid4().hex
        self.lock = threading.Lock()
        self.results: dict[str, dict[str, Any]] = {label: {"status": "waiting"} for label in self.labels}
        self.agreement: list[dict[str, Any]] | None = None
        self.error: str | None = None
        self.state = "waiting"  # running, then done
        self.started_at = datetime.now(UTC).isoformat(timespec="microseconds")
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Stop every debate at its next token or call, and start no more; finished debates and sections stay."""
        self._cancel.set()

    def _event(self, label: str, event: Event) -> None:
        if self._cancel.is_set() and event.kind in ("start", "delta", "part", "retry"):
            raise Cancelled("Cancelled by the user.")
        self.on_event(label, event)

    def _data(self, index: int) -> dict[str, Any]:
        return {"batch": self.batch, "question": self.question, "label": self.labels[index],
                "spec": self.providers[index].spec, "temperature": self.temperatures[index],
                "started_at": self.started_at, "planned": len(self.providers)}

    def _one(self, index: int) -> None:
        provider, label = self.providers[index], self.labels[index]
        if self._cancel.is_set():  # cancelled before its turn came (fewer workers than models)
            with self.lock:
                self.results[label] = {"status": "cancelled"}
            return

        def started(debate_id: str, run_id: str) -> None:
            with self.lock:
                self.results[label] = {"status": "running", "debate_id": debate_id, "run_id": run_id}

        scored = run_scored(self.question, provider, self.store, suite=SUITE, data=self._data(index),
                            retries=self.retries, temperature=self.temperatures[index],
                            on_event=lambda event: self._event(label, event), on_start=started)
        with self.lock:
            if scored.status == "done":
                self.results[label].update(status="done", document=scored.document, metrics=scored.detail,
                                           wall_seconds=scored.wall_seconds)
            elif scored.status == "failed":
                self.results[label].update(status="failed", error=scored.error)
            else:
                self.results[label].update(status="cancelled")

    @property
    def id(self) -> str:
        return self.batch

    def run(self) -> dict[str, Any]:
        self.state = "running"
        try:
            with ThreadPoolExecutor(max_workers=max(1, self.concurrency), thread_name_prefix="compare") as pool:
                list(pool.map(self._one, range(len(self.providers))))
            done = {label: r["document"] for label, r in self.results.items() if r["status"] == "done"}
            self.agreement = agreement(done) if len(done) >= 2 else []
        except ClearSideError as exc:
            self.error = str(exc)
            raise
        finally:
            self.state = "done"
        return self.report()

    def report(self) -> dict[str, Any]:
        with self.lock:
            results = {label: {k: v for k, v in r.items() if k != "document"} for label, r in self.results.items()}
        return {"question": self.question, "batch": self.batch, "models": list(results), "results": results,
                "agreement": self.agreement, "error": self.error, "state": self.state}

    def documents(self) -> dict[str, dict[str, Any]]:
        with self.lock:
            return {label: r["document"] for label, r in self.results.items() if r.get("document")}


def row_result(row: dict[str, Any]) -> dict[str, Any]:
    """One model's result from its ``runs`` row: status, ids and, once scored, its metrics."""
    result: dict[str, Any] = {"status": row["status"], "debate_id": row["debate_id"], "run_id": row["id"]}
    if (row.get("data") or {}).get("detail"):
        result["metrics"] = row["data"]["detail"]
    if (row.get("data") or {}).get("wall_seconds"):
        result["wall_seconds"] = row["data"]["wall_seconds"]
    return result


def load(store: Store, batch: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """A saved comparison's report and its finished documents, from the store (``?compare=<batch>``)."""
    rows = store.runs(SUITE, batch=batch)
    if not rows:
        named = shown(batch)
        raise InputError(f"No comparison has the id {named}: `python -m clearside runs --suite compare` lists them.",
                         dashboard=f"No comparison has the id {named}: check the link, or start a new comparison.")
    results, documents = {}, {}
    for row in rows:
        data = row.get("data") or {}
        label = data.get("label") or f"{row['provider']}:{row['model']}"
        result = row_result(row)
        if row["status"] == "done" and row["debate_id"] and store.exists(row["debate_id"]):
            documents[label] = store.get(row["debate_id"]).document
        elif row["status"] == "failed" and row["debate_id"] and store.exists(row["debate_id"]):
            result["error"] = (store.get(row["debate_id"]).data or {}).get("error", "failed")
        results[label] = result
    report = {"question": (rows[0].get("data") or {}).get("question", ""), "batch": batch, "models": list(results),
              "results": results, "agreement": agreement(documents) if len(documents) >= 2 else [], "error": None,
              "state": "done" if all(r["status"] in ("done", "failed", "cancelled") for r in results.values())
              else "running"}
    return report, documents


def table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per model of headline metrics (for a pandas DataFrame)."""
    rows = []
    for label, result in report["results"].items():
        row: dict[str, Any] = {"model": label, "status": result["status"]}
        if result.get("metrics"):
            row.update(metrics.summary(result["metrics"]))
            if result.get("wall_seconds"):
                row["wall_seconds"] = result["wall_seconds"]  # the debate start to finish, as the user waited
        rows.append(row)
    return rows


def k_of_n(report: dict[str, Any]) -> dict[str, dict[int, int]]:
    """How many points appear in exactly k of the n models, per side."""
    counts: dict[str, dict[int, int]] = {"pro": {}, "con": {}}
    for row in report.get("agreement") or []:
        counts[row["side"]][row["k"]] = counts[row["side"]].get(row["k"], 0) + 1
    return counts


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Comparison: {report['question']}", "", f"Batch `{report['batch']}`.", ""]
    rows = table(report)
    keys = [k for k in metrics.SUMMARY if any(k in r for r in rows)]
    lines += ["| metric | " + " | ".join(r["model"] for r in rows) + " |", "|---" * (len(rows) + 1) + "|"]
    lines.append("| status | " + " | ".join(r["status"] for r in rows) + " |")
    for key in keys:
        lines.append(f"| {key} | " + " | ".join(f"{r[key]:g}" if key in r else "—" for r in rows) + " |")
    if report.get("agreement"):
        lines += ["", "## Arguments across models", ""]
        for row in report["agreement"]:
            lines.append(f"- {row['side'].upper()} ({row['k']} of {row['n']}): {row['claim']} "
                         f"[{', '.join(row['models'])}]")
    return "\n".join(lines) + "\n"

