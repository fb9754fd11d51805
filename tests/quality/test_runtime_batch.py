"""Regression batches and comparisons on the durable runtime: ``regress --enqueue`` and
``compare --enqueue`` queue a parent workflow whose items (one debate each) are shared among every host, each run
exactly once, saved as the ``regress`` and ``compare`` commands save them.

- In this process (a host, SQLite), with the scripted provider lent: the batch's report and rows, ``status``.
- Two ``python -m clearside worker`` processes on PostgreSQL and a model server on 127.0.0.1 that counts every
  call by agent (bench/latency_server.py): the command line queues the batch, both workers run items, and
  every stage of every item was asked exactly once.
- A comparison queued on the command line, run by a worker, reopened by ``compare.load``.
- Recovery without a click: a worker SIGKILLed in the middle of a batch; another takes the batch over and no
  finished item is generated again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import QUESTION, flagship_replies, run_cli
from test_runtime_workers import AGENTS, REPO, Worker, until

from bench.latency_server import MODEL, start
from clearside import modes, runtime
from clearside.cli.jobs import report
from clearside.errors import InputError
from clearside.providers.scripted import ScriptedProvider
from clearside.quality import compare
from clearside.quality import workflow as batches
from clearside.quality.batch import find_batch
from clearside.quality.references import flagship
from clearside.store import open_store

FLAGSHIP = flagship().proposition  # the scripted replies answer the flagship question


def status_of(batch_id: str) -> dict:
    return runtime.state(batch_id).result


def scripted(items: int) -> ScriptedProvider:
    replies = flagship_replies()
    return ScriptedProvider(script={agent: [replies[agent]] * items for agent in AGENTS})


def test_an_enqueued_batch_runs_each_item_once_and_reports_like_the_regress_command():
    modes.host(role="test")  # this process runs the parent and its items; conftest stops hosting afterwards
    provider = scripted(4)
    batch_id = batches.enqueue_regress("flagship", provider, batches.RegressSettings(runs=4))
    until(lambda: runtime.state(batch_id).finished, 60, "the batch never finished")
    state = runtime.state(batch_id)
    assert state.status == "done" and state.result["passed"], state
    assert [len(provider.requests_for(agent)) for agent in AGENTS] == [4, 4, 4, 4], "each item once"
    saved = find_batch(open_store(), batch_id)
    assert saved is not None and saved.planned == 4 and {r["status"] for r in saved.rows} == {"done"}
    assert sorted((r.get("data") or {}).get("index") for r in saved.rows) == [0, 1, 2, 3]
    assert state.result["report"]["metrics"]["coverage"]["n"] == 4  # scored, as the regress command scores
    versions = [r["data"]["versions"] for r in saved.rows]  # pinned as the regress command pins them
    assert all(v["metric_suite"] == versions[0]["metric_suite"] and v["embedding_model"] for v in versions)
    assert state.result["report"]["versions"]["metric_suite"] == versions[0]["metric_suite"]
    status = report(batch_id)
    assert (status["status"], status["runs_finished"], status["runs_planned"], status["passed"]) == \
        ("done", 4, 4, True)
    assert (status["kind"], status["link"]) == ("regression", f"regression?batch={batch_id}")


def test_a_cancelled_batch_stops_its_items_and_bad_input_is_refused():
    modes.host(role="test")
    provider = ScriptedProvider(chunk_delay=0.05, chunk_size=4, script={
        agent: [flagship_replies()[agent]] * 6 for agent in AGENTS})
    batch_id = batches.enqueue_regress("flagship", provider, batches.RegressSettings(runs=6))
    until(lambda: provider.requests_for("orchestrator"), 30, "no item started")
    batches.cancel_batch(batch_id)
    until(lambda: runtime.state(batch_id).finished, 60, "the batch did not stop")
    queued = runtime.states([batches.item_id(batch_id, n) for n in range(6)])  # a cancel may come before all are
    assert queued and all(item.finished for item in queued.values())  # every item queued stopped or finished
    state = runtime.state(batch_id)
    assert state.status == "cancelled", state
    assert len(provider.requests_for("orchestrator")) < 6, "items not yet started never start"
    cancelled = 6 - len(state.result["report"]["debates"])
    assert cancelled >= 1 and f"{cancelled} of 6 runs were cancelled" in state.result["report"]["failures"]
    assert not report(batch_id)["passed"]
    with pytest.raises(InputError, match="--runs must be at least 1"):
        batches.enqueue_regress("flagship", provider, batches.RegressSettings(runs=0))


@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_two_workers_share_a_batch_queued_on_the_command_line_and_no_stage_runs_twice(db, tmp_path):
    with start(0, ttft=0.1, tps=400) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "not-needed"}
        workers = [Worker(tmp_path, name, "--concurrency", "2") for name in ("a", "b")]
        try:
            for worker in workers:
                until(lambda w=worker: "serving queued" in w.text(), 60, "the worker never started", worker)
            queued = subprocess.run([sys.executable, "-m", "clearside", "regress", "--suite", "flagship", "--runs",
                                     "6", "--provider", f"openai:{MODEL}", "--retries", "1", "--enqueue"],
                                    cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
            assert queued.returncode == 0, queued.stderr
            batch_id = queued.stdout.strip()
            assert "status" in queued.stderr and batch_id in queued.stderr
            waited = subprocess.run([sys.executable, "-m", "clearside", "status", batch_id, "--wait", "--format",
                                     "json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        finally:
            for worker in workers:
                worker.stop()
        assert waited.returncode == 0, waited.stdout + waited.stderr
        status = json.loads(waited.stdout)
        assert (status["status"], status["runs_finished"], status["runs_planned"]) == ("done", 6, 6)
        assert server.stats()["agents"] == dict.fromkeys(AGENTS, 6)  # every stage of every item exactly once
        ran = [sum(f"of batch {batch_id}" in line and "started" in line for line in w.text().splitlines())
               for w in workers]
        assert sum(ran) == 6 and all(ran), f"items each worker started: {ran}"
        assert {d["status"] for d in status_of(batch_id)["report"]["debates"]} == {"done"}


def test_an_enqueued_comparison_runs_each_model_once_and_reopens_like_a_comparison(capsys):
    modes.host(role="test")
    providers = [scripted(1), scripted(1)]  # one scripted model at two temperatures: two configurations
    batch_id = batches.enqueue_compare(FLAGSHIP, providers, compare.Settings(temperatures=(0.2, 0.8)))
    until(lambda: runtime.state(batch_id).finished, 60, "the comparison never finished")
    state = runtime.state(batch_id)
    assert state.status == "done" and state.result["passed"], state
    for provider in providers:
        assert [len(provider.requests_for(agent)) for agent in AGENTS] == [1, 1, 1, 1], "each model once"
    assert [r.temperature for p in providers for r in p.requests_for("pro")] == [0.2, 0.8]
    report, documents = compare.load(open_store(), batch_id)
    assert report["state"] == "done" and len(documents) == 2
    assert {r["status"] for r in report["results"].values()} == {"done"}
    assert state.result["report"]["models"] == report["models"]
    code, out, _ = run_cli(capsys, "status", batch_id)
    assert code == 0 and "runs finished: 2 of 2" in out
    assert all(f"{label}: done" in out for label in report["models"]), out
    assert f"on the dashboard: compare?compare={batch_id}" in out
    code, out, _ = run_cli(capsys, "runs", "--format", "json")
    listed = {b["batch"]: b for b in json.loads(out)}
    assert (listed[batch_id]["kind"], listed[batch_id]["link"]) == ("comparison", f"compare?compare={batch_id}")


def test_a_comparison_is_refused_before_anything_is_queued():
    modes.host(role="test")
    with pytest.raises(InputError, match="same model at the same temperature"):
        batches.enqueue_compare(QUESTION, [scripted(1), scripted(1)], compare.Settings())
    with pytest.raises(InputError, match="Compare 2 to 4"):
        batches.enqueue_compare(QUESTION, [scripted(1)], compare.Settings())
    assert open_store().runs(compare.SUITE) == []


def test_compare_enqueue_on_the_command_line_is_run_by_a_worker(db, tmp_path):
    with start(0, ttft=0.05, tps=400) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "not-needed"}
        worker = Worker(tmp_path, "w")
        try:
            until(lambda: "serving queued" in worker.text(), 60, "the worker never started", worker)
            queued = subprocess.run([sys.executable, "-m", "clearside", "compare", FLAGSHIP, "--provider",
                                     f"openai:{MODEL}", "--provider", f"openai:{MODEL}", "--temperatures",
                                     "0.2,0.8", "--retries", "1", "--enqueue"],
                                    cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
            assert queued.returncode == 0, queued.stderr
            batch_id = queued.stdout.strip()
            assert f"?compare={batch_id}" in queued.stderr
            waited = subprocess.run([sys.executable, "-m", "clearside", "status", batch_id, "--wait", "--format",
                                     "json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        finally:
            worker.stop()
        assert waited.returncode == 0, waited.stdout + waited.stderr
        status = json.loads(waited.stdout)
        assert (status["status"], status["runs_finished"], status["runs_planned"]) == ("done", 2, 2)
        assert set(status["models"].values()) == {"done"}
        assert server.stats()["agents"] == dict.fromkeys(AGENTS, 2)  # each stage of each model's debate once
        report, documents = compare.load(open_store(), batch_id)
        assert len(documents) == 2 and report["state"] == "done"


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_killed_workers_batch_is_finished_by_another_and_no_finished_item_runs_again(db, tmp_path):
    with start(0, ttft=0.2, tps=150) as server:  # each debate takes a few seconds
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "not-needed"}
        first = Worker(tmp_path, "first", "--concurrency", "1")
        try:
            until(lambda: "serving queued" in first.text(), 60, "the worker never started", first)
            queued = subprocess.run([sys.executable, "-m", "clearside", "regress", "--suite", "flagship", "--runs",
                                     "3", "--provider", f"openai:{MODEL}", "--retries", "1", "--concurrency", "1",
                                     "--enqueue"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
            assert queued.returncode == 0, queued.stderr
            batch_id = queued.stdout.strip()
            until(lambda: server.stats()["agents"].get("moderator") == 1 and
                  server.stats()["agents"].get("pro", 0) >= 2, 120, "the second item never started", first)
            first.kill()  # the first item is done; the second is under way
        finally:
            first.stop()
        assert not runtime.state(batch_id).finished
        second = Worker(tmp_path, "second")
        try:
            until(lambda: runtime.state(batch_id).finished, 180, "the second worker never finished the batch", second)
        finally:
            second.stop()
        state = runtime.state(batch_id)
        assert state.status == "done", second.text()
        assert "Took over" in second.text()
        assert {d["status"] for d in state.result["report"]["debates"]} == {"done"}
        assert len(state.result["report"]["debates"]) == 3
        asked = server.stats()["agents"]
        # the finished item is never asked again; the interrupted one reruns at most its stage in flight
        assert asked["orchestrator"] == 3 and asked["moderator"] == 3, asked
        assert 3 <= asked["pro"] <= 4 and 3 <= asked["con"] <= 4, asked
