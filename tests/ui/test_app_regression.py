"""AppTest for the Regression page: run a suite, bless a baseline, deltas, trends, one run beside its reference.

Each test gets a fresh SQLite store (the autouse fixture's CLEARSIDE_DATA). Batches are seeded as ``regress`` runs
them (``helpers.run_regression``: the batch's workflow in this process) on a scripted provider that answers with
the flagship reference's own text, so the pipeline and the metrics are real (the first metrics call of the process
loads the embedding model, hence the long timeout). Runs started from the page are waited on by rerunning it:
AppTest never fires the fragment's timer.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from pathlib import Path

import app_kit
import helpers
import pytest
from app_kit import REGRESSION, AppTest, has, plain, run
from app_kit import of_kind as texts

from clearside.errors import ConfigError
from clearside.providers import get_provider
from clearside.providers.scripted import ScriptedProvider
from clearside.quality.baseline import bless
from clearside.quality.batch import Batch, baseline, batches, suite_items
from clearside.quality.references import flagship
from clearside_ui import settings

VERDICT = "On balance, the pro side makes the **stronger case** <b>here</b>."


def page(provider=None, **query: str) -> AppTest:
    return app_kit.open_page(REGRESSION, provider or ScriptedProvider(), query=query, timeout=90)


def progress(at: AppTest) -> str:
    return "\n".join(e.proto.text for e in at.get("progress"))


# Each table by a column only it has (dataframe keys do not reach the element tree).
SIGNATURES = {"rg_batches": "Batch", "rg_deltas": "Reasons", "rg_finished": "Error", "rg_headline": "Value"}


def table(at: AppTest, key: str):
    found = [d.value for d in at.dataframe if SIGNATURES[key] in d.value.columns]
    assert len(found) == 1, f"{len(found)} tables {key}"
    return found[0]


def next_second() -> None:
    """Batches are ordered by their first run's creation time, kept to the second."""
    time.sleep(1.02 - time.time() % 1)


def seed(store, tmp_path: Path, name: str, *, runs: int = 2, suite: str = "flagship", **overrides) -> Batch:
    """A finished batch of ``suite`` on a scripted provider named after ``name`` (its script file)."""
    per_run = len(suite_items(suite))
    provider = get_provider(helpers.flagship_script(tmp_path, runs * per_run, name=f"{name}.json", **overrides))
    report = helpers.run_regression(suite, provider, store, runs=runs)
    next_second()
    return next(b for b in batches(store, suite) if b.id == report["batch"])


def verdict_moderator() -> dict:
    """The flagship moderator, except that its first decision hinge picks a winner."""
    moderator = copy.deepcopy(helpers.flagship_replies()["moderator"])
    moderator["decision_hinges"][0] = VERDICT
    return moderator


def gated(runs: int, gate: threading.Event, *, open_runs: int = 0, moderator: dict | None = None) -> ScriptedProvider:
    """A flagship script whose orchestrator waits for ``gate`` from run ``open_runs + 1`` on (concurrency 1)."""
    replies = helpers.flagship_replies()
    if moderator is not None:
        replies["moderator"] = moderator
    script = {agent: [copy.deepcopy(reply) for _ in range(runs)] for agent, reply in replies.items()}
    waiting = replies["orchestrator"]
    script["orchestrator"] = [copy.deepcopy(waiting) for _ in range(open_runs)] + [
        lambda request: (gate.wait(60), copy.deepcopy(waiting))[1] for _ in range(runs - open_runs)]
    return ScriptedProvider(script=script)


def job_done(at: AppTest) -> bool:
    return not has(at, "rg_cancel") and has(at, "rg_dismiss")


def test_an_empty_suite_shows_its_propositions_and_the_run_controls(store):
    at = page()
    assert at.title[0].value == "Regression"
    assert at.selectbox(key="rg_suite").value == "flagship"
    assert "No runs of the flagship suite yet" in texts(at, "info")
    assert "The flagship benchmark" in plain(at) and "AI data-center moratorium" in plain(at)
    assert flagship().proposition in plain(at)
    assert at.number_input(key="rg_runs").value == 3
    assert at.number_input(key="rg_concurrency").value == ScriptedProvider.concurrency
    assert "3 debates" in plain(at) and "no debate with this model has finished here yet, so no estimate" in plain(at)
    assert not at.button(key="rg_start").proto.disabled
    assert "scripted:script" in plain(at), "the sidebar's model is named"
    assert not at.get("plotly_chart") and not at.dataframe
    run(at.selectbox(key="rg_suite").set_value("argkp-dev"))
    shown = plain(at)
    assert all(item.proposition in shown for item in suite_items("argkp-dev"))
    assert "No runs of the argkp-dev suite yet" in texts(at, "info")


def test_running_the_suite_shows_each_run_as_it_lands_then_pass(store):
    gate = threading.Event()
    at = page(gated(2, gate, open_runs=1))
    at.number_input(key="rg_runs").set_value(2)
    run(at.number_input(key="rg_concurrency").set_value(1))
    run(at.button(key="rg_start").click())
    batch_id = at.session_state["rg_job"]
    assert has(at, "rg_cancel") and at.button(key="rg_start").proto.disabled, "one batch at a time"
    app_kit.settle(at, lambda a: "1 of 2 runs finished" in progress(a),
                   describe=plain, timeout=90)
    assert list(table(at, "rg_finished")["Status"]) == ["done"], "the first run is listed as soon as it lands"
    assert "Running for 0:" in plain(at) and "2 debates: about 0:00 left (a debate takes about" in plain(at)
    gate.set()
    app_kit.settle(at, job_done, timeout=90)
    assert "PASS" in texts(at, "success") and "no baseline yet" in texts(at, "success")
    rows = store.runs("flagship")
    assert len(rows) == 2 and {r["data"]["batch"] for r in rows} == {batch_id}
    assert {r["status"] for r in rows} == {"done"}
    batches = table(at, "rg_batches")
    assert list(batches["Batch"]) == [batch_id] and list(batches["Runs"]) == ["2/2"]
    assert at.selectbox(key="rg_batch").value == batch_id, "the new batch is selected"
    assert at.query_params["batch"] in (batch_id, [batch_id]), "the address is the share link"
    run(at.button(key="rg_dismiss").click())
    assert not has(at, "rg_dismiss") and not at.button(key="rg_start").proto.disabled
    assert "2 debates: about 0:00 in all here (a debate takes about 0:00, the median of the last 2 debates with " \
        "this model here)" in plain(at), "the next run's estimate, from the two debates just run"


def test_a_batch_of_one_run_shows_its_agents_while_its_debate_runs(store):
    gate = threading.Event()
    at = page(gated(1, gate))
    run(at.number_input(key="rg_runs").set_value(1))
    run(at.button(key="rg_start").click())
    try:
        # its orchestrator was asked and has not written yet: waiting for the model, as the Debate page says it
        app_kit.settle(at, lambda a: "flagship #1: ◔ proposition (waiting for the model) · ○ FOR" in plain(a),
                       timeout=60)
        assert "0 of 1 runs finished" in progress(at), "no run has finished, but the page shows which agent works"
    finally:
        gate.set()
    app_kit.settle(at, job_done, timeout=90)
    assert "flagship #1:" not in plain(at), "a finished run leaves the list of running ones"
    # the picker tells the browser the label it shows now: the browser keeps the label a choice was made under
    pick = at.selectbox(key="rg_batch")
    assert pick.proto.set_value and "· 1/1 runs ·" in pick.proto.raw_value, pick.proto
    assert all(frame.proto.placeholder == "—" for frame in at.dataframe), "a missing value is —, never None"


def test_cancel_keeps_the_finished_runs_and_says_how_many_were_cancelled(store):
    gate = threading.Event()
    provider = gated(3, gate, open_runs=1)
    at = page(provider)
    at.number_input(key="rg_runs").set_value(3)
    run(at.number_input(key="rg_concurrency").set_value(1))
    run(at.button(key="rg_start").click())
    app_kit.settle(at, lambda a: "1 of 3 runs finished" in progress(a) and
                   len(provider.requests_for("orchestrator")) == 2, timeout=90)
    run(at.button(key="rg_cancel").click())  # the second run is under way (at the gate), the third queued
    gate.set()  # the run in flight finishes; the third never starts
    app_kit.settle(at, job_done, timeout=90)
    assert "Cancelled: 2 of 3 runs finished" in texts(at, "warning")
    # the first batch has no baseline: what it misses is an absolute gate, not a regression
    assert "BELOW THE GATES" in texts(at, "error") and "REGRESSION" not in texts(at, "error")
    assert "1 of 3 runs were cancelled" in texts(at, "error")
    assert len(store.runs("flagship")) == 2


def test_bless_asks_for_confirmation_then_deltas_compare_with_the_baseline(store, tmp_path):
    first = seed(store, tmp_path, "first")
    second = seed(store, tmp_path, "second")
    at = page()
    assert at.selectbox(key="rg_batch").value == second.id, "the newest batch by default"
    assert "No baseline yet" in texts(at, "info")
    deltas = table(at, "rg_deltas")
    assert deltas["Baseline mean"].isna().all() and set(deltas["Status"]) <= {"pass", "info"}
    run(at.selectbox(key="rg_batch").set_value(first.id))
    run(at.button(key="rg_bless").click())
    assert baseline(store, "flagship") is None, "nothing changes before the confirmation"
    assert "Every later run of this suite is judged against it" in texts(at, "warning")
    run(at.button(key="rg_bless_cancel").click())
    assert baseline(store, "flagship") is None and not at.warning
    run(at.button(key="rg_bless").click())
    run(at.button(key="rg_bless_confirm").click())  # no note: the flagship baseline needs one
    assert baseline(store, "flagship") is None and "needs a note of why" in texts(at, "error")
    run(at.text_area(key="rg_bless_note").input("The reference's own text: the best structure we have."))
    run(at.button(key="rg_bless_confirm").click())
    assert baseline(store, "flagship").id == first.id
    assert f"Batch {first.id[:8]}" in texts(at, "success") and "is now the flagship baseline" in texts(at, "success")
    batches = table(at, "rg_batches").set_index("Batch")
    assert batches.loc[first.id, "Baseline"] == "baseline" and batches.loc[second.id, "Baseline"] == ""
    assert "This batch is the baseline" in texts(at, "info") and not has(at, "rg_bless")
    run(at.selectbox(key="rg_batch").set_value(second.id))
    assert "Baseline now: " in plain(at) and first.id[:8] in plain(at)
    deltas = table(at, "rg_deltas").set_index("Metric")
    assert {"schema_valid", "neutrality_violations", "coverage", "stance_margin", "diversity"} <= set(deltas.index)
    assert deltas.loc["coverage", "Baseline mean"] == first.aggregate()["coverage"]["mean"]
    assert deltas["Baseline mean"].notna().all()
    same = deltas.drop(index=[m for m in ("seconds", "first_token_seconds") if m in deltas.index])  # time is measured
    assert (same["Delta"] == 0).all(), "the same script, the same text"
    assert set(deltas["Status"]) <= {"pass", "info"} and "PASS" in texts(at, "success")
    [costs] = [d.value for d in at.dataframe if "Wall time (s)" in d.value.columns and "Batch id" in d.value.columns]
    assert list(costs["Batch id"]) == [second.id[:8], first.id[:8]], "time and tokens beside the baseline's"
    assert list(costs["Runs"]) == [2, 2] and (costs["Wall time (s)"] > 0).all() and (costs["Tokens"] > 0).all()
    [runs] = [d.value for d in at.dataframe if "Run" in d.value.columns and "Wall time (s)" in d.value.columns]
    assert len(runs) == 2 and runs["Wall time (s)"].mean() == pytest.approx(costs["Wall time (s)"][0], abs=0.01)
    run(at.toggle(key="rg_costs_show_chart").set_value(True))
    [chart] = [c for c in at.get("plotly_chart") if "wall time (s)" in c.proto.spec]
    assert [t["name"] for t in json.loads(chart.proto.spec)["data"]] == [f"batch {second.id[:8]}",
                                                                         f"batch {first.id[:8]}"]


def test_a_moderator_that_picks_a_winner_is_a_regression_against_the_baseline(store, tmp_path):
    good = seed(store, tmp_path, "good")
    bless(store, good.id, note="the good script")
    gate = threading.Event()
    gate.set()
    at = page(gated(1, gate, moderator=verdict_moderator()))
    run(at.number_input(key="rg_runs").set_value(1))
    run(at.button(key="rg_start").click())
    batch_id = at.session_state["rg_job"]
    app_kit.settle(at, job_done, timeout=90)
    # the substance checks drop the verdict in the loop (the document stays neutral); what regresses is
    # how much they had to catch
    assert "REGRESSION" in texts(at, "error") and "checks_caught" in texts(at, "error")
    assert at.selectbox(key="rg_batch").value == batch_id
    deltas = table(at, "rg_deltas").set_index("Metric")
    assert deltas.loc["checks_caught", "Status"] == "fail" and deltas.loc["checks_caught", "Baseline mean"] == 0
    assert "worse than the baseline" in deltas.loc["checks_caught", "Reasons"]
    assert deltas.loc["neutrality_violations", "Status"] == "pass" and deltas.loc["garbage_left", "Status"] == "pass"
    assert deltas.loc["schema_valid", "Status"] == "pass"
    assert baseline(store, "flagship").id == good.id, "a run never moves the baseline"


def test_the_trend_chart_plots_each_model_over_time_with_the_baseline_marked(store, tmp_path):
    first = seed(store, tmp_path, "alpha")
    at = page()
    assert not at.get("plotly_chart") and "two batches" in plain(at)
    seed(store, tmp_path, "beta")
    bless(store, first.id, note="the first")
    run(at)
    [chart] = at.get("plotly_chart")
    figure = json.loads(chart.proto.spec)
    names = [trace.get("name") for trace in figure["data"]]
    assert any(n.endswith("alpha.json") for n in names) and any(n.endswith("beta.json") for n in names)
    assert "baseline" in names
    assert at.selectbox(key="rg_metric").value == "coverage"
    run(at.selectbox(key="rg_metric").set_value("neutrality_violations"))
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "neutrality_violations" in figure["layout"]["title"]["text"]
    assert [t["y"] for t in figure["data"] if t["name"].endswith(".json")] == [[0.0], [0.0]]


def test_drill_down_shows_a_run_beside_the_flagship_reference_and_its_metrics(store, tmp_path):
    batch = seed(store, tmp_path, "drill")
    at = page()
    runs = at.selectbox(key="rg_run")
    assert len(runs.options) == 2 and all("flagship #" in o and "done" in o for o in runs.options)
    run(runs.set_value(batch.rows[1]["id"]))
    question = flagship().document["proposition"]["normalized_question"]
    headings = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("#### ")]
    assert headings.count(f"#### {question}") == 2, "the run's debate and the reference, side by side"
    assert "This run's debate" in plain(at) and "The reference" in plain(at)
    sections = [m.value for m in at.markdown if m.value.startswith("### :")]  # the coloured sections
    assert sections == ["### :green[FOR]"] * 2 + ["### :red[AGAINST]"] * 2 + ["### :gray[MODERATOR SYNTHESIS]"] * 2, (
        "section by section: each row pairs the run's section with the reference's")
    run(at.radio(key="rg_layout").set_value("columns"))
    headings = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("#### ")]
    assert headings.count(f"#### {question}") == 2 and "The reference" in plain(at)
    [link] = [p for p in at.get("page_link") if "Debate page" in p.proto.label]
    assert link.proto.query_string == f"debate={batch.rows[1]['debate_id']}"
    shown = plain(at)
    assert "Coverage of the reference key points" in shown and "Missed:" in shown
    missed = batch.rows[1]["data"]["detail"]["coverage"]["con"]["missed"][0]
    assert missed in shown
    headline = table(at, "rg_headline").set_index("Metric")
    assert headline.loc["coverage", "Value"] == batch.rows[1]["metrics"]["coverage"]


def test_argkp_runs_show_key_points_and_a_failed_run_shows_its_error(store, tmp_path):
    items = suite_items("argkp-dev")
    script: dict[str, list] = {}
    for item in items[:-1]:  # at concurrency 1 the items run in turn: the last one finds no reply left
        for agent, reply in helpers.argkp_debate(item.proposition).items():
            script.setdefault(agent, []).append(reply)
    provider = get_provider(helpers.script_file(tmp_path, "short.json", **script))
    report = helpers.run_regression("argkp-dev", provider, store, runs=1, window=1)
    assert sorted(d["status"] for d in report["debates"]) == ["done"] * (len(items) - 1) + ["failed"]
    at = page(batch=report["batch"])  # a link to the other suite's batch switches the suite
    assert at.selectbox(key="rg_suite").value == "argkp-dev" and at.selectbox(key="rg_batch").value == report["batch"]
    rows = {r["id"]: r for r in store.runs("argkp-dev")}
    done = next(r for r in rows.values() if r["status"] == "done")
    run(at.selectbox(key="rg_run").set_value(done["id"]))
    reference = next(i for i in items if i.name == done["data"]["item"])
    shown = plain(at)
    assert shown.count("Reference key points") == 2 and all(point in shown for point in reference.key_points["con"])
    assert "has no decision hinges" in shown, "the moderator's row says what the reference lacks"
    failed = next(r for r in rows.values() if r["status"] == "failed")
    run(at.selectbox(key="rg_run").set_value(failed["id"]))
    assert "This run failed:" in texts(at, "error") and "no response left" in texts(at, "error")
    assert list(table(at, "rg_batches")["Failed"]) == [1]


def test_an_unknown_batch_link_says_so_and_shows_the_newest(store, tmp_path):
    at = page(batch="0123456789abcdef0123456789abcdef")
    assert "no batch of any suite has the id 0123456789abcdef0123456789abcdef" in texts(at, "error")
    newest = seed(store, tmp_path, "only")
    run(at)
    assert "no batch of any suite has the id" in texts(at, "error"), "the link still names an unknown batch"
    assert at.selectbox(key="rg_batch").value == newest.id
    garbage = page(batch="not-a-batch")
    assert "no batch of any suite has the id not-a-batch" in texts(garbage, "error")


def test_a_provider_that_cannot_be_built_is_reported_and_nothing_starts(store, monkeypatch):
    def broken():
        raise ConfigError("No model named <b>*gpt*</b> here.")

    at = page()
    monkeypatch.setattr(settings, "build_provider", broken)
    run(at)
    assert "The sidebar's model cannot be used: No model named" in texts(at, "error")
    assert "\\<b\\>\\*gpt\\*\\</b\\>" in "\n".join(e.value for e in at.error), "escaped"
    assert at.button(key="rg_start").proto.disabled
    assert not store.runs() and "rg_job" not in at.session_state


def test_the_swap_check_is_off_by_default_and_the_checkbox_reaches_the_batch(store, monkeypatch):
    """The page's Swap check checkbox is what the batch it starts is told (stopped before anything is queued)."""
    from clearside.quality.job import RegressionJob

    asked = []

    def start(job):
        asked.append(job.swap_check)
        raise ConfigError("stopped by the test before queueing")

    monkeypatch.setattr(RegressionJob, "start", start)
    at = page()
    assert at.checkbox(key="rg_swap_check").value is False
    run(at.button(key="rg_start").click())
    run(at.checkbox(key="rg_swap_check").check())
    run(at.button(key="rg_start").click())
    assert asked == [False, True]
    assert "stopped by the test" in texts(at, "error")



def test_did_the_debate_add_anything_runs_the_single_pass_and_pairs_it_with_a_debate_batch(store, tmp_path):
    """With only debate batches, the section offers to run the control on the sidebar's model; once it has run, the
    two arms are paired run by run: what the figures say, and the table as single pass against debate."""
    debates = seed(store, tmp_path, "debate", runs=2)
    replies = helpers.flagship_replies()
    thin = copy.deepcopy(replies["con"])
    thin["arguments"] = thin["arguments"][:2]  # the single pass makes fewer of the reference's points
    one = helpers.single_reply(replies["pro"], thin, replies["moderator"], ids=False)
    at = page(ScriptedProvider(script={"single": [copy.deepcopy(one) for _ in range(2)],
                                       "orchestrator": [copy.deepcopy(replies["orchestrator"]) for _ in range(2)]}))
    assert "No single-pass batch of the flagship suite yet" in plain(at)
    at.number_input(key="rg_runs").set_value(2)
    run(at.button(key="rg_value_run").click())
    app_kit.settle(at, job_done, timeout=120)
    [control] = [b for b in batches(store, "flagship") if b.id != debates.id]
    assert {r["status"] for r in control.rows} == {"done"}, [(r.get("data") or {}).get("error") for r in control.rows]
    assert {store.get(r["debate_id"]).document["quality"]["strategy"] for r in control.rows} == {"single"}
    assert at.selectbox(key="rg_value_a").value == control.id and at.selectbox(key="rg_value_b").value == debates.id
    shown = plain(at)
    assert "What the figures say" in shown and "- coverage: no difference the test can tell (2 pairs, debate" in shown
    assert "completion_tokens: the debate costs" in shown
    [paired] = [d.value for d in at.dataframe if "Debate − single pass" in d.value.columns]
    coverage = paired.set_index("Metric").loc["coverage"]
    assert coverage["Debate"] > coverage["Single pass"], "the debate made more of the reference's points"
    assert not [s for s in at.success if "debate" in s.value.lower()], "no green verdict on the debate's value"
