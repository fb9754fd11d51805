"""Providers under load, against a real HTTP server on 127.0.0.1 (bench/latency_server.py, both wire formats).

* ``concurrency``: requests in flight per endpoint never exceed the limit, whichever provider instance sends
  them; different endpoints do not share a limit.
* HTTP 429 and 503 are asked again with backoff (Retry-After honoured), then fail with a typed error.
* A whole debate runs through ClearSide's Engine and the OpenAI-compatible provider against that server.
"""

from __future__ import annotations

import threading
import time

import pytest
from helpers import run_cli

from bench.latency_server import MODEL, LatencyServer, start
from clearside import agents
from clearside.contract import jsonschema_errors
from clearside.enforce import parse_json, wire_errors
from clearside.errors import ConfigError, ProviderError, ProviderUnreachable
from clearside.providers import ChatRequest, get_provider
from clearside.providers.batched import DEFAULT_WIDTH
from clearside.providers.ollama import OllamaProvider
from clearside.providers.openai_compat import OpenAIProvider
from clearside.quality.references import flagship
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

ORCHESTRATOR_CALL = ChatRequest(messages=[{"role": "user", "content": "Normalise: build or buy?"}],
                                schema=agents.ORCHESTRATOR_WIRE, agent="orchestrator", max_tokens=200)


@pytest.fixture
def server():
    with start(0, ttft=0.25, tps=2000) as running:
        yield running


def provider(kind: str, server: LatencyServer, **options):
    if kind == "openai":
        return OpenAIProvider("", base_url=server.base_url, **options)
    return OllamaProvider(MODEL, host=server.url, **options)


def run_threads(calls) -> list[BaseException]:
    """Run each call on its own thread, all at once; the exceptions they raised."""
    errors: list[BaseException] = []

    def run(call) -> None:
        try:
            call()
        except BaseException as exc:  # handed to the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


def peak(spans: list[tuple[float, float]]) -> int:
    """The most requests in flight at once over these (start, end) spans."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans], key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


# -- concurrency -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_limit_2_holds_for_6_threads_through_one_provider(server, kind) -> None:
    limited = provider(kind, server, concurrency=2)
    assert run_threads([lambda: limited.complete(ORCHESTRATOR_CALL)] * 6) == []
    assert server.stats()["requests"] == 6
    assert server.stats()["max_in_flight"] == 2


def test_two_providers_for_one_url_share_its_limit(server) -> None:
    first, second = provider("openai", server, concurrency=2), provider("openai", server, concurrency=2)
    calls = [lambda: first.complete(ORCHESTRATOR_CALL)] * 3 + [lambda: second.complete(ORCHESTRATOR_CALL)] * 3
    assert run_threads(calls) == []
    assert server.stats()["requests"] == 6 and server.stats()["max_in_flight"] == 2


def test_providers_for_different_urls_have_a_limit_each(server) -> None:
    with start(0, ttft=0.25, tps=2000) as other:
        here, there = provider("openai", server, concurrency=2), provider("openai", other, concurrency=2)
        calls = [lambda: here.complete(ORCHESTRATOR_CALL)] * 3 + [lambda: there.complete(ORCHESTRATOR_CALL)] * 3
        assert run_threads(calls) == []
        assert server.stats()["max_in_flight"] == 2 and other.stats()["max_in_flight"] == 2
        assert peak(server.spans + other.spans) == 4  # both endpoints were at their limit at the same time


def test_default_limit_is_4_for_servers_and_the_batch_width_for_the_embedded_model(server, monkeypatch) -> None:
    default = provider("openai", server)
    assert default.concurrency == 4 and provider("ollama", server).concurrency == 4
    assert run_threads([lambda: default.complete(ORCHESTRATOR_CALL)] * 6) == []
    assert server.stats()["max_in_flight"] == 4
    embedded = get_provider("embedded")
    assert embedded.concurrency == DEFAULT_WIDTH  # calls the embedded model decodes together
    assert get_provider(f"embedded:{embedded.path}").endpoint == embedded.endpoint  # one GGUF, one limit
    monkeypatch.setenv("CLEARSIDE_BATCH", "1")
    assert get_provider("embedded").concurrency == 1
    monkeypatch.setenv("CLEARSIDE_BATCH", "lots")
    with pytest.raises(ConfigError, match="CLEARSIDE_BATCH='lots' is not a number of calls from 1 to 8"):
        get_provider("embedded")


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_concurrency_that_is_not_a_whole_number_from_1_names_the_fix(server, bad) -> None:
    for spec, options in (("openai:m", {"base_url": server.base_url}), ("ollama:m", {"host": server.url}),
                          ("embedded", {}), ("scripted", {})):
        with pytest.raises(ConfigError, match=r"concurrency must be a whole number of 1 or more.*--concurrency"):
            get_provider(spec, concurrency=bad, **options)


def test_cli_concurrency_sets_the_option_and_rejects_0(capsys, server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    code, _, err = run_cli(capsys, "debate", "Build or buy?", "--provider", "openai", "--concurrency", "0")
    assert code == 2 and "--concurrency" in err and server.stats()["requests"] == 0
    code, out, _ = run_cli(capsys, "debate", flagship().proposition, "--provider", "openai", "--concurrency", "1")
    assert code == 0 and jsonschema_errors(parse_json(out)) == []
    assert server.stats()["max_in_flight"] == 1  # pro and con were not sent at once


# -- retries -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "ollama"])
@pytest.mark.parametrize("status", [429, 503])
def test_overload_answers_are_asked_again_until_one_succeeds(kind, status) -> None:
    with start(0, ttft=0.0, tps=5000, fail_first=2, fail_status=status) as server:
        deltas: list[str] = []
        reply = provider(kind, server, backoff=0.01).complete(ORCHESTRATOR_CALL, deltas.append)
        assert server.stats()["requests"] == 3 and server.stats()["failed"] == 2
        assert wire_errors(parse_json(reply.text), agents.ORCHESTRATOR_WIRE) == []
        assert "".join(deltas) == reply.text  # each delta reached on_delta once


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_retry_after_is_waited_for(kind) -> None:
    with start(0, ttft=0.0, tps=5000, fail_first=2, retry_after=0.4) as server:
        started = time.monotonic()
        reply = provider(kind, server, backoff=0).complete(ORCHESTRATOR_CALL)  # no backoff of its own
        waited = time.monotonic() - started
        assert server.stats()["requests"] == 3 and reply.text
        assert 0.8 <= waited < 5


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_server_that_stays_overloaded_fails_with_a_typed_error_naming_the_fix(kind) -> None:
    with start(0, ttft=0.0, tps=5000, fail_first=100) as server:
        with pytest.raises(ProviderError) as caught:
            provider(kind, server, attempts=3, backoff=0.01).complete(ORCHESTRATOR_CALL)
        assert server.stats()["requests"] == 3  # the client library retried nothing of its own
        error = caught.value
        assert not isinstance(error, ProviderUnreachable) and error.status_code == 429
        assert f"at {server.url}" in str(error) and "(HTTP 429) after 3 attempts" in str(error)
        assert "lower --concurrency" in str(error) and "sidebar's Concurrency" in error.for_dashboard()


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_the_model_list_is_asked_again_too(kind) -> None:
    with start(0, ttft=0.0, tps=5000, fail_lists=2, fail_status=503) as server:
        assert provider(kind, server, backoff=0.01).list_models() == [MODEL]
        assert server.stats()["list_requests"] == 3
    with start(0, ttft=0.0, tps=5000, fail_lists=100) as server:
        with pytest.raises(ProviderError, match=r"overloaded \(HTTP 429\) after 2 attempts"):
            provider(kind, server, attempts=2, backoff=0.01).list_models()
        assert server.stats()["list_requests"] == 2


def test_bad_attempts_and_backoff_name_the_fix(server) -> None:
    with pytest.raises(ConfigError, match="attempts must be a whole number of 1 or more"):
        provider("openai", server, attempts=0)
    with pytest.raises(ConfigError, match="backoff must be a number of seconds from 0"):
        provider("ollama", server, backoff=-1)


def test_a_call_that_already_streamed_is_not_asked_again() -> None:
    """Text reached on_delta, then the server said 429: asking again would send that text twice."""
    from clearside.providers.retry import RetryPolicy

    deltas: list[str] = []
    tries: list[int] = []

    def attempt(forward):
        tries.append(1)
        forward("partial ")
        raise RuntimeError("overloaded mid-stream")

    with pytest.raises(RuntimeError):
        RetryPolicy(attempts=5, backoff=0).call(attempt, deltas.append, overload=lambda exc: (429, None),
                                                server="test server", provider="openai")
    assert tries == [1] and deltas == ["partial "]


def test_backoff_doubles_with_jitter_up_to_its_cap_and_retry_after_is_capped() -> None:
    from clearside.providers.limits import BACKOFF_CAP_S, RETRY_AFTER_CAP_S
    from clearside.providers.retry import RetryPolicy, retry_after

    policy = RetryPolicy(attempts=5, backoff=0.5)
    for failures, full in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (10, BACKOFF_CAP_S)):
        waits = [policy.wait(failures, None) for _ in range(50)]
        assert all(full / 2 <= w <= full for w in waits) and len(set(waits)) > 1  # jittered, never above
    assert policy.wait(1, 2.5) == 2.5 and policy.wait(1, 3600) == RETRY_AFTER_CAP_S
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}) is None and retry_after({}) is None


# -- a debate against the latency server ------------------------------------------------------------


def test_a_static_debate_completes_against_the_latency_server() -> None:
    with start(0, ttft=0.01, tps=3000, fail_first=1) as server:  # the first call is turned away once
        run = DebateRun.from_input(flagship().proposition)
        document = Engine(OpenAIProvider("", base_url=server.base_url, backoff=0.01), retries=1).run(run)
        assert jsonschema_errors(document.dump()) == []
        assert document.meta.model_info.model == MODEL
        # four agents, one call each: every reply passed its schema and substance checks the first time
        assert server.stats()["requests"] == 5 and run.violations == []
        assert set(run.usage) == {"orchestrator", "pro", "con", "moderator"}


# -- time to first token -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_server_call_records_the_wait_for_its_first_text(kind) -> None:
    """The server providers measure the wait for a call's first text themselves (llama.cpp's servers report none
    in a stream): at least the server's time to first token, less than the whole call."""
    with start(0, ttft=0.4, tps=40) as slow_start:
        completion = provider(kind, slow_start).complete(ORCHESTRATOR_CALL)
    assert 0.4 <= completion.first_token_seconds < completion.seconds, completion
