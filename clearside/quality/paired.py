"""Paired statistics for comparing two batches run on the same cases: pure numbers, no store, no model.

Each metric arrives as two equally long lists, A's and B's values, where position i of both is one pair (the same
case and repeat in both batches). On the differences ``d = B - A``:

- the mean difference and a percentile bootstrap confidence interval of it (``bootstrap_ci``);
- a two-sided sign-flip permutation test (``sign_flip_p``): under "no difference" each pair's difference is as
  likely positive as negative, so the observed mean is compared with the means of every sign pattern (exact up to
  ``EXACT_UP_TO`` pairs, else ``RESAMPLES`` random patterns). It assumes no normality;
- Holm's step-down correction across the metrics tested together (``holm``);
- how many pairs a difference the size of the tolerance would need to be detected, for the spread observed
  (``pairs_needed``): the standard power formula for a paired difference, n = ((z(1-alpha/2) + z(power)) * sd /
  delta)^2, and never fewer than the sign-flip test needs to reach alpha at all (2 / 2^n <= alpha: 6 pairs).

A regression is declared only when the Holm-corrected test is significant *and* the metric got worse by more than
its tolerance (``compare``). Random draws use fixed seeds, so a comparison reads the same every time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np

ALPHA = 0.05
POWER = 0.8
CONFIDENCE = 0.95
EXACT_UP_TO = 16  # 2^16 sign patterns: exact; above, Monte-Carlo
RESAMPLES = 20_000
BOOTSTRAPS = 5_000
SEED = 18


def _diffs(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths (got {len(a)} and {len(b)})")
    return np.asarray(b, dtype=float) - np.asarray(a, dtype=float)


def bootstrap_ci(diffs: Sequence[float], *, confidence: float = CONFIDENCE, resamples: int = BOOTSTRAPS,
                 seed: int = SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diffs`` (one value: that value twice)."""
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        raise ValueError("no differences to bootstrap")
    if d.size == 1 or np.all(d == d[0]):
        return float(d[0]), float(d[0])
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(resamples, d.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def sign_flip_p(diffs: Sequence[float], *, exact_up_to: int = EXACT_UP_TO, resamples: int = RESAMPLES,
                seed: int = SEED) -> float:
    """Two-sided p-value of the paired sign-flip permutation test of "mean difference 0"."""
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        raise ValueError("no differences to test")
    observed = abs(d.mean())
    if observed == 0.0:
        return 1.0
    slack = 1e-9 * max(1.0, float(np.abs(d).max()))  # ties in floating point count as "as extreme"
    if d.size <= exact_up_to:
        patterns = (np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1
        means = np.abs(((1 - 2 * patterns) * d).mean(axis=1))
        return float(np.mean(means >= observed - slack))
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(resamples, d.size))
    hits = int(np.sum(np.abs((signs * d).mean(axis=1)) >= observed - slack))
    return (hits + 1) / (resamples + 1)


def smallest_p(n: int, *, exact_up_to: int = EXACT_UP_TO, resamples: int = RESAMPLES) -> float:
    """The smallest p-value the sign-flip test can give with ``n`` pairs (all differences of one sign)."""
    return 2 / 2 ** n if n <= exact_up_to else 1 / (resamples + 1)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values, in the order given; ``None`` (not tested) stays ``None`` and is not counted."""
    tested = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(tested)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def pairs_needed(sd: float, delta: float, *, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Pairs needed to detect a mean difference ``delta`` when the differences spread by ``sd`` (two-sided
    ``alpha``, ``power``); ``None`` when there is nothing to detect (``delta`` 0)."""
    if delta <= 0:
        return None
    floor = next(n for n in range(1, 64) if 2 / 2 ** n <= alpha)  # below it the test can never reach alpha
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return max(floor, math.ceil((z * sd / delta) ** 2))


@dataclass
class MetricComparison:
    """One metric of a paired comparison. ``diff`` is B minus A; ``worse_by`` is how much worse B is in the
    metric's bad direction (negative: better); ``tolerance`` None means the metric is reported, never gated."""

    metric: str
    better: str  # "higher" or "lower"
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    sd: float
    worse_by: float
    tolerance: float | None
    p: float
    p_holm: float = 1.0
    significant: bool = False
    pairs_needed: int | None = None
    repeats_needed: int | None = None
    too_few: bool = False
    verdict: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def compare_metric(metric: str, a: Sequence[float], b: Sequence[float], *, better: str,
                   tolerance: float | None) -> MetricComparison:
    """A metric's paired numbers before the correction across metrics (``compare`` finishes them)."""
    d = _diffs(a, b)
    if d.size == 0:
        raise ValueError(f"{metric}: no pairs")
    diff = float(d.mean())
    low, high = bootstrap_ci(d)
    return MetricComparison(metric=metric, better=better, n=int(d.size), mean_a=float(np.mean(a)),
                            mean_b=float(np.mean(b)), diff=diff, ci_low=low, ci_high=high,
                            sd=float(d.std(ddof=1)) if d.size > 1 else 0.0,
                            worse_by=-diff if better == "higher" else diff, tolerance=tolerance, p=sign_flip_p(d))


def compare(values: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, better: Mapping[str, str],
            tolerance: Mapping[str, float | None], cases: int = 1, alpha: float = ALPHA) -> list[MetricComparison]:
    """Every metric of ``values`` (name -> (A's values, B's values), paired by position), Holm-corrected together.

    ``cases``: how many distinct cases the pairs cover, to turn the pairs needed into repeats per case. Verdicts:
    ``regression`` (significant and worse by more than the tolerance), ``worse, within tolerance``, ``worse (not
    gated)``, ``improvement``, ``no difference`` (every pair equal), ``too few to tell`` (not significant, and
    fewer pairs than a tolerance-sized difference would need) and ``no significant difference``."""
    rows = [compare_metric(name, a, b, better=better.get(name, "higher"), tolerance=tolerance.get(name))
            for name, (a, b) in values.items() if len(a)]
    for row, adjusted in zip(rows, holm([r.p for r in rows]), strict=True):
        row.p_holm = float(adjusted if adjusted is not None else 1.0)
        row.significant = row.p_holm < alpha
        target = row.tolerance if row.tolerance else abs(row.diff)  # the smallest difference that matters
        row.pairs_needed = pairs_needed(row.sd, target, alpha=alpha)
        row.repeats_needed = None if row.pairs_needed is None else math.ceil(row.pairs_needed / max(1, cases))
        row.too_few = (not row.significant and row.pairs_needed is not None and row.n < row.pairs_needed
                       and not (row.diff == 0 and row.sd == 0))  # every pair equal: nothing left to tell
        row.verdict = _verdict(row)
    return rows


def _verdict(row: MetricComparison) -> str:
    if row.diff == 0 and row.sd == 0:
        return "no difference"
    if row.significant:
        if row.worse_by <= 0:
            return "improvement"
        if row.tolerance is None:
            return "worse (not gated)"
        return "regression" if row.worse_by > row.tolerance + 1e-12 else "worse, within tolerance"
    return "too few to tell" if row.too_few else "no significant difference"
