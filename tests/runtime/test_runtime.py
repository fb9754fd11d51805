"""The durable runtime in one process: queued debates run on a host, their progress can be followed
from their rows, a cancel keeps what finished and a resume completes it, and ``status`` says so with its exit
codes. Recovery after SIGKILL and several workers are in tests/test_runtime_workers.py."""

from __future__ import annotations

import json
import threading
import time

import perspectives_kit
import pytest
from conftest import stop_hosting
from helpers import (
    QUESTION,
    flagship_replies,
    moderator_reply,
    orchestrator_reply,
    run_cli,
    scripted_debate,
    side_reply,
)
from test_runtime_live import scripted_job, wait_for
from test_runtime_perspectives import new_job as new_session

from clearside import modes, runtime
from clearside.providers.scripted import ScriptedProvider
from clearside.quality import workflow as batches
from clearside.runtime.progress import Follower
from clearside.static import workflow as workflows
from clearside.static.recorder import StaticRecorder
from clearside.static.run import DebateRun
from clearside.store import open_store


@pytest.fixture
def hosted(db):
    """This process hosts the runtime on the test's store (a SQLite file, then PostgreSQL)."""
    modes.host(role="test")
    yield db
    stop_hosting()  # lets a cancelled job's execution end first: one cut off by the reset stays "running" here


def saved(provider) -> str:
    return StaticRecorder(open_store(), DebateRun.from_input(QUESTION), provider).id


def settle(job_id: str, timeout: float = 60) -> runtime.JobState:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = runtime.state(job_id)
        if state.finished:
            return state
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {runtime.state(job_id).status} after {timeout} s")


def test_a_queued_debate_runs_on_the_host_and_is_saved(hosted, capsys):
    provider = ScriptedProvider()
    scripted_debate(provider)
    debate_id = saved(provider)
    assert workflows.enqueue_static(debate_id, provider) == debate_id
    assert settle(debate_id).status == "done"
    record = open_store().get(debate_id)
    assert record.status == "done" and record.document["pro"]["arguments"]
    assert sorted(r.agent for r in provider.requests) == ["con", "moderator", "orchestrator", "pro"]
    # each step saved what its agents used, and the finishing step kept the sum (metrics and the bench read it)
    usage = record.data["usage"]
    assert sorted(usage) == ["con", "moderator", "orchestrator", "pro"]
    assert all(u["calls"] == 1 and u["completion_tokens"] > 0 for u in usage.values())
    agents = Follower(debate_id).update()  # what a page on another replica reads
    assert {name: p.status for name, p in agents.items()} == dict.fromkeys(
        ("orchestrator", "pro", "con", "moderator"), "done")
    assert "arguments" in agents["pro"].text
    code, out, _ = run_cli(capsys, "status", debate_id, "--format", "json")
    state = json.loads(out)
    assert code == 0 and state["status"] == "done" and state["sections"] == ["proposition", "pro", "con", "moderator"]


def test_status_exit_codes_unknown_failed_and_done(hosted, capsys):
    code, _, err = run_cli(capsys, "status", "0123456789abcdef0123456789abcdef")
    assert code == 2 and "No debate or job" in err
    code, _, err = run_cli(capsys, "status", "not an id at all")
    assert code == 2
    provider = ScriptedProvider()
    provider.enqueue({"__error__": "unreachable", "message": "the model server went away"}, agent="orchestrator")
    failing = saved(provider)
    workflows.enqueue_static(failing, provider)
    code, out, _ = run_cli(capsys, "status", failing, "--wait")
    assert code == 1 and f"{failing}: failed" in out and "went away" in out
    assert open_store().get(failing).status == "failed"
    good = ScriptedProvider()
    scripted_debate(good)
    done = saved(good)
    workflows.enqueue_static(done, good)
    code, out, _ = run_cli(capsys, "status", done, "--wait")
    assert code == 0 and f"{done}: done" in out and "finished sections: proposition, pro, con, moderator" in out


def test_a_failed_debate_runs_again_as_a_new_job_that_keeps_what_finished(hosted, capsys):
    provider = ScriptedProvider()
    for agent, reply in (("orchestrator", orchestrator_reply()), ("pro", side_reply("pro")),
                         ("con", side_reply("con"))):
        provider.enqueue(reply, agent=agent)
    provider.enqueue({"__error__": "provider", "message": "HTTP 500 from the server"}, agent="moderator")
    debate_id = saved(provider)
    workflows.enqueue_static(debate_id, provider)
    assert settle(debate_id).status == "failed"
    assert run_cli(capsys, "status", debate_id)[0] == 1
    provider.enqueue(moderator_reply(), agent="moderator")
    job = workflows.continue_static(debate_id, provider)
    assert job == f"{debate_id}-2"
    settle(job)
    record = open_store().get(debate_id)
    assert record.status == "done"
    assert [r.agent for r in provider.requests].count("orchestrator") == 1
    # the failed job's usage (its three agents; the server error returned nothing to count) and the new job's
    # moderator add up
    assert {agent: u["calls"] for agent, u in record.data["usage"].items()} == {
        "orchestrator": 1, "pro": 1, "con": 1, "moderator": 1}
    assert run_cli(capsys, "status", debate_id)[0] == 0


def test_cancel_keeps_finished_sections_and_resume_completes_only_the_rest(hosted, capsys):
    provider = ScriptedProvider()
    asked, release = threading.Event(), threading.Event()
    replies = {"pro": side_reply("pro"), "con": side_reply("con")}
    provider.enqueue(orchestrator_reply(), agent="orchestrator")
    provider.enqueue(lambda request: (asked.set(), release.wait(30), replies["pro"])[2], agent="pro")
    provider.enqueue(replies["con"], agent="con")
    provider.enqueue(moderator_reply(), agent="moderator")
    debate_id = saved(provider)
    workflows.enqueue_static(debate_id, provider)
    assert asked.wait(30), "the pro call never reached the provider"
    workflows.cancel_static(debate_id)
    release.set()
    assert settle(debate_id).status == "cancelled"
    record = open_store().get(debate_id)
    assert record.status == "paused" and "proposition" in open_store().sections(debate_id)
    assert "moderator" not in open_store().sections(debate_id)
    assert "pro" not in open_store().sections(debate_id), "a reply that landed after the cancel is not kept"
    assert run_cli(capsys, "status", debate_id)[0] == 1
    for agent in ("pro", "con"):  # what the cancelled stage had not kept is asked again
        if agent not in open_store().sections(debate_id):
            provider.enqueue(replies[agent], agent=agent)
    assert workflows.continue_static(debate_id, provider) == debate_id  # the same job, resumed
    assert settle(debate_id).status == "done"
    assert open_store().get(debate_id).status == "done"
    assert [r.agent for r in provider.requests].count("orchestrator") == 1


def test_enqueue_on_the_command_line_prints_the_id_and_returns_at_once(db, capsys, tmp_path):
    from helpers import full_script

    spec = full_script(tmp_path)
    started = time.monotonic()
    code, out, err = run_cli(capsys, "debate", QUESTION, "--enqueue", "--provider", spec)
    assert code == 0 and time.monotonic() - started < 10
    debate_id = out.strip()
    assert open_store().get(debate_id).status == "queued" and "worker" in err
    code, out, _ = run_cli(capsys, "status", debate_id, "--format", "json")
    assert code == 0 and json.loads(out)["status"] == "queued"
    modes.host(role="test")  # a host now starts: it takes the queued job
    try:
        assert settle(debate_id).status == "done"
        assert open_store().get(debate_id).status == "done"
    finally:
        runtime.reset()
    code, _, err = run_cli(capsys, "debate", "--enqueue", "--resume", "0123456789abcdef0123456789abcdef")
    assert code == 2


def test_the_cancel_command_stops_a_running_debate_and_says_so_for_finished_and_unknown_ids(hosted, capsys):
    provider = ScriptedProvider()
    asked, release = threading.Event(), threading.Event()
    provider.enqueue(orchestrator_reply(), agent="orchestrator")
    provider.enqueue(lambda request: (asked.set(), release.wait(30), side_reply("pro"))[2], agent="pro")
    provider.enqueue(side_reply("con"), agent="con")
    debate_id = saved(provider)
    workflows.enqueue_static(debate_id, provider)
    assert asked.wait(30), "the pro call never reached the provider"
    code, _, err = run_cli(capsys, "cancel", debate_id)
    release.set()
    assert code == 0 and f"Cancelled {debate_id}" in err
    assert settle(debate_id).status == "cancelled"
    assert open_store().get(debate_id).status == "paused" and "proposition" in open_store().sections(debate_id)
    code, _, err = run_cli(capsys, "cancel", debate_id)
    assert code == 0 and "nothing to cancel, its job is cancelled" in err
    assert run_cli(capsys, "cancel", "f" * 32)[0] == 2  # an unknown id
    never_queued = saved(provider)  # saved but never run on the runtime (`debate --save` runs in its process)
    code, _, err = run_cli(capsys, "cancel", never_queued)
    assert code != 0 and "never run on the job runtime" in err


def test_the_cancel_command_stops_a_batch_and_the_batch_reports_what_finished(hosted, capsys):
    replies = flagship_replies()
    provider = ScriptedProvider(chunk_delay=0.05, chunk_size=4,
                                script={agent: [replies[agent]] * 4 for agent in replies})
    batch_id = batches.enqueue_regress("flagship", provider, batches.RegressSettings(runs=4, window=1))
    deadline = time.monotonic() + 30
    while not provider.requests_for("orchestrator") and time.monotonic() < deadline:
        time.sleep(0.05)
    code, _, err = run_cli(capsys, "cancel", batch_id)
    assert code == 0 and f"Cancelled {batch_id}" in err
    state = settle(batch_id)
    assert state.status == "cancelled" and len(provider.requests_for("orchestrator")) == 1, "no item after it"
    assert "4 of 4 runs were cancelled" in state.result["report"]["failures"]  # the one under way stopped too


def test_the_cancel_command_stops_a_live_debate_and_a_perspectives_session(db, capsys):
    modes.host(role="test")
    live = scripted_job(step_mode=True).start()  # a live debate waiting for its next step
    wait_for(live, lambda s: s.status == "waiting")
    code, _, err = run_cli(capsys, "cancel", live.id)
    assert code == 0 and f"Cancelled {live.id}" in err
    assert wait_for(live, lambda s: s.status == "cancelled").error.startswith("Cancelled")
    runtime.reset()  # no host: the session's first leg waits on its queue
    session = new_session(ScriptedProvider(script=perspectives_kit.script(1)), rounds=1)
    session.ask()
    code, _, err = run_cli(capsys, "cancel", session.id)
    assert code == 0 and f"Cancelled {session.id}" in err
    snap = session.snapshot()
    assert not snap.busy and snap.status == "cancelled" and snap.session.cancelled


def test_a_step_whose_cancel_check_cannot_reach_the_database_goes_on_and_asks_again(hosted, monkeypatch, caplog):
    """A database restart under a running step: the cancel check's query fails, the step's events go on (the work
    is not lost to a check), it says so once, and the next check asks again and sees a cancel."""
    import sqlalchemy as sa

    from clearside.errors import Cancelled
    from clearside.runtime import client, steps
    from clearside.runtime.events import Agents, Event

    gone = sa.exc.OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))
    answers: list = [gone, gone]

    def state(job_id, store_url=None):
        if answers:
            raise answers.pop()
        return client.JobState(id=job_id, status="cancelled", name="test")

    monkeypatch.setattr(client, "state", state)
    monkeypatch.setattr(steps, "CANCEL_CHECK_SECONDS", 0)
    job_id = f"under-a-restart-{time.time_ns()}"
    sink = steps.Sink(job_id, Agents(), stops=steps.Stops(at=("delta",)))
    with caplog.at_level("WARNING", logger="clearside.runtime"):
        sink(Event("delta", "pro", "one"))
        sink(Event("delta", "pro", " two"))
    assert sink.view["pro"].text == "one two"
    assert sum("could not ask whether it was cancelled" in r.getMessage() for r in caplog.records) == 1
    with pytest.raises(Cancelled, match="Cancelled"):
        sink(Event("delta", "pro", " three"))
    sink.close()
    steps.LOCAL.pop(job_id, None)
