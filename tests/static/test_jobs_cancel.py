"""Cancelling a challenge and a perspectives step mid-reply (a Cancel for every running job).

A gated reply blocks inside the scripted provider until the test releases it, so the cancel is certain to land
while the job runs; its first streamed token then meets the cancel.
"""

from __future__ import annotations

import threading

import perspectives_kit as kit
import pytest
from helpers import QUESTION, challenge_reply, scripted_debate

from clearside import modes
from clearside.perspectives import PerspectivesRun, load
from clearside.perspectives.job import PerspectivesJob
from clearside.providers.scripted import ScriptedProvider
from clearside.quality.scored import run_recorded
from clearside.static.engine import Engine
from clearside.static.job import ChallengeJob
from clearside.static.recorder import StaticRecorder
from clearside.static.run import DebateRun
from clearside.store import open_store


def gated(reply, asked: threading.Event, release: threading.Event):
    """A queued reply that says it was asked, then waits for ``release`` before streaming ``reply``."""
    return lambda request: (asked.set(), release.wait(30), reply)[2]


def cancel_mid_reply(job, asked: threading.Event, release: threading.Event):
    assert asked.wait(30), "the gated call never reached the provider"
    job.cancel()
    release.set()
    return job.wait(30)


def saved_debate(provider: ScriptedProvider) -> tuple[str, object]:
    store = open_store()
    scripted_debate(provider)
    run = DebateRun.from_input(QUESTION)
    recorder = StaticRecorder(store, run, provider)
    document = run_recorded(Engine(provider, on_section=recorder.on_section), run, recorder)
    return recorder.id, document


def test_a_cancelled_challenge_adds_nothing_and_can_be_asked_again():
    modes.host(role="test")  # challenges run on the durable runtime; conftest stops hosting afterwards
    provider = ScriptedProvider(chunk_size=8)
    debate_id, document = saved_debate(provider)
    store = open_store()
    target = document.pro.assumptions[0]
    asked, release = threading.Event(), threading.Event()
    provider.enqueue(gated(challenge_reply(), asked, release), agent="challenge")
    job = ChallengeJob(store, debate_id, "question_assumption", target, provider).start()
    snap = cancel_mid_reply(job, asked, release)
    state, result, error = snap.status, snap.document, snap.error
    assert (state, result, error) == ("cancelled", None, "")
    assert len(provider.requests_for("challenge")) == 1, "a cancel is not retried as a failure would be"
    assert store.challenges(debate_id) == [] and store.get(debate_id).document["challenges"]["responses"] == []
    assert document.challenges.responses == [], "the debate the job was given is untouched"

    provider.enqueue(challenge_reply(), agent="challenge")
    again = ChallengeJob(store, debate_id, "question_assumption", target, provider)
    snap = again.start().wait(30)
    state, result, error = snap.status, snap.document, snap.error
    assert state == "done" and error == "" and [r.target for r in result.challenges.responses] == [target]
    again.cancel()  # too late: what finished stays
    assert again.snapshot().status == "done" and len(store.challenges(debate_id)) == 1


AGENTS = ("clarifier", "A", "B", "synthesis")


@pytest.mark.parametrize(("agent", "state", "kept", "calls"), [
    ("clarifier", "INIT", [], (2, 0, 0, 0)),
    ("B", "ROUND_1_B", [(1, "A")], (1, 2, 3, 1)),
    ("synthesis", "SYNTHESIS", [(1, "A"), (1, "B"), (2, "A"), (2, "B")], (1, 2, 2, 2)),
])
def test_a_cancelled_perspectives_step_keeps_what_finished_and_retry_completes_it(agent, state, kept, calls):
    """``calls``: the model calls per agent in all, the cancelled one included: no finished step is asked again."""
    modes.host(role="test")  # perspectives sessions run on the durable runtime; conftest stops hosting afterwards
    queues = kit.script(2)
    asked, release = threading.Event(), threading.Event()
    queues[f"perspectives-{agent}"][0] = gated(queues[f"perspectives-{agent}"][0], asked, release)
    provider = ScriptedProvider(script=queues, chunk_size=8)
    store = open_store()
    job = PerspectivesJob(PerspectivesRun.create(kit.QUESTION, provider, rounds=2, store=store))
    if agent == "clarifier":
        job.ask()
    else:
        assert job.ask().wait(30).session.state == "CLARIFICATION_PENDING"
        job.answer(kit.ANSWERS)

    snap = cancel_mid_reply(job, asked, release)
    session = snap.session
    assert not snap.busy and snap.status == "cancelled" and snap.error == ""
    assert session.cancelled and session.state == state and session.error == ""
    assert [(o.round, o.agent) for o in session.round_outputs] == kept and session.synthesis is None
    saved = load(store, session.session_id)
    assert saved.cancelled and saved.state == state and store.get(session.session_id).status == "paused"
    if agent != "clarifier":
        assert saved.clarification_answers == kit.ANSWERS, "the answers the user typed are kept"

    provider.enqueue(kit.script(2)[f"perspectives-{agent}"][0], agent=f"perspectives-{agent}")
    snap = job.retry().wait(30)
    assert not snap.session.cancelled and snap.error == ""
    assert tuple(len(provider.requests_for(f"perspectives-{a}")) for a in AGENTS) == calls
    if agent == "clarifier":
        assert snap.session.state == "CLARIFICATION_PENDING" and len(snap.session.clarification_questions) == 3
        return
    assert snap.session.state == "COMPLETE" and store.get(session.session_id).status == "done"
    assert [(o.round, o.agent) for o in snap.session.round_outputs] == [(1, "A"), (1, "B"), (2, "A"), (2, "B")]
