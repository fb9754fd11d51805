"""Perspectives sessions on the durable runtime: the workflow ``clearside.perspectives``.

- The answers reach the workflow: ``answer`` merges them into the saved session and queues the leg that runs the
  rounds and the synthesis, one DBOS step per model call, each checkpointed.
- The streamed text of the call in flight is readable from the progress rows (any process), not only here.
- Cancel stops the step in flight and keeps the finished ones; retry resumes the cancelled leg (same job id).
- Recovery without a click: ``python -m clearside worker`` is SIGKILLed in the middle of the rounds; another
  worker takes the leg over and only the step in flight is generated again (calls counted at
  bench/latency_server.py, which answers perspectives prompts with replies built from their schemas), on SQLite
  and on PostgreSQL.
"""

from __future__ import annotations

import threading
import time

import perspectives_kit as kit
import pytest
from test_runtime_workers import REPO, Worker, until

from bench.latency_server import start
from clearside import modes, runtime
from clearside.errors import InputError
from clearside.perspectives import PerspectivesRun, load
from clearside.perspectives import workflow as flow
from clearside.perspectives.job import PerspectivesJob
from clearside.providers.openai_compat import OpenAIProvider
from clearside.providers.scripted import ScriptedProvider
from clearside.runtime import steps as runtime_steps
from clearside.runtime.progress import Follower
from clearside.store import open_store

ROUNDS = 2


def new_job(provider, rounds: int = ROUNDS) -> PerspectivesJob:
    return PerspectivesJob(PerspectivesRun.create(kit.QUESTION, provider, rounds=rounds, store=open_store()))


def steps(job_id: str) -> list[str]:
    return [step["function_name"] for step in runtime.dbos_client().list_workflow_steps(job_id)]


def test_the_answers_reach_the_workflow_and_every_model_call_is_a_checkpointed_step():
    modes.host(role="test")
    provider = ScriptedProvider(script=kit.script(ROUNDS), chunk_size=16)
    job = new_job(provider)
    assert job.job_id is None and not job.busy
    snap = job.ask().wait(30)
    assert job.job_id == job.id and runtime.state(job.id).status == "done"
    assert snap.session.state == "CLARIFICATION_PENDING" and not snap.busy and snap.status == "waiting"
    assert steps(job.id) == ["clearside.perspectives.step"]  # the clarifier; the leg ends at the gate

    with pytest.raises(InputError, match="no answer"):
        job.answer(["Three times.", "  ", "Trust."])
    assert job.job_id == job.id, "a refused answer queues nothing"
    assert load(open_store(), job.id).state == "CLARIFICATION_PENDING"

    snap = job.answer(kit.ANSWERS).wait(60)
    leg = f"{job.id}-2"
    assert job.job_id == leg and open_store().get(job.id).data["job"] == leg
    assert runtime.state(leg).status == "done" and runtime.state(leg).result["state"] == "COMPLETE"
    assert snap.session.state == "COMPLETE" and snap.error == "" and open_store().get(job.id).status == "done"
    assert kit.ANSWERS in provider.requests_for("perspectives-A")[0].messages[-1]["content"]
    assert snap.session.clarification_answers == kit.ANSWERS
    assert steps(leg) == ["clearside.perspectives.step"] * (2 * ROUNDS + 1)  # A and B per round, the synthesis
    more = [s["output"]["more"] for s in runtime.dbos_client().list_workflow_steps(leg)]
    assert more == [True] * 2 * ROUNDS + [False]
    assert [len(provider.requests_for(f"perspectives-{a}")) for a in ("clarifier", "A", "B", "synthesis")] == [
        1, ROUNDS, ROUNDS, 1]


class HeldProvider(ScriptedProvider):
    """Streams the first ``after`` characters of ``agent``'s reply at a model's pace, then holds the rest until
    ``release``."""

    def __init__(self, agent: str, after: int = 300, **kwargs) -> None:
        super().__init__(chunk_size=10, **kwargs)
        self.agent, self.after = agent, after
        self.held, self.release = threading.Event(), threading.Event()

    def _complete(self, request, on_delta):
        if request.agent != self.agent or on_delta is None:
            return super()._complete(request, on_delta)
        sent = [0]

        def held(text: str) -> None:
            sent[0] += len(text)
            if sent[0] > self.after:
                self.held.set()
                self.release.wait(30)
            else:
                time.sleep(0.03)  # progress rows are written every 0.25 s while tokens come
            on_delta(text)

        return super()._complete(request, held)


def test_the_text_in_flight_is_in_the_progress_rows_for_any_process_and_cancel_then_retry_completes():
    modes.host(role="test")
    provider = HeldProvider("perspectives-B", script=kit.script(ROUNDS))
    job = new_job(provider)
    job.ask().wait(30)
    job.answer(kit.ANSWERS)
    assert provider.held.wait(30), "B1 never streamed"
    leg = job.job_id
    here = job.snapshot()
    assert here.busy and here.status == "running" and here.step == "ROUND_1_B"
    elsewhere = Follower(leg, None, flow.StreamView()).update().text  # what a page on another replica reads
    assert len(elsewhere) >= 100 and here.streaming.startswith(elsewhere) and "best_interpretation" in elsewhere
    follower = PerspectivesJob(PerspectivesRun.resume(job.id, provider, open_store()))  # a second page
    assert follower.job_id == leg and follower.busy

    job.cancel()
    provider.release.set()
    snap = job.wait(30)
    assert not snap.busy and snap.status == "cancelled" and snap.session.cancelled and snap.error == ""
    assert runtime.state(leg).status == "cancelled" and snap.session.state == "ROUND_1_B"
    assert [(o.round, o.agent) for o in snap.session.round_outputs] == [(1, "A")]

    provider.enqueue(kit.compression_reply("B1"), agent="perspectives-B")  # the cancelled reply was used up
    snap = job.retry().wait(60)
    assert job.job_id == leg, "retry resumes the cancelled leg"
    assert runtime.state(leg).status == "done" and snap.session.state == "COMPLETE" and not snap.session.cancelled
    assert [len(provider.requests_for(f"perspectives-{a}")) for a in ("clarifier", "A", "B", "synthesis")] == [
        1, ROUNDS, ROUNDS + 1, 1], "no finished step was asked again; only the cancelled one"


def test_a_leg_cancelled_before_any_host_ran_it_is_paused_and_retry_runs_it():
    provider = ScriptedProvider(script=kit.script(1))
    job = new_job(provider, rounds=1)
    job.ask()  # no host yet: it waits on its queue
    assert job.busy and runtime.state(job.id).status == "queued"
    job.cancel()
    snap = job.snapshot()
    assert not snap.busy and snap.status == "cancelled" and snap.session.cancelled and snap.session.state == "INIT"
    modes.host(role="test")
    snap = job.retry().wait(30)
    assert snap.session.state == "CLARIFICATION_PENDING" and not snap.session.cancelled
    snap = job.answer(kit.ANSWERS).wait(30)
    assert snap.session.state == "COMPLETE" and len(provider.requests) == 4


@pytest.fixture
def client(db):
    """This process only queues and reads jobs (a client); the workers host them."""
    yield db
    runtime.reset()


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
def test_a_killed_workers_session_is_finished_by_another_and_only_the_step_in_flight_runs_again(client, tmp_path):
    rounds = 3
    calls = 2 * rounds + 2  # the clarifier, A and B per round, the synthesis
    with start(0, ttft=0.2, tps=60) as server:  # a round's reply streams for a few seconds
        job = new_job(OpenAIProvider("", base_url=server.base_url), rounds=rounds)
        first = Worker(tmp_path, "first")
        try:
            job.ask()
            until(lambda: load(open_store(), job.id).state == "CLARIFICATION_PENDING", 90, "no questions", first)
            job.answer(kit.ANSWERS)
            until(lambda: len(load(open_store(), job.id).round_outputs) >= 2 and server.stats()["in_flight"], 90,
                  "the rounds never got going", first)
            first.kill()  # mid-rounds: A1 and B1 are checkpointed, the step in flight is not
        finally:
            first.stop()
        leg = job.job_id
        done_before = len(load(open_store(), job.id).round_outputs)
        assert 2 <= done_before < 2 * rounds
        assert runtime.state(leg).status == "interrupted"  # its host is gone, and no worker lives to take it over
        second = Worker(tmp_path, "second")
        try:
            until(lambda: runtime.state(leg).finished, 120, "the second worker never finished the session", second)
        finally:
            second.stop()
        assert runtime.state(leg).status == "done", second.text()
        assert "Took over 1 job(s) of stopped host(s) worker-" in second.text()
        assert f"job {leg} done" in second.text()
        session = load(open_store(), job.id)
        assert session.state == "COMPLETE" and session.synthesis and open_store().get(job.id).status == "done"
        assert [(o.round, o.agent) for o in session.round_outputs] == [
            (n, agent) for n in range(1, rounds + 1) for agent in "AB"]
        assert len(session.calls) == calls  # every step recorded once
        assert server.stats()["agents"][""] == calls + 1, "only the step in flight was generated again"


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_page_follows_a_session_a_worker_runs_and_its_cancel_and_continue_reach_the_worker(client, tmp_path):
    """The page's process never runs the leg: the streamed text comes from the progress rows, Cancel stops the
    worker's step, and Continue resumes the leg, which a host finishes."""
    pytest.importorskip("streamlit")
    import helpers
    from streamlit.testing.v1 import AppTest

    with start(0, ttft=0.2, tps=40) as server:
        provider = OpenAIProvider("", base_url=server.base_url)
        job = new_job(provider)
        worker = Worker(tmp_path, "worker")
        try:
            job.ask()
            until(lambda: load(open_store(), job.id).state == "CLARIFICATION_PENDING", 90, "no questions", worker)
            job.answer(kit.ANSWERS)
            until(lambda: load(open_store(), job.id).round_outputs and server.stats()["in_flight"], 90,
                  "the rounds never got going", worker)
            at = AppTest.from_file(str(REPO / "app.py"), default_timeout=30)
            at.session_state["provider_override"] = provider
            at.query_params["perspectives"] = job.id
            at.switch_page("clearside_ui/app_pages/perspectives.py")

            def text(a) -> str:
                return "\n".join(e.value for kind in ("markdown", "caption", "info") for e in a.get(kind))

            def streamed(a) -> bool:  # the step in flight's own words under its badge, not a saved step's
                _, badge, after = text(a).lower().rpartition(":material/edit:")
                return bool(badge) and any(f"{field} in this benchmark reply" in after
                           for field in ("emotional reality", "best interpretation"))

            helpers.settle(at, lambda a: streamed(a) and any(b.key == "persp_cancel" for b in a.button),
                           describe=text, timeout=60)
            assert job.job_id not in runtime_steps.LOCAL, "the step runs in the worker, not here"
            at.button(key="persp_cancel").click().run()
            until(lambda: runtime.state(job.job_id).status == "cancelled" and load(open_store(), job.id).cancelled,
                  30, "the cancel never reached the worker", worker)
            until(lambda: server.stats()["in_flight"] == 0, 30, "the worker's step kept generating", worker)
            stopped = load(open_store(), job.id)
            assert stopped.state != "COMPLETE" and stopped.synthesis is None
            helpers.settle(at, lambda a: any(b.key == "persp_retry" for b in a.button), describe=text)
            at.button(key="persp_retry").click().run()
            until(lambda: runtime.state(job.job_id).finished, 120, "the resumed leg never finished", worker)
        finally:
            worker.stop()
        assert runtime.state(job.job_id).status == "done"
        session = load(open_store(), job.id)
        assert session.state == "COMPLETE" and not session.cancelled and len(session.calls) == 2 * ROUNDS + 2
