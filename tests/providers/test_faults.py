"""Provider faults against a real fault-injecting server on 127.0.0.1 (tests/fault_server.py), and the promises:

* a retryable fault (HTTP 429/500/503, a hang past the client's timeout, a connection dropped mid-stream, a
  stream cut before its final event) is asked again with backoff, Retry-After honoured, and the user sees
  "retrying (2/3)…" (the command line's progress line; the page's agent status from the same event);
* a fault that is not retryable, or that outlasts the retries, fails with a message naming the provider, the
  model, the endpoint, the cause and the fix, and loses no finished section (DebateFailed carries them); a
  Retry runs only what is missing;
* a stream that ends without its final event is a provider fault, never re-asked as invalid JSON;
* every failure message names the provider, the model and the endpoint, schema failures included;
* a failed moderator leaves no synthesis;
* the health check (Provider.check) makes the debate's first call on its schema.

One server for the module (re-planned per test); client timeouts of 0.4 s and backoff of 0.01 s keep it fast.
"""

from __future__ import annotations

import io
import json
import time

import httpx
import pytest
from fault_server import MODEL, FaultServer, Step, start
from helpers import run_cli

from clearside import agents
from clearside.cli.common import progress
from clearside.contract import jsonschema_errors
from clearside.enforce import CallSpec, Listeners, run_structured
from clearside.errors import DebateFailed, ProviderError, SchemaViolationError
from clearside.providers import ChatRequest
from clearside.providers.ollama import OllamaProvider
from clearside.providers.openai_compat import OpenAIProvider
from clearside.quality.references import flagship
from clearside.runtime.events import AgentProgress, Event, apply_event
from clearside.schema import Proposition
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

TIMEOUT = 0.4
ORCHESTRATOR_CALL = ChatRequest(messages=[{"role": "user", "content": "Normalise: build or buy?"}],
                                schema=agents.ORCHESTRATOR_WIRE, agent="orchestrator", max_tokens=200)
RETRIED = {
    "429": Step("status", status=429, retry_after=0.3),
    "500": Step("status", status=500),
    "503": Step("status", status=503),
    "hang": Step("hang", seconds=3),
    "drop": Step("drop"),
    "cut": Step("cut"),
}


@pytest.fixture(scope="module")
def server():
    with start() as running:
        yield running


@pytest.fixture
def fresh(server: FaultServer) -> FaultServer:
    server.reset()
    return server


def provider(server: FaultServer, kind: str = "openai", **options):
    options = {"timeout": TIMEOUT, "backoff": 0.01, "attempts": 3, **options}
    if kind == "openai":
        return OpenAIProvider(MODEL, base_url=server.base_url, **options)
    return OllamaProvider(MODEL, host=server.url, **options)


class Watcher:
    """What the user sees of a debate: the command line's progress lines and the page's agent progress."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.printer = progress(self.out)
        self.agents: dict[str, AgentProgress] = {}
        self.shown: list[str] = []  # the page's status words for an agent while it is retried

    def __call__(self, event: Event) -> None:
        self.printer(event)
        apply_event(self.agents, event)
        if event.kind == "retry":
            from clearside_ui.view import attempt_words

            self.shown.append(f"{event.agent}: retrying{attempt_words(self.agents[event.agent])}")

    @property
    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()


def debate(server: FaultServer, kind: str = "openai", run: DebateRun | None = None, **options):
    watcher = Watcher()
    run = run or DebateRun.from_input(flagship().proposition)
    engine = Engine(provider(server, kind, **options), retries=1, on_event=watcher, substance=False)  # wire only
    try:
        return engine.run(run), run, watcher, None
    except DebateFailed as exc:
        return None, run, watcher, exc


def names_the_call(message: str, server: FaultServer, kind: str = "openai") -> None:
    """A failure message names the provider, the model and the endpoint."""
    assert kind in message and repr(MODEL) in message
    assert (server.base_url if kind == "openai" else server.url) in message


# -- the server itself --------------------------------------------------------------------------------


def test_the_server_answers_both_wire_formats_streamed_or_not_at_its_pace(fresh) -> None:
    fresh.plan(Step("slow", tps=4), "ok", "ok", "ok")
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    started = time.monotonic()
    whole = httpx.post(f"{fresh.base_url}/chat/completions", json={**body, "stream": False}, timeout=10).json()
    slow = time.monotonic() - started
    assert json.loads(whole["choices"][0]["message"]["content"]) == {"answer": "OK"}
    assert 0.4 <= slow < 3  # two tokens at 4 a second
    with httpx.stream("POST", f"{fresh.base_url}/chat/completions", json={**body, "stream": True}) as streamed:
        events = [line for line in streamed.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]" and json.loads(events[-2][6:])["choices"][0]["finish_reason"] == "stop"
    ollama = httpx.post(f"{fresh.url}/api/chat", json={**body, "stream": False}, timeout=10).json()
    assert ollama["done"] is True and json.loads(ollama["message"]["content"]) == {"answer": "OK"}
    with httpx.stream("POST", f"{fresh.url}/api/chat", json={**body, "stream": True}) as streamed:
        lines = [json.loads(line) for line in streamed.iter_lines() if line]
    assert lines[-1]["done"] is True and not any(line["done"] for line in lines[:-1])
    assert [kind for _, kind in fresh.served] == ["slow", "ok", "ok", "ok"]


def test_a_slow_stream_is_not_a_hang(fresh) -> None:
    """One token every 0.25 s is slower in all than the client's 0.4 s timeout, which bounds each read only."""
    fresh.plan(Step("slow", tps=4))
    reply = provider(fresh).complete(ChatRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=8))
    assert json.loads(reply.text) == {"answer": "OK"} and reply.seconds > TIMEOUT


# -- retried faults -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", list(RETRIED))
def test_a_retryable_fault_is_retried_and_the_user_sees_retrying(fresh, fault) -> None:
    fresh.plan(RETRIED[fault], agent="pro")
    document, run, watcher, failure = debate(fresh)
    assert failure is None and jsonschema_errors(document.dump()) == []
    assert [kind for agent, kind in fresh.served if agent == "pro"] == [RETRIED[fault].kind, "ok"]
    retrying = [line for line in watcher.lines if "retrying" in line]
    assert len(retrying) == 1 and retrying[0].startswith("[pro] retrying (2/3)… the OpenAI-compatible server at")
    if fault == "429":
        assert "waiting 0.3 s" in retrying[0]  # the server's Retry-After, not the client's own backoff
    # the page: the agent shown retrying, and then its text is the reply alone (a dropped stream's start is gone)
    shown = "pro: retrying (2/3)…: the OpenAI\\-compatible server at"  # Markdown-escaped on the page
    assert len(watcher.shown) == 1 and watcher.shown[0].startswith(shown), watcher.shown
    assert watcher.agents["pro"].status == "done" and watcher.agents["pro"].attempts == 2
    assert json.loads(watcher.agents["pro"].text) is not None
    assert run.violations == []  # a provider fault is never re-asked as an invalid reply


@pytest.mark.parametrize("fault", ["503", "drop", "cut"])
def test_ollama_retries_the_same_faults(fresh, fault) -> None:
    fresh.plan(RETRIED[fault], agent="con")
    document, _, watcher, failure = debate(fresh, "ollama")
    assert failure is None and document is not None
    assert any(line.startswith("[con] retrying (2/3)… the Ollama server at") for line in watcher.lines)


def test_retry_after_is_waited_for(fresh) -> None:
    fresh.plan(Step("status", status=429, retry_after=0.5))
    started = time.monotonic()
    provider(fresh, backoff=0).complete(ORCHESTRATOR_CALL)
    assert 0.5 <= time.monotonic() - started < 3


# -- faults that fail -----------------------------------------------------------------------------------


def test_faults_outlasting_the_retries_fail_naming_the_call_and_keep_every_finished_section(fresh) -> None:
    fresh.plan(*[Step("status", status=503)] * 3, agent="moderator")
    document, run, watcher, failure = debate(fresh)
    assert document is None and isinstance(failure.cause, ProviderError)
    message = str(failure)
    names_the_call(message, fresh)
    assert "overloaded (HTTP 503) after 3 attempts" in message and "lower --concurrency" in message
    # nothing finished is lost, and the failed moderator left no synthesis behind
    assert failure.run is run and run.proposition and run.pro and run.con and run.moderator is None
    assert "[moderator] retrying (3/3)…" in " ".join(watcher.lines) and watcher.lines[-1] == "[moderator] failed"
    # Retry continues from there: only the moderator is asked
    fresh.reset()
    document, _, _, failure = debate(fresh, run=run)
    assert failure is None and jsonschema_errors(document.dump()) == []
    assert fresh.served == [("moderator", "ok")]


@pytest.mark.parametrize("fault", ["hang", "drop", "cut"])
def test_a_timeout_or_broken_stream_that_persists_names_cause_and_fix(fresh, fault) -> None:
    fresh.plan(*[RETRIED[fault]] * 3, agent="orchestrator")
    with pytest.raises(ProviderError) as caught:
        run_structured(provider(fresh), CallSpec("orchestrator", Proposition, agents.ORCHESTRATOR_WIRE,
                                                 prepare=agents.proposition_from_reply("x", None)),
                       ORCHESTRATOR_CALL.messages, listeners=Listeners(on_retrying=lambda data: None))
    message = str(caught.value)
    names_the_call(message, fresh)
    cause = {"hang": "timed out", "drop": "dropped the connection mid-stream",
             "cut": "the stream ended before its final event"}[fault]
    assert cause in message and "on all 3 attempts" in message and "choose another provider" in message
    assert "larger model" not in message and len(fresh.served) == 3  # the provider's attempts, no re-ask


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_stream_cut_short_is_a_provider_fault_not_an_invalid_reply(fresh, kind) -> None:
    """Without a retry notice (so its streamed start cannot be taken back) a cut stream is not asked again."""
    fresh.plan("cut")
    violations: list = []
    with pytest.raises(ProviderError, match="the stream ended before its final event") as caught:
        run_structured(provider(fresh, kind), CallSpec("orchestrator", Proposition, agents.ORCHESTRATOR_WIRE,
                                                       prepare=agents.proposition_from_reply("x", None)),
                       ORCHESTRATOR_CALL.messages, violations=violations,
                       listeners=Listeners(on_delta=lambda text: None))
    assert violations == [] and len(fresh.served) == 1
    names_the_call(str(caught.value), fresh, kind)


@pytest.mark.parametrize("kind", ["openai", "ollama"])
@pytest.mark.parametrize("step", [Step("garbled"), Step("status", status=400)], ids=["garbled", "400"])
def test_a_fault_that_is_not_retryable_fails_at_once_and_keeps_what_finished(fresh, kind, step) -> None:
    fresh.plan(step, agent="pro")
    document, run, watcher, failure = debate(fresh, kind)
    assert document is None and isinstance(failure.cause, ProviderError) and failure.exit_code == 3
    assert [k for agent, k in fresh.served if agent == "pro"] == [step.kind]  # asked once
    assert run.proposition is not None and run.con is not None and run.pro is None and run.moderator is None
    message = str(failure)
    names_the_call(message, fresh, kind)
    assert ("not valid JSON" in message) if step.kind == "garbled" else ("400" in message)
    assert "choose another provider" in message and "larger model" not in message
    assert "[pro] failed" in watcher.lines and not any("retrying" in line for line in watcher.lines)


# -- replies that break the schema -------------------------------------------------------------------------


def test_truncated_json_is_re_asked_as_an_invalid_reply(fresh) -> None:
    fresh.plan("truncated", agent="orchestrator")
    document, run, watcher, failure = debate(fresh)
    assert failure is None and document is not None
    assert [v["agent"] for v in run.violations] == ["orchestrator"] and run.violations[0]["kind"] == "schema"
    assert any(line.startswith("[orchestrator] output rejected") for line in watcher.lines)


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_schema_failure_names_the_provider_model_and_endpoint(fresh, kind) -> None:
    fresh.plan("invalid", "invalid", agent="con")
    document, run, _, failure = debate(fresh, kind)
    assert document is None and isinstance(failure.cause, SchemaViolationError)
    message = str(failure)
    assert "broke the ClearSide schema on all 2 attempts" in message
    names_the_call(message, fresh, kind)
    assert run.pro is not None and run.con is None  # pro finished beside it and is kept


# -- the health check ----------------------------------------------------------------------------------------


def test_the_health_check_makes_the_debates_first_call_on_its_schema(fresh) -> None:
    said = provider(fresh).check()
    assert "schema-valid" in said and fresh.served == [("orchestrator", "ok")]
    fresh.reset()
    fresh.plan("invalid")
    with pytest.raises(SchemaViolationError) as caught:
        provider(fresh).check()
    names_the_call(str(caught.value), fresh)
    fresh.reset()
    fresh.plan(Step("status", status=401))
    with pytest.raises(ProviderError, match="rejected the API key") as caught:
        provider(fresh, "openai").check()
    names_the_call(str(caught.value), fresh)


# -- the command line ---------------------------------------------------------------------------------------


def test_cli_debate_prints_retrying_and_a_failed_moderator_leaves_no_synthesis(fresh, capsys, monkeypatch,
                                                                               tmp_path) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fresh.base_url)
    fresh.plan(Step("status", status=503, retry_after=0), agent="pro")
    fresh.plan(*[Step("status", status=500, retry_after=0)] * 5, agent="moderator")
    out = tmp_path / "debate.md"
    code, stdout, stderr = run_cli(capsys, "debate", flagship().proposition, "--provider", f"openai:{MODEL}",
                                   "--retries", "1", "--out", str(out))
    assert "[pro] retrying (2/5)… the OpenAI-compatible server at" in stderr
    assert code == 3 and stdout == "" and not out.exists()  # no document, nothing that looks like one
    error = stderr.strip().splitlines()[-1]
    assert error.startswith("error: The OpenAI-compatible server at") and "HTTP 500, on all 5 attempts" in error
    names_the_call(error, fresh)
    partial = json.loads((tmp_path / "debate.md.partial.json").read_text())
    assert set(partial["sections"]) == {"proposition", "pro", "con"}  # kept, and marked partial by its name


def test_cli_check_makes_the_debates_first_call_and_exits_by_the_outcome(fresh, capsys, monkeypatch) -> None:
    """``python -m clearside check``: the dashboard's Test connection. 0 with what answered and the models
    offered, 4 when the reply breaks the schema, 3 when the server fails, each error naming the call."""
    monkeypatch.setenv("OPENAI_BASE_URL", fresh.base_url)
    spec = f"openai:{MODEL}"
    code, stdout, stderr = run_cli(capsys, "check", "--provider", spec)
    assert code == 0 and stdout.startswith("ok: ") and "schema-valid" in stdout, stderr
    assert f"models offered: {MODEL}" in stdout and fresh.served == [("orchestrator", "ok")]
    fresh.reset()
    fresh.plan("invalid")
    code, stdout, stderr = run_cli(capsys, "check", "--provider", spec)
    assert code == 4 and stdout == ""
    names_the_call(stderr, fresh)
    fresh.reset()
    fresh.plan(*[Step("status", status=500, retry_after=0)] * 5)
    code, stdout, stderr = run_cli(capsys, "check", "--provider", spec)
    assert code == 3 and "HTTP 500" in stderr
    names_the_call(stderr, fresh)
    code, _, stderr = run_cli(capsys, "check", "--provider", "nosuch:model")
    assert code == 2 and "nosuch" in stderr


# -- the other paths: live, perspectives, compare, regress (one fault each) ----------------------------------


def test_live_a_turn_whose_server_stays_down_fails_naming_the_call_and_keeps_the_finished_turns(fresh) -> None:
    from helpers import QUESTION as DEBATE_QUESTION

    from clearside.live import LiveConfig, LiveDebate
    from clearside.store import open_store

    fresh.plan("ok", agent="orchestrator")  # the proposition; then the turns (no agent of the debate's own)
    fresh.plan("ok", "ok", *[Step("status", status=503)] * 3)
    debate = LiveDebate.create(DEBATE_QUESTION, provider(fresh), config=LiveConfig(words_per_minute=400),
                               store=open_store())
    with pytest.raises(ProviderError) as caught:
        debate.run()
    names_the_call(str(caught.value), fresh)
    assert "overloaded (HTTP 503) after 3 attempts" in str(caught.value)
    saved = LiveDebate.resume(debate.transcript.id, provider(fresh), store=open_store())
    finished = len(saved.transcript.turns)
    assert finished >= 1  # the turns that finished are kept; the resumed debate goes on from there
    fresh.reset()
    saved.run()
    assert len(saved.transcript.turns) > finished and saved.transcript.document


def test_live_a_dropped_turn_is_retried_the_user_sees_it_and_no_speech_is_doubled(fresh) -> None:
    """A connection dropped mid-speech is asked again: the command line and the page's turn in flight say
    "retrying (2/3)…", what streamed before the drop is dropped too, and the turn is saved once, whole."""
    from helpers import QUESTION as DEBATE_QUESTION

    from clearside.cli.live import Printer
    from clearside.live import LiveConfig, LiveDebate
    from clearside.live.control import LiveView
    from clearside.live.turn import speech_of
    from clearside.store import open_store

    fresh.plan("ok", agent="orchestrator")
    fresh.plan(Step("drop", after=12), "ok")  # the first turn: 12 tokens of speech, then the connection drops
    out, view, activities, before_done = io.StringIO(), LiveView(), [], []
    printer = Printer(out)

    def on_event(event) -> None:
        printer(event)
        if event.kind == "turn_done":
            before_done.append(view.raw)
        view.fold(event)
        activities.append(view.activity)

    debate = LiveDebate.create(DEBATE_QUESTION, provider(fresh), config=LiveConfig(words_per_minute=400),
                               store=open_store(), on_event=on_event)
    turn = debate.advance()
    assert [kind for _, kind in fresh.served] == ["ok", "drop", "ok"]
    assert any(a.startswith("Pro opening statement · retrying (2/3)… ") for a in activities), activities
    assert activities[-1] == "" or "retrying" not in activities[-1], "the notice goes once the call streams again"
    assert "[retrying (2/3)… " in out.getvalue() and "dropped the connection" in out.getvalue()
    assert speech_of(before_done[0]) == turn.text, "the page's turn in flight holds the retried call's text only"
    assert turn.text.count(turn.text[:40]) == 1 and len(debate.transcript.turns) == 1


def test_perspectives_a_dropped_clarifier_stream_is_retried_and_the_user_sees_it(fresh) -> None:
    from perspectives_kit import QUESTION as PERSONAL_QUESTION

    from clearside.perspectives import PerspectivesRun
    from clearside.perspectives.workflow import StreamView
    from clearside.store import open_store

    fresh.plan(Step("drop", after=12), "ok")
    events, streamed = [], []
    run = PerspectivesRun.create(PERSONAL_QUESTION, provider(fresh), rounds=1, store=open_store(),
                                 on_event=events.append)
    run.clarify()
    assert [kind for _, kind in fresh.served] == ["drop", "ok"]
    [notice] = [e for e in events if e.kind == "retrying"]
    assert notice.text.startswith("retrying (2/3)… ") and "dropped the connection" in notice.text
    view, notices = StreamView(), []
    for event in events:  # the page's streamed text: what streamed before the drop is gone after the notice
        view.fold(event)
        streamed.append(view.text)
        notices.append(view.notice)
    at = events.index(notice)
    assert streamed[at] == "" and run.session.state != "failed"
    assert notices[at] == notice.text, "the page's snapshot says retrying (2/3)… while the call is asked again"
    assert notices[-1] == "", "and no longer once the call streams again"


def test_perspectives_a_dropped_stream_that_persists_fails_naming_the_call(fresh) -> None:
    from perspectives_kit import QUESTION as PERSONAL_QUESTION

    from clearside.perspectives import PerspectivesRun
    from clearside.store import open_store

    fresh.plan(*[Step("drop")] * 3)
    run = PerspectivesRun.create(PERSONAL_QUESTION, provider(fresh), rounds=1, store=open_store())
    with pytest.raises(ProviderError) as caught:
        run.clarify()
    assert "dropped the connection mid-stream" in str(caught.value) and len(fresh.served) == 3  # asked 3 times
    names_the_call(str(caught.value), fresh)


def test_compare_a_503_is_retried_and_both_debates_finish(fresh) -> None:
    from clearside import modes
    from clearside.quality.job import CompareJob
    from clearside.quality.workflow import item_id
    from clearside.runtime import progress
    from clearside.store import open_store

    fresh.plan(Step("status", status=503), agent="pro")
    modes.host(role="test", serve=False)  # the comparison runs in this process, as the compare command runs it
    comparison = CompareJob(flagship().proposition, [provider(fresh), provider(fresh)], open_store(), retries=1,
                            temperatures=[0.2, 0.6]).start(here=True)
    comparison.wait(120)
    assert [r["status"] for r in comparison.report()["results"].values()] == ["done", "done"]
    events = [(label, Event.of(entry)) for n, label in enumerate(comparison.labels)
              for entry in progress.read(item_id(comparison.id, n))[0]]
    retried = [(label, e.data) for label, e in events if e.kind == "retry" and "cause" in e.data]
    assert len(retried) == 1 and retried[0][1]["attempt"] == 2 and "HTTP 503" in retried[0][1]["cause"]


def test_regress_a_hung_moderator_is_retried_and_the_batch_passes_its_run(fresh) -> None:
    from helpers import run_regression

    from clearside.quality.workflow import item_id
    from clearside.runtime import progress

    fresh.plan(Step("hang", seconds=2), agent="moderator")
    report = run_regression("flagship", provider(fresh), runs=1, retries=1)  # as the regress command runs it
    events = [Event.of(entry) for entry in progress.read(item_id(report["batch"], 0))[0]]
    assert [debate["status"] for debate in report["debates"]] == ["done"]
    assert [kind for agent, kind in fresh.served if agent == "moderator"] == ["hang", "ok"]
    assert any(e.kind == "retry" and "timed out" in e.data.get("cause", "") for e in events)


# -- prompt tokens a server took from its prefix cache --------------------------------------------------

SHARED = "You are one of two advocates in a structured debate; argue your side only and cite the evidence given."


@pytest.fixture
def caching(fresh):
    """The fault server with its prefix cache on (set per test: "usage" or "timings"), off again afterwards."""
    yield fresh
    fresh.prefix_cache = ""


@pytest.mark.parametrize(("kind", "report"), [("openai", "usage"), ("openai", "timings"), ("ollama", "usage")])
def test_cached_prompt_tokens_are_read_as_the_server_reports_them(caching, kind, report) -> None:
    """Two calls sharing a system prompt: the second's shared words come from the cache, on either wire format
    (OpenAI's usage.prompt_tokens_details or llama-server's timings; Ollama's prompt_eval_cached_count)."""
    caching.prefix_cache = report
    llm = provider(caching, kind)
    first, second = (llm.complete(ChatRequest(messages=[{"role": "system", "content": SHARED},
                                                         {"role": "user", "content": question}], max_tokens=8))
                     for question in ("Should we build it ourselves?", "Or buy the service instead?"))
    shared = len(SHARED.split())
    assert caching.cached == [(shared + 5, 0), (shared + 5, shared)]  # what the server sent
    assert (first.prompt_tokens, first.cached_prompt_tokens) == (shared + 5, 0)
    assert (second.prompt_tokens, second.cached_prompt_tokens) == (shared + 5, shared)


def test_no_cache_reported_is_none_cached(fresh) -> None:
    """A server that reports no cache (the fault server by default) leaves cached_prompt_tokens at 0."""
    for kind in ("openai", "ollama"):
        for _ in range(2):
            reply = provider(fresh, kind).complete(ChatRequest(messages=[{"role": "user", "content": SHARED}],
                                                               max_tokens=8))
            assert reply.prompt_tokens == len(SHARED.split()) and reply.cached_prompt_tokens == 0


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_debates_usage_record_shows_evaluated_and_cached_prompt_tokens(caching, kind) -> None:
    from clearside.quality.metrics import lexical
    from clearside.static.recorder import usage_summary

    caching.prefix_cache = "usage"
    document, run, _, failure = debate(caching, kind)
    assert failure is None and document is not None
    record = lexical.usage(usage_summary(run.usage))  # what a debate's quality record holds
    sent = caching.cached  # (prompt tokens, cached) of every call, as the server reported them
    assert record["prompt_tokens"] == sum(p for p, _ in sent) > 0
    assert record["cached_prompt_tokens"] == sum(c for _, c in sent) > 0  # the agents' prompts share a prefix
    assert record["evaluated_prompt_tokens"] == record["prompt_tokens"] - record["cached_prompt_tokens"]
    assert sum(a["cached_prompt_tokens"] for a in record["agents"].values()) == record["cached_prompt_tokens"]


def test_a_usage_record_saved_before_cached_tokens_reads_as_none_cached() -> None:
    from clearside.quality.metrics import lexical

    old = {"pro": {"calls": 1, "prompt_tokens": 120, "completion_tokens": 40, "seconds": 2.0}}
    record = lexical.usage(old)
    assert record["agents"]["pro"]["cached_prompt_tokens"] == 0
    assert (record["prompt_tokens"], record["cached_prompt_tokens"], record["evaluated_prompt_tokens"]) == (120, 0, 120)
