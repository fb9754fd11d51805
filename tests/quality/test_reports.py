"""Reports to share: the self-contained HTML of a paired comparison and of a regression batch,
every text escaped and nothing fetched (one pass in a real Chromium), and JUnit XML valid against the common schema
(tests/data/junit.xsd), one test case per gate. Batches are saved straight into the store (no debate runs)."""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from clearside.quality import references, regress, reports
from clearside.quality.batch import Batch
from clearside.quality.compare_runs import compare_runs
from clearside.store import NewDebate

XSD = Path(__file__).resolve().parents[1] / "data" / "junit.xsd"
HOSTILE_CASE = "<script>alert(1)</script>"
HOSTILE_QUESTION = ('Should we <script src="https://evil.example/x.js"></script> ban cars? '
                    '<img src=x onerror="window.__pwned = 1">')
HOSTILE_POINT = '<a href="https://evil.example/">click</a> & <b>"bold"</b>'
GOOD = {"schema_valid": 1.0, "neutrality_violations": 0.0, "coverage": 0.6, "diversity": 0.4}


def debate(store, question: str, point: str) -> str:
    document = copy.deepcopy(references.flagship().document)  # the reference is cached: never change it
    document["proposition"]["raw_input"] = document["proposition"]["normalized_question"] = question
    document["pro"]["executive_summary"] = [point, *document["pro"]["executive_summary"][1:]]
    return store.create(NewDebate("static", question, provider="scripted", model="x.json", document=document,
                                  status="done"))


def save(store, batch: str, shift: float, repeats: int, flip_at: int | None = None) -> None:
    """A batch of one hostile case: coverage shifted by ``shift``, a neutrality violation (its gate fails) at
    repeat ``flip_at``; the flipped run's debate holds hostile markup in its question and FOR's summary."""
    for i in range(repeats):
        jitter = (-0.02, 0.01, 0.02, -0.01)[i % 4]
        debate_id = debate(store, HOSTILE_QUESTION, f"{HOSTILE_POINT} ({batch[0]})") if i == 2 else None
        store.add_run("flagship", provider="scripted", model=f"{batch[:4]}.json", status="done", debate_id=debate_id,
                      metrics={**GOOD, "coverage": round(0.6 + jitter + shift, 4),
                               "neutrality_violations": 1.0 if i == flip_at else 0.0},
                      data={"batch": batch, "item": HOSTILE_CASE, "index": i,
                            "started_at": f"2026-01-01T00:00:0{'ab'.index(batch[0])}"})


@pytest.fixture
def paired(store):
    save(store, "a" * 32, 0.0, 8)
    save(store, "b" * 32, -0.3, 8, flip_at=2)
    return reports.attach_debates(compare_runs(store, "a" * 32, "b" * 32), store)


def batch_report(error: str = "the provider said <b>no</b>\x00\x1b[31m") -> dict:
    """A regression batch's report from ``regress.batch_report`` on hand-made results: one failed debate (counted
    invalid, so schema_valid misses its gate), coverage 0.3 below the baseline's 0.6, one run cancelled."""
    def result(i: int, status: str, coverage: float) -> dict:
        out = {"id": f"run{i}", "status": status, "item": HOSTILE_CASE, "index": i, "debate_id": None,
               "wall_seconds": 1.5, "metrics": {**GOOD, "coverage": coverage, "schema_valid": float(status == "done")}}
        return {**out, "error": error} if status == "failed" else out

    base = Batch(id="c" * 32, suite="flagship", provider="scripted", model="base.json",
                 created_at="2026-01-01T00:00:00Z",
                 rows=[{"status": "done", "baseline": True, "data": {},
                        "metrics": {**GOOD, "coverage": c}} for c in (0.59, 0.6, 0.61)])
    results = [result(0, "done", 0.3), result(1, "done", 0.31), result(2, "failed", 0.0),
               {"status": "cancelled", "item": HOSTILE_CASE, "index": 3}]
    batch = regress.BatchRun(suite="flagship", spec="scripted:<i>x</i>.json", items=(HOSTILE_CASE,), runs=4,
                             batch_id="d" * 32, concurrency=2, prompt_versions={"pro": "1.2"},
                             started_at="2026-01-02T00:00:00+00:00")
    return regress.batch_report(batch, results, base, wall_seconds=12.5,
                                pinned={"metric_suite": "3", "embedding_model": "all-MiniLM-L6-v2",
                                        "provider": {"temperature": 0.4, "base_url": "<i>host</i>"}})


class Tags(HTMLParser):
    """Every start tag and its attributes, as a browser would parse the document."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def names(self) -> set[str]:
        return {tag for tag, _ in self.tags}


def assert_self_contained(text: str) -> None:
    parsed = Tags(text)
    assert not parsed.names() & {"script", "img", "link", "iframe", "object", "embed", "a", "base", "form"}
    outside = [(tag, v) for tag, attrs in parsed.tags for k, v in attrs.items()
               if k in ("src", "href", "action", "xlink:href") and v and re.match(r"\s*(https?:)?//", v)]
    assert outside == []
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text)
    assert "@import" not in text and "url(" not in text  # no stylesheet or font pulled in by the CSS
    assert "Content-Security-Policy" in text and "default-src 'none'" in text


def test_the_paired_html_holds_the_tables_the_chart_and_the_flip_side_by_side_all_escaped(paired, tmp_path):
    path = reports.write_html(paired, tmp_path / "out" / "compare.html")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "REGRESSION" in text
    assert_self_contained(text)
    # the metric table: every metric a row, coverage the regression
    assert "<th>p (Holm)</th>" in text and "<th>tolerance</th>" in text
    row = re.search(r'<tr class="regression"><td>coverage</td>.*?</tr>', text)
    assert row and '<td class="num">-0.3</td>' in row.group(0) and "<td>regression</td>" in row.group(0)
    assert all(f"<td>{m}</td>" in text for m in ("schema_valid", "neutrality_violations", "diversity"))
    # the chart: inline SVG, one row per metric
    assert text.count("<svg") == 1 and text.count('class="chart-label"') == 4
    # hostile text from the case id, the question and the debate only as text
    assert HOSTILE_CASE not in text and "&lt;script&gt;alert(1)&lt;/script&gt; #3: pass → fail" in text
    assert "&lt;img src=x onerror=&quot;window.__pwned = 1&quot;&gt;" in text
    assert "&lt;a href=&quot;https://evil.example/&quot;&gt;click&lt;/a&gt; &amp; &lt;b&gt;" in text
    # side by side: A passes, B fails with the gate it missed, each with its own debate's excerpt
    sides = re.findall(r'<div class="side (passes|fails)">(.*?)</div>', text, re.S)
    assert [s for s, _ in sides] == ["passes", "fails"]
    assert "(a)" in sides[0][1] and "(b)" in sides[1][1]
    assert "neutrality_violations 1 is above the gate 0" in sides[1][1]
    assert "Too few repeats to tell" in text and "neutrality_violations: 8 pair(s)" in text


def test_the_batch_html_holds_the_gates_the_baseline_and_the_failed_debate_escaped(tmp_path):
    report = batch_report()
    assert not report["passed"]
    text = reports.render_html(report)
    assert_self_contained(text)
    assert "Regression: &lt;script&gt;" not in text and "flagship on scripted:&lt;i&gt;x&lt;/i&gt;.json" in text
    row = re.search(r'<tr class="fail"><td>coverage</td>.*?</tr>', text)
    assert row and "worse than the baseline" in row.group(0)
    assert re.search(r'<tr class="fail"><td>schema_valid</td>.*?below the gate 1', text)
    assert "the provider said &lt;b&gt;no&lt;/b&gt;[31m" in text and "\x00" not in text and "\x1b" not in text
    assert "1 of 4 runs were cancelled" in text and "<code>" + "c" * 32 + "</code>" in text
    assert text.count("<svg") == 1 and "baseline 0.6" in text
    # the versions this batch and its baseline were made with, side by side (the baseline recorded none)
    assert "<h2>Versions</h2>" in text and '<tr class="fail"><td>provider.temperature</td><td class="num">0.4</td>' \
        '<td>—</td></tr>' in text and "&lt;i&gt;host&lt;/i&gt;" in text
    assert all(f"<li>{note}" in text for note in report["version_notes"]) and report["version_notes"]


def junit_schema():
    etree = pytest.importorskip("lxml.etree")
    return etree, etree.XMLSchema(etree.parse(str(XSD)))


def test_junit_of_a_paired_comparison_is_valid_one_case_per_metric_failing_on_the_regression(paired, tmp_path):
    etree, schema = junit_schema()
    path = reports.write_junit(paired, tmp_path / "compare.xml")
    doc = etree.parse(str(path))
    schema.assertValid(doc)
    cases = doc.findall(".//testcase")
    assert sorted(c.get("name") for c in cases) == sorted(m["metric"] for m in paired["metrics"])
    [failed] = [c for c in cases if c.find("failure") is not None]
    assert failed.get("name") == "coverage"
    assert "significantly worse" in failed.find("failure").get("message")
    suite = doc.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "0")
    assert "flipped: <script>alert(1)</script> #3: pass → fail" in suite.find("system-out").text


def test_junit_of_a_batch_is_valid_one_case_per_gate_with_the_messages(tmp_path):
    etree, schema = junit_schema()
    report = batch_report()
    doc = etree.fromstring(reports.junit_xml(report).encode())
    schema.assertValid(doc)
    cases = {c.get("name"): c for c in doc.iter("testcase")}
    assert set(cases) == {c["metric"] for c in report["checks"]} | {"runs completed"}
    failures = {name: c.find("failure").get("message") for name, c in cases.items() if c.find("failure") is not None}
    assert set(failures) == {"schema_valid", "coverage", "runs completed"}
    assert "below the gate 1" in failures["schema_valid"] and "1 of 4 runs were cancelled" in failures["runs completed"]
    assert cases["diversity"].find("failure") is None and "baseline 0.4" in cases["diversity"].find("system-out").text
    assert doc.get("failures") == "3" and doc.find("testsuite").get("time") == "12.500"


def test_the_schema_is_not_vacuous_and_control_characters_never_break_the_xml():
    etree, schema = junit_schema()
    broken = etree.fromstring(b'<testsuites><testsuite name="s" tests="1"><testcase classname="c"/>'
                              b'</testsuite></testsuites>')  # a test case without its name
    assert not schema.validate(broken)
    late = etree.fromstring(b'<testsuites><testsuite name="s" tests="1"><system-out/><testcase name="t"/>'
                            b'</testsuite></testsuites>')  # output before the cases
    assert not schema.validate(late)
    text = reports.junit_xml(batch_report(error="\x00\x07\x1bbad\ud800"))
    assert schema.validate(etree.fromstring(text.encode()))


def test_anything_else_is_refused():
    with pytest.raises(ValueError, match="not a report"):
        reports.render_html({"results": {}})
    with pytest.raises(ValueError, match="not a report"):
        reports.junit_xml({"suite": "flagship"})


@pytest.fixture(scope="module")
def browser():
    import browser_kit

    yield from browser_kit.chromium(pytest.importorskip("playwright.sync_api"))


@pytest.mark.browser
def test_the_html_opens_in_chromium_offline_with_no_error_and_no_request(paired, browser, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    path = reports.write_html(paired, tmp_path / "compare.html")
    url = path.as_uri()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        requests, errors = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url, wait_until="load")
        expect = playwright.expect
        table = page.get_by_role("table").nth(1)  # the metrics (the first: the two batches)
        expect(table).to_be_visible()
        expect(table.get_by_role("cell", name="coverage", exact=True)).to_be_visible()
        expect(page.get_by_text("<script>alert(1)</script> #3: pass → fail")).to_be_visible()
        assert page.locator("svg.chart").bounding_box()["height"] > 100
        assert page.evaluate("window.__pwned") is None and page.locator("script, img").count() == 0
        page.wait_for_timeout(300)  # anything late (a font, a beacon) would show by now
    finally:
        page.close()
    assert requests == [url]
    assert errors == []


def test_a_debate_that_finished_partial_is_labelled_in_the_batch_report_its_html_and_its_markdown():
    """A run whose debate finished without a part (a persona dropped) reads "done (partial)" and names what is
    missing: it is never counted as a whole debate in silence."""
    from helpers import fixture_dict

    from clearside.quality.scored import Scored

    document = fixture_dict()
    document.pop("moderator")
    scored = Scored(debate_id="e" * 32, run_id="run0", status="done", metrics=GOOD, detail={}, document=document)
    row = regress.item_result(scored, {"item": HOSTILE_CASE, "index": 0})
    assert row["missing"] == ["the moderator's synthesis"]
    whole = regress.item_result(Scored(debate_id="f" * 32, run_id="run1", status="done", metrics=GOOD,
                                       document=fixture_dict()), {"item": HOSTILE_CASE, "index": 1})
    assert "missing" not in whole
    batch = regress.BatchRun(suite="flagship", spec="scripted:x.json", items=(HOSTILE_CASE,), runs=2,
                             batch_id="d" * 32, concurrency=1, prompt_versions={}, started_at="2026-01-02T00:00:00Z")
    report = regress.batch_report(batch, [row, whole], None, wall_seconds=3.0)
    assert [d.get("missing") for d in report["debates"]] == [["the moderator's synthesis"], None]
    text = reports.render_html(report)
    assert "<td>done (partial)</td>" in text and text.count("<td>done</td>") == 1
    assert (f"Debates that finished partial:\n- {HOSTILE_CASE} #1: Partial debate: the moderator's synthesis is "
            "missing.") in regress.markdown(report)
