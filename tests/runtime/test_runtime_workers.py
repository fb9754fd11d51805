"""The durable runtime across processes: ``python -m clearside worker`` processes on one store, a
model server on 127.0.0.1 that counts every call by agent (bench/latency_server.py, the OpenAI-compatible wire).

- Recovery without a click: SIGKILL the worker in the middle of the advocates; another worker takes the job
  over, and only the interrupted stage is generated again. The killed worker's process is gone from this machine,
  so it is known dead at once: the job is taken over at the next heartbeat, not after CLEARSIDE_DEAD_AFTER_SECONDS.
- Two workers drain one queue and no stage runs twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.latency_server import start
from clearside import runtime
from clearside.providers.openai_compat import OpenAIProvider
from clearside.quality.references import flagship
from clearside.static import workflow as workflows
from clearside.static.recorder import StaticRecorder
from clearside.static.run import DebateRun
from clearside.store import open_store

REPO = Path(__file__).resolve().parents[2]
AGENTS = ("orchestrator", "pro", "con", "moderator")


@pytest.fixture
def client(db):
    """This process only queues and reads jobs (a client); the workers host them."""
    yield db
    runtime.reset()


class Worker:
    """``python -m clearside worker`` on the test's store, its stderr kept for the assertions."""

    def __init__(self, tmp_path: Path, name: str, *args: str, dead_after: float = 3) -> None:
        self.log = tmp_path / f"{name}.log"
        env = {**os.environ, "CLEARSIDE_HEARTBEAT_SECONDS": "0.5", "CLEARSIDE_DEAD_AFTER_SECONDS": str(dead_after),
               "OPENAI_API_KEY": "not-needed", "PYTHONUNBUFFERED": "1"}
        with self.log.open("w") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "clearside", "worker", *args], cwd=REPO,
                                            env=env, stdout=out, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.log.read_text()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


def queued_debate(server) -> str:
    provider = OpenAIProvider("", base_url=server.base_url)
    debate_id = StaticRecorder(open_store(), DebateRun.from_input(flagship().proposition), provider).id
    return workflows.enqueue_static(debate_id, provider, lend=False, retries=1)


def until(condition, timeout: float, what: str, worker: Worker | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} after {timeout} s" + (f"; the worker said:\n{worker.text()}" if worker else ""))


def test_a_killed_workers_debate_is_finished_by_another_and_only_the_interrupted_stage_runs_again(
        client, tmp_path):
    """Both workers would wait 600 s for a silent heartbeat: the killed one's process is gone from this machine, so
    the second takes its job over at its first beats (the test allows 90 s for the whole debate)."""
    with start(0, ttft=0.2, tps=120) as server:  # an advocate's reply streams for about three seconds
        job_id = queued_debate(server)
        first = Worker(tmp_path, "first", dead_after=600)
        try:
            until(lambda: server.stats()["agents"].get("pro") and server.stats()["in_flight"], 60,
                  "the advocates never started", first)
            assert "proposition" in open_store().sections(job_id)
            first.kill()  # mid-advocates: its orchestrator step is checkpointed, the advocates' is not
        finally:
            first.stop()
        assert runtime.state(job_id).status == "interrupted"  # its host is gone, and no worker lives to take it over
        second = Worker(tmp_path, "second", dead_after=600)
        try:
            until(lambda: runtime.state(job_id).finished, 90, "the second worker never finished the job", second)
        finally:
            second.stop()
        assert runtime.state(job_id).status == "done", second.text()
        assert "Took over 1 job(s) of stopped host(s) worker-" in second.text()
        assert f"job {job_id} done" in second.text()
        record = open_store().get(job_id)
        assert record.status == "done" and record.document["moderator"]["decision_hinges"]
        asked = server.stats()["agents"]
        assert asked["orchestrator"] == 1 and asked["moderator"] == 1  # finished before, or after: once each
        assert 1 <= asked["pro"] <= 2 and 1 <= asked["con"] <= 2 and asked["pro"] + asked["con"] >= 3, asked


def test_two_workers_drain_one_queue_and_no_stage_runs_twice(client, tmp_path):
    with start(0, ttft=0.1, tps=400) as server:
        workers = [Worker(tmp_path, name, "--concurrency", "2") for name in ("a", "b")]
        try:
            for worker in workers:
                until(lambda w=worker: "serving queued" in w.text(), 60, "the worker never started", worker)
            jobs = [queued_debate(server) for _ in range(6)]
            until(lambda: all(runtime.state(j).finished for j in jobs), 120, "the queue was not drained")
        finally:
            for worker in workers:
                worker.stop()
        assert {runtime.state(j).status for j in jobs} == {"done"}
        assert server.stats()["agents"] == dict.fromkeys(AGENTS, 6)  # every stage of every debate exactly once
        ran = [sum(f"job {j} started" in w.text() for j in jobs) for w in workers]
        assert sum(ran) == 6 and all(ran), f"jobs each worker started: {ran}"
