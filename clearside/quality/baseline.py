"""Blessing a batch as its suite's baseline (the only way a baseline moves), its review and the bless history.

Blessing records a row of the bless history: a note of why (required on the flagship suite) and a warning when
the batch is not significantly better than the baseline it replaces on the quality metrics (a paired comparison,
:func:`clearside.quality.compare_runs.compare_runs`). :func:`baseline_summary` is a baseline as reports show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ClearSideError, InputError, NotFound
from ..store import Store
from . import metrics
from .batch import THRESHOLDS, Batch, age, baseline, batches
from .compare_runs import compare_runs
from .versions import batch_versions

FLAGSHIP = "flagship"
NOTE_REQUIRED = (FLAGSHIP,)  # baseline moves only with a note of why (docs/design/requirements.md#flagship)


def quality_metrics(thresholds: dict[str, dict[str, float]] | None = None) -> list[str]:
    """The metrics a baseline is judged on: every gated metric (time and tokens are reported, never gated)."""
    rules = {**THRESHOLDS, **(thresholds or {})}
    return [name for name in metrics.SUMMARY if rules.get(name)]


@dataclass
class Blessed:
    """What ``bless`` did: the batch now the baseline, the one it replaced, the note and the warnings recorded."""

    batch: Batch
    previous: str | None
    note: str
    warnings: list[str]


def _batch_named(store: Store, batch_or_run: str) -> Batch:
    wanted = (batch_or_run or "").strip().lower()
    # a batch's id (or a run outside any batch) through the index; else a run of a batch, by its own id
    for row in store.runs(batch=wanted) or [r for r in store.runs() if r["id"] == wanted]:
            batch_id = (row.get("data") or {}).get("batch") or row["id"]
            return next(b for b in batches(store, row["suite"]) if b.id == batch_id)
    raise NotFound(f"No run or batch has the id {batch_or_run}: `python -m clearside runs` lists them.")


def review_against(store: Store, current: Batch | None, batch: Batch) -> tuple[list[str], dict[str, Any]]:
    """Is ``batch`` significantly better than the baseline ``current`` on the quality metrics? ``(warnings,
    review)``: a warning when no quality metric improved significantly (paired, Holm-corrected: ``compare_runs``),
    when one got significantly worse, when they cannot be compared, and for a version change."""
    if current is None:
        return [], {"compared": False, "reason": "no baseline before"}
    new, old = batch.id[:8], current.id[:8]
    try:
        report = compare_runs(store, current.id, batch.id, allow_version_change=True)
    except ClearSideError as exc:
        return ([f"Batch {new} could not be compared run by run with the baseline {old} it replaces ({exc}), so it "
                 "is not known to be significantly better on the quality metrics."],
                {"compared": False, "against": current.id, "reason": str(exc)})
    quality = set(quality_metrics())
    rows = [m for m in report["metrics"] if m["metric"] in quality]
    improved = [m["metric"] for m in rows if m["verdict"] == "improvement"]
    worse = [m["metric"] for m in rows if m["significant"] and m["worse_by"] > 0]
    warnings = []
    why = (" The flagship rule: change the flagship baseline only if reasoning quality improves."
           if batch.suite == FLAGSHIP else "")
    if not improved:
        warnings.append(f"Batch {new} is not significantly better than the baseline {old} it replaces on the quality "
                        f"metrics: none improved significantly (Holm p < {report['alpha']:g}) over "
                        f"{report['pairs']} pair(s) of runs"
                        + (f", and {', '.join(worse)} got significantly worse" if worse else "") + "." + why)
    elif worse:
        warnings.append(f"Batch {new} improved significantly on {', '.join(improved)} but got significantly worse on "
                        f"{', '.join(worse)} than the baseline {old} it replaces." + why)
    if report["version_changes"]:
        warnings.append(f"Versions changed since the baseline {old}: {'; '.join(report['version_changes'])}.")
    review = {"compared": True, "against": current.id, "pairs": report["pairs"], "improved": improved,
              "worse": worse, "regressions": report["regressions"], "version_changes": report["version_changes"],
              "version_notes": report["version_notes"]}
    return warnings, review


def bless(store: Store, batch_or_run: str, note: str = "") -> Blessed:
    """Make a batch (named by its id or any of its runs' ids) its suite's baseline, and record it in the bless
    history. On the flagship suite ``note`` (why) is required; a batch not significantly better than the baseline
    it replaces on the quality metrics is still blessed, with the warning recorded and returned."""
    batch = _batch_named(store, batch_or_run)
    note = (note or "").strip()
    if batch.suite in NOTE_REQUIRED and not note:
        raise InputError(f"Blessing a new {batch.suite} baseline needs a note of why (the flagship changes only "
                         f"if reasoning quality improves): `python -m clearside bless {batch.id} --note "
                         "\"what improved\"`.",
                         dashboard=f"Blessing a new {batch.suite} baseline needs a note of why (the flagship changes "
                                   "only if reasoning quality improves): write it in “Why this baseline”.")
    current = baseline(store, batch.suite)
    if current is not None and current.id == batch.id:
        raise InputError(f"Batch {batch.id} is already the {batch.suite} baseline.")
    warnings, review = review_against(store, current, batch)
    store.bless_batch(batch.suite, batch.id, note=note, warnings=warnings,
                      detail={"provider": batch.spec, "runs": len(batch.rows), "batch_created_at": batch.created_at,
                              "versions": batch_versions(batch), "review": review})
    blessed = next(b for b in batches(store, batch.suite) if b.id == batch.id)
    return Blessed(batch=blessed, previous=current.id if current else None, note=note, warnings=warnings)


def history(store: Store, suite: str | None = None) -> list[dict[str, Any]]:
    """The bless history, newest first: the store's rows with each batch's age."""
    return [{**row, "age": age(row["created_at"])} for row in store.blessings(suite)]


def history_markdown(rows: list[dict[str, Any]]) -> str:
    """The bless history to read, one entry per bless: when, the suite, the batch, the note, the warnings."""
    if not rows:
        return "No batch has been blessed yet: `python -m clearside bless BATCH --note \"why\"` makes a baseline.\n"
    lines = []
    for row in rows:
        replaced = f", replacing {row['previous']}" if row.get("previous") else ", the suite's first baseline"
        lines.append(f"{row['created_at'][:16].replace('T', ' ')} UTC ({row['age']} ago)  {row['suite']}: batch "
                     f"{row['batch']} ({(row.get('detail') or {}).get('provider', '?')}){replaced}")
        lines.append(f"    note: {row['note'] or '(none)'}")
        lines += [f"    warning: {w}" for w in row.get("warnings") or []]
    return "\n".join(lines) + "\n"


def baseline_summary(base: Batch) -> dict[str, Any]:
    """A baseline as reports show it: its batch, model, when, how long ago, and its versions."""
    return {"batch": base.id, "provider": base.spec, "created_at": base.created_at, "age": age(base.created_at),
            "versions": batch_versions(base)}
