"""AppTest for the Regression page's pinned versions and flagship stewardship
(docs/design/requirements.md#flagship): the
baseline shown with its age and versions, a version change refused in "Compare two batches" until ticked (then a
warning), version notes, blessing the flagship refused without a note, the not-significantly-better warning, and the
bless history table. Batches are saved straight into the store (no debate runs)."""

from __future__ import annotations

import app_kit
from app_kit import REGRESSION, AppTest, run
from app_kit import of_kind as texts

from clearside.checks import CHECKS_VERSION
from clearside.providers.scripted import ScriptedProvider
from clearside.quality import metrics
from clearside.quality.baseline import bless
from clearside.quality.batch import baseline
from clearside.quality.versions import pinned_versions

GOOD = {"schema_valid": 1.0, "neutrality_violations": 0.0, "coverage": 0.6, "diversity": 0.4}


class _Provider:
    spec = "ollama:llama3.2"


def pinned(**changes) -> dict:
    return {**pinned_versions(_Provider(), temperature=0.4, retries=2, concurrency=1), **changes}


def save(store, batch: str, shift: float, versions: dict, repeats: int = 8) -> None:
    for i in range(repeats):
        jitter = (-0.02, 0.01, 0.02, -0.01)[i % 4]
        store.add_run("flagship", provider="ollama", model="llama3.2", status="done",
                      metrics={**GOOD, "coverage": round(0.6 + jitter + shift, 4)}, prompt_versions={"pro": "1.0"},
                      data={"batch": batch, "item": "flagship", "index": i, "versions": versions,
                            "started_at": f"2026-01-01T00:00:0{'abc'.index(batch[0])}"})


def page() -> AppTest:
    return app_kit.open_page(REGRESSION, ScriptedProvider(), timeout=90)


def history(at: AppTest):
    found = [d.value for d in at.dataframe if "Replaced" in d.value.columns]
    assert len(found) == 1
    return found[0]


def test_blessing_needs_a_note_warns_when_not_better_and_the_history_is_shown(store):
    save(store, "a" * 32, 0.0, pinned())
    save(store, "b" * 32, 0.0, pinned())  # the same quality as a
    at = page()
    assert "No batch of the flagship suite has been blessed yet" in texts(at, "caption")
    run(at.selectbox(key="rg_batch").set_value("a" * 32))
    run(at.button(key="rg_bless").click())
    assert at.text_area(key="rg_bless_note").label == "Why this baseline (required)"
    run(at.button(key="rg_bless_confirm").click())
    assert "needs a note of why" in texts(at, "error") and "Why this baseline" in texts(at, "error")
    assert baseline(store, "flagship") is None
    run(at.text_area(key="rg_bless_note").input("The first batch on llama3.2."))
    run(at.button(key="rg_bless_confirm").click())
    assert baseline(store, "flagship").id == "a" * 32 and not at.warning
    assert history(at)["Note"].tolist() == ["The first batch on llama3.2."]

    at.selectbox(key="rg_batch").set_value("b" * 32)
    at = run(at)
    captions = texts(at, "caption")
    assert "Baseline now: batch aaaaaaaa (ollama:llama3.2), made " in captions
    assert f"with metric suite {metrics.suite_version()}; embedding model all-MiniLM-L6-v2" in captions
    run(at.button(key="rg_bless").click())
    run(at.text_area(key="rg_bless_note").input("A second run, same model."))
    run(at.button(key="rg_bless_confirm").click())
    assert baseline(store, "flagship").id == "b" * 32, "still blessed"
    assert "Recorded with the blessing: Batch bbbbbbbb is not significantly better than the baseline aaaaaaaa" \
        in texts(at, "warning")
    table = history(at)
    assert table["Blessed batch"].tolist() == ["bbbbbbbb", "aaaaaaaa"]
    assert table["Replaced"].tolist() == ["aaaaaaaa", "— (first)"]
    assert "not significantly better" in table.loc[0, "Warnings"] and table.loc[1, "Warnings"] == ""


def test_a_version_change_is_refused_until_ticked_and_other_differences_are_notes(store):
    save(store, "a" * 32, 0.0, pinned())
    save(store, "b" * 32, 0.0, pinned(metric_suite=f"2.0.0 (checks {CHECKS_VERSION})", clearside="0.2.0"))
    bless(store, "a" * 32, note="first")
    at = page()
    assert at.selectbox(key="rg_batch").value == "b" * 32
    warnings = texts(at, "warning")
    assert (f"Not comparable with the baseline: metric suite 1.0.0 (checks {CHECKS_VERSION}) in the baseline, "
            f"2.0.0 (checks {CHECKS_VERSION}) in this batch") in warnings
    assert "cannot be compared across a version change" in warnings and "tick" in warnings
    assert not [d for d in at.dataframe if "p (Holm)" in d.value.columns], "refused: no paired table"
    at.checkbox(key="rg_cmp_allow").check()
    at = run(at)
    assert [d for d in at.dataframe if "p (Holm)" in d.value.columns]
    assert "Compared across a version change (metric suite" in texts(at, "warning")
    assert "ClearSide version differs: " in texts(at, "caption")
