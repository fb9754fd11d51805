"""A static debate on the durable runtime as a page holds it (clearside.static_job.StaticJob): the state a page
polls, failures that keep finished sections, cancel, and retry of only what is missing. The host is this test
process (the dashboard hosts the same way); the provider is the scripted one, lent to the job."""

from __future__ import annotations

import json

import pytest
from helpers import QUESTION, moderator_reply, scripted_debate

from clearside import modes
from clearside.agents import AGENT_ORDER
from clearside.contract import jsonschema_errors
from clearside.errors import InputError
from clearside.providers.scripted import ScriptedProvider
from clearside.runtime import steps
from clearside.runtime.events import AgentProgress, Event, apply_event
from clearside.runtime.jobs import JobRegistry
from clearside.static import remap
from clearside.static import workflow as workflows
from clearside.static.job import ChallengeJob, RemapJob, StaticJob, new_job, rerun_job, resume_job
from clearside.static.recorder import load_run
from clearside.static.run import DebateRun
from clearside.store import NewDebate, open_store


@pytest.fixture
def provider():
    modes.host(role="test")  # conftest stops hosting after each test
    return ScriptedProvider(chunk_size=7)


def job_for(provider, question=QUESTION) -> StaticJob:
    return new_job(open_store(), DebateRun.from_input(question), provider, temperature=0.4)


def test_a_job_runs_to_a_valid_document_and_streams_each_agent(provider):
    replies = scripted_debate(provider)
    snap = job_for(provider).start().wait(30)
    assert snap.status == "done" and snap.finished and snap.error == ""
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
    assert snap.status == "done", snap.error
    moderator = snap.agents["moderator"]
    assert moderator.status == "done" and moderator.attempts == 2
    assert json.loads(moderator.text) == part
    assert snap.document.moderator.dump()["areas_of_agreement"] == bad["areas_of_agreement"]


def test_an_agent_waits_for_the_model_until_its_first_token():
    """A serial model (the embedded one) writes one side after the other: the second reads "waiting", not
    "running", until its first token arrives."""
    agents: dict[str, AgentProgress] = {}
    apply_event(agents, Event("start", "con"))
    assert agents["con"].status == "waiting"
    apply_event(agents, Event("delta", "con", '{"executive'))
    assert agents["con"].status == "running"
    apply_event(agents, Event("retry", "con", data={"attempt": 2}))
    apply_event(agents, Event("delta", "con", "{"))
    assert agents["con"].status == "retrying", "a re-ask keeps saying so while it streams"


def test_a_running_job_can_be_cancelled_and_retry_completes_it():
    modes.host(role="test")
    provider = ScriptedProvider(chunk_delay=0.02, chunk_size=4)
    replies = scripted_debate(provider)
    job = job_for(provider).start()
    for _ in range(1000):
        if job.run.proposition is not None:
            break
        __import__("time").sleep(0.01)
    job.cancel()
    snap = job.wait(30)
    assert snap.status == "cancelled" and snap.finished and snap.exit_code == 130
    assert steps.wait_stopped(job.job_id), "the cancelled step stops at its next token"
    assert job.run.proposition is not None and job.run.moderator is None, "what finished is kept"
    assert open_store().get(job.id).status == "paused"
    provider.chunk_delay = 0.0
    scripted_debate(provider, orchestrator=replies["orchestrator"])
    snap = job.retry().wait(30)
    assert snap.status == "done" and len(provider.requests_for("orchestrator")) == 1
    assert snap.agents["orchestrator"].status == "done"


def test_a_failed_agent_keeps_the_other_sections_and_retry_reruns_only_it(provider):
    broken = {"areas_of_agreement": ["Only one key here"]}
    scripted_debate(provider, moderator=broken)
    provider.enqueue(broken, broken, agent="moderator")
    job = job_for(provider)
    snap = job.start().wait(30)
    assert snap.status == "failed" and snap.exit_code == 4
    assert "moderator" in snap.error and open_store().get(job.id).status == "failed"
    assert snap.agents["moderator"].status == "failed" and snap.agents["moderator"].attempts == 3
    assert [snap.agents[a].status for a in ("orchestrator", "pro", "con")] == ["done"] * 3
    assert job.run.pro is not None

    before = {agent: len(provider.requests_for(agent)) for agent in AGENT_ORDER}
    provider.enqueue(moderator_reply(), agent="moderator")
    snap = job.retry().wait(30)
    assert snap.status == "done" and snap.document is not None
    after = {agent: len(provider.requests_for(agent)) for agent in AGENT_ORDER}
    assert {a: after[a] - before[a] for a in AGENT_ORDER} == {"orchestrator": 0, "pro": 0, "con": 0, "moderator": 1}
    assert snap.agents["pro"].status == "done", "finished agents keep their progress across a retry"


def test_an_unreachable_provider_fails_with_exit_code_3(provider):
    provider.enqueue({"__error__": "unreachable", "message": "Ollama is not reachable — start it"},
                     agent="orchestrator")
    snap = job_for(provider).start().wait(30)
    assert snap.status == "failed" and snap.exit_code == 3
    assert "start it" in snap.error
    assert snap.document is None


def test_a_snapshot_is_a_copy(provider):
    scripted_debate(provider)
    job = job_for(provider)
    snap = job.start().wait(30)
    snap.agents["pro"].text = "changed"
    assert job.snapshot().agents["pro"].text != "changed"


def test_resume_and_rerun_from_the_mode_registry(provider):
    """Resume completes the saved debate under its own id; re-run makes a new debate linked to it."""
    store = open_store()
    scripted_debate(provider)
    job = job_for(provider).start()
    assert job.wait(30).status == "done"
    scripted_debate(provider)
    again = rerun_job(store, job.id, provider, temperature=0.4, owner="tok")
    assert again.id != job.id and again.wait(30).status == "done"
    assert store.get(again.id).parent_id == job.id and store.get(again.id).data["owner"] == "tok"
    resumed = resume_job(store, job.id, provider, temperature=0.4)
    assert resumed.id == job.id and load_run(store, job.id).moderator is not None


def test_registry_finds_jobs_by_id(provider):
    registry = JobRegistry()
    job = registry.add(job_for(provider))
    assert registry.get(job.id, "static") is job and registry.get(job.id, ("live", "static")) is job
    assert registry.get(job.id, "live") is None, "a page of another kind never gets it"
    assert registry.get("unknown", "static") is None and registry.get(None, "static") is None
    assert job.id != job_for(provider).id


def finished_debate(provider) -> tuple[str, object]:
    scripted_debate(provider)
    snap = job_for(provider).start().wait(30)
    assert snap.status == "done", snap.error
    return snap.id, snap.document


def test_a_challenge_is_answered_on_the_runtime_and_saved_once(provider):
    from helpers import challenge_reply

    debate_id, document = finished_debate(provider)
    store = open_store()
    target = document.pro.assumptions[0]
    provider.enqueue(challenge_reply(), agent="challenge")
    job = ChallengeJob(store, debate_id, "question_assumption", target, provider).start()
    snap = job.wait(30)
    state, result, error = snap.status, snap.document, snap.error
    assert (state, error) == ("done", "") and [r.target for r in result.challenges.responses] == [target]
    saved = store.challenges(debate_id)
    # the save step rerun after a crash (its checkpoint lost) finds the answer there and adds nothing
    answer = {"response": saved[-1], "provider": "scripted", "model": "script"}
    assert workflows.challenge_save({"debate_id": debate_id}, answer) == {"status": "done", "number": 1}
    assert len(store.challenges(debate_id)) == 1


def test_a_failed_challenge_says_why_and_bad_input_is_refused_at_once(provider):
    debate_id, document = finished_debate(provider)
    store = open_store()
    provider.enqueue({"__error__": "unreachable", "message": "Ollama is not reachable — start it"}, agent="challenge")
    snap = ChallengeJob(store, debate_id, "question_assumption", document.pro.assumptions[0],
                                        provider).start().wait(30)
    state, result, error = snap.status, snap.document, snap.error
    assert state == "failed" and result is None and "start it" in error
    assert store.challenges(debate_id) == []
    with pytest.raises(InputError, match="Unknown challenge action"):
        ChallengeJob(store, debate_id, "overrule", "x", provider)
    with pytest.raises(InputError):
        ChallengeJob(store, debate_id, "question_assumption", "   ", provider)


def test_a_remap_runs_on_the_runtime_and_is_saved_once_as_a_version(provider):
    from clearside import runtime
    from clearside.schema import AssumptionStance, Weights

    debate_id, document = finished_debate(provider)
    store = open_store()
    reply = moderator_reply()
    reply["decision_hinges"] = list(reversed(reply["decision_hinges"]))
    provider.enqueue(*({name: reply[name]} for name in remap.REMAPPED), agent="moderator")  # one call each
    stance = AssumptionStance(side="con", index=0, assumption=document.con.assumptions[0], stance="reject")
    job = RemapJob(store, debate_id, remap.Conditions(Weights(economic=3), (stance,)), provider).start()
    assert job.id.startswith(f"{debate_id}:remap:")
    snap = job.wait(30)
    state, remapped, error = snap.status, snap.document, snap.error
    assert (state, error) == ("done", "") and job.version == 1
    assert runtime.state(job.id).name == workflows.REMAP
    assert remapped.moderator.decision_hinges == reply["decision_hinges"]
    assert remapped.remap.weights.dump() == {"economic": 3} and remapped.remap.stances == [stance]
    assert remapped.remap.original.dump() == document.moderator.dump()
    assert store.get(debate_id).document == document.dump(), "the original debate is unchanged"
    (version,) = store.versions(debate_id)
    assert version.kind == "remap" and version.provider == "scripted"
    # the save step rerun after a crash (its checkpoint lost) finds the version there and adds nothing
    mapped = {"document": store.version(debate_id, 1).body["document"], "provider": "scripted", "model": "script"}
    assert workflows.remap_save({"debate_id": debate_id}, mapped)["number"] == 1
    assert len(store.versions(debate_id)) == 1


def test_a_failed_remap_says_why_saves_nothing_and_bad_input_is_refused_at_once(provider):
    from clearside.schema import Weights

    debate_id, document = finished_debate(provider)
    store = open_store()
    provider.enqueue({"__error__": "unreachable", "message": "Ollama is not reachable — start it"}, agent="moderator")
    snap = RemapJob(store, debate_id, remap.Conditions(Weights(ethical=0)), provider).start().wait(30)
    state, result, error = snap.status, snap.document, snap.error
    assert state == "failed" and result is None and "start it" in error
    assert store.versions(debate_id) == [] and store.get(debate_id).document == document.dump()
    with pytest.raises(InputError, match="Set a weight other than 1"):
        RemapJob(store, debate_id, remap.Conditions(Weights()), provider)
    with pytest.raises(InputError, match="Only a saved debate"):
        RemapJob(store, None, remap.Conditions(Weights(ethical=0)), provider)
    unfinished = store.create(NewDebate("static", "Q?", provider="scripted", model="script", status="failed"))
    with pytest.raises(InputError, match="Only a finished debate"):
        RemapJob(store, unfinished, remap.Conditions(Weights(ethical=0)), provider)
