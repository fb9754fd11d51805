"""The study's statistics, pure numbers: a between-arm difference of mean gains with its 95 % interval, the
standardized difference (Cohen's d) and the participants per arm a given d needs.

- The difference of two arms' mean gains (B minus A) gets a percentile bootstrap interval, each arm resampled on its
  own (the arms are independent groups of people), with a fixed seed so a report reads the same every time.
- ``d`` is the difference over the pooled standard deviation of the gains.
- Participants per arm to detect ``d`` (two-sided ``alpha``, ``power``), two independent groups:
  the normal approximation n = 2 ((z(1-alpha/2) + z(power)) / d)^2, and the two-sample t-test's, approximated by
  Guenther's (1981) correction n + z(1-alpha/2)^2 / 4 (d 0.5: 63 and 64; d 0.8: 25 and 26, as Cohen's tables).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

from ..paired import ALPHA, BOOTSTRAPS, CONFIDENCE, POWER, SEED


def per_arm(d: float, *, alpha: float = ALPHA, power: float = POWER) -> dict[str, Any]:
    """Participants per arm needed to detect a standardized difference ``d``: ``normal`` and ``t`` (see above)."""
    if not isinstance(d, int | float) or not math.isfinite(d) or d == 0:
        raise ValueError("the standardized difference d must be a number other than 0")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be between 0 and 1")
    z_alpha = NormalDist().inv_cdf(1 - alpha / 2)
    base = 2 * ((z_alpha + NormalDist().inv_cdf(power)) / abs(d)) ** 2
    return {"d": abs(d), "alpha": alpha, "power": power, "normal": math.ceil(base),
            "t": math.ceil(base + z_alpha ** 2 / 4)}


def cohen_d(a: Sequence[float], b: Sequence[float]) -> float | None:
    """(mean B - mean A) / pooled standard deviation; None below 2 in an arm or with no spread at all."""
    if len(a) < 2 or len(b) < 2:
        return None
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    pooled = ((x.size - 1) * x.var(ddof=1) + (y.size - 1) * y.var(ddof=1)) / (x.size + y.size - 2)
    return None if pooled <= 0 else float((y.mean() - x.mean()) / math.sqrt(pooled))


def difference(a: Sequence[float], b: Sequence[float], *, confidence: float = CONFIDENCE,
               resamples: int = BOOTSTRAPS, seed: int = SEED) -> dict[str, Any]:
    """Mean of B minus mean of A with its percentile bootstrap interval (None below 2 in an arm), d, the n's."""
    out: dict[str, Any] = {"n_a": len(a), "n_b": len(b), "diff": None, "ci_low": None, "ci_high": None, "d": None}
    if not len(a) or not len(b):
        return out
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out["diff"] = round(float(y.mean() - x.mean()), 3)
    if x.size > 1 and y.size > 1:
        rng = np.random.default_rng(seed)
        means = (y[rng.integers(0, y.size, size=(resamples, y.size))].mean(axis=1)
                 - x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1))
        tail = (1 - confidence) / 2
        low, high = np.quantile(means, [tail, 1 - tail])
        out["ci_low"], out["ci_high"] = round(float(low), 3), round(float(high), 3)
    d = cohen_d(a, b)
    out["d"] = None if d is None else round(d, 3)
    return out
