"""The live worker the dashboard drives: pause mid-turn, answer, resume, step mode, interventions, failure."""

from __future__ import annotations

import time

import pytest
from helpers import QUESTION, LiveResponder, stored

from clearside.live import LiveConfig, LiveDebate
from clearside.live.job import LiveJob
from clearside.providers.scripted import ScriptedProvider
from clearside.store import open_store


@pytest.fixture(autouse=True)
def host():
    """The live workflow runs on the durable runtime: this process hosts it (conftest stops hosting)."""
    from clearside import modes

    return modes.host(role="test")


def until(job: LiveJob, predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snap = job.snapshot()
        if predicate(snap):
            return snap
        time.sleep(0.01)
    raise AssertionError(f"timed out; last status {job.snapshot().status}, {job.snapshot().activity}")


def make_job(tmp_path, *, delay: float = 0.0, step_mode: bool = False, **responder) -> LiveJob:
    provider = ScriptedProvider(fallback=LiveResponder(**responder), chunk_size=6, chunk_delay=delay)
    debate = LiveDebate.create(QUESTION, provider, config=LiveConfig(words_per_minute=40), store=open_store())
    return LiveJob(debate, step_mode=step_mode)


def test_runs_to_the_end_in_the_background(tmp_path):
    job = make_job(tmp_path).start()
    snap = job.wait(20)
    assert snap.status == "done" and len(snap.transcript.turns) == 21 and snap.transcript.document


def test_pause_mid_turn_answer_then_resume_from_the_saved_point(tmp_path):
    job = make_job(tmp_path, delay=0.003, speech_words=60).start()
    until(job, lambda s: len(s.transcript.turns) >= 3 and len(s.speech) > 20)
    job.pause("Which costs matter most here?", "con")
    snap = until(job, lambda s: s.status == "paused" and s.transcript.interventions[0].status == "answered")
    transcript = snap.transcript
    kept = transcript.partial.speech
    assert kept and transcript.partial.step == transcript.cursor
    answer = transcript.interventions[0]
    assert answer.type == "pause_question" and answer.answered_by == "con" and answer.response
    count = len(transcript.turns)
    time.sleep(0.2)
    assert len(job.snapshot().transcript.turns) == count  # nothing runs while paused
    job.resume()
    snap = until(job, lambda s: s.status == "done")
    resumed = snap.transcript.turns[count]
    assert resumed.text.startswith(kept) and resumed.paused_at == len(kept)
    assert stored(job.debate.transcript.id).state == "done"


def test_step_mode_runs_one_turn_per_step(tmp_path):
    job = make_job(tmp_path, step_mode=True).start()
    until(job, lambda s: s.status == "waiting")
    assert job.snapshot().transcript.turns == []
    for expected in (1, 2, 3):
        job.step()
        until(job, lambda s, n=expected: len(s.transcript.turns) == n and s.status == "waiting")
    job.set_step_mode(False)
    assert until(job, lambda s: s.status == "done").transcript.turns[-1].turn == 21


def test_interventions_while_running_and_after_the_end(tmp_path):
    job = make_job(tmp_path, delay=0.001).start()
    until(job, lambda s: len(s.transcript.turns) >= 1)
    job.submit("inject_evidence", "Outage data from 2023 shows longer recovery times.")
    job.submit("direct_question", "What is your weakest assumption?", "pro")
    snap = until(job, lambda s: s.status == "done")
    evidence, direct = snap.transcript.interventions
    assert evidence.status == "delivered" and len(evidence.delivered_to) == 2
    assert direct.status == "answered" and direct.answered_by == "pro"
    job.submit("direct_question", "Where do they agree?", "moderator")
    snap = until(job, lambda s: s.status == "done" and s.transcript.interventions[-1].status == "answered")
    assert snap.transcript.interventions[-1].answered_by == "moderator"


def test_failure_is_reported_and_retry_continues(tmp_path):
    job = make_job(tmp_path)
    job.debate.provider.enqueue({"__error__": "unreachable", "message": "server down"}, agent="pro")
    snap = job.start().wait(20)
    assert snap.status == "failed" and "server down" in snap.error
    snap = job.retry().wait(20)
    assert snap.status == "done" and len(snap.transcript.turns) == 21


@pytest.mark.parametrize("kind", ["direct_question"])
def test_bad_intervention_raises_before_anything_changes(tmp_path, kind):
    from clearside.errors import InputError

    job = make_job(tmp_path, step_mode=True).start()
    with pytest.raises(InputError):
        job.submit(kind, "Why?")
    assert job.snapshot().transcript.interventions == []
