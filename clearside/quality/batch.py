"""The regression batch as data: the suites a batch debates, the gates, and the batches saved in the store.

A batch is the runs of one ``regress`` (or comparison): each run a row of the store's ``runs`` with the batch id,
the case (``item``) and the repeat (``index``) in its ``data``, saved the moment it finishes, so a batch stopped
half-way keeps what it did. :class:`Batch` holds them; :func:`batches`, :func:`find_batch` and :func:`baseline`
read them back; :func:`aggregate` and :func:`check` judge a batch's mean metrics against the absolute gates
(:data:`THRESHOLDS`) and the blessed baseline's means: a batch passes when its means meet the gates and no metric is
worse than the baseline's by more than its tolerance plus the larger of the two spreads.

The other quality modules build on this one (:mod:`.versions`, :mod:`.compare_runs`, :mod:`.baseline`,
:mod:`.regress`, the workflow); it imports none of them.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import InputError
from ..runtime import status
from ..store import Store
from . import metrics, references, suites
from .references import Reference
from .suites import Case, Suite

SUITES: dict[str, Callable[[], list[Reference]]] = {
    "flagship": lambda: [references.flagship()],
    "argkp-dev": lambda: list(references.argkp_dev()),
}
# Absolute gates (min / max on the batch mean) and tolerances against the baseline's mean.
# docs/design/requirements.md#regression-gates: schema validation and moderator neutrality are hard gates; the rest may
# not get worse than the blessed baseline. Time and tokens are reported, never gated (machine load).
THRESHOLDS: dict[str, dict[str, float]] = {
    "schema_valid": {"min": 1.0},
    "neutrality_violations": {"max": 0.0},
    "false_certainty": {"tolerance": 0.5},
    "count_ratio": {"tolerance": 0.15},
    "length_ratio": {"tolerance": 0.15},
    "evidence_divergence": {"tolerance": 0.2},
    "confidence_gap": {"tolerance": 0.3},
    "assumption_linkage": {"tolerance": 0.15},
    "conflicts_two_sided": {"tolerance": 0.25},
    "diversity": {"tolerance": 0.05},
    "duplicate_pairs": {"tolerance": 0.5},
    "off_topic": {"tolerance": 0.1},
    "grounding": {"tolerance": 0.2},
    # a batch that expressed none of the reference's key points debated something else (or nothing): no baseline
    # excuses it, so coverage must stay above 0 whatever the baseline's (docs/quality/regression.md#gates)
    "coverage": {"above": 0.0, "tolerance": 0.1},
    "stance_margin": {"min": 0.0, "tolerance": 0.1},
    "hinge_coverage": {"tolerance": 0.25},
    # substance checks: garbage left in the finished document must stay at zero; what the checks caught on
    # the way (repaired or re-asked) may rise only within tolerance, or the model or prompts got worse
    "garbage_left": {"max": 0.0},
    "checks_caught": {"tolerance": 1.0},
    "reasks": {"tolerance": 0.5},
    # the swap check (only in batches that ask for it): no gate of its own, no worse than a baseline that has it
    "flip_rate": {"tolerance": 0.2},
}


def suite_items(suite: str) -> list[Reference]:
    """A built-in suite's references (what an enqueued batch's workers debate)."""
    if suite not in SUITES:
        raise InputError(f"Unknown suite {suite!r}: use one of {', '.join(SUITES)}.")
    return SUITES[suite]()


def load_suite(suite: str | Suite) -> Suite:
    """A built-in suite by name, or the user's suite file at that path (see :mod:`clearside.quality.suites`)."""
    return suite if isinstance(suite, Suite) else suites.resolve(suite)




def builtin_suite(name: str) -> Suite:
    """A built-in suite by name, its cases made from its references (``InputError`` naming the built-ins for any
    other name, as :func:`suite_items`)."""
    return Suite(name=name, source="built-in", cases=tuple(Case.from_reference(r) for r in suite_items(name)))


def suite_names(store: Store) -> list[str]:
    """Every suite the store has runs of: the built-ins first, then the user's suites, then comparisons."""
    found = set(store.suites())
    return [*SUITES, *sorted(found - {*SUITES, "compare"}), "compare"]


def stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "mean": round(statistics.fmean(values), 4),
            "stdev": round(statistics.stdev(values), 4) if len(values) > 1 else 0.0,
            "min": round(min(values), 4), "max": round(max(values), 4), "values": [round(v, 4) for v in values]}


def aggregate(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Mean and spread of every headline metric over a batch's finished runs (failed runs count as invalid)."""
    names = [name for name in metrics.SUMMARY if any(name in (r.get("metrics") or {}) for r in rows)]
    return {name: stats([float(r["metrics"][name]) for r in rows if name in (r.get("metrics") or {})])
            for name in names}


GATES = ("min", "max", "above")  # the absolute gates a metric may have (beside its tolerance against the baseline)


def gate_reasons(what: str, value: float, rule: dict[str, float]) -> list[str]:
    """Why ``value`` (named ``what`` in the reasons) misses the absolute gates of ``rule``: ``min`` (at least),
    ``max`` (at most), ``above`` (strictly more than); [] when it meets them."""
    reasons = []
    if "min" in rule and value < rule["min"]:
        reasons.append(f"{what} is below the gate {rule['min']:g}")
    if "max" in rule and value > rule["max"]:
        reasons.append(f"{what} is above the gate {rule['max']:g}")
    if "above" in rule and value <= rule["above"]:
        reasons.append(f"{what} must be above {rule['above']:g}")
    return reasons


def check(current: dict[str, dict[str, Any]], baseline: dict[str, dict[str, Any]] | None,
          thresholds: dict[str, dict[str, float]] | None = None) -> list[dict[str, Any]]:
    """One row per metric: its gates, its delta from the baseline and pass, fail or info."""
    thresholds = {**THRESHOLDS, **(thresholds or {})}
    out = []
    for name, now in current.items():
        if not now.get("n"):
            continue
        direction = metrics.SUMMARY[name][0]
        rule = thresholds.get(name, {})
        row: dict[str, Any] = {"metric": name, "better": direction, "mean": now["mean"], "stdev": now["stdev"],
                               "status": "pass" if rule else "info", "reasons": []}
        row["reasons"] += gate_reasons(f"mean {now['mean']:g}", now["mean"], rule)
        base = (baseline or {}).get(name)
        if base and base.get("n"):
            delta = now["mean"] - base["mean"]
            worse = -delta if direction == "higher" else delta
            spread = max(now["stdev"], base["stdev"])
            row.update(baseline_mean=base["mean"], baseline_stdev=base["stdev"], delta=round(delta, 4),
                       spread=spread)
            if "tolerance" in rule:
                allowed = rule["tolerance"] + spread
                row["allowed"] = round(allowed, 4)
                if worse > allowed + 1e-9:
                    row["reasons"].append(f"{worse:g} worse than the baseline's {base['mean']:g}; allowed "
                                          f"{rule['tolerance']:g} + spread {spread:g}")
        if row["reasons"]:
            row["status"] = "fail"
        out.append(row)
    return out


@dataclass
class Batch:
    """The runs of one ``regress`` (or comparison) invocation."""

    id: str
    suite: str
    provider: str
    model: str
    created_at: str
    rows: list[dict[str, Any]]

    @property
    def baseline(self) -> bool:
        return any(r["baseline"] for r in self.rows)

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.model}" if self.model else self.provider

    @property
    def started_at(self) -> str:
        """When the batch started (microseconds; older batches: their first run's creation, to the second)."""
        return (self.rows[0].get("data") or {}).get("started_at") or self.created_at

    @property
    def planned(self) -> int:
        """How many runs the batch was started with (older batches: how many it saved)."""
        return int((self.rows[0].get("data") or {}).get("planned") or len(self.rows))

    def state(self, job: Any = None) -> str:
        """Its job's status while the runtime has it under way (``job``: the batch's
        :class:`clearside.runtime.JobState`), else interrupted or done: see :mod:`clearside.runtime.status`."""
        return status.batch_state(self.rows, job)

    def aggregate(self) -> dict[str, dict[str, Any]]:
        return aggregate([r for r in self.rows if r["status"] in ("done", "failed")])


def batches(store: Store, suite: str) -> list[Batch]:
    """A suite's batches, oldest first (by the moment the batch started, to the microsecond)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in store.runs(suite):
        grouped.setdefault((row.get("data") or {}).get("batch") or row["id"], []).append(row)
    found = [Batch(id=key, suite=suite, provider=rows[0]["provider"], model=rows[0]["model"],
                   created_at=rows[0]["created_at"], rows=rows) for key, rows in grouped.items()]
    return sorted(found, key=lambda b: (b.started_at, b.created_at))


def find_batch(store: Store, batch_id: str) -> Batch | None:
    """A batch of any suite (built-in, the user's or comparisons) by its id."""
    rows = store.runs(batch=batch_id)  # through the runs' batch index
    if not rows:
        return None
    rows = [r for r in rows if r["suite"] == rows[0]["suite"]]
    return Batch(id=batch_id, suite=rows[0]["suite"], provider=rows[0]["provider"], model=rows[0]["model"],
                 created_at=rows[0]["created_at"], rows=rows)


def baseline(store: Store, suite: str) -> Batch | None:
    """The suite's blessed baseline batch, if any (only ``bless`` moves it)."""
    return next((b for b in reversed(batches(store, suite)) if b.baseline), None)


def age(stamp: str, now: datetime | None = None) -> str:
    """How long ago ``stamp`` (ISO 8601) was, in words: ``3 days``, ``5 hours``, ``under a minute``."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return "unknown"
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    seconds = max(0.0, ((now or datetime.now(UTC)) - moment).total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return "under a minute"
