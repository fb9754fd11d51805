"""AppTest for the Regression page's "Compare two batches": the paired table, the verdict, too few repeats and a
flipped run side by side, on two flagship batches saved straight into the store (no debate runs)."""

from __future__ import annotations

import json

import app_kit
import pytest
from app_kit import REGRESSION, AppTest
from helpers import download

from clearside.providers.scripted import ScriptedProvider

GOOD = {"schema_valid": 1.0, "neutrality_violations": 0.0, "coverage": 0.6, "diversity": 0.4}


def save(store, batch: str, shift: float, repeats: int, flip_at: int | None = None) -> None:
    for i in range(repeats):
        jitter = (-0.02, 0.01, 0.02, -0.01)[i % 4]
        store.add_run("flagship", provider="scripted", model=f"{batch[:4]}.json", status="done",
                      metrics={**GOOD, "coverage": round(0.6 + jitter + shift, 4),
                               "neutrality_violations": 1.0 if i == flip_at else 0.0},
                      data={"batch": batch, "item": "flagship", "index": i,
                            "started_at": f"2026-01-01T00:00:0{'ab'.index(batch[0])}"})


def page() -> AppTest:
    return app_kit.open_page(REGRESSION, ScriptedProvider(), timeout=90)


def paired(at: AppTest):
    found = [d.value for d in at.dataframe if "p (Holm)" in d.value.columns]
    assert len(found) == 1
    return found[0].set_index("Metric")


def test_compare_two_batches_shows_the_paired_table_the_regression_and_the_flipped_run(store, downloads):
    save(store, "a" * 32, 0.0, 8)
    save(store, "b" * 32, -0.3, 8, flip_at=2)
    at = page()
    a, b = (s for s in at.selectbox if s.key in ("rg_cmp_a", "rg_cmp_b"))
    assert (a.value, b.value) == ("a" * 32, "b" * 32)  # no baseline: A the older, B the newest
    table = paired(at)
    assert table.loc["coverage", "Verdict"] == "regression" and table.loc["coverage", "B − A"] == pytest.approx(-0.3)
    assert table.loc["coverage", "Pairs"] == 8 and table.loc["schema_valid", "Verdict"] == "no difference"
    assert any("REGRESSION" in e.value and "coverage" in e.value for e in at.error)
    shown = "\n".join(m.value for m in at.markdown).replace("\\", "")  # esc() escapes Markdown
    assert "flagship #3: pass → fail" in shown and "neutrality_violations 1 is above the gate 0" in shown
    flip = next(d.value for d in at.dataframe if list(d.value.columns) == ["Metric", "A", "B"])
    assert flip.set_index("Metric").loc["neutrality_violations"].tolist() == [0.0, 1.0]
    html = download(at, downloads, "Download the HTML report")  # the bytes the button serves
    assert html.startswith("<!DOCTYPE html>") and "regression" in html.lower() and "<script" not in html
    junit = download(at, downloads, "JUnit XML")
    assert '<testcase' in junit and '<failure' in junit, "the regressed metric fails its test case"
    at.toggle(key="rg_paired_show_chart").set_value(True)
    at = at.run()
    [chart] = [c for c in at.get("plotly_chart") if "B − A per metric" in c.proto.spec]
    figure = json.loads(chart.proto.spec)["data"][0]
    assert "coverage" in figure["y"] and figure["marker"]["color"][figure["y"].index("coverage")] == "#d62728"
    at.selectbox(key="rg_cmp_b").set_value("a" * 32)
    at = at.run()
    assert not at.exception and any("two different batches" in i.value for i in at.info)


def test_too_few_repeats_are_said_with_the_runs_needed(store):
    save(store, "a" * 32, 0.0, 3)
    save(store, "b" * 32, -0.05, 3)
    at = page()
    assert paired(at).loc["coverage", "Verdict"] == "too few to tell"
    assert any("NO REGRESSION" in s.value for s in at.success)
    shown = "\n".join(m.value for m in at.markdown).replace("\\", "")
    assert "Too few repeats to tell" in shown and "run(s) per item" in shown


def test_a_suite_of_your_own_is_reviewed_on_the_page_and_run_from_the_command_line(store):
    """Batches of a user's suite file (saved by `regress --suite FILE`) are picked, compared and linked like the
    built-ins'; the page names the file and the command instead of offering Run, which needs the file."""
    for batch, shift in (("c" * 32, 0.0), ("d" * 32, 0.0)):
        for i in range(4):
            store.add_run("ours", provider="scripted", model="x.json", status="done",
                          metrics={**GOOD, "coverage": round(0.6 + 0.01 * i + shift, 4)},
                          data={"batch": batch, "item": "moratorium", "index": i, "suite_file": "/work/ours.yaml"})
    at = page()
    picker = at.selectbox(key="rg_suite")
    assert picker.options[:2] == ["Flagship (reference debate)", "ArgKP dev (4 propositions)"]
    assert "ours (your suite)" in picker.options
    at = picker.set_value("ours").run()
    assert not at.exception, at.exception
    captions = "\n".join(c.value for c in at.caption).replace("\\", "")
    assert "Your own suite, from /work/ours.yaml" in captions and "regress --suite /work/ours.yaml" in captions
    assert not [b for b in at.button if b.key == "rg_start"], "a suite file is run where it is read"
    a, b = (s for s in at.selectbox if s.key in ("rg_cmp_a", "rg_cmp_b"))
    assert (a.value, b.value) == ("c" * 32, "d" * 32)
    assert paired(at).loc["coverage", "Pairs"] == 4
    linked = page_at(f"?batch={'c' * 32}")
    assert linked.session_state["rg_suite"] == "ours" and linked.session_state["rg_batch"] == "c" * 32


def page_at(query: str) -> AppTest:
    return app_kit.open_page(REGRESSION, ScriptedProvider(), query={"batch": query.split("=", 1)[1]}, timeout=90)
