"""Paired comparison: the statistics on hand-made numbers with known answers (clearside/paired.py), and
``compare-runs`` on batches saved in a real store (SQLite and PostgreSQL): pairing by case and repeat, the
verdict, flipped cases, too few repeats, and the refusals of bad input (exit 2)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers import run_cli as run

from clearside.quality import paired
from clearside.quality.compare_runs import run_failures

# -- the statistics -------------------------------------------------------------------------------------------------


def test_sign_flip_exact_p_values_match_hand_counts():
    assert paired.sign_flip_p([1, 1, 1, 1, 1, 1]) == pytest.approx(2 / 64)  # only all-plus and all-minus as extreme
    assert paired.sign_flip_p([2, 1, 1]) == pytest.approx(2 / 8)  # |mean| 4/3 only with all signs alike
    assert paired.sign_flip_p([1, 1, 1, -1]) == pytest.approx(10 / 16)  # |sum| >= 2: 1 + 4 + 4 + 1 patterns of 16
    assert paired.sign_flip_p([0.1, -0.1, 0.05, -0.05]) == 1.0
    assert paired.sign_flip_p([0, 0, 0]) == 1.0
    assert paired.smallest_p(5) == pytest.approx(1 / 16) and paired.smallest_p(6) < paired.ALPHA


def test_a_clear_shift_is_detected_and_no_shift_is_not():
    rng = np.random.default_rng(7)
    a = rng.normal(0.6, 0.05, 12)
    shifted = a - 0.3 + rng.normal(0, 0.02, 12)
    row = paired.compare_metric("coverage", a, shifted, better="higher", tolerance=0.1)
    assert row.p < 0.001 and -0.35 < row.ci_low <= row.ci_high < -0.25  # the interval excludes 0, around -0.3
    assert row.ci_low <= row.diff <= row.ci_high and row.worse_by == pytest.approx(-row.diff)
    noise = a + np.array([0.01, -0.01, 0.02, -0.02, 0.015, -0.015, 0.005, -0.005, 0.01, -0.01, 0.0, 0.0])
    same = paired.compare_metric("coverage", a, noise, better="higher", tolerance=0.1)
    assert same.p > 0.5 and same.ci_low < 0 < same.ci_high
    rows = {r.metric: r for r in paired.compare({"coverage": (a, shifted), "diversity": (a, noise)},
                                                better={"coverage": "higher", "diversity": "higher"},
                                                tolerance={"coverage": 0.1, "diversity": 0.1}, cases=3)}
    assert rows["coverage"].verdict == "regression" and rows["coverage"].significant
    assert rows["diversity"].verdict == "no significant difference" and not rows["diversity"].too_few


def test_the_monte_carlo_test_above_sixteen_pairs():
    shift = np.full(30, 0.2) + np.linspace(-0.05, 0.05, 30)
    assert paired.sign_flip_p(shift) == pytest.approx(1 / (paired.RESAMPLES + 1))
    symmetric = np.concatenate([np.linspace(0.1, 1, 15), -np.linspace(0.1, 1, 15)])
    assert paired.sign_flip_p(symmetric) == 1.0
    assert paired.sign_flip_p(shift) == paired.sign_flip_p(shift)  # seeded: the same answer every time


def test_holm_on_known_p_values():
    assert paired.holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None])
    assert paired.holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert paired.holm([0.04, 0.03, 0.02]) == pytest.approx([0.06, 0.06, 0.06])  # monotone: 0.04 x 1 lifted to 0.06
    assert paired.holm([0.9, 0.8, 0.7]) == [1.0, 1.0, 1.0]  # capped at 1
    assert paired.holm([0.4, 0.3]) == pytest.approx([0.6, 0.6])
    assert paired.holm([]) == []


def test_holm_turns_a_lone_small_p_among_many_metrics_into_no_regression():
    """Twenty metrics with one p of 0.01: uncorrected it would be significant, Holm makes it 0.2."""
    pvalues = [0.01] + [0.5] * 19
    assert paired.holm(pvalues)[0] == pytest.approx(0.2)


def test_bootstrap_interval_is_seeded_and_degenerate_cases_are_points():
    d = [0.1, 0.3, 0.2, 0.4, 0.25, 0.15]
    low, high = paired.bootstrap_ci(d)
    assert (low, high) == paired.bootstrap_ci(d) and low < np.mean(d) < high and low > 0.1 and high < 0.4
    assert paired.bootstrap_ci([0.2]) == (0.2, 0.2) and paired.bootstrap_ci([0.3, 0.3, 0.3]) == (0.3, 0.3)


def test_pairs_needed_is_the_standard_power_formula():
    z = 1.959964 + 0.841621
    assert paired.pairs_needed(0.2, 0.1) == math.ceil((z * 0.2 / 0.1) ** 2) == 32
    assert paired.pairs_needed(0.5, 0.1) == math.ceil((z * 5) ** 2) == 197
    assert paired.pairs_needed(0.0, 0.1) == 6  # no spread: the sign-flip test's own floor (2/2^6 < 0.05)
    assert paired.pairs_needed(0.3, 0.0) is None


def test_high_variance_with_few_repeats_is_too_few_to_tell():
    a, b = [0.5, 0.6, 0.4], [0.2, 0.9, 0.1]  # a mean drop of 0.1, spread 0.4
    row, = paired.compare({"coverage": (a, b)}, better={"coverage": "higher"}, tolerance={"coverage": 0.1}, cases=1)
    assert not row.significant and row.too_few and row.verdict == "too few to tell"
    assert row.pairs_needed == paired.pairs_needed(row.sd, 0.1) and row.pairs_needed > 3
    two_cases, = paired.compare({"coverage": (a, b)}, better={"coverage": "higher"}, tolerance={"coverage": 0.1},
                                cases=3)
    assert two_cases.repeats_needed == math.ceil(row.pairs_needed / 3)


def test_verdicts_within_tolerance_improvement_not_gated_and_no_difference():
    base = [1.0] * 8
    rows = {r.metric: r for r in paired.compare(
        {"coverage": (base, [0.95] * 8), "diversity": (base, [1.2] * 8), "seconds": (base, [3.0] * 8),
         "schema_valid": (base, base), "neutrality_violations": ([0.0] * 8, [1.0] * 8)},
        better={"coverage": "higher", "diversity": "higher", "seconds": "lower", "schema_valid": "higher",
                "neutrality_violations": "lower"},
        tolerance={"coverage": 0.1, "diversity": 0.05, "seconds": None, "schema_valid": 0.0,
                   "neutrality_violations": 0.0})}
    assert rows["coverage"].significant and rows["coverage"].verdict == "worse, within tolerance"
    assert rows["diversity"].verdict == "improvement"
    assert rows["seconds"].verdict == "worse (not gated)"
    assert rows["schema_valid"].verdict == "no difference" and not rows["schema_valid"].too_few
    assert rows["neutrality_violations"].verdict == "regression"  # a gate only: any significant worsening


# -- compare-runs on stored batches ---------------------------------------------------------------------------------

GOOD = {"schema_valid": 1.0, "neutrality_violations": 0.0, "coverage": 0.6, "diversity": 0.4, "seconds": 10.0}


def save_batch(store, batch: str, suite: str = "flagship", cases=("c1", "c2"), repeats: int = 4,
               metrics=lambda case, i: GOOD, status=lambda case, i: "done") -> str:
    for i in range(repeats):
        for case in cases:
            store.add_run(suite, provider="scripted", model=f"{batch}.json", status=status(case, i),
                          metrics=metrics(case, i), data={"batch": batch, "item": case, "index": i})
    return batch


def wobble(shift: float = 0.0, neutrality=lambda case, i: 0.0):
    def metrics(case: str, i: int) -> dict:
        jitter = (-0.02, 0.01, 0.02, -0.01)[i % 4] + (0.005 if case == "c2" else 0.0)
        return {**GOOD, "coverage": round(0.6 + jitter + shift, 4), "diversity": round(0.4 - jitter, 4),
                "neutrality_violations": neutrality(case, i)}
    return metrics


def test_compare_runs_declares_a_regression_lists_flips_and_exits_1(db, capsys):
    save_batch(db, "a" * 32, metrics=wobble())
    save_batch(db, "b" * 32, metrics=wobble(-0.3, neutrality=lambda case, i: 1.0 if (case, i) == ("c2", 1) else 0.0))
    code, out, err = run(capsys, "compare-runs", "a" * 32, "b" * 32)
    assert code == 1, out + err
    assert "— REGRESSION" in out and "8 pair(s) of runs over 2 case(s)" in out
    line = next(x for x in out.splitlines() if x.startswith("| coverage |"))
    assert "| -0.3 |" in line and line.rstrip().endswith("| regression |")
    assert "### c2 #2: pass → fail" in out and "neutrality_violations 1 is above the gate 0" in out
    code, out, _ = run(capsys, "compare-runs", "a" * 32, "b" * 32, "--json")
    report = json.loads(out)
    assert code == 1 and report["regression"] and report["regressions"] == ["coverage"]
    coverage = next(m for m in report["metrics"] if m["metric"] == "coverage")
    assert coverage["n"] == 8 and coverage["p"] == pytest.approx(2 / 256) and coverage["diff"] == pytest.approx(-0.3)
    assert coverage["p_holm"] >= coverage["p"] and coverage["ci_high"] < -0.1
    flip, = report["flips"]
    assert (flip["case"], flip["repeat"], flip["change"]) == ("c2", 1, "pass → fail")
    assert flip["a"]["passed"] and not flip["b"]["passed"]
    assert {"metric": "neutrality_violations", "a": 0.0, "b": 1.0} in flip["metrics"]
    assert flip["metrics"][0]["metric"] == "neutrality_violations"  # the gated metric first, side by side


def test_compare_runs_pairs_by_case_and_repeat_and_says_when_repeats_are_too_few(db, capsys):
    # B has a third case and a fifth repeat A lacks, saved in another order: only the shared pairs count
    save_batch(db, "a" * 32, repeats=2, metrics=wobble())
    save_batch(db, "b" * 32, cases=("c2", "c3", "c1"), repeats=3, metrics=wobble(-0.05))
    code, out, err = run(capsys, "compare-runs", "a" * 32, "b" * 32, "--json")
    report = json.loads(out)
    assert code == 0, err
    assert report["pairs"] == 4 and report["cases"] == ["c1", "c2"] and report["unpaired"]["a"] == []
    assert sorted(report["unpaired"]["b"]) == ["c1 #3", "c2 #3", "c3 #1", "c3 #2", "c3 #3"]
    coverage = next(m for m in report["metrics"] if m["metric"] == "coverage")
    assert coverage["diff"] == pytest.approx(-0.05) and coverage["verdict"] == "too few to tell"
    assert "coverage" in report["too_few"] and coverage["repeats_needed"] == math.ceil(coverage["pairs_needed"] / 2)
    _, text, _ = run(capsys, "compare-runs", "a" * 32, "b" * 32)
    assert "Too few repeats to tell" in text and f"`--runs {coverage['repeats_needed']}`" in text
    assert "— NO REGRESSION" in text and "No case flipped" in text


def test_compare_runs_refuses_bad_input_with_exit_2(db, capsys):
    save_batch(db, "a" * 32)
    save_batch(db, "c" * 32, suite="argkp-dev", cases=("argkp-dev:1",))
    save_batch(db, "d" * 32, repeats=1, status=lambda case, i: "running" if case == "c2" else "done")
    for args, words in ((("a" * 32, "f" * 32), f"No batch has the id {'f' * 32}"),
                        (("a" * 32, "a" * 32), "two different batches"),
                        (("a" * 32, "c" * 32), "no finished case and repeat in common"),
                        (("d" * 32, "a" * 32), f"Batch {'d' * 32} is still running (1 of its 2 runs unfinished)")):
        code, out, err = run(capsys, "compare-runs", *args)
        assert code == 2 and out == "" and words in err, err


def test_run_failures_apply_the_absolute_gates_to_one_run():
    assert run_failures({"status": "done", "metrics": GOOD}) == []
    assert run_failures({"status": "done", "metrics": {**GOOD, "schema_valid": 0.0}}) == [
        "schema_valid 0 is below the gate 1"]
    assert run_failures({"status": "failed", "metrics": {}, "data": {"error": "boom"}}) == [
        "the debate failed: boom"]
    assert run_failures({"status": "done", "metrics": {**GOOD, "garbage_left": 2.0}},
                                {"garbage_left": {"max": 3.0}}) == []
