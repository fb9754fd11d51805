"""The one job contract (clearside/runtime/jobs.py) over the mode registry: every kind of job in
``modes.JOB_KINDS`` is a ``runtime.Job`` (start, cancel, retry, wait, snapshot), is kept by the registry under its
kind, and runs on the durable runtime to a snapshot that says where it stands in one word of ``runtime.STATUSES``.
Each kind is built and run here on the scripted provider."""

from __future__ import annotations

import perspectives_kit as kit
import pytest
from helpers import QUESTION, LiveResponder, challenge_reply, flagship_replies, moderator_reply, scripted_debate

from clearside import modes, runtime
from clearside.live import LiveConfig, LiveDebate
from clearside.live.job import LiveJob
from clearside.perspectives import PerspectivesRun
from clearside.perspectives.job import PerspectivesJob
from clearside.providers.scripted import ScriptedProvider
from clearside.quality.job import CompareJob, RegressionJob
from clearside.quality.references import flagship
from clearside.schema import Weights
from clearside.static import remap
from clearside.static.job import ChallengeJob, RemapJob, new_job
from clearside.static.run import DebateRun
from clearside.store import open_store


def finished_debate() -> tuple[str, ScriptedProvider]:
    provider = ScriptedProvider()
    scripted_debate(provider)
    snap = new_job(open_store(), DebateRun.from_input(QUESTION), provider, temperature=0.4).start().wait(60)
    assert snap.status == "done", snap.error
    return snap.id, provider


def static_job():
    provider = ScriptedProvider()
    scripted_debate(provider)
    return new_job(open_store(), DebateRun.from_input(QUESTION), provider, temperature=0.4)


def challenge_job():
    debate_id, provider = finished_debate()
    provider.enqueue(challenge_reply(), agent="challenge")
    assumption = open_store().get(debate_id).document["pro"]["assumptions"][0]
    return ChallengeJob(open_store(), debate_id, "question_assumption", assumption, provider)


def remap_job():
    debate_id, provider = finished_debate()
    reply = moderator_reply()
    provider.enqueue(*({name: reply[name]} for name in remap.REMAPPED), agent="moderator")
    return RemapJob(open_store(), debate_id, remap.Conditions(Weights(economic=3)), provider)


def live_job():
    provider = ScriptedProvider(fallback=LiveResponder())
    debate = LiveDebate.create(QUESTION, provider, config=LiveConfig(words_per_minute=400), store=open_store())
    return LiveJob(debate)


def perspectives_job():
    provider = ScriptedProvider(script=kit.script(1))
    return PerspectivesJob(PerspectivesRun.create(kit.QUESTION, provider, rounds=1, store=open_store()))


def regression_job():
    replies = flagship_replies()
    provider = ScriptedProvider(script={agent: [replies[agent]] for agent in replies})
    return RegressionJob("flagship", provider, open_store(), runs=1)


def comparison_job():
    replies = flagship_replies()
    providers = [ScriptedProvider(script={agent: [replies[agent]] for agent in replies}) for _ in range(2)]
    return CompareJob(flagship().proposition, providers, open_store(), temperatures=[0.2, 0.8])


BUILD = {"static": static_job, "challenge": challenge_job, "remap": remap_job, "live": live_job,
         "perspectives": perspectives_job, "regression": regression_job, "comparison": comparison_job}


def test_the_registry_names_every_kind_of_job_and_each_keeps_the_contract():
    assert set(modes.JOB_KINDS) == set(BUILD)
    for kind, job_class in modes.JOB_KINDS.items():
        assert job_class.kind == kind
        for method in ("start", "cancel", "retry", "wait", "snapshot"):
            assert callable(getattr(job_class, method, None)), f"{kind} jobs have no {method}()"
    assert runtime.STATUSES == ("queued", "running", "interrupted", "waiting", "pausing", "paused", "done", "failed",
                                "cancelled")
    assert set(runtime.FINISHED) | set(runtime.UNDER_WAY) < set(runtime.STATUSES)


@pytest.mark.parametrize("kind", list(BUILD))
def test_every_kind_of_job_runs_on_the_runtime_and_its_snapshot_speaks_the_one_vocabulary(kind):
    modes.host(role="test")
    job = BUILD[kind]()
    assert isinstance(job, runtime.Job) and type(job) is modes.JOB_KINDS[kind]
    registry = runtime.JobRegistry()
    registry.add(job.start())
    assert registry.get(job.id, kind) is job
    assert registry.get(job.id, tuple(k for k in BUILD if k != kind)) is None, "another kind's page never gets it"
    snap = job.wait(120)
    if kind == "perspectives":  # the clarification gate: the session waits for the person, then goes on
        assert snap.status == "waiting" and not snap.finished and not snap.busy
        snap = job.answer(kit.ANSWERS).wait(120)
    assert snap.status in runtime.STATUSES
    assert snap.status == "done" and snap.finished and not snap.error, (kind, snap.status, snap.error)
    assert job.snapshot().status == "done"
