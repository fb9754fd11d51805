"""The benchmark report's runner (bench/run_all.py, ``python -m bench``) on fake bench modules: rows, goals and
whether each is met rendered in REPORT.md and report.json; a missing module and a failing one are rows saying
why, and the run goes on. No model, no timing."""

from __future__ import annotations

import json
import sys
import types

import pytest

from bench import run_all


def fake_module(name: str, report) -> types.ModuleType:
    module = types.ModuleType(name)
    if report is not None:
        module.report = report
    return module


def fast_report(quick: bool = True) -> list[dict]:
    return [
        {"figure": "Widget wall", "value": 12.5, "unit": "s", "goal": "<= 15 s", "met": True,
         "note": f"{'quick' if quick else 'full'}: one widget"},
        {"figure": "Widget / raw", "value": 1.234, "unit": "x", "goal": "<= 1.1", "met": False,
         "note": "12.5 s | 10.1 s, both in this run"},
        {"figure": "Widget count", "value": 3, "unit": "widgets", "goal": None, "met": None, "note": "no goal"},
    ]


def broken_report(quick: bool = True) -> list[dict]:
    raise RuntimeError("the widget server would not start\nsecond line")


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "fake_bench_ok", fake_module("fake_bench_ok", fast_report))
    monkeypatch.setitem(sys.modules, "fake_bench_broken", fake_module("fake_bench_broken", broken_report))
    monkeypatch.setitem(sys.modules, "fake_bench_bare", fake_module("fake_bench_bare", None))
    monkeypatch.setattr(run_all, "BENCHES", [
        run_all.Bench("fake_bench_ok", "Widgets", "one widget"),
        run_all.Bench("fake_bench_missing_xyz", "Widgets", "not there"),
        run_all.Bench("fake_bench_broken", "Other", "fails"),
        run_all.Bench("fake_bench_bare", "Other", "no report()"),
    ])
    monkeypatch.setattr(run_all, "REPORT", tmp_path / "REPORT.md")
    monkeypatch.setattr(run_all, "RESULTS", tmp_path / "results" / "report.json")
    return tmp_path


def table_rows(markdown: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith("| Figure") and not line.startswith("| Bench")]


def test_runner_writes_every_row_with_goals_and_why_a_bench_gave_none(fakes, capsys):
    assert run_all.main([]) == 0  # quick mode by default; a failing bench does not fail the run
    report = (fakes / "REPORT.md").read_text(encoding="utf-8")
    data = json.loads((fakes / "results" / "report.json").read_text(encoding="utf-8"))

    assert data["mode"] == "quick"
    assert [b["outcome"] for b in data["benches"]] == ["ok", "not available", "failed", "not available"]
    assert [r["figure"] for r in data["rows"]] == ["Widget wall", "Widget / raw", "Widget count",
                                                   "fake_bench_missing_xyz", "fake_bench_broken", "fake_bench_bare"]
    assert data["rows"][0] == {"bench": "fake_bench_ok", "section": "Widgets", "figure": "Widget wall",
                               "value": 12.5, "unit": "s", "goal": "<= 15 s", "met": True, "note": "quick: one widget"}
    for bench in data["benches"]:  # the machine's load before and after each bench, and for the whole run
        assert len(bench["load_before"]) == len(bench["load_after"]) == 3
    assert len(data["load_before"]) == len(data["load_after"]) == 3
    assert data["machine"]["cpu_count"] and "commit" in data["machine"] and "model_file" in data["machine"]

    rows = {r[0]: r for r in table_rows(report) if len(r) == 6}  # the figures' tables
    assert rows["Widget wall"][1:5] == ["12.5 s", "<= 15 s", "yes", "fake_bench_ok"]
    assert rows["Widget / raw"][1:4] == ["1.234×", "<= 1.1", "**no**"]
    assert "12.5 s \\| 10.1 s" in rows["Widget / raw"][5]  # a | in a note does not break the table
    assert rows["Widget count"][2:4] == ["", "no goal"]
    assert rows["fake_bench_missing_xyz"][3] == "not measured"
    assert "not available: fake_bench_missing_xyz.py is missing" in rows["fake_bench_missing_xyz"][5]
    assert "failed: RuntimeError: the widget server would not start" in rows["fake_bench_broken"][5]
    assert "second line" not in rows["fake_bench_broken"][5]
    assert "has no report() yet" in rows["fake_bench_bare"][5]
    assert "**1 of 2 goals met, 1 missed**; 3 figures not measured" in report
    assert report.index("### Widgets") < report.index("Widget wall") < report.index("### Other")
    for heading in ("## Machine", "| CPUs |", "| Model file |", "| Commit |", "| Load average", "## Benches"):
        assert heading in report
    bench_rows = {r[0]: r for r in table_rows(report) if len(r) == 5}  # the benches' table
    assert bench_rows["fake_bench_broken"][1] == "failed"
    assert "the widget server would not start" in capsys.readouterr().err  # the traceback, for whoever runs it


def test_only_and_full_reach_the_bench(fakes):
    assert run_all.main(["--full", "--only", "fake_bench_ok"]) == 0
    data = json.loads((fakes / "results" / "report.json").read_text(encoding="utf-8"))
    assert data["mode"] == "full" and [b["bench"] for b in data["benches"]] == ["fake_bench_ok"]
    assert data["rows"][0]["note"] == "full: one widget"
    assert "`python -m bench --full --only fake_bench_ok`" in (fakes / "REPORT.md").read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        run_all.main(["--only", "nonesuch"])


def test_every_listed_bench_is_a_bench_module():
    names = [b.name for b in run_all.BENCHES]
    assert len(names) == len(set(names))
    for needed in ("startup", "debate_embedded", "batching", "concurrency", "live_embedded",
                   "perspectives_embedded", "ui_latency", "store"):
        assert needed in names
    assert all(b.module == f"bench.{b.name}" for b in run_all.BENCHES)


def test_the_trust_report_lists_each_promise_with_its_outcome_and_says_what_is_missing(tmp_path, monkeypatch):
    """bench/trust.py runs test modules under pytest and reads each test's outcome from the JUnit report."""
    import bench.trust as trust

    module = tmp_path / "test_promises.py"
    module.write_text("def test_kept():\n    pass\n\ndef test_broken():\n    assert 1 == 2, 'lost a section'\n",
                      encoding="utf-8")
    monkeypatch.setattr(trust, "ROOT", tmp_path)
    result = trust.run_tests(["test_promises.py", "tests/test_absent.py"], tmp_path / "axe.md")
    outcomes = {t["name"]: t["outcome"] for t in result["tests"]}
    assert outcomes == {"test_kept": "passed", "test_broken": "failed"}
    assert result["missing"] == ["tests/test_absent.py"]
    result.update(load_before=[0.1], load_after=[0.2])
    text = trust.markdown({"machine": {"cpu_count": 2, "commit": "0123456789ab", "when": "now"},
                           "tests": {"Promises": result}})
    assert "1 of 2 passed; missing: tests/test_absent.py" in text
    assert "| `test_broken` | failed — " in text and "lost a section" in text


def test_a_trust_run_keeps_the_sections_other_benches_wrote_by_hand():
    from bench import trust

    old = ("# Trust report\n\nold intro\n\n## Load (bench/load.py)\n\nold load figures\n\n"
           "## Study mode: 100 participants at once (bench/study_load.py)\n\n0 errors\n\n"
           "## Argument map: 40 elements (bench/argmap.py)\n\n3.6 ms\n")
    written = "# Trust report\n\nnew intro\n\n## Load (bench/load.py)\n\nnew load figures\n"
    report = written + trust.kept_sections(old, written)
    assert "old load figures" not in report and "new load figures" in report
    assert report.endswith("## Study mode: 100 participants at once (bench/study_load.py)\n\n0 errors\n\n"
                           "## Argument map: 40 elements (bench/argmap.py)\n\n3.6 ms\n")
    assert trust.kept_sections("", written) == ""

