"""Regression runs: a suite's propositions debated n times on one provider:model, scored, compared.

Each debate is saved in the store as it runs and gets a row in ``runs`` the
moment it finishes (suite, provider, model, prompt versions, headline metrics,
with the batch id in ``data``), so a batch stopped half-way keeps what it did.
A batch passes when its mean metrics meet the absolute gates and, once a batch
of the suite has been blessed, when no metric is worse than the baseline's by
more than its tolerance plus the larger of the two spreads. Only ``bless``
moves a baseline.
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from . import metrics, paired, prompts, references, status, suites, swap
from .engine import DebateRun, Event
from .errors import InputError, NotFound
from .providers import Provider
from .references import Reference
from .scored import run_scored
from .static.recorder import PROMPTS, start_static
from .store import Store
from .suites import Case, Suite

SUITES: dict[str, Callable[[], list[Reference]]] = {
    "flagship": lambda: [references.flagship()],
    "argkp-dev": lambda: list(references.argkp_dev()),
}
# Absolute gates (min / max on the batch mean) and tolerances against the baseline's mean.
# Spec 001 §8.3: schema validation and moderator neutrality are hard gates; the rest may not
# get worse than the blessed baseline. Time and tokens are reported, never gated (machine load).
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
    "coverage": {"tolerance": 0.1},
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
    """A built-in suite by name, or the user's suite file at that path (see :mod:`clearside.suites`)."""
    return suite if isinstance(suite, Suite) else suites.resolve(suite)


def suite_names(store: Store) -> list[str]:
    """Every suite the store has runs of: the built-ins first, then the user's suites, then comparisons."""
    found = {row["suite"] for row in store.runs()}
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
        if "min" in rule and now["mean"] < rule["min"]:
            row["reasons"].append(f"mean {now['mean']:g} is below the gate {rule['min']:g}")
        if "max" in rule and now["mean"] > rule["max"]:
            row["reasons"].append(f"mean {now['mean']:g} is above the gate {rule['max']:g}")
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

    def state(self, running_ids: Collection[str] = ()) -> str:
        """running (a job in ``running_ids`` runs it), interrupted or done: see :mod:`clearside.status`."""
        return status.batch_state(self.id, self.rows, running_ids)

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
    rows = [r for r in store.runs() if ((r.get("data") or {}).get("batch") or r["id"]) == batch_id]
    if not rows:
        return None
    rows = [r for r in rows if r["suite"] == rows[0]["suite"]]
    return Batch(id=batch_id, suite=rows[0]["suite"], provider=rows[0]["provider"], model=rows[0]["model"],
                 created_at=rows[0]["created_at"], rows=rows)


def baseline(store: Store, suite: str) -> Batch | None:
    return next((b for b in reversed(batches(store, suite)) if b.baseline), None)


def bless(store: Store, batch_or_run: str) -> Batch:
    """Make a batch (named by its id or any of its runs' ids) its suite's baseline."""
    for row in store.runs():
        if row["id"] == batch_or_run or (row.get("data") or {}).get("batch") == batch_or_run:
            batch_id = (row.get("data") or {}).get("batch") or row["id"]
            store.bless_batch(row["suite"], batch_id)
            return next(b for b in batches(store, row["suite"]) if b.id == batch_id)
    raise NotFound(f"No run or batch has the id {batch_or_run}: `python -m clearside runs` lists them.")


OnRun = Callable[[dict[str, Any]], None]


def run_batch(suite: str | Suite, provider: Provider, store: Store, *, runs: int = 3, concurrency: int | None = None,
              retries: int = 2, temperature: float = 0.4, thresholds: dict[str, dict[str, float]] | None = None,
              on_run: OnRun | None = None, batch_id: str | None = None, cancel: threading.Event | None = None,
              on_event: Callable[[str, Event], None] | None = None, swap_check: bool = False) -> dict[str, Any]:
    """Debate every case of ``suite`` (a built-in's name, a suite file's path or a loaded :class:`Suite`) ``runs``
    times, save and score each as it finishes; return the report. Runs are filed under the suite's name, each with
    its case id (``item``) and repeat (``index``), which ``compare_runs`` pairs by.
    ``on_event(label, event)``: each run's agent events as they happen (label ``flagship #1``), for progress.
    ``swap_check``: each finished debate also gets the swap check's ``flip_rate`` (one more moderator call)."""
    if runs < 1:
        raise InputError(f"--runs must be at least 1 (got {runs}).")
    loaded = load_suite(suite)
    suite, items = loaded.name, list(loaded.cases)
    concurrency = max(1, concurrency or provider.concurrency)
    batch_id = batch_id or uuid.uuid4().hex
    versions = prompts.versions(*PROMPTS)
    base = baseline(store, suite)
    started, started_at = time.perf_counter(), datetime.now(UTC).isoformat(timespec="microseconds")
    tasks = [(item, i) for i in range(runs) for item in items]

    def one(task: tuple[Case, int]) -> dict[str, Any]:
        item, index = task
        data = {"batch": batch_id, "item": item.name, "index": index, "question": item.proposition,
                "started_at": started_at, "planned": len(tasks)}
        if not loaded.builtin:
            data["suite_file"] = loaded.source
        context = item.context_fields()
        if context:
            data["context"] = context
        if cancel is not None and cancel.is_set():
            return {"status": "cancelled", **data}
        label = f"{item.name} #{index + 1}"
        debate_id = None
        if context:  # saved first with its context: run_scored then completes that debate
            debate_id = start_static(store, DebateRun.from_input(item.proposition, **context), provider=provider.name,
                                     model=provider.model, prompt_versions=versions)
        scored = run_scored(item.proposition, provider, store, suite=suite, data=data, retries=retries,
                            temperature=temperature, reference=item.scoring_reference(), debate_id=debate_id,
                            on_event=(lambda event: on_event(label, event)) if on_event else None,
                            swap_check=swap_check)
        result = item_result(scored, data)
        if on_run:
            on_run(result)
        return result

    with ThreadPoolExecutor(max_workers=min(concurrency, len(tasks)), thread_name_prefix="regress") as pool:
        results = list(pool.map(one, tasks))
    return batch_report(suite, provider.spec, items, runs, batch_id, concurrency, versions, started_at,
                        round(time.perf_counter() - started, 2), results, base, thresholds)


def item_result(scored: Any, data: dict[str, Any]) -> dict[str, Any]:
    """One batch item's row in the report, from its scored run (``scored.run_scored``) and its ``data``."""
    result: dict[str, Any] = {"id": scored.run_id, "status": scored.status, "metrics": scored.metrics, **data}
    if scored.status == "failed":
        result["error"] = scored.error
    elif scored.status == "done":
        result["detail"] = scored.detail
    result.update(debate_id=scored.debate_id, wall_seconds=scored.wall_seconds)
    return result


def batch_report(suite: str, spec: str, items: list[Reference] | list[Case], runs: int, batch_id: str, concurrency: int,
                 versions: dict[str, str], started_at: str, wall_seconds: float, results: list[dict[str, Any]],
                 base: Batch | None, thresholds: dict[str, dict[str, float]] | None) -> dict[str, Any]:
    """The batch's report: its metrics against the baseline ``base`` and the gates, and each debate's outcome."""
    planned = runs * len(items)
    done = [r for r in results if r["status"] in ("done", "failed")]
    current = aggregate(done)
    checks = check(current, base.aggregate() if base else None, thresholds)
    failures = [c for c in checks if c["status"] == "fail"]
    return {
        "suite": suite, "batch": batch_id, "provider": spec, "runs": runs,
        "items": [item.name for item in items], "concurrency": concurrency, "prompt_versions": versions,
        "started_at": started_at, "wall_seconds": wall_seconds,
        "metrics": current,
        "baseline": None if base is None else {"batch": base.id, "provider": base.spec,
                                                "created_at": base.created_at, "metrics": base.aggregate()},
        "checks": checks, "passed": not failures and len(done) == planned,
        "failures": [f"{c['metric']}: {'; '.join(c['reasons'])}" for c in failures]
        + ([f"{planned - len(done)} of {planned} runs were cancelled"] if len(done) < planned else []),
        "debates": [{k: r.get(k) for k in ("id", "debate_id", "item", "index", "status", "error", "wall_seconds")}
                    for r in results if r["status"] != "cancelled"],
    }


def markdown(report: dict[str, Any]) -> str:
    verdict = "PASS" if report["passed"] else "REGRESSION"
    lines = [f"# Regression: {report['suite']} on {report['provider']} — {verdict}", "",
             f"{report['runs']} run(s) of {', '.join(report['items'])}, batch `{report['batch']}`, "
             f"{report['wall_seconds']} s wall, concurrency {report['concurrency']}.", ""]
    base = report["baseline"]
    lines.append(f"Baseline: batch `{base['batch']}` ({base['provider']}, {base['created_at']})." if base
                 else "No blessed baseline yet: only the absolute gates apply. Bless a batch with "
                      "`python -m clearside bless BATCH`.")
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
    return "\n".join(lines) + "\n"


# -- paired comparison of two batches (compare-runs) -------------------------------------------------------------

def _gate_tolerance(rule: dict[str, float]) -> float | None:
    """How much worse a metric may get before a significant change is a regression: its tolerance; 0 for a
    metric with only a gate (any significant worsening counts); ``None`` for one reported, never gated."""
    if "tolerance" in rule:
        return float(rule["tolerance"])
    return 0.0 if ("min" in rule or "max" in rule) else None


def run_failures(row: dict[str, Any], thresholds: dict[str, dict[str, float]] | None = None) -> list[str]:
    """Why one run fails on its own ([] when it passes): it did not finish, or a metric misses its absolute gate
    (the batch gates of ``THRESHOLDS`` applied to this run's value)."""
    if row["status"] != "done":
        error = (row.get("data") or {}).get("error")
        return [f"the debate {row['status']}" + (f": {error}" if error else "")]
    reasons = []
    for name, rule in {**THRESHOLDS, **(thresholds or {})}.items():
        value = (row.get("metrics") or {}).get(name)
        if value is None:
            continue
        if "min" in rule and value < rule["min"]:
            reasons.append(f"{name} {value:g} is below the gate {rule['min']:g}")
        if "max" in rule and value > rule["max"]:
            reasons.append(f"{name} {value:g} is above the gate {rule['max']:g}")
    return reasons


def _pairable(batch: Batch) -> dict[tuple[str, int], dict[str, Any]]:
    """The batch's finished runs (done or failed) by (case id, repeat)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for row in batch.rows:
        data = row.get("data") or {}
        if row["status"] in ("done", "failed") and data.get("item") is not None:
            out[(str(data["item"]), int(data.get("index") or 0))] = row
    return out


def _side(batch: Batch) -> dict[str, Any]:
    return {"batch": batch.id, "suite": batch.suite, "provider": batch.spec, "created_at": batch.created_at,
            "runs": len(batch.rows)}


def compare_runs(store: Store, batch_a: str, batch_b: str,
                 thresholds: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """Batch B against batch A, run by run: pairs by case id and repeat, every metric's paired statistics
    (:mod:`clearside.paired`: mean difference B - A, bootstrap interval, sign-flip test, Holm), the pairs that
    flipped between passing and failing on their own (``run_failures``), and the verdict: a regression only where
    a metric is significantly worse by more than its tolerance. ``InputError`` for an unknown batch, one still
    running, the same batch twice or two batches with no case in common."""
    found = []
    for name in (batch_a, batch_b):
        batch = find_batch(store, name)
        if batch is None:
            raise NotFound(f"No batch has the id {name}: `python -m clearside runs` lists them.")
        running = sum(r["status"] == "running" for r in batch.rows)
        if running:
            raise InputError(f"Batch {name} is still running ({running} of its {len(batch.rows)} runs unfinished): "
                             f"wait for it (`python -m clearside status {name} --wait`) and compare again.")
        found.append(batch)
    a, b = found
    if a.id == b.id:
        raise InputError(f"compare-runs needs two different batches (got {a.id} twice).")
    runs_a, runs_b = _pairable(a), _pairable(b)
    keys = sorted(set(runs_a) & set(runs_b))
    if not keys:
        ids_a = sorted({k[0] for k in runs_a}) or ["none finished"]
        ids_b = sorted({k[0] for k in runs_b}) or ["none finished"]
        raise InputError(f"Batches {a.id} ({a.suite}) and {b.id} ({b.suite}) have no finished case and repeat in "
                         f"common (A: {', '.join(ids_a[:5])}; B: {', '.join(ids_b[:5])}): compare two batches "
                         "of the same suite.")
    rules = {**THRESHOLDS, **(thresholds or {})}
    values: dict[str, tuple[list[float], list[float]]] = {}
    for name in metrics.SUMMARY:
        both = [(float(runs_a[k]["metrics"][name]), float(runs_b[k]["metrics"][name])) for k in keys
                if name in (runs_a[k].get("metrics") or {}) and name in (runs_b[k].get("metrics") or {})]
        if both:
            values[name] = ([x for x, _ in both], [y for _, y in both])
    cases = sorted({k[0] for k in keys})
    rows = paired.compare(values, better={n: metrics.SUMMARY[n][0] for n in values},
                          tolerance={n: _gate_tolerance(rules.get(n, {})) for n in values}, cases=len(cases))
    flips = []
    for key in keys:
        fail_a, fail_b = run_failures(runs_a[key], thresholds), run_failures(runs_b[key], thresholds)
        if bool(fail_a) != bool(fail_b):
            flips.append({"case": key[0], "repeat": key[1], "change": "pass → fail" if fail_b else "fail → pass",
                          "a": _flip_side(runs_a[key], fail_a), "b": _flip_side(runs_b[key], fail_b),
                          "metrics": _side_by_side(runs_a[key], runs_b[key], rules)})
    regressions = [r.metric for r in rows if r.verdict == "regression"]
    warnings = [] if a.suite == b.suite else [f"The batches are of different suites ({a.suite} and {b.suite}): "
                                              "only the case ids they share are compared."]
    return {"a": _side(a), "b": _side(b), "pairs": len(keys), "cases": cases,
            "repeats": max(k[1] for k in keys) + 1, "alpha": paired.ALPHA, "confidence": paired.CONFIDENCE,
            "power": paired.POWER,
            "unpaired": {"a": [f"{c} #{i + 1}" for c, i in sorted(set(runs_a) - set(keys))],
                         "b": [f"{c} #{i + 1}" for c, i in sorted(set(runs_b) - set(keys))]},
            "metrics": [r.as_dict() for r in rows], "flips": flips, "regressions": regressions,
            "too_few": [r.metric for r in rows if r.too_few], "regression": bool(regressions), "warnings": warnings}


def _flip_side(row: dict[str, Any], failures: list[str]) -> dict[str, Any]:
    return {"run": row["id"], "debate_id": row.get("debate_id"), "status": row["status"],
            "passed": not failures, "failures": failures}


def _side_by_side(a: dict[str, Any], b: dict[str, Any], rules: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """The two runs' values of every metric that differs between them, gated metrics first."""
    ma, mb = a.get("metrics") or {}, b.get("metrics") or {}
    names = [n for n in metrics.SUMMARY if (n in ma or n in mb) and ma.get(n) != mb.get(n)]
    names.sort(key=lambda n: not ({"min", "max"} & set(rules.get(n, {}))))
    return [{"metric": n, "a": ma.get(n), "b": mb.get(n)} for n in names]


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.1e}"


def paired_markdown(report: dict[str, Any]) -> str:
    """The paired comparison as a readable report: the table, what needs more repeats, the flipped cases."""
    a, b = report["a"], report["b"]
    verdict = "REGRESSION" if report["regression"] else "NO REGRESSION"
    lines = [f"# Paired comparison: B against A — {verdict}", "",
             f"- A: batch `{a['batch']}` ({a['suite']}, {a['provider']}, {a['created_at'][:16]})",
             f"- B: batch `{b['batch']}` ({b['suite']}, {b['provider']}, {b['created_at'][:16]})", "",
             f"{report['pairs']} pair(s) of runs over {len(report['cases'])} case(s), paired by case id and repeat. "
             f"Difference = B − A; {report['confidence']:.0%} bootstrap interval; p from a two-sided sign-flip "
             f"permutation test, Holm-corrected across the metrics. A regression is a metric significantly worse "
             f"(Holm p < {report['alpha']:g}) by more than its tolerance."]
    for warning in report["warnings"]:
        lines += ["", f"Warning: {warning}"]
    for side in ("a", "b"):
        if report["unpaired"][side]:
            shown = report["unpaired"][side]
            lines += ["", f"Only in {side.upper()} (not compared): {', '.join(shown[:10])}"
                          + (f" and {len(shown) - 10} more" if len(shown) > 10 else "")]
    lines += ["", "| metric | better | pairs | mean A | mean B | B − A | 95% CI | p | p (Holm) | tolerance | verdict |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in report["metrics"]:
        tol = "not gated" if m["tolerance"] is None else f"{m['tolerance']:g}"
        lines.append(f"| {m['metric']} | {m['better']} | {m['n']} | {_num(m['mean_a'])} | {_num(m['mean_b'])} | "
                     f"{m['diff']:+.3g} | [{m['ci_low']:+.3g}, {m['ci_high']:+.3g}] | {_num(m['p'])} | "
                     f"{_num(m['p_holm'])} | {tol} | {m['verdict']} |")
    few = [m for m in report["metrics"] if m["too_few"]]
    if few:
        lines += ["", f"Too few repeats to tell (alpha {report['alpha']:g}, power {report['power']:.0%}, for the "
                      "spread observed):"]
        for m in few:
            size = f"{m['tolerance']:g} (its tolerance)" if m["tolerance"] else f"{abs(m['diff']):.3g} (as observed)"
            lines.append(f"- {m['metric']}: {m['n']} pair(s), spread ±{m['sd']:.3g}; detecting a difference of "
                         f"{size} needs about {m['pairs_needed']} pairs: {m['repeats_needed']} repeat(s) per case "
                         f"(`--runs {m['repeats_needed']}`).")
    if report["flips"]:
        lines += ["", f"Cases that flipped ({len(report['flips'])}):"]
        for f in report["flips"]:
            lines += ["", f"### {f['case']} #{f['repeat'] + 1}: {f['change']}", "",
                      f"- A (run `{f['a']['run']}`): " + ("passes" if f["a"]["passed"] else
                                                           "fails: " + "; ".join(f["a"]["failures"])),
                      f"- B (run `{f['b']['run']}`): " + ("passes" if f["b"]["passed"] else
                                                           "fails: " + "; ".join(f["b"]["failures"]))]
            if f["metrics"]:
                lines += ["", "| metric | A | B |", "|---|---|---|",
                          *[f"| {m['metric']} | {_num(m['a'], 4)} | {_num(m['b'], 4)} |" for m in f["metrics"]]]
    else:
        lines += ["", "No case flipped between passing and failing."]
    if report["regressions"]:
        lines += ["", f"Regressions: {', '.join(report['regressions'])}."]
    return "\n".join(lines) + "\n"
