"""The Debate page follows a debate the durable runtime generates elsewhere (a worker, another replica): opened
from its link it shows the job's progress as the job's rows tell it, offers Cancel to its owner, and shows the
finished debate when the job ends. Here the host is this test process; the page reads only the store and the
runtime's tables, exactly as on another replica (tests/test_browser_replicas.py runs it on real servers in Chromium)."""

from __future__ import annotations

import threading

import app_kit
import helpers
import pytest
from app_kit import AppTest
from helpers import QUESTION, moderator_reply, orchestrator_reply, side_reply

from clearside import modes, runtime
from clearside.providers.scripted import ScriptedProvider
from clearside.runtime import steps
from clearside.static import workflow as workflows
from clearside.static.recorder import StaticRecorder
from clearside.static.run import DebateRun
from clearside.store import open_store


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in [*at.caption, *at.info])


RELEASES: list[threading.Event] = []


@pytest.fixture
def hosted(db):
    modes.host(role="test")
    yield db
    for release in RELEASES:  # a failed assertion must not leave a step waiting while the host goes away
        release.set()
    for job_id in list(steps.RUNNING):
        steps.wait_stopped(job_id)
    runtime.reset()


def gated_debate():
    """A queued debate whose pro advocate waits for ``release``; ``asked`` is set when it starts."""
    provider = ScriptedProvider()
    asked, release = threading.Event(), threading.Event()
    RELEASES.append(release)
    provider.enqueue(orchestrator_reply(), agent="orchestrator")
    provider.enqueue(lambda request: (asked.set(), release.wait(60), side_reply("pro"))[2], agent="pro")
    provider.enqueue(side_reply("con"), agent="con")
    provider.enqueue(moderator_reply(), agent="moderator")
    debate_id = StaticRecorder(open_store(), DebateRun.from_input(QUESTION), provider).id
    workflows.enqueue_static(debate_id, provider)
    assert asked.wait(30), "the pro advocate never started"
    return debate_id, release


def opened(debate_id: str) -> AppTest:
    return app_kit.open_page(query={"debate": debate_id})


def test_a_debate_generated_elsewhere_streams_on_the_page_then_shows_when_done(hosted):
    debate_id, release = gated_debate()
    at = opened(debate_id)
    assert "Analyzing both sides..." in text_of(at)
    assert "Generating on a worker" in text_of(at)
    assert "Normalizing the proposition: done" in text_of(at)
    assert "Writing the case FOR: waiting for the model" in text_of(at)  # the pro call is in flight
    assert "Running for 0:0" in text_of(at) and "no debate with this model has finished here yet" in text_of(at)
    assert [b.label for b in at.button if b.key == "debate_cancel_followed"] == ["Cancel"]  # ownerless: anyone may
    release.set()
    helpers.settle(at, lambda at: any(s.value == "FOR" or "FOR" in s.value for s in at.subheader)
                   or "MODERATOR SYNTHESIS" in text_of(at).upper(), describe=text_of, timeout=60)
    assert "Generating on a worker" not in text_of(at) and "Running for" not in text_of(at)
    assert open_store().get(debate_id).status == "done"
    second, release = gated_debate()  # the same model again: the first one's agents are its history
    at = opened(second)
    assert "in all" in text_of(at) and "(the median of the last 1 debate with this model here)" in text_of(at)
    release.set()


def test_cancel_on_the_page_stops_the_job_and_keeps_the_finished_sections(hosted):
    debate_id, release = gated_debate()
    at = opened(debate_id)
    at.button(key="debate_cancel_followed").click().run()
    release.set()
    helpers.settle(at, lambda at: "not finished" in "\n".join(w.value for w in at.warning), describe=text_of,
                   timeout=60)
    assert runtime.state(debate_id).status == "cancelled"
    assert "proposition" in open_store().sections(debate_id)
    assert [b.label for b in at.button if b.key == "debate_resume_saved"] == ["Resume"]
