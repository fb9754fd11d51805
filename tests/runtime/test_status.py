"""The status shown for a saved debate, run or batch, read from the runtime (clearside/runtime/status.py): its job's
while the runtime has it under way, "interrupted" for one saved as running that no job has under way; the same for
the Library and Regression pages and the `list` and `runs` commands."""

from __future__ import annotations

import json
import threading
import uuid

from helpers import QUESTION, moderator_reply, orchestrator_reply, side_reply
from helpers import run_cli as run

from clearside import modes, runtime
from clearside.providers.scripted import ScriptedProvider
from clearside.quality.batch import Batch
from clearside.runtime import status
from clearside.static import workflow
from clearside.static.recorder import StaticRecorder, start_static
from clearside.static.run import DebateRun


def job(status: str) -> runtime.JobState:
    return runtime.JobState(id="j", status=status)


def test_a_saved_status_is_its_jobs_while_under_way_else_what_the_store_says_or_interrupted():
    for under_way in ("queued", "running", "interrupted"):
        assert status.shown("running", job(under_way)) == under_way
        assert status.shown("queued", job(under_way)) == under_way
    for ended in ("done", "failed", "cancelled"):  # saved as running, its job over: nothing finishes it now
        assert status.shown("running", job(ended)) == "interrupted"
    assert status.shown("running") == "interrupted" and status.shown("queued") == "interrupted"  # no job at all
    assert status.shown("failed") == "failed" and status.shown("done", job("running")) == "running"
    assert status.shown("paused", job("cancelled")) == "paused"


def test_run_and_batch_state():
    rows = [{"status": "done", "data": {"batch": "b"}}, {"status": "running", "data": {"batch": "b"}}]
    assert status.run_status(rows[1]) == "interrupted" and status.run_status(rows[1], job("running")) == "running"
    assert status.run_status(rows[1], job("done")) == "interrupted" and status.run_status(rows[0]) == "done"
    batch = Batch(id="b", suite="flagship", provider="scripted", model="", created_at="", rows=rows)
    assert batch.state() == "interrupted" and batch.state(job("running")) == "running"
    assert batch.state(job("queued")) == "queued" and batch.state(job("cancelled")) == "interrupted"
    rows[1]["status"] = "failed"
    assert batch.state() == "done"


def test_runs_command_shows_an_interrupted_batch(db, capsys):
    batch = uuid.uuid4().hex
    for status_ in ("done", "running"):  # the process died with the second run half-way
        db.add_run("flagship", provider="scripted", model="x", status=status_, data={"batch": batch, "planned": 2})
    finished = uuid.uuid4().hex
    db.add_run("flagship", provider="scripted", model="x", status="done", data={"batch": finished, "planned": 1})
    code, out, _ = run(capsys, "runs", "--format", "json")
    states = {b["batch"]: b["state"] for b in json.loads(out)}
    assert code == 0 and states == {batch: "interrupted", finished: "done"}
    code, out, _ = run(capsys, "runs")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert code == 0 and "interrupted" in lines[batch] and "interrupted" not in lines[finished]


def test_list_command_reads_from_the_runtime_which_unfinished_debates_still_run(db, capsys):
    run_ = DebateRun.from_input(QUESTION)
    dead = start_static(db, run_, provider="scripted", model="x")  # saved as running, never run by the runtime
    queued = StaticRecorder(db, run_, ScriptedProvider()).id
    workflow.enqueue_static(queued, ScriptedProvider(), lend=False, store=db)  # no host serves the queue yet
    gate, asked = threading.Event(), threading.Event()
    held = ScriptedProvider()
    held.enqueue(lambda request: (asked.set(), gate.wait(60), orchestrator_reply())[2], agent="orchestrator")
    for agent, reply in (("pro", side_reply("pro")), ("con", side_reply("con")), ("moderator", moderator_reply())):
        held.enqueue(reply, agent=agent)
    modes.host(db.url, role="test", serve=False)  # this process runs the third debate, and nothing else
    running = StaticRecorder(db, run_, held).id
    workflow.enqueue_static(running, held, store=db, here=True)
    try:
        assert asked.wait(60), "the held debate never started"
        code, out, _ = run(capsys, "list", "--format", "json")
        states = {d["id"]: d["state"] for d in json.loads(out)}
        assert code == 0 and states == {dead: "interrupted", queued: "queued", running: "running"}
        code, out, _ = run(capsys, "list")
        lines = {line.split()[0]: line for line in out.splitlines()}
        assert "interrupted" in lines[dead] and "queued" in lines[queued] and "running" in lines[running]
    finally:
        gate.set()
    runtime.wait(db.get(running).data["job"], 60, db.url)
    runtime.cancel(db.get(queued).data["job"], db.url)
    code, out, _ = run(capsys, "list", "--format", "json")
    states = {d["id"]: d["state"] for d in json.loads(out)}
    assert states == {dead: "interrupted", queued: "interrupted", running: "done"}, "a cancelled queued job ran none"
