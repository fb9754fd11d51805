"""Background debate jobs: the state a UI polls, failures that keep finished sections, retry of only what failed."""

from __future__ import annotations

import json
import threading

import pytest
from helpers import QUESTION, moderator_reply, scripted_debate

from clearside.engine import DebateRun
from clearside.jobs import AGENT_ORDER, DebateJob, JobRegistry
from clearside.providers.scripted import ScriptedProvider
from clearside.schema import jsonschema_errors


@pytest.fixture
def provider():
    return ScriptedProvider(chunk_size=7)


def job_for(provider, question=QUESTION):
    return DebateJob(DebateRun.from_input(question), provider)


def test_a_job_runs_to_a_valid_document_and_streams_each_agent(provider):
    replies = scripted_debate(provider)
    snap = job_for(provider).start().wait(30)
    assert snap.state == "done" and snap.finished and snap.error == ""
    assert jsonschema_errors(snap.document.dump()) == []
    for agent in AGENT_ORDER:
        progress = snap.agents[agent]
        assert progress.status == "done"
        assert json.loads(progress.text) == replies[agent], f"{agent}'s streamed text is its whole reply"
        assert progress.attempts == 1 and progress.tokens > 0


def test_a_mended_field_streams_on_its_own_after_the_reply_that_was_sent_back(provider):
    """The moderator's whole reply cites an unlisted assumption; only that field is written again, and the
    progress text is the rewritten part alone (not glued to the rejected reply, which would not parse)."""
    bad = moderator_reply()
    bad["assumption_conflicts"][0]["pro_assumption"] = "Cloud costs will keep falling every year"
    part = {"assumption_conflicts": moderator_reply()["assumption_conflicts"]}
    scripted_debate(provider, moderator=bad)
    provider.enqueue(part, agent="moderator")
    snap = job_for(provider).start().wait(30)
    assert snap.state == "done", snap.error
    moderator = snap.agents["moderator"]
    assert moderator.status == "done" and moderator.attempts == 2
    assert json.loads(moderator.text) == part
    assert snap.document.moderator.dump()["areas_of_agreement"] == bad["areas_of_agreement"]


def test_an_agent_waits_for_the_model_until_its_first_token(provider):
    """A serial model (the embedded one) writes one side after the other: the second reads "waiting", not
    "running", until its first token arrives."""
    from clearside.engine import Event

    job = job_for(provider)
    job._on_event(Event("start", "con"))
    assert job.snapshot().agents["con"].status == "waiting"
    job._on_event(Event("delta", "con", '{"executive'))
    assert job.snapshot().agents["con"].status == "running"
    job._on_event(Event("retry", "con", data={"attempt": 2}))
    job._on_event(Event("delta", "con", "{"))
    assert job.snapshot().agents["con"].status == "retrying", "a re-ask keeps saying so while it streams"


def test_a_running_job_can_be_cancelled_and_retry_completes_it():
    provider = ScriptedProvider(chunk_delay=0.02, chunk_size=4)
    replies = scripted_debate(provider)
    job = job_for(provider).start()
    for _ in range(500):
        if job.run.proposition is not None:
            break
        threading.Event().wait(0.01)
    job.cancel()
    snap = job.wait(30)
    assert snap.state == "cancelled" and snap.finished and snap.exit_code == 130
    assert job.run.proposition is not None and job.run.moderator is None, "what finished is kept"
    assert all(snap.agents[a].status in ("done", "pending") for a in AGENT_ORDER)
    provider.chunk_delay = 0.0
    scripted_debate(provider, orchestrator=replies["orchestrator"])
    snap = job.retry().wait(30)
    assert snap.state == "done" and len(provider.requests_for("orchestrator")) == 1


def test_a_failed_agent_keeps_the_other_sections_and_retry_reruns_only_it(provider):
    broken = {"areas_of_agreement": ["Only one key here"]}
    scripted_debate(provider, moderator=broken)
    provider.enqueue(broken, broken, agent="moderator")
    job = job_for(provider)
    snap = job.start().wait(30)
    assert snap.state == "failed" and snap.exit_code == 4
    assert "moderator" in snap.error
    assert snap.agents["moderator"].status == "failed" and snap.agents["moderator"].attempts == 3
    assert [snap.agents[a].status for a in ("orchestrator", "pro", "con")] == ["done"] * 3
    assert len(snap.violations) == 3 and job.run.pro is not None

    before = {agent: len(provider.requests_for(agent)) for agent in AGENT_ORDER}
    provider.enqueue(moderator_reply(), agent="moderator")
    snap = job.retry().wait(30)
    assert snap.state == "done" and snap.document is not None
    after = {agent: len(provider.requests_for(agent)) for agent in AGENT_ORDER}
    assert {a: after[a] - before[a] for a in AGENT_ORDER} == {"orchestrator": 0, "pro": 0, "con": 0, "moderator": 1}
    assert snap.agents["pro"].status == "done", "finished agents keep their progress across a retry"


def test_an_unreachable_provider_fails_with_exit_code_3(provider):
    provider.enqueue({"__error__": "unreachable", "message": "Ollama is not reachable — start it"},
                     agent="orchestrator")
    snap = job_for(provider).start().wait(30)
    assert snap.state == "failed" and snap.exit_code == 3
    assert "start it" in snap.error
    assert snap.document is None


def test_a_snapshot_is_a_copy(provider):
    scripted_debate(provider)
    job = job_for(provider)
    snap = job.start().wait(30)
    snap.agents["pro"].text = "changed"
    assert job.snapshot().agents["pro"].text != "changed"


def test_registry_finds_jobs_by_id(provider):
    registry = JobRegistry()
    job = registry.add(job_for(provider))
    assert registry.get(job.id) is job
    assert registry.get("unknown") is None and registry.get(None) is None
    assert len(job.id) == 32 and job.id != job_for(provider).id
