"""Two batches compared run by run (``compare-runs``): paired statistics per metric, the cases that flipped.

Runs are paired by case id and repeat; every metric's paired statistics come from :mod:`clearside.quality.paired`
(mean difference B - A, bootstrap interval, sign-flip test, Holm); a regression is a metric significantly worse by
more than its tolerance (:data:`clearside.quality.batch.THRESHOLDS`). :func:`paired_markdown` is the report to read.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError, NotFound
from ..store import Store
from . import metrics, paired
from .batch import GATES, THRESHOLDS, Batch, find_batch, gate_reasons
from .versions import batch_versions, refuse_version_change, version_differences, version_warning, versions_text

Runs = dict[tuple[str, int], dict[str, Any]]  # a batch's finished runs by (case id, repeat)
Values = dict[str, tuple[list[float], list[float]]]  # each metric's paired values in A and in B


def _gate_tolerance(rule: dict[str, float]) -> float | None:
    """How much worse a metric may get before a significant change is a regression: its tolerance; 0 for a
    metric with only a gate (any significant worsening counts); ``None`` for one reported, never gated."""
    if "tolerance" in rule:
        return float(rule["tolerance"])
    return 0.0 if any(gate in rule for gate in GATES) else None


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
        reasons += gate_reasons(f"{name} {value:g}", value, rule)
    return reasons


def _pairable(batch: Batch) -> Runs:
    """The batch's finished runs (done or failed) by (case id, repeat)."""
    out: Runs = {}
    for row in batch.rows:
        data = row.get("data") or {}
        if row["status"] in ("done", "failed") and data.get("item") is not None:
            out[(str(data["item"]), int(data.get("index") or 0))] = row
    return out


def _side(batch: Batch) -> dict[str, Any]:
    return {"batch": batch.id, "suite": batch.suite, "provider": batch.spec, "created_at": batch.created_at,
            "runs": len(batch.rows)}


def compare_runs(store: Store, batch_a: str, batch_b: str, thresholds: dict[str, dict[str, float]] | None = None,
                 *, allow_version_change: bool = False) -> dict[str, Any]:
    """Batch B against batch A, run by run: pairs by case id and repeat, every metric's paired statistics
    (:mod:`clearside.quality.paired`: mean difference B - A, bootstrap interval, sign-flip test, Holm), the pairs
    that flipped between passing and failing on their own (``run_failures``), and the verdict: a regression only
    where a metric is significantly worse by more than its tolerance. ``InputError`` for an unknown batch, one still
    running, the same batch twice or two batches with no case in common; :class:`VersionChange` for two batches
    scored by different metric suites or embedding models, unless ``allow_version_change`` (then a warning).
    Other version differences (prompts, ClearSide, provider settings) are ``version_notes``."""
    a, b = _finished(store, batch_a), _finished(store, batch_b)
    if a.id == b.id:
        raise InputError(f"compare-runs needs two different batches (got {a.id} twice).")
    versions_a, versions_b = batch_versions(a), batch_versions(b)
    changes, notes = version_differences(versions_a, versions_b)
    if changes and not allow_version_change:
        raise refuse_version_change(f"Batches {a.id} and {b.id} cannot be compared", changes, "compare them")
    runs_a, runs_b = _pairable(a), _pairable(b)
    keys = _common(a, b, runs_a, runs_b)
    rules = {**THRESHOLDS, **(thresholds or {})}
    values = _paired_values(runs_a, runs_b, keys)
    cases = sorted({k[0] for k in keys})
    rows = paired.compare(values, better={n: metrics.SUMMARY[n][0] for n in values},
                          tolerance={n: _gate_tolerance(rules.get(n, {})) for n in values}, cases=len(cases))
    regressions = [r.metric for r in rows if r.verdict == "regression"]
    warnings = [] if a.suite == b.suite else [f"The batches are of different suites ({a.suite} and {b.suite}): "
                                              "only the case ids they share are compared."]
    if changes:
        warnings.insert(0, version_warning(changes))
    return {"a": _side(a), "b": _side(b), "pairs": len(keys), "cases": cases,
            "repeats": max(k[1] for k in keys) + 1, "alpha": paired.ALPHA, "confidence": paired.CONFIDENCE,
            "power": paired.POWER,
            "unpaired": {"a": [f"{c} #{i + 1}" for c, i in sorted(set(runs_a) - set(keys))],
                         "b": [f"{c} #{i + 1}" for c, i in sorted(set(runs_b) - set(keys))]},
            "metrics": [r.as_dict() for r in rows], "flips": _flips(runs_a, runs_b, keys, thresholds),
            "regressions": regressions, "too_few": [r.metric for r in rows if r.too_few],
            "regression": bool(regressions), "warnings": warnings,
            "versions": {"a": versions_a, "b": versions_b}, "version_changes": changes, "version_notes": notes}


def _finished(store: Store, batch_id: str) -> Batch:
    """The batch by its id, refused when there is none or when runs of it are still running."""
    batch = find_batch(store, batch_id)
    if batch is None:
        raise NotFound(f"No batch has the id {batch_id}: `python -m clearside runs` lists them.")
    running = sum(r["status"] == "running" for r in batch.rows)
    if running:
        raise InputError(f"Batch {batch_id} is still running ({running} of its {len(batch.rows)} runs unfinished): "
                         f"wait for it (`python -m clearside status {batch_id} --wait`) and compare again.")
    return batch



def _common(a: Batch, b: Batch, runs_a: Runs, runs_b: Runs) -> list[tuple[str, int]]:
    """The (case id, repeat) pairs both batches finished, sorted; ``InputError`` when there is none."""
    keys = sorted(set(runs_a) & set(runs_b))
    if not keys:
        ids_a = sorted({k[0] for k in runs_a}) or ["none finished"]
        ids_b = sorted({k[0] for k in runs_b}) or ["none finished"]
        raise InputError(f"Batches {a.id} ({a.suite}) and {b.id} ({b.suite}) have no finished case and repeat in "
                         f"common (A: {', '.join(ids_a[:5])}; B: {', '.join(ids_b[:5])}): compare two batches "
                         "of the same suite.")
    return keys


def _paired_values(runs_a: Runs, runs_b: Runs, keys: list[tuple[str, int]]) -> Values:
    """Each metric's values in A and in B, over the pairs that have it on both sides."""
    values: Values = {}
    for name in metrics.SUMMARY:
        both = [(float(runs_a[k]["metrics"][name]), float(runs_b[k]["metrics"][name])) for k in keys
                if name in (runs_a[k].get("metrics") or {}) and name in (runs_b[k].get("metrics") or {})]
        if both:
            values[name] = ([x for x, _ in both], [y for _, y in both])
    return values


def _flips(runs_a: Runs, runs_b: Runs, keys: list[tuple[str, int]],
           thresholds: dict[str, dict[str, float]] | None) -> list[dict[str, Any]]:
    """The pairs whose runs flipped between passing and failing on their own, with what differs between them."""
    rules = {**THRESHOLDS, **(thresholds or {})}
    flips = []
    for key in keys:
        fail_a, fail_b = run_failures(runs_a[key], thresholds), run_failures(runs_b[key], thresholds)
        if bool(fail_a) != bool(fail_b):
            flips.append({"case": key[0], "repeat": key[1], "change": "pass → fail" if fail_b else "fail → pass",
                          "a": _flip_side(runs_a[key], fail_a), "b": _flip_side(runs_b[key], fail_b),
                          "metrics": _side_by_side(runs_a[key], runs_b[key], rules)})
    return flips


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
    lines = [f"# {report.get('title') or 'Paired comparison: B against A'} — {verdict}", "",
             f"- A: batch `{a['batch']}` ({a['suite']}, {a['provider']}, {a['created_at'][:16]})",
             *([f"  - versions: {versions_text(report['versions']['a'])}"] if report.get("versions") else []),
             f"- B: batch `{b['batch']}` ({b['suite']}, {b['provider']}, {b['created_at'][:16]})",
             *([f"  - versions: {versions_text(report['versions']['b'])}"] if report.get("versions") else []), "",
             f"{report['pairs']} pair(s) of runs over {len(report['cases'])} case(s), paired by case id and repeat. "
             f"Difference = B − A; {report['confidence']:.0%} bootstrap interval; p from a two-sided sign-flip "
             f"permutation test, Holm-corrected across the metrics. A regression is a metric significantly worse "
             f"(Holm p < {report['alpha']:g}) by more than its tolerance."]
    for warning in report["warnings"]:
        lines += ["", f"Warning: {warning}"]
    if report.get("version_notes"):
        lines += ["", "Version notes:", *[f"- {n}" for n in report["version_notes"]]]
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

