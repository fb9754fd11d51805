"""One question on 2-4 provider:model choices: debates side by side, their metrics, shared arguments.

A comparison runs on the runtime (:mod:`clearside.quality.workflow`, held as :class:`clearside.quality.job.CompareJob`
by the Compare page and the ``compare`` command): each debate is saved as it runs and gets a ``runs`` row in the
``compare`` suite with the comparison's batch id, so a comparison can be reopened from the store (:func:`load`).
``agreement`` groups the claims of every model's side by meaning and says, for each point, in how many of the n
models it appears.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PureWindowsPath
from typing import Any

from .. import embed
from ..errors import InputError
from ..inputs import shown
from ..providers import Provider
from ..static.run import STRATEGIES
from ..store import Store
from ..store.records import status_label
from . import metrics

SUITE = "compare"
# raw cosine: ArgKP's best-F1 threshold for "this argument makes this key point"
# (docs/design/requirements.md#calibration)
SAME_POINT = 0.65
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


def labels(providers: list[Provider], temperatures: list[float],
           strategies: list[str | None] | None = None) -> list[str]:
    """One distinct label per model: its short spec, with its temperature where the temperatures differ and its
    generation strategy where the strategies differ ("auto": the provider's default)."""
    out = [short(p.spec) for p in providers]
    if len(set(temperatures)) > 1:
        out = [f"{label} · T {t:g}" for label, t in zip(out, temperatures, strict=True)]
    if strategies is not None and len(set(strategies)) > 1:
        out = [f"{label} · {s or 'auto'}" for label, s in zip(out, strategies, strict=True)]
    alike = {label for label in out if out.count(label) > 1}  # two long names that shorten alike
    return [f"{label} ({n + 1})" if label in alike else label for n, label in enumerate(out)]


def same_model(providers: list[Provider], temperatures: list[float],
               strategies: list[str | None] | None = None) -> tuple[int, int] | None:
    """The first two positions that run one model at one temperature with one strategy (``embedded`` and that
    GGUF's path, say)."""
    strategies = strategies or [None] * len(providers)
    seen: dict[tuple[str, float, str | None], int] = {}
    for n, (provider, t, s) in enumerate(zip(providers, temperatures, strategies, strict=True)):
        if (provider.identity, t, s) in seen:
            return seen[provider.identity, t, s], n
        seen[provider.identity, t, s] = n
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


@dataclass(frozen=True)
class Settings:
    """How a comparison runs: one temperature per model (each a configuration of its own: the same model may then
    appear at two temperatures) or ``temperature`` for all, one generation strategy per model (None: the
    provider's default; the same model may then run as a debate and as the single-pass control) or ``strategy``
    for all, re-asks after an invalid output, and how many of its debates are under way at once (``window``;
    None: all of them)."""

    temperatures: tuple[float, ...] | None = None
    strategies: tuple[str | None, ...] | None = None
    strategy: str | None = None
    temperature: float = 0.4
    retries: int = 2
    window: int | None = None


@dataclass(frozen=True)
class Plan:
    """What a comparison runs, model by model: its label, temperature and generation strategy."""

    labels: list[str]
    temperatures: list[float]
    strategies: list[str | None]


def checked(providers: list[Provider], settings: Settings) -> Plan:
    """Each model's label, temperature and strategy, once the comparison is known to be possible: 2 to MAX_MODELS
    models, one temperature each between 0 and 2, known strategies, no model twice at one temperature with one
    strategy, a window of at least 1; else the InputError saying what to change (nothing runs)."""
    _check_count(len(providers))
    temperatures = list(settings.temperatures) if settings.temperatures is not None else \
        [settings.temperature] * len(providers)
    if len(temperatures) != len(providers):
        raise InputError(f"Give one temperature per model ({len(providers)}), not {len(temperatures)}.")
    for t in temperatures:
        if not 0.0 <= t <= 2.0:
            raise InputError(f"A temperature must be between 0 and 2 (got {t:g}).")
    strategies = list(settings.strategies) if settings.strategies is not None else \
        [settings.strategy] * len(providers)
    if len(strategies) != len(providers):
        raise InputError(f"Give one strategy per model ({len(providers)}), not {len(strategies)}.")
    for s in strategies:
        if s is not None and s not in STRATEGIES:
            raise InputError(f"Unknown generation strategy {s!r}: use one of {', '.join(STRATEGIES)}.")
    if (pair := same_model(providers, temperatures, strategies)) is not None:
        first, second = (providers[n].spec for n in pair)
        raise InputError(f"{first} and {second} name the same model at the same temperature and strategy: choose "
                         "another model, or another temperature or strategy for one of them.")
    if settings.window is not None and settings.window < 1:
        raise InputError(f"Concurrency must be at least 1 (got {settings.window}).")
    return Plan(labels(providers, temperatures, strategies), temperatures, strategies)


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
    # the models in the order the user gave them: runs created in the same instant come back in id order
    # (a comparison saved before positions were kept stays in creation order)
    placed = sorted(enumerate(rows), key=lambda pair: ((pair[1].get("data") or {}).get("position") or 0, pair[0]))
    for _, row in placed:
        data = row.get("data") or {}
        label = data.get("label") or f"{row['provider']}:{row['model']}"
        result = row_result(row)
        if row["status"] == "done" and row["debate_id"] and store.exists(row["debate_id"]):
            documents[label] = store.get(row["debate_id"]).document
        elif row["status"] == "failed" and row["debate_id"] and store.exists(row["debate_id"]):
            result["error"] = (store.get(row["debate_id"]).data or {}).get("error", "failed")
        results[label] = result
    partial = store.partial(r["debate_id"] for r in results.values() if r.get("debate_id"))
    for result in results.values():
        if gone := partial.get(result.get("debate_id") or ""):
            result["missing"] = gone  # a partial debate: what it lacks (clearside.missing_parts)
    report = {"question": (rows[0].get("data") or {}).get("question", ""), "batch": batch, "models": list(results),
              "results": results, "agreement": agreement(documents) if len(documents) >= 2 else [], "error": None,
              "state": "done" if all(r["status"] in ("done", "failed", "cancelled") for r in results.values())
              else "running"}
    return report, documents


def table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per model of headline metrics (for a pandas DataFrame)."""
    rows = []
    for label, result in report["results"].items():
        row: dict[str, Any] = {"model": label, "status": status_label(result["status"], result.get("missing"))}
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

