"""Regression batches on the scripted provider: runs stored as they finish, baseline blessing, forced regressions
(exit 1), gates and tolerances, concurrency, the argkp-dev suite, and the runs/bless/compare commands."""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import (
    QUESTION,
    argkp_debate,
    flagship_replies,
    flagship_script,
    moderator_reply,
    orchestrator_reply,
    request_text,
    run_regression,
    script_file,
    side_reply,
    single_reply,
)
from helpers import run_cli as run

from clearside.errors import InputError
from clearside.providers.scripted import ScriptedProvider
from clearside.quality import compare
from clearside.quality.batch import baseline, batches, check
from clearside.store import open_store

REPO = Path(__file__).resolve().parents[2]


def winner_moderator() -> dict:
    reply = copy.deepcopy(flagship_replies()["moderator"])
    reply["core_disagreements"][0]["description"] = "On balance, the pro side makes the stronger case here."
    return reply


def repetitive_con() -> dict:
    """Two wordings of one point (the checks drop the repeat) and two more points, instead of four points: the side
    keeps three arguments, as many as the prompt asks for, so it is not asked for more."""
    con = copy.deepcopy(flagship_replies()["con"])
    first = con["arguments"][0]
    con["arguments"] = [{**first, "claim": claim} for claim in (
        "A moratorium would weaken US competitiveness and national security.",
        "A moratorium weakens U.S. competitiveness and national security.")] + con["arguments"][1:3]
    return con


def test_regress_passes_stores_every_run_and_writes_json_and_markdown(db, tmp_path, capsys):
    out = tmp_path / "report.json"
    code, stdout, err = run(capsys, "regress", "--suite", "flagship", "--provider", flagship_script(tmp_path, 3),
                            "--out", str(out))
    assert code == 0, stdout + err
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["passed"] and report["runs"] == 3 and report["baseline"] is None and report["failures"] == []
    assert report["metrics"]["schema_valid"]["mean"] == 1.0 and report["metrics"]["coverage"]["n"] == 3
    assert {"mean", "stdev", "min", "max", "values"} <= set(report["metrics"]["stance_margin"])
    assert (tmp_path / "report.md").read_text(encoding="utf-8").startswith("# Regression: flagship")
    assert "— PASS" in stdout and err.count("[") >= 3
    printed = re.findall(r"^\[(\d)/3\] flagship #\d in [\d.]+ s: valid, 0 neutrality violations, coverage [\d.]+ "
                         r"\(debate [0-9a-f]{32}\)$", err, re.MULTILINE)
    assert printed == ["1", "2", "3"], err  # each run as it finished, counted
    rows = db.runs("flagship")
    assert len(rows) == 3 and {r["status"] for r in rows} == {"done"}
    assert {r["data"]["batch"] for r in rows} == {report["batch"]}
    assert all(db.get(r["debate_id"]).status == "done" for r in rows)  # each debate is saved too
    assert all(r["prompt_versions"] and "coverage" in r["metrics"] for r in rows)
    assert rows[0]["data"]["detail"]["neutrality"]["violations"] == []


def test_forced_regression_exits_1_and_the_baseline_stays_put(db, tmp_path, capsys):
    good = flagship_script(tmp_path, 2, name="good.json")
    code, _, _ = run(capsys, "regress", "--provider", good, "--runs", "2", "--bless", "--note", "first baseline")
    assert code == 0
    blessed = baseline(db, "flagship")
    assert blessed is not None and len(blessed.rows) == 2

    bad = flagship_script(tmp_path, 2, name="bad.json", moderator=winner_moderator(), con=repetitive_con())
    code, out, _ = run(capsys, "regress", "--provider", bad, "--runs", "2", "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert not report["passed"] and report["baseline"]["batch"] == blessed.id
    failed = {c["metric"]: c for c in report["checks"] if c["status"] == "fail"}
    # the substance checks repaired the verdict and the repeated claims in the loop, so the documents are clean
    # (no neutrality violation, no duplicate left); the rise in what they caught is the regression
    passed = {c["metric"]: c for c in report["checks"] if c["status"] == "pass"}
    assert "neutrality_violations" in passed and "garbage_left" in passed
    assert "checks_caught" in failed and "worse than the baseline" in failed["checks_caught"]["reasons"][0]
    assert failed["checks_caught"]["mean"] >= 2  # the verdict item and a repeated claim, in every run
    assert "count_ratio" in failed and failed["count_ratio"]["delta"] < 0  # a repeat was dropped: 4 against 3
    assert any(f.startswith("checks_caught") for f in report["failures"])
    assert baseline(db, "flagship").id == blessed.id  # a failing batch never becomes the baseline
    assert len(batches(db, "flagship")) == 2


def test_failed_debates_count_as_invalid_and_keep_their_error(db, tmp_path, capsys):
    replies = flagship_replies()
    spec = script_file(tmp_path, "half.json", orchestrator=[replies["orchestrator"]] * 2, pro=[replies["pro"]] * 2,
                       con=[replies["con"]] * 2,
                       moderator=[replies["moderator"], {"__error__": "provider", "message": "moderator down"}] * 3)
    code, out, _ = run(capsys, "regress", "--provider", spec, "--runs", "2", "--concurrency", "1", "--retries", "0")
    assert code == 1
    assert "schema_valid: mean 0.5 is below the gate 1" in out and "moderator down" in out
    rows = db.runs("flagship")
    assert sorted(r["status"] for r in rows) == ["done", "failed"]
    failed = next(r for r in rows if r["status"] == "failed")
    assert failed["metrics"] == {"schema_valid": 0.0} and "moderator down" in failed["data"]["error"]
    assert db.get(failed["debate_id"]).status == "failed"  # its finished sections stay resumable


def test_an_unreachable_server_exits_3_before_any_run_is_saved(db, tmp_path, capsys, monkeypatch):
    """exit 3 when the provider is unreachable; regress says so before it starts, instead of saving a
    failed run per case and reporting a regression (exit 1)."""
    from helpers import free_port

    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    code, out, err = run(capsys, "regress", "--provider", "openai:local", "--runs", "1")
    assert code == 3, err
    assert "127.0.0.1" in err and out == ""
    assert db.runs("flagship") == [] and batches(db, "flagship") == []


def test_each_run_is_stored_the_moment_it_finishes():
    """One run at a time: when each moderator is asked, the runs before it are already stored done."""
    store = open_store()
    replies = flagship_replies()
    seen = []

    def moderator(request):
        seen.append(sorted(r["status"] for r in store.runs("flagship")))
        return copy.deepcopy(replies["moderator"])

    provider = ScriptedProvider(script={**{agent: [replies[agent]] * 3 for agent in ("orchestrator", "pro", "con")},
                                        "moderator": [moderator] * 3})
    report = run_regression("flagship", provider, store, runs=3, window=1)
    assert seen == [["running"], ["done", "running"], ["done", "done", "running"]] and report["passed"]
    assert [r["status"] for r in store.runs("flagship")] == ["done", "done", "done"]


def test_ctrl_c_cancels_the_batch_and_its_debate_under_way_stops():
    """regress runs its batch in its own process: Ctrl+C cancels the batch (the debate under way stops at its next
    token and is kept, resumable; the runs not yet started never start) and the command exits 130."""
    from bench.latency_server import MODEL, start
    from clearside import runtime

    with start(0, ttft=0.2, tps=40) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "not-needed"}
        command = subprocess.Popen([sys.executable, "-m", "clearside", "regress", "--provider", f"openai:{MODEL}",
                                    "--runs", "3", "--concurrency", "1", "--retries", "1"], cwd=REPO, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not server.stats()["agents"].get("pro") and time.monotonic() < deadline:
            time.sleep(0.1)
        command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=90)
        asked = server.stats()["agents"]
    assert command.returncode == 130 and "interrupted" in err and out == "", err
    assert asked["orchestrator"] == 1 and "moderator" not in asked, "the runs not yet started never start"
    [batch] = batches(open_store(), "flagship")
    assert runtime.state(batch.id).status == "cancelled"
    [row] = batch.rows
    assert row["status"] == "cancelled" and open_store().get(row["debate_id"]).status == "paused"


def test_concurrency_runs_debates_at_once_and_1_runs_them_in_turn(tmp_path):
    """With concurrency 3 the three moderators meet at a barrier (only possible if they run at once: a batch
    run in turn breaks it after its timeout); with 1 no two moderator calls ever overlap."""
    replies = flagship_replies()
    lock, state = threading.Lock(), {"now": 0, "peak": 0}

    def moderator_waiting_at(barrier: threading.Barrier | None):
        def reply(request):
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            if barrier is not None:
                barrier.wait()  # raises BrokenBarrierError after its timeout if the three never meet
            else:
                time.sleep(0.3)
            with lock:
                state["now"] -= 1
            return copy.deepcopy(replies["moderator"])
        return reply

    for concurrency, peak in ((3, 3), (1, 1)):
        state.update(now=0, peak=0)
        moderator = moderator_waiting_at(threading.Barrier(3, timeout=60) if concurrency == 3 else None)
        provider = ScriptedProvider(script={"orchestrator": [replies["orchestrator"]] * 3,
                                            "pro": [replies["pro"]] * 3, "con": [replies["con"]] * 3,
                                            "moderator": [moderator] * 3})
        report = run_regression("flagship", provider, runs=3, window=concurrency)
        assert report["concurrency"] == concurrency and report["passed"]
        assert state["peak"] == peak


_ASKED = itertools.count()


def argkp_reply(request) -> dict:
    """A debate about the proposition the request quotes, from ArgKP's own human arguments on it."""
    topic = json.loads(re.search(r'USER TEXT[^:]*: ("(?:[^"\\]|\\.)*")', request_text(request))[1])
    if list((request.schema or {}).get("properties", {})) == ["arguments"]:  # one more argument for a thinned side
        from clearside.quality.references import argkp_arguments

        said = request_text(request)
        more = [text[:100] for text in argkp_arguments(topic)[request.agent][6:] if text[:100] not in said]
        text = more[next(_ASKED) % len(more)]  # a re-ask gets the next one
        category = request.schema["properties"]["arguments"]["items"]["properties"]["category"]["enum"][0]
        return {"arguments": [{"category": category, "claim": text, "explanation": text,
                               "evidence_type": "value_judgment", "confidence": "medium"}]}
    return argkp_debate(topic)[request.agent]


def test_argkp_dev_suite_runs_every_proposition(tmp_path):
    provider = ScriptedProvider(fallback=argkp_reply)
    report = run_regression("argkp-dev", provider, runs=1)
    assert report["items"] == ["argkp-dev:1", "argkp-dev:2", "argkp-dev:3", "argkp-dev:4"]
    assert len(report["debates"]) == 4 and {d["status"] for d in report["debates"]} == {"done"}
    assert report["metrics"]["coverage"]["n"] == 4  # scored against each proposition's own key points
    assert "hinge_coverage" not in report["metrics"]  # ArgKP has no decision hinges


def test_check_applies_gates_tolerance_and_spread():
    now = {"coverage": {"n": 3, "mean": 0.5, "stdev": 0.05}, "seconds": {"n": 3, "mean": 99.0, "stdev": 1.0},
           "neutrality_violations": {"n": 3, "mean": 0.0, "stdev": 0.0}}
    base = {"coverage": {"n": 3, "mean": 0.7, "stdev": 0.02}, "seconds": {"n": 3, "mean": 10.0, "stdev": 1.0}}
    rows = {r["metric"]: r for r in check(now, base)}
    assert rows["coverage"]["status"] == "fail" and rows["coverage"]["allowed"] == pytest.approx(0.15)
    assert rows["seconds"]["status"] == "info"  # time is reported, never gated
    assert rows["neutrality_violations"]["status"] == "pass"
    within = check({"coverage": {"n": 3, "mean": 0.62, "stdev": 0.05}}, base)
    assert within[0]["status"] == "pass"  # 0.08 worse, allowed 0.1 + 0.05
    loose = check(now, base, {"coverage": {"tolerance": 0.3}})
    assert {r["metric"]: r["status"] for r in loose}["coverage"] == "pass"
    assert check({"schema_valid": {"n": 2, "mean": 0.5, "stdev": 0.7}}, None)[0]["status"] == "fail"


def test_thresholds_file_overrides_and_bad_ones_are_refused(db, tmp_path, capsys):
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps({"coverage": {"min": 0.99}}), encoding="utf-8")
    code, out, _ = run(capsys, "regress", "--provider", flagship_script(tmp_path, 1), "--runs", "1",
                       "--thresholds", str(strict))
    assert code == 1 and "coverage: mean" in out and "below the gate 0.99" in out
    bad = tmp_path / "bad.json"
    bad.write_text("[1]", encoding="utf-8")
    assert run(capsys, "regress", "--provider", flagship_script(tmp_path, 1), "--thresholds", str(bad))[0] == 2
    assert run(capsys, "regress", "--provider", flagship_script(tmp_path, 1), "--runs", "0")[0] == 2
    assert run(capsys, "regress", "--suite", "nope")[0] == 2


def test_runs_and_bless_commands(db, tmp_path, capsys):
    assert run(capsys, "runs")[1].startswith("No runs yet")
    for name in ("a.json", "b.json"):
        assert run(capsys, "regress", "--provider", flagship_script(tmp_path, 1, name=name), "--runs", "1")[0] == 0
    code, out, _ = run(capsys, "runs", "--format", "json")
    listed = json.loads(out)
    assert code == 0 and len(listed) == 2 and not any(b["baseline"] for b in listed)
    first = listed[0]
    run_id = db.runs("flagship")[0]["id"]
    code, out, _ = run(capsys, "bless", run_id, "--note", "the first")  # a run's id blesses its whole batch
    assert code == 0 and first["batch"] in out
    code, out, _ = run(capsys, "runs")
    assert f"{first['batch']}" in out and "(baseline)" in out
    assert run(capsys, "bless", listed[1]["batch"], "--note", "the second")[0] == 0
    assert baseline(db, "flagship").id == listed[1]["batch"]
    assert sum(r["baseline"] for r in db.runs("flagship")) == 1
    code, _, err = run(capsys, "bless", "f" * 32)
    assert code == 2 and "runs" in err


def test_compare_command_shows_shared_arguments(db, tmp_path, capsys):
    a = flagship_script(tmp_path, 1, name="a.json")
    other_con = copy.deepcopy(flagship_replies()["con"])
    other_con["arguments"] = other_con["arguments"][2:]
    b = flagship_script(tmp_path, 1, name="b.json", con=other_con)
    code, out, err = run(capsys, "compare", "Should the US pause new AI data centers?", "--provider", a,
                         "--provider", b, "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["models"] == ["scripted:a.json", "scripted:b.json"], "paths are labelled by their file names"
    for label in report["models"]:  # each model's progress, named, as `debate` prints it
        assert all(f"{label} [{agent}] done in" in err for agent in ("orchestrator", "pro", "con", "moderator")), err
    shared = [p for p in report["agreement"] if p["side"] == "pro"]
    assert shared and all(p["k"] == 2 and p["n"] == 2 for p in shared)  # the same pro case from both
    con_k = sorted(p["k"] for p in report["agreement"] if p["side"] == "con")
    assert con_k == [1, 1, 2, 2]  # two con points only a.json made, two both made
    assert {r["status"] for r in report["results"].values()} == {"done"}
    loaded, documents = compare.load(db, report["batch"])
    assert set(documents) == set(report["models"]) and loaded["agreement"] == report["agreement"]
    assert [row["status"] for row in compare.table(loaded)] == ["done", "done"]
    # a model's debate that finished without a part (a persona dropped, as the recorder saves it) is labelled
    db.update(loaded["results"]["scripted:b.json"]["debate_id"], data={"missing": ["persona 'ethicist'"]})
    loaded, _ = compare.load(db, report["batch"])
    assert loaded["results"]["scripted:b.json"]["missing"] == ["persona 'ethicist'"]
    assert [row["status"] for row in compare.table(loaded)] == ["done", "done (partial)"]
    assert "| status | done | done (partial) |" in compare.markdown(loaded)
    assert run(capsys, "compare", "Q?", "--provider", a)[0] == 2  # one model is not a comparison
    assert run(capsys, "compare", "Why?", "--provider", a, "--provider", a)[0] == 2


def test_a_comparison_lists_its_models_in_the_order_given_whatever_order_their_runs_were_saved_in(db):
    """Both models' runs can be saved in the same instant, and rows of one instant come back in id order: the
    comparison keeps the order the user gave (each run stores its place); one saved without places keeps the
    order its runs were created in."""
    batch = "c" * 32
    for position, label in ((1, "scripted:b.json"), (0, "scripted:a.json")):
        db.add_run(compare.SUITE, provider="scripted", model=label, status="done",
                   data={"batch": batch, "question": "Q?", "label": label, "position": position})
    loaded, _ = compare.load(db, batch)
    assert loaded["models"] == ["scripted:a.json", "scripted:b.json"]
    older = "d" * 32
    for label in ("scripted:b.json", "scripted:a.json"):
        db.add_run(compare.SUITE, provider="scripted", model=label, status="done",
                   data={"batch": older, "question": "Q?", "label": label})
    assert compare.load(db, older)[0]["models"] == ["scripted:b.json", "scripted:a.json"]


def test_compare_runs_one_model_as_a_debate_and_as_the_single_pass_control(db, tmp_path, capsys):
    spec = script_file(tmp_path, orchestrator=[orchestrator_reply()], pro=[side_reply("pro")],
                       con=[side_reply("con")], moderator=[moderator_reply()], single=[single_reply()])
    code, out, err = run(capsys, "compare", QUESTION, "--provider", spec, "--provider", spec,
                         "--strategies", "auto,single", "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["models"] == ["scripted:script.json · auto", "scripted:script.json · single"]
    assert {r["status"] for r in report["results"].values()} == {"done"}
    _, documents = compare.load(db, report["batch"])
    assert [documents[label]["quality"]["strategy"] for label in report["models"]] == ["whole", "single"]
    assert {r["data"]["label"]: r["data"]["strategy"] for r in db.runs(compare.SUITE, batch=report["batch"])} == {
        "scripted:script.json · auto": None, "scripted:script.json · single": "single"}
    code, _, err = run(capsys, "compare", QUESTION, "--provider", spec, "--provider", spec, "--strategy", "single")
    assert code == 2 and "same temperature and strategy" in err
    code, _, err = run(capsys, "compare", QUESTION, "--provider", spec, "--provider", spec,
                       "--strategies", "single")
    assert code == 2 and "one strategy per model (2), not 1" in err


def test_a_regression_batch_runs_the_single_pass_control_and_records_it(db):
    replies = flagship_replies()
    one = single_reply(replies["pro"], replies["con"], replies["moderator"], ids=False)  # conflicts quote the text
    provider = ScriptedProvider(script={"orchestrator": [replies["orchestrator"]], "single": [one]})
    report = run_regression("flagship", provider, runs=1, strategy="single")
    assert report["runs"] == 1 and report["metrics"]["schema_valid"]["mean"] == 1.0, report
    [row] = db.runs("flagship")
    assert row["data"]["versions"]["provider"]["strategy"] == "single"
    assert db.get(row["debate_id"]).document["quality"]["strategy"] == "single"
    assert not provider.requests_for("pro") and len(provider.requests_for("single")) == 1
    with pytest.raises(InputError, match="Unknown generation strategy 'quick'"):
        run_regression("flagship", provider, runs=1, strategy="quick")


def test_compare_command_takes_one_temperature_per_model(db, tmp_path, capsys):
    a = flagship_script(tmp_path, 2, name="a.json")
    code, out, err = run(capsys, "compare", "Should the US pause new AI data centers?", "--provider", a,
                         "--provider", a, "--temperatures", "0.2,0.8", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["models"] == ["scripted:a.json · T 0.2", "scripted:a.json · T 0.8"]
    code, _out, err = run(capsys, "compare", "Q?", "--provider", a, "--provider", a, "--temperatures", "0.2,hot")
    assert code == 2 and "numbers separated by commas" in err
    code, _out, err = run(capsys, "compare", "Q?", "--provider", a, "--provider", a, "--temperatures", "0.2")
    assert code == 2 and "one temperature per model (2), not 1" in err
    code, _out, err = run(capsys, "compare", "Q?", "--provider", a, "--provider", a, "--temperatures", "0.5,0.5")
    assert code == 2 and "same temperature" in err
