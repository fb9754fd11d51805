"""Live debates on the durable runtime: the workflow ``clearside.live`` steered by messages, followed
and steered from a handle built from the debate's id alone (another page), cancelled, and taken over by another
worker after a SIGKILL without generating a finished turn again (calls counted at bench/latency_server.py)."""

from __future__ import annotations

import time

import pytest
from helpers import QUESTION, LiveResponder
from test_runtime_workers import Worker, until

from bench.latency_server import start
from clearside import modes, runtime
from clearside.live import LiveConfig, LiveDebate
from clearside.live import workflow as live_workflow
from clearside.live.exchange import load_live
from clearside.live.job import LiveJob
from clearside.live.protocol import PLAN
from clearside.providers.openai_compat import OpenAIProvider
from clearside.providers.scripted import ScriptedProvider
from clearside.runtime import steps
from clearside.store import open_store


def wait_for(job: LiveJob, predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snap = job.snapshot()
        if predicate(snap):
            return snap
        time.sleep(0.05)
    snap = job.snapshot()
    raise AssertionError(f"timed out; status {snap.status} {snap.error}, activity {snap.activity}, "
                         f"{len(snap.transcript.turns)} turns")


def scripted_job(*, delay: float = 0.0, step_mode: bool = False) -> LiveJob:
    provider = ScriptedProvider(fallback=LiveResponder(speech_words=100), chunk_size=6, chunk_delay=delay)
    debate = LiveDebate.create(QUESTION, provider, config=LiveConfig(words_per_minute=40), store=open_store())
    return LiveJob(debate, step_mode=step_mode)


def test_messages_steer_the_workflow_and_another_handle_follows_and_steers_it(db):
    modes.host(role="test")
    job = scripted_job(delay=0.004).start()
    assert runtime.state(job.job_id).name == live_workflow.LIVE
    other = LiveJob.follow(open_store(), job.id)  # a page on another process: only the id
    wait_for(other, lambda s: len(s.transcript.turns) >= 2 and s.speaker and len(s.speech) > 20)

    other.pause()  # a message and a control row: the turn in flight halts at its next check
    # the control row says "paused" at once; the halted turn's speech is saved when the turn sees it (within 0.5 s)
    snap = wait_for(other, lambda s: s.status == "paused" and s.transcript.state == "paused")
    assert snap.transcript.partial.speech
    until(lambda: live_workflow.STATE[job.job_id]["paused"], 10, "the workflow never took the pause message")
    held = len(snap.transcript.turns)

    item = other.submit("direct_question", "What is your weakest assumption?", "pro")
    evidence = other.submit("inject_evidence", "A 2024 survey found 40 percent of teams merged services back.")
    assert (item.id, evidence.id) == (1, 2) and item.after_turn == held
    answered = wait_for(other, lambda s: s.transcript.interventions[0].status == "answered")
    assert answered.status == "paused" and len(answered.transcript.turns) == held, "answered while paused"
    assert answered.transcript.interventions[0].answered_by == "pro"

    other.resume()
    snap = wait_for(job, lambda s: s.status == "done", 60)
    t = snap.transcript
    assert len([turn for turn in t.turns if turn.step is not None]) == len(PLAN) and t.document
    assert t.turns[held].paused_at, "the halted turn continued from its saved speech"
    delivered = t.interventions[1]
    assert delivered.status == "delivered" and {t.turn(n).speaker for n in delivered.delivered_to} == {"pro", "con"}
    assert runtime.state(job.job_id).status == "done"


def test_step_mode_is_state_folded_from_messages(db):
    modes.host(role="test")
    job = scripted_job(step_mode=True).start()
    wait_for(job, lambda s: s.status == "waiting")
    for expected in (1, 2):
        job.step()
        wait_for(job, lambda s, n=expected: len(s.transcript.turns) == n and s.status == "waiting")
    time.sleep(0.3)
    assert len(load_live(open_store(), job.id).turns) == 2, "nothing runs without a step message"
    assert live_workflow.STATE[job.job_id] == {"paused": False, "step_mode": True, "credits": 0, "waiting": True,
                                               "activity": "Waiting for the next step"}
    # a waiting live debate holds no slot another job needs: live debates have a queue without a per-host limit
    assert runtime.dbos_client().retrieve_workflow(job.job_id).get_status().queue_name == runtime.LIVE_QUEUE
    assert scripted_job().start().wait(60).status == "done"
    job.set_step_mode(False)
    assert wait_for(job, lambda s: s.status == "done", 60).transcript.document


def test_a_pause_between_turns_is_saved_as_paused_and_resume_goes_on(db):
    modes.host(role="test")
    job = scripted_job(step_mode=True).start()
    wait_for(job, lambda s: s.status == "waiting")
    job.step()
    wait_for(job, lambda s: len(s.transcript.turns) == 1 and s.status == "waiting")
    job.pause()  # no turn in flight: nothing is halted, but the saved debate must not say "running"
    snap = wait_for(job, lambda s: s.status == "paused" and s.transcript.state == "paused")
    saved = load_live(open_store(), job.id)
    assert saved.state == "paused" and saved.partial is None and len(saved.turns) == 1
    job.resume()
    job.set_step_mode(False)
    done = wait_for(job, lambda s: s.status == "done", 60).transcript
    assert done.state == "done" and done.document and done.turns[:1] == snap.transcript.turns[:1]


def test_cancel_halts_the_turn_in_flight_and_retry_continues(db):
    modes.host(role="test")
    job = scripted_job(delay=0.004).start()
    wait_for(job, lambda s: len(s.transcript.turns) >= 1 and len(s.speech) > 20)
    job.cancel()
    snap = wait_for(job, lambda s: s.status == "cancelled")
    assert "Cancelled" in snap.error and runtime.state(job.job_id).status == "cancelled"
    until(lambda: job.job_id not in steps.RUNNING, 10, "the step never stopped")
    kept = load_live(open_store(), job.id)
    assert kept.partial is not None and kept.partial.speech, "the speech so far is kept"
    first = job.job_id
    snap = job.retry().wait(60)
    assert job.job_id == f"{first}-2" and snap.status == "done" and snap.transcript.document


def test_a_waiting_live_debate_is_cancelled(db):
    modes.host(role="test")
    job = scripted_job(step_mode=True).start()
    wait_for(job, lambda s: s.status == "waiting")
    job.cancel()
    assert wait_for(job, lambda s: s.status == "cancelled").error.startswith("Cancelled")
    assert load_live(open_store(), job.id).turns == []


@pytest.fixture
def client(db):
    yield db
    runtime.reset()


def planned_turns(debate_id: str) -> int:
    return sum(1 for turn in load_live(open_store(), debate_id).turns if turn.step is not None)


def test_a_killed_workers_live_debate_is_finished_by_another_and_no_turn_runs_twice(client, tmp_path):
    with start(0, ttft=0.05, tps=400) as server:
        provider = OpenAIProvider("", base_url=server.base_url)
        debate = LiveDebate.create(QUESTION, provider, config=LiveConfig(words_per_minute=40), store=open_store())
        # step mode with three turns to run: the first worker stops between turns 3 and 4, waiting
        job_id = live_workflow.enqueue_live(debate.transcript.id, provider, step_mode=True, credits=3, lend=False)
        first = Worker(tmp_path, "first")
        try:
            until(lambda: planned_turns(debate.transcript.id) == 3 and not server.stats()["in_flight"],
                  90, "the first three turns never finished", first)
            time.sleep(0.5)
            asked_before = sum(server.stats()["agents"].values())
            first.kill()
        finally:
            first.stop()
        assert planned_turns(debate.transcript.id) == 3 and runtime.state(job_id).status == "interrupted"
        before = load_live(open_store(), debate.transcript.id)
        live_workflow.request(job_id, "step_mode", on=False)  # sent while no host lives: it waits for one
        second = Worker(tmp_path, "second")
        try:
            until(lambda: runtime.state(job_id).finished, 120, "the second worker never finished the debate", second)
        finally:
            second.stop()
        assert runtime.state(job_id).status == "done", second.text()
        assert "Took over 1 job(s) of stopped host(s) worker-" in second.text()
        assert f"job {job_id} done" in second.text()
        after = load_live(open_store(), debate.transcript.id)
        assert after.state == "done" and after.document and planned_turns(after.id) == len(PLAN)
        assert [t.text for t in after.turns[:3]] == [t.text for t in before.turns], "finished turns are kept"
        asked = server.stats()["agents"]
        regenerated = sum(t.regenerated for t in after.turns)
        assert asked_before == 1 + 3 + sum(t.regenerated for t in before.turns), asked
        assert asked.get("orchestrator") == 1, asked
        # every planned turn asked once (plus its guardrail regenerations), none of the first three again
        assert sum(asked.values()) == 1 + len(PLAN) + regenerated, asked


def test_a_pause_from_another_process_halts_the_workers_turn_mid_stream_and_cancel_ends_it(client, tmp_path):
    with start(0, ttft=0.05, tps=40) as server:  # a turn streams for a few seconds
        provider = OpenAIProvider("", base_url=server.base_url)
        debate = LiveDebate.create(QUESTION, provider, config=LiveConfig(words_per_minute=60), store=open_store())
        job_id = live_workflow.enqueue_live(debate.transcript.id, provider, lend=False)
        worker = Worker(tmp_path, "worker")
        try:
            page = LiveJob.follow(open_store(), debate.transcript.id)  # this process only reads and sends
            assert page.job_id == job_id
            wait_for(page, lambda s: len(s.transcript.turns) == 1 and s.speaker and len(s.raw) > 20, 90)
            asked = time.monotonic()
            page.pause()
            snap = wait_for(page, lambda s: s.transcript.state == "paused", 10)
            assert time.monotonic() - asked < 3, "the turn in flight noticed the pause within its check interval"
            assert snap.transcript.partial is not None and len(snap.transcript.turns) == 1
            assert wait_for(page, lambda s: s.status == "paused" and s.activity == "Paused", 10)
            page.cancel()
            until(lambda: runtime.state(job_id).status == "cancelled", 10, "never cancelled", worker)
            assert wait_for(page, lambda s: s.status == "cancelled").error.startswith("Cancelled")
        finally:
            worker.stop()
        assert len(load_live(open_store(), debate.transcript.id).turns) == 1


def test_a_host_stopping_while_a_live_debate_waits_leaves_it_to_the_next_host(db, monkeypatch):
    monkeypatch.setattr(runtime.host, "HEARTBEAT_SECONDS", 0.5)
    modes.host(role="test")
    job = scripted_job(step_mode=True).start()
    wait_for(job, lambda s: s.status == "waiting")
    runtime.stop_host()  # the waiting step ends without a result: the workflow stays pending, like a crash's
    assert runtime.state(job.job_id).status == "interrupted"  # until the next host takes it over
    modes.host(role="next")
    job.step()
    snap = wait_for(job, lambda s: len(s.transcript.turns) == 1 and s.status == "waiting")
    assert runtime.state(job.job_id).executor.startswith("next-"), "taken over by the next host"
    assert snap.transcript.turns[0].text, "the lent provider still serves the job here"


def test_the_live_page_follows_and_steers_a_debate_the_runtime_runs_from_its_id_alone(db):
    """A dashboard process that did not start the debate (a replica, or this one after a restart): the page
    builds the job from the id in the address, shows it waiting, and Next turn steers the workflow."""
    from test_app_live import fast, open_live, planned, settle, status, transcript

    modes.host(role="test")
    debate = LiveDebate.create(QUESTION, fast(), store=open_store())
    job_id = live_workflow.enqueue_live(debate.transcript.id, fast(), step_mode=True)
    until(lambda: live_workflow.STATE.get(job_id, {}).get("waiting"), 30, "the workflow never waited")
    at = open_live(fast(), live=debate.transcript.id)
    assert status(at, "waiting") and "not running on this server" not in "\n".join(m.value for m in at.markdown)
    at.button(key="live_next").click().run()
    settle(at, lambda a: planned(transcript(a)) == 1 and status(a, "waiting"))
    assert live_workflow.STATE[job_id]["credits"] == 0 and runtime.state(job_id).status == "running"


def test_the_control_state_is_a_fold_of_the_messages_and_the_latest_request_wins():
    from clearside.live.control import Control, requested_pause

    control = Control(step_mode=True)
    assert control.blocked
    for message in ({"op": "step"}, {"op": "step"}, {"op": "wake"}):
        control.apply(message)
    assert (control.paused, control.step_mode, control.credits, control.blocked) == (False, True, 2, False)
    control.apply({"op": "pause"})
    assert control.blocked and control.credits == 2
    control.apply({"op": "step_mode", "on": False})
    control.apply({"op": "resume"})
    assert (control.step_mode, control.credits, control.blocked) == (False, 0, False)
    assert requested_pause([{"text": "pause"}, {"text": "step_mode"}]) is True
    assert requested_pause([{"text": "pause"}, {"text": "resume"}]) is False
    assert requested_pause([{"text": "step"}], current=True) is False
