"""The core's rule for "interrupted": a debate, run or batch saved as running that no worker runs, shown the same
way by the Library and Regression pages and by the `list` and `runs` commands."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

from helpers import run_cli as run

from clearside.quality import regress
from clearside.runtime import status
from clearside.static.engine import DebateRun
from clearside.static.recorder import start_static
from clearside.store.tables import Debate


def stale(db, debate_id: str, minutes: int = 10) -> None:
    """Make a saved debate look untouched for ``minutes`` (its process died that long ago)."""
    with db.write() as session:
        session.get(Debate, debate_id).updated_at = datetime.now(UTC) - timedelta(minutes=minutes)


def test_debate_status_running_here_elsewhere_interrupted_or_stored():
    now = datetime.now(UTC)
    fresh, old = now.isoformat(), (now - timedelta(minutes=5)).isoformat().replace("+00:00", "Z")
    assert status.debate_status("running", "a", old, {"a"}) == "running"
    assert status.debate_status("paused", "a", old, {"a"}) == "running"
    assert status.debate_status("running", "a", fresh) == "running elsewhere"
    assert status.debate_status("running", "a", old) == "interrupted"
    assert status.debate_status("running", "a", fresh, elsewhere_seconds=0) == "interrupted"
    assert status.debate_status("failed", "a", fresh) == "failed" and status.debate_status("done", "a", old) == "done"
    assert status.debate_status("running", "a", "not a time") == "interrupted"


def test_run_and_batch_state():
    rows = [{"status": "done", "data": {"batch": "b"}}, {"status": "running", "data": {"batch": "b"}}]
    assert status.run_status(rows[1]) == "interrupted" and status.run_status(rows[1], {"b"}) == "running"
    assert status.run_status(rows[0]) == "done"
    batch = regress.Batch(id="b", suite="flagship", provider="scripted", model="", created_at="", rows=rows)
    assert batch.state() == "interrupted" and batch.state({"b"}) == "running"
    assert batch.state({"other"}) == "interrupted"
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


def test_list_command_shows_an_interrupted_debate_and_one_running_elsewhere(db, capsys):
    run_ = DebateRun.from_input("Should cities ban cars from their centres?")
    dead = start_static(db, run_, provider="scripted", model="x")
    live = start_static(db, run_, provider="scripted", model="x")
    stale(db, dead)
    code, out, _ = run(capsys, "list", "--format", "json")
    states = {d["id"]: d["state"] for d in json.loads(out)}
    assert code == 0 and states == {dead: "interrupted", live: "running elsewhere"}
    code, out, _ = run(capsys, "list")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert "interrupted" in lines[dead] and "running elsewhere" in lines[live]
