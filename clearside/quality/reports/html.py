"""A self-contained HTML report of a paired comparison (``compare_runs.compare_runs``) or of a regression batch
(``regress.batch_report``), to send to someone.

One file: the styles inline, the charts inline SVG (:mod:`.svg`), no script at all, no font, image, stylesheet or
link fetched, and a Content-Security-Policy that forbids the browser to fetch anything should a text try. Every
value that came from a user, a suite file or a model (case ids, propositions, errors, debate excerpts, provider
names) is escaped with :func:`html.escape`; nothing is ever inserted as markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from ...store.records import status_label
from .. import metrics
from . import svg

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")  # and lone surrogates (no UTF-8)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 0 auto;
       max-width: 1100px; padding: 24px; color: #1b1b1b; background: #fff; line-height: 1.45; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
.verdict { display: inline-block; padding: .2rem .6rem; border-radius: 4px; font-weight: 700; color: #fff; }
.verdict.bad { background: #c62828; } .verdict.good { background: #2e7d32; }
.warning { background: #fff8e1; border-left: 4px solid #f9a825; padding: .5rem .8rem; margin: .5rem 0; }
table { border-collapse: collapse; margin: .5rem 0; font-size: .9rem; }
th, td { border: 1px solid #d0d0d0; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.regression td, tr.fail td { background: #ffebee; } tr.improvement td { background: #e8f5e9; }
tr.too-few td { background: #fffde7; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
.side { border: 1px solid #d0d0d0; border-radius: 6px; padding: .6rem .8rem; overflow-wrap: anywhere; }
.side.passes { border-top: 4px solid #2e7d32; } .side.fails { border-top: 4px solid #c62828; }
.muted { color: #5f6368; font-size: .9rem; } code { overflow-wrap: anywhere; }
svg.chart { display: block; margin: .5rem 0; font-size: 12px; }
.chart-title { font-weight: 600; font-size: 13px; } .chart-legend { fill: #5f6368; font-size: 11px; }
.chart-label, .chart-value { fill: #1b1b1b; } .chart-track { stroke: #e0e0e0; stroke-width: 1; }
.chart-zero { stroke: #9e9e9e; stroke-width: 1.5; } .chart-tolerance { stroke: #c62828; stroke-dasharray: 3 3; }
@media (max-width: 700px) { .sides { grid-template-columns: 1fr; } body { padding: 12px; } }
"""


def esc(value: Any) -> str:
    """Any value as HTML text: control characters and lone surrogates dropped, ``& < > " '`` escaped; never markup."""
    return escape(_CONTROL.sub("", "" if value is None else str(value)), quote=True)


def _cell(value: Any, *, numeric: bool = False) -> str:
    if isinstance(value, float) or (numeric and isinstance(value, int | float)):
        return f'<td class="num">{esc(svg.num(float(value)))}</td>'
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return f'<td class="num">{esc(value)}</td>' if numeric else f"<td>{esc(value)}</td>"


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]], *, classes: Iterable[str] | None = None,
          numeric: Iterable[int] = (), caption: str = "") -> str:
    """A plain table: every header and cell escaped; ``classes`` one CSS class per row; ``numeric`` the columns
    aligned right."""
    numeric = set(numeric)
    out = ['<table>' + (f"<caption>{esc(caption)}</caption>" if caption else ""),
           "<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead>", "<tbody>"]
    for row, cls in zip(rows, classes if classes is not None else _forever(""), strict=False):
        cells = "".join(_cell(v, numeric=i in numeric) for i, v in enumerate(row))
        out.append(f'<tr class="{esc(cls)}">{cells}</tr>' if cls else f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _forever(value: str) -> Iterable[str]:
    while True:
        yield value


def _list(items: Iterable[Any]) -> str:
    return "<ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>"


def nested_list(rows: Iterable[tuple[int, str]]) -> str:
    """(depth, text) rows, each one deeper than its parent at most, as nested lists (a child list inside its
    parent's item); every text escaped."""
    out, depth = ["<ul>"], 0
    for i, (level, text) in enumerate(rows):
        level = min(int(level), depth + 1)
        if i and level > depth:
            out.append("<ul>")
        elif i:
            out.append("</li>" + "</ul></li>" * (depth - level))
        out.append(f"<li>{esc(text)}")
        depth = level
    return "".join([*out, "</li></ul>" * (depth + 1)])


def page(title: str, body: Iterable[str]) -> str:
    """The whole document around ``body`` (already-escaped HTML fragments)."""
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{esc(title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>", *body,
        f'<footer class="muted"><p>Written by ClearSide at {esc(stamp)}. Self-contained: it loads nothing from '
        "anywhere.</p></footer>", "</body>", "</html>", ""])


def _described(name: str) -> str:
    summary = metrics.SUMMARY.get(name)
    return summary[1] if summary else ""


# -- paired comparison --------------------------------------------------------------------------------------------

_SIDE_KEYS = ("batch", "suite", "provider", "created_at", "runs")


def _sides_table(report: Mapping[str, Any]) -> str:
    a, b = report["a"], report["b"]
    extra = [k for k in {**a, **b} if k not in _SIDE_KEYS]  # e.g. the versions a run was made with
    rows = [[key, a.get(key, "—"), b.get(key, "—")] for key in (*_SIDE_KEYS, *extra)]
    return table(["", "A (compared against)", "B (under review)"], rows)


def _flat(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _versions(names: list[str], versions: list[Mapping[str, Any]], notes: Iterable[str] | None) -> list[str]:
    """What each batch was made with (metric suite, embedding model, ClearSide, provider settings, prompts), one
    column per batch, the rows that differ marked; then the notes on the differences."""
    flat = [_flat(v) for v in versions]
    keys = sorted({k for v in flat for k in v})
    if not keys:
        return []
    rows = [[key, *(v.get(key, "—") for v in flat)] for key in keys]
    differs = ["fail" if len({json.dumps(v.get(key), sort_keys=True, default=str) for v in flat}) > 1 else ""
               for key in keys]
    out = ["<h2>Versions</h2>", table(["", *names], rows, classes=differs)]
    if notes:
        out.append(_list(notes))
    return out


def _metric_class(m: Mapping[str, Any]) -> str:
    if m["verdict"] == "regression":
        return "regression"
    if m["verdict"] == "improvement":
        return "improvement"
    return "too-few" if m.get("too_few") else ""


def _debate_excerpt(side: Mapping[str, Any]) -> list[str]:
    """What :func:`clearside.reports.attach_debates` added to a flipped run: its question and a few lines."""
    out = []
    if side.get("question"):
        out.append(f'<p><strong>Question:</strong> {esc(side["question"])}</p>')
    for label, key in (("FOR", "pro"), ("AGAINST", "con"), ("Decision hinges", "hinges")):
        lines = (side.get("debate") or {}).get(key)
        if lines:
            out.append(f"<p><strong>{esc(label)}</strong></p>" + _list(lines))
    if side.get("map"):  # the debate's argument map as its nested list (clearside.render.mapsvg.outline)
        out.append("<details><summary>Argument map</summary>" + nested_list(side["map"]) + "</details>")
    return out


def _flip(flip: Mapping[str, Any]) -> list[str]:
    out = [f'<section class="flip"><h3>{esc(flip["case"])} #{int(flip["repeat"]) + 1}: {esc(flip["change"])}</h3>',
           '<div class="sides">']
    for name in ("a", "b"):
        side = flip[name]
        state = "passes" if side["passed"] else "fails"
        out.append(f'<div class="side {state}"><h4>{name.upper()}: {state}</h4>'
                   f'<p class="muted">run <code>{esc(side.get("run"))}</code>'
                   + (f', debate <code>{esc(side["debate_id"])}</code>' if side.get("debate_id") else "")
                   + f", {esc(side.get('status'))}</p>")
        if side.get("failures"):
            out.append(_list(side["failures"]))
        out += _debate_excerpt(side)
        out.append("</div>")
    out.append("</div>")
    if flip.get("metrics"):
        out.append(table(["metric", "A", "B"], [[m["metric"], m["a"], m["b"]] for m in flip["metrics"]],
                         numeric=(1, 2)))
    out.append("</section>")
    return out


def paired_html(report: Mapping[str, Any]) -> str:
    """The paired comparison of two batches as a whole HTML document."""
    a, b = report["a"], report["b"]
    bad = bool(report["regression"])
    verdict = "REGRESSION" if bad else "NO REGRESSION"
    heading = report.get("title") or "Paired comparison: B against A"  # ``value`` names what A and B are
    title = f"{heading}: {b['batch']} against {a['batch']} — {verdict}"
    body = [f"<h1>{esc(heading)} "
            f'<span class="verdict {"bad" if bad else "good"}">{verdict}</span></h1>',
            _sides_table(report),
            *_versions(["A", "B"], [(report.get("versions") or {}).get(k) or {} for k in ("a", "b")],
                       report.get("version_notes")),
            f"<p>{int(report['pairs'])} pair(s) of runs over {len(report['cases'])} case(s) "
            f"({esc(', '.join(map(str, report['cases'][:20])))}"
            + (f" and {len(report['cases']) - 20} more" if len(report["cases"]) > 20 else "")
            + f"), paired by case id and repeat. Difference = B − A; {report['confidence']:.0%} bootstrap interval; "
            f"p from a two-sided sign-flip permutation test, Holm-corrected across the metrics. A regression is a "
            f"metric significantly worse (Holm p &lt; {report['alpha']:g}) by more than its tolerance.</p>"]
    body += [f'<p class="warning"><strong>Warning:</strong> {esc(w)}</p>' for w in report.get("warnings") or []]
    for side in ("a", "b"):
        shown = (report.get("unpaired") or {}).get(side) or []
        if shown:
            body.append(f"<p>Only in {side.upper()} (not compared): {esc(', '.join(shown[:20]))}"
                        + (f" and {len(shown) - 20} more" if len(shown) > 20 else "") + "</p>")
    rows = report["metrics"]
    body.append("<h2>Metrics</h2>")
    body.append(table(
        ["metric", "better", "pairs", "mean A", "mean B", "B − A", f"{report['confidence']:.0%} CI", "p", "p (Holm)",
         "tolerance", "verdict", "what it measures"],
        [[m["metric"], m["better"], m["n"], m["mean_a"], m["mean_b"], svg.signed(m["diff"]),
          f"[{svg.signed(m['ci_low'])}, {svg.signed(m['ci_high'])}]", m["p"], m["p_holm"],
          "not gated" if m["tolerance"] is None else m["tolerance"], m["verdict"], _described(m["metric"])]
         for m in rows],
        classes=[_metric_class(m) for m in rows], numeric=(2, 3, 4, 5, 6, 7, 8, 9)))
    if rows:
        body.append(svg.interval_chart(rows))
    few = [m for m in rows if m.get("too_few")]
    if few:
        body.append(f"<h2>Too few repeats to tell</h2><p>alpha {report['alpha']:g}, power {report['power']:.0%}, for "
                    "the spread observed:</p>")
        body.append(_list(
            f"{m['metric']}: {m['n']} pair(s), spread ±{m['sd']:.3g}; detecting a difference of "
            + (f"{m['tolerance']:g} (its tolerance)" if m["tolerance"] else f"{abs(m['diff']):.3g} (as observed)")
            + f" needs about {m['pairs_needed']} pairs: {m['repeats_needed']} repeat(s) per case "
            f"(--runs {m['repeats_needed']})." for m in few))
    flips = report.get("flips") or []
    body.append(f"<h2>Cases that flipped ({len(flips)})</h2>")
    if not flips:
        body.append("<p>No case flipped between passing and failing.</p>")
    for flip in flips:
        body += _flip(flip)
    if report.get("regressions"):
        body.append(f"<p><strong>Regressions:</strong> {esc(', '.join(report['regressions']))}.</p>")
    return page(title, body)


# -- one regression batch -----------------------------------------------------------------------------------------

def batch_html(report: Mapping[str, Any]) -> str:
    """A regression batch's report (its metrics against the gates and the baseline, each debate) as HTML."""
    passed = bool(report["passed"])
    verdict = "PASS" if passed else "REGRESSION"
    title = f"Regression: {report['suite']} on {report['provider']} — {verdict}"
    debates = report.get("debates") or []
    body = [f"<h1>Regression: {esc(report['suite'])} on {esc(report['provider'])} "
            f'<span class="verdict {"good" if passed else "bad"}">{verdict}</span></h1>',
            f"<p>{esc(report['runs'])} run(s) of {esc(', '.join(map(str, report.get('items') or [])))}, batch "
            f"<code>{esc(report['batch'])}</code>, started {esc(report.get('started_at'))}, "
            f"{esc(report.get('wall_seconds'))} s wall, concurrency {esc(report.get('concurrency'))}.</p>"]
    base = report.get("baseline")
    body.append(f"<p>Baseline: batch <code>{esc(base['batch'])}</code> ({esc(base.get('provider'))}, "
                f"{esc(base.get('created_at'))}" + (f", {esc(base['age'])} old" if base.get("age") else "") + ").</p>"
                if base else "<p>No blessed baseline yet: only the absolute gates apply.</p>")
    body += [f'<p class="warning"><strong>Warning:</strong> {esc(w)}</p>' for w in report.get("warnings") or []]
    checks = report.get("checks") or []
    body.append("<h2>Metrics against the gates" + (" and the baseline" if base else "") + "</h2>")
    body.append(table(
        ["metric", "better", "mean", "spread", "baseline", "delta", "allowed", "status", "reasons", "what it measures"],
        [[c["metric"], c.get("better"), c["mean"], c.get("stdev"), c.get("baseline_mean", "—"), c.get("delta", "—"),
          c.get("allowed", "—"), c["status"], "; ".join(c.get("reasons") or []), _described(c["metric"])]
         for c in checks],
        classes=["fail" if c["status"] == "fail" else "" for c in checks], numeric=(2, 3, 4, 5, 6)))
    if checks:
        body.append(svg.means_chart(checks))
    if report.get("failures"):
        body.append("<h2>Failures</h2>" + _list(report["failures"]))
    mine = {**(report.get("versions") or {}),
            **({"prompts": report["prompt_versions"]} if report.get("prompt_versions") else {})}
    body += _versions(["this batch", *(["baseline"] if base else [])],
                      [mine, *([base.get("versions") or {}] if base else [])], report.get("version_notes"))
    body.append(f"<h2>Debates ({len(debates)})</h2>")
    questions = report.get("questions") or {}
    if questions:
        body.append(table(["case", "question"], sorted(questions.items())))
    body.append(table(["case", "repeat", "status", "wall s", "run", "debate", "error"],
                      [[d.get("item"), int(d.get("index") or 0) + 1, status_label(d.get("status") or "",
                                                                                 d.get("missing")),
                        d.get("wall_seconds"),
                        d.get("id"), d.get("debate_id"), d.get("error") or ""] for d in debates],
                      classes=["fail" if d.get("status") == "failed" else "" for d in debates], numeric=(1, 3)))
    return page(title, body)


# -- either -------------------------------------------------------------------------------------------------------

def kind(report: Mapping[str, Any]) -> str:
    """``paired`` (``compare_runs``), ``batch`` (``batch_report``); ``ValueError`` for anything else."""
    if {"a", "b", "pairs", "metrics"} <= set(report):
        return "paired"
    if {"suite", "batch", "checks", "passed"} <= set(report):
        return "batch"
    raise ValueError("not a report of compare_runs or of a regression batch (expected the keys a, b, pairs, "
                     "metrics or suite, batch, checks, passed)")


def render_html(report: Mapping[str, Any]) -> str:
    """The report (a paired comparison or a regression batch) as a self-contained HTML document."""
    return paired_html(report) if kind(report) == "paired" else batch_html(report)


def write_html(report: Mapping[str, Any], path: str | Path) -> Path:
    """Write :func:`render_html` of ``report`` to ``path`` (UTF-8, folders made); returns the path."""
    path = Path(path)
    text = render_html(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
