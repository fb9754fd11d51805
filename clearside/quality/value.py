"""Did the debate add anything? (``python -m clearside value``, and the Regression page's section of that name.)

ClearSide's premise is that advocates blind to each other, then a moderator who reads both, map an issue better
than one model asked once. Nothing may assume it; this measures it. The same propositions (a suite: the ArgKP dev
topics with their expert key points by default, or a suite file of the user's) run n times as ClearSide debates
and n times as the single-pass control (:mod:`clearside.static.single`: one call writes the whole document with the
same token budget, through the same checks). Each is a regression batch of its own, saved and listed like any
other, and the two are paired run by run (:func:`clearside.quality.compare_runs.compare_runs`): for every metric
(key-point coverage, hinge coverage, the distance between a side's claims, the side-swap margin, neutrality, the
checks' findings) the mean difference debate − single pass, its bootstrap interval, its sign-flip p (Holm-corrected
across the metrics), and the cost of each (model seconds, tokens).

The figures are reported as they come out, whichever way they point: on a tiny model the debate may add nothing a
single pass does not, and the report says so.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..store import Store
from .batch import Batch
from .compare_runs import compare_runs, paired_markdown
from .versions import batch_versions

CONTROL = "single"  # the strategy batch A runs with
TITLE = "Did the debate add anything? The debate (B) against one pass (A)"
LABELS = {"a": "single pass (the control)", "b": "debate"}
COST = ("seconds", "completion_tokens")  # what each costs, among the metrics paired
HEADLINE = ("coverage", "hinge_coverage", "diversity", "stance_margin", "neutrality_violations", "garbage_left")


def debate_strategy(strategy: str | None) -> str | None:
    """The strategy the debates run with (None: the provider's default); the control itself is refused."""
    if strategy == CONTROL:
        raise InputError("value compares a debate with the single pass: give the debate's own strategy (whole or "
                         "focused), or none for the provider's default.")
    return strategy


def strategy(batch: Batch) -> str | None:
    """The generation strategy a batch ran with (None: the provider's default, or a batch from before it was kept)."""
    return (batch_versions(batch).get("provider") or {}).get("strategy")


def arms(batches: list[Batch]) -> tuple[list[Batch], list[Batch]]:
    """A suite's batches as the two arms, newest first: the single-pass controls and the debates."""
    newest = sorted(batches, key=lambda b: b.started_at, reverse=True)
    return [b for b in newest if strategy(b) == CONTROL], [b for b in newest if strategy(b) != CONTROL]


def partner(control: Batch, debates: list[Batch]) -> Batch:
    """The debate batch to pair a control with by default: the newest on the same model, else the newest."""
    return next((b for b in debates if b.spec == control.spec), debates[0])


def paired(store: Store, control_batch: str, debate_batch: str) -> dict[str, Any]:
    """The two finished batches paired run by run: ``compare_runs`` with the control as A and the debate as B,
    titled and labelled so that every rendering (Markdown, HTML, JUnit) says which is which."""
    report = compare_runs(store, control_batch, debate_batch)
    report["title"] = TITLE
    report["a"] = {**report["a"], "role": LABELS["a"]}
    report["b"] = {**report["b"], "role": LABELS["b"]}
    report["cost"] = {m["metric"]: {"single_pass": m["mean_a"], "debate": m["mean_b"]}
                      for m in report["metrics"] if m["metric"] in COST}
    report["headline"] = [m for m in report["metrics"] if m["metric"] in HEADLINE]
    return report


def findings(report: dict[str, Any]) -> list[str]:
    """What the figures say, one sentence per headline metric, without more certainty than the test gives."""
    lines = []
    for m in report["headline"]:
        if not m["significant"]:
            pairs = f"{m['n']} pair{'' if m['n'] == 1 else 's'}"
            lines.append(f"{m['metric']}: no difference the test can tell ({pairs}, debate − single pass "
                         f"{m['diff']:+.3g}, p (Holm) {_p(m['p_holm'])}).")
            continue
        better = (m["diff"] > 0) == (m["better"] == "higher")
        lines.append(f"{m['metric']}: the {'debate' if better else 'single pass'} does better "
                     f"(debate − single pass {m['diff']:+.3g}, {report['confidence']:.0%} interval "
                     f"[{m['ci_low']:+.3g}, {m['ci_high']:+.3g}], p (Holm) {_p(m['p_holm'])}).")
    for metric, means in report["cost"].items():
        if means["single_pass"]:
            lines.append(f"{metric}: the debate costs {means['debate'] / means['single_pass']:.2g} times the single "
                         f"pass ({means['debate']:.4g} against {means['single_pass']:.4g} per run).")
    return lines


def _p(value: float) -> str:
    return f"{value:.3g}"


def markdown(report: dict[str, Any]) -> str:
    """The report to read: what the figures say, then the paired table and the cases that flipped."""
    lines = [f"# {TITLE}", "", f"- A: the {LABELS['a']}, batch `{report['a']['batch']}`",
             f"- B: the {LABELS['b']}, batch `{report['b']['batch']}`", "", "## What the figures say", "",
             *[f"- {line}" for line in findings(report)], ""]
    table = paired_markdown(report).split("\n", 1)[1].lstrip("\n")  # without its own title
    return "\n".join(lines) + "\n## Run by run\n\n" + table
