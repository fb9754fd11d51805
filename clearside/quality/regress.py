"""A regression batch's report: its metrics against the gates and the baseline, and each debate's outcome.

A batch (:mod:`clearside.quality.workflow`) debates a suite's cases n times on one provider:model, each run scored
and saved as it finishes (:func:`item_result` is its row of the report); once every item has ended,
:func:`batch_report` judges the batch (:func:`clearside.quality.batch.check`) and compares the versions it was made
with against the baseline's; :func:`markdown` is the report to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..static import swap
from ..store.records import missing_parts, partial_notice
from .baseline import baseline_summary
from .batch import Batch, aggregate, check
from .versions import batch_versions, version_differences, version_warning, versions_text


def item_result(scored: Any, data: dict[str, Any]) -> dict[str, Any]:
    """One batch item's row in the report, from its scored run (``scored.run_scored``) and its ``data``."""
    result: dict[str, Any] = {"id": scored.run_id, "status": scored.status, "metrics": scored.metrics, **data}
    if scored.status == "failed":
        result["error"] = scored.error
    elif scored.status == "done":
        result["detail"] = scored.detail
        if scored.document and (gone := missing_parts(scored.document)):  # a persona dropped: partial
            result["missing"] = gone
    result.update(debate_id=scored.debate_id, wall_seconds=scored.wall_seconds)
    return result


@dataclass(frozen=True)
class BatchRun:
    """What a regression batch was asked to do: ``runs`` debates of each case of ``suite`` (``items``: the cases'
    ids) on ``spec``, at most ``concurrency`` at once, with the prompts ``prompt_versions``, from ``started_at``;
    judged by the user's ``thresholds`` over the built-in gates."""

    suite: str
    spec: str
    items: tuple[str, ...]
    runs: int
    batch_id: str
    concurrency: int
    prompt_versions: dict[str, str]
    started_at: str
    thresholds: dict[str, dict[str, float]] | None = None


def batch_report(batch: BatchRun, results: list[dict[str, Any]], base: Batch | None, *, wall_seconds: float,
                 pinned: dict[str, Any] | None = None) -> dict[str, Any]:
    """The batch's report: its metrics against the baseline ``base`` and the gates, and each debate's outcome
    (``results``: each item's row, in item order); ``pinned``: the versions the batch was made with
    (``pinned_versions`` and its prompts), compared with the baseline's (``version_changes`` warned about,
    ``version_notes`` listed)."""
    planned = batch.runs * len(batch.items)
    done = [r for r in results if r["status"] in ("done", "failed")]
    current = aggregate(done)
    checks = check(current, base.aggregate() if base else None, batch.thresholds)
    failures = [c for c in checks if c["status"] == "fail"]
    pinned = pinned or {"prompts": batch.prompt_versions}
    changes, notes = (version_differences(batch_versions(base), pinned, ("the baseline", "this batch"))
                      if base is not None else ([], []))
    return {
        "suite": batch.suite, "batch": batch.batch_id, "provider": batch.spec, "runs": batch.runs,
        "items": list(batch.items), "concurrency": batch.concurrency, "prompt_versions": batch.prompt_versions,
        "versions": pinned, "started_at": batch.started_at, "wall_seconds": wall_seconds,
        "metrics": current,
        "baseline": None if base is None else {**baseline_summary(base), "metrics": base.aggregate()},
        "version_changes": changes, "version_notes": notes,
        "warnings": [version_warning(changes)] if changes else [],
        "checks": checks, "passed": not failures and len(done) == planned,
        "failures": [f"{c['metric']}: {'; '.join(c['reasons'])}" for c in failures]
        + ([f"{planned - len(done)} of {planned} runs were cancelled"] if len(done) < planned else []),
        "debates": [{k: r.get(k) for k in ("id", "debate_id", "item", "index", "status", "error", "wall_seconds")}
                    | ({"missing": r["missing"]} if r.get("missing") else {})
                    for r in results if r["status"] != "cancelled"],
    }


def markdown(report: dict[str, Any]) -> str:
    """The batch's report to read: the verdict, the baseline and versions, the table, what failed."""
    verdict = "PASS" if report["passed"] else "REGRESSION"
    lines = [f"# Regression: {report['suite']} on {report['provider']} — {verdict}", "",
             f"{report['runs']} run(s) of {', '.join(report['items'])}, batch `{report['batch']}`, "
             f"{report['wall_seconds']} s wall, concurrency {report['concurrency']}.", ""]
    base = report["baseline"]
    lines.append(f"Baseline: batch `{base['batch']}` ({base['provider']}, {base['created_at']}, {base['age']} "
                 f"old), made with {versions_text(base['versions'])}." if base
                 else "No blessed baseline yet: only the absolute gates apply. Bless a batch with "
                      "`python -m clearside bless BATCH`.")
    lines.append(f"This batch: {versions_text(report.get('versions') or {})}.")
    lines += [f"\nWarning: {w}" for w in report.get("warnings") or []]
    if report.get("version_notes"):
        lines += ["", "Version notes:", *[f"- {n}" for n in report["version_notes"]]]
    lines += ["", "| metric | mean | spread | baseline | delta | status |", "|---|---|---|---|---|---|"]
    for c in report["checks"]:
        lines.append(f"| {c['metric']} | {c['mean']:g} | ±{c['stdev']:g} | "
                     f"{c.get('baseline_mean', '—')} | {c.get('delta', '—')} | {c['status']} |")
    flips = next((c for c in report["checks"] if c["metric"] == "flip_rate"), None)
    if flips:
        p = swap.PUBLISHED
        lines += ["", f"Swap check: a mean {flips['mean']:.1%} of the moderator's synthesis items flipped side or "
                      f"vanished with FOR and AGAINST exchanged. Context: {p['what']} is about {p['flip_rate']:.1%} "
                      f"({p['source']}); {p['note']}."]
    if report["failures"]:
        lines += ["", "Failures:", *[f"- {f}" for f in report["failures"]]]
    failed = [d for d in report["debates"] if d["status"] == "failed"]
    if failed:
        lines += ["", "Debates that failed:", *[f"- {d['item']} #{d['index'] + 1}: {d['error']}" for d in failed]]
    partial = [d for d in report["debates"] if d["status"] == "done" and d.get("missing")]
    if partial:
        lines += ["", "Debates that finished partial:", *[f"- {d['item']} #{d['index'] + 1}: "
                                                         f"{partial_notice(d['missing'])}" for d in partial]]
    return "\n".join(lines) + "\n"

