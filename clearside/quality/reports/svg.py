"""Charts as inline SVG, drawn by hand: no script, no font, nothing fetched, so a report opens offline anywhere.

Metrics live on different scales (a ratio, a count of re-asks), so each chart is one row per metric, each row with its
own axis and the numbers written beside it. Every label is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

LABEL_W = 190  # the metric's name
PLOT_W = 420  # one row's axis
VALUE_W = 250  # the numbers written out
ROW_H = 30
TOP = 30
WIDTH = LABEL_W + PLOT_W + VALUE_W

WORSE = "#c62828"
BETTER = "#2e7d32"
NEUTRAL = "#455a64"
BASE = "#8e6c00"


def num(value: float | None, digits: int = 3) -> str:
    """A number as the reports write it: 3 significant digits, tiny ones in exponent form, None as a dash."""
    if value is None:
        return "—"
    return f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.1e}"


def signed(value: float) -> str:
    return f"{value:+.3g}"


@dataclass
class Axis:
    """One row's scale: ``low`` .. ``high`` mapped onto the plot's width (a small margin either side)."""

    low: float
    high: float

    @classmethod
    def around(cls, values: Sequence[float]) -> Axis:
        low, high = min(values), max(values)
        if high - low < 1e-12:
            pad = abs(high) * 0.1 or 1.0
            low, high = low - pad, high + pad
        pad = (high - low) * 0.06
        return cls(low - pad, high + pad)

    def x(self, value: float) -> float:
        return round(LABEL_W + (value - self.low) / (self.high - self.low) * PLOT_W, 1)


def _open(rows: int, title: str, legend: str) -> list[str]:
    height = TOP + rows * ROW_H + 28
    return [f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {height}" '
            f'width="100%" style="max-width:{WIDTH}px" aria-label="{escape(title)}">',
            f"<title>{escape(title)}</title>",
            f'<text x="0" y="16" class="chart-title">{escape(title)}</text>',
            f'<text x="{WIDTH}" y="{height - 8}" text-anchor="end" class="chart-legend">{escape(legend)}</text>']


def _row_label(y: float, name: str) -> str:
    return f'<text x="{LABEL_W - 10}" y="{y + 4}" text-anchor="end" class="chart-label">{escape(name)}</text>'


def interval_chart(metrics: Sequence[dict], title: str = "B − A per metric, with its 95% interval") -> str:
    """The paired comparison's differences: per metric, B − A as a dot on its own axis, its bootstrap interval as
    a bar, zero as a grey line and the tolerance on the worse side as a dashed line; red when the metric is a
    regression, green when an improvement, grey otherwise."""
    out = _open(len(metrics), title, "dot: mean B − A · bar: 95% bootstrap interval · dashed: tolerance (worse side)")
    for i, m in enumerate(metrics):
        y = TOP + i * ROW_H + ROW_H / 2
        tol = m.get("tolerance")
        # the worse side of zero: below for "higher is better", above for "lower is better"
        bound = None if tol is None else (-tol if m.get("better") == "higher" else tol)
        axis = Axis.around([0.0, m["ci_low"], m["ci_high"], m["diff"], *([bound] if bound is not None else [])])
        colour = {"regression": WORSE, "improvement": BETTER}.get(m.get("verdict", ""), NEUTRAL)
        out.append(_row_label(y, m["metric"]))
        out.append(f'<line x1="{LABEL_W}" x2="{LABEL_W + PLOT_W}" y1="{y}" y2="{y}" class="chart-track"/>')
        out.append(f'<line x1="{axis.x(0)}" x2="{axis.x(0)}" y1="{y - 11}" y2="{y + 11}" class="chart-zero"/>')
        if bound is not None:
            out.append(f'<line x1="{axis.x(bound)}" x2="{axis.x(bound)}" y1="{y - 11}" y2="{y + 11}" '
                       f'class="chart-tolerance"/>')
        low, high = axis.x(m["ci_low"]), axis.x(m["ci_high"])
        out.append(f'<rect x="{low}" y="{y - 4}" width="{max(1.0, round(high - low, 1))}" height="8" rx="2" '
                   f'fill="{colour}" fill-opacity="0.35"/>')
        out.append(f'<circle cx="{axis.x(m["diff"])}" cy="{y}" r="5" fill="{colour}"/>')
        text = f"{signed(m['diff'])} [{signed(m['ci_low'])}, {signed(m['ci_high'])}]"
        out.append(f'<text x="{LABEL_W + PLOT_W + 12}" y="{y + 4}" class="chart-value">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def means_chart(checks: Sequence[dict], title: str = "Mean ± spread per metric, against the baseline") -> str:
    """A batch's metrics: per metric its mean as a bar from zero (± its spread as a whisker) on its own axis, and
    the baseline's mean ± spread as a gold tick and band when there is a baseline; red when the metric fails."""
    out = _open(len(checks), title, "bar: batch mean · whisker: ± spread · gold: baseline mean ± spread")
    for i, c in enumerate(checks):
        y = TOP + i * ROW_H + ROW_H / 2
        mean, sd = float(c["mean"]), float(c.get("stdev") or 0.0)
        base = c.get("baseline_mean")
        base_sd = float(c.get("baseline_stdev") or 0.0)
        points = [0.0, mean - sd, mean + sd]
        if base is not None:
            points += [base - base_sd, base + base_sd]
        axis = Axis.around(points)
        colour = WORSE if c.get("status") == "fail" else NEUTRAL if c.get("status") == "info" else BETTER
        out.append(_row_label(y, c["metric"]))
        out.append(f'<line x1="{LABEL_W}" x2="{LABEL_W + PLOT_W}" y1="{y}" y2="{y}" class="chart-track"/>')
        zero, at = axis.x(0.0), axis.x(mean)
        out.append(f'<rect x="{min(zero, at)}" y="{y - 7}" width="{max(1.0, round(abs(at - zero), 1))}" height="14" '
                   f'fill="{colour}" fill-opacity="0.55"/>')
        if sd:
            out.append(f'<line x1="{axis.x(mean - sd)}" x2="{axis.x(mean + sd)}" y1="{y}" y2="{y}" '
                       f'stroke="{colour}" stroke-width="2"/>')
        text = f"{num(mean)} ± {num(sd)}"
        if base is not None:
            lo, hi = axis.x(base - base_sd), axis.x(base + base_sd)
            out.append(f'<rect x="{lo}" y="{y - 11}" width="{max(1.0, round(hi - lo, 1))}" height="22" fill="{BASE}" '
                       'fill-opacity="0.15"/>')
            out.append(f'<line x1="{axis.x(base)}" x2="{axis.x(base)}" y1="{y - 12}" y2="{y + 12}" stroke="{BASE}" '
                       'stroke-width="3"/>')
            text += f"  (baseline {num(base)})"
        out.append(f'<text x="{LABEL_W + PLOT_W + 12}" y="{y + 4}" class="chart-value">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)
