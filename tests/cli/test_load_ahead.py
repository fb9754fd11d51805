"""``python -m clearside debate QUESTION`` on the embedded model starts loading the GGUF on a side thread while the
command starts its runtime (clearside.cli.load_ahead, EmbeddedProvider.preload); nothing else loads ahead, and a
caller's own argv list (a test, a script) never does. No model is loaded here: the load is a stand-in."""

from __future__ import annotations

import threading
import time

import pytest

from clearside import cli
from clearside.cli import load_ahead
from clearside.providers import embedded

QUESTION = "Should our team rewrite the billing service in Rust?"


@pytest.fixture
def preloads(monkeypatch) -> list[str]:
    """Each preload started, by provider spec (the stand-in loads nothing)."""
    started: list[str] = []
    monkeypatch.setattr(embedded.EmbeddedProvider, "preload", lambda self: started.append(self.spec))
    return started


def parsed(*argv: str):
    args, _ = cli.build_parser().parse_known_args(list(argv))
    return args


def test_a_debate_on_the_embedded_model_loads_it_ahead(preloads):
    load_ahead(parsed("debate", QUESTION))
    load_ahead(parsed("debate", QUESTION, "--provider", "embedded"))
    assert preloads == ["embedded", "embedded"]


@pytest.mark.parametrize("argv", [
    ("debate", QUESTION, "--enqueue"),  # a worker runs it, not this process
    ("debate", QUESTION, "--provider", "scripted:/nowhere.json"),
    ("debate", "   "),  # the command refuses it: nothing to load for
    ("debate", "x" * 501),
    ("debate", QUESTION, "--provider", "embedded:/no/such/model.gguf"),  # the command says why
    ("live", QUESTION),
    ("list",),
])
def test_nothing_else_loads_ahead(preloads, argv):
    load_ahead(parsed(*argv))
    assert preloads == []


def test_a_callers_own_argv_list_never_loads_ahead(preloads, monkeypatch):
    monkeypatch.setattr(cli, "load_ahead", lambda args: pytest.fail("main(argv) must not load ahead"))
    assert cli.main(["debate", "   "]) == 2  # refused as it always was


def test_preload_returns_at_once_and_the_first_call_waits_for_the_same_load(monkeypatch):
    gate, loads = threading.Event(), []

    def slow_load(path, n_ctx, n_threads):
        loads.append((path, n_ctx, n_threads))
        gate.wait(5)
        return "batcher", "llm"

    monkeypatch.setattr(embedded, "load_batcher", slow_load)
    provider = embedded.EmbeddedProvider()
    started = time.perf_counter()
    thread = provider.preload()
    assert time.perf_counter() - started < 0.5 and thread.is_alive()
    gate.set()
    thread.join(5)
    assert loads == [(provider.path, provider.n_ctx, provider.n_threads)]


def test_a_preload_that_fails_is_left_to_the_first_call(monkeypatch):
    def broken(*_):
        raise embedded.ConfigError("Could not make a context")

    escaped: list[BaseException] = []
    monkeypatch.setattr(embedded, "load_batcher", broken)
    monkeypatch.setattr(threading, "excepthook", lambda hook: escaped.append(hook.exc_value))
    thread = embedded.EmbeddedProvider().preload()
    thread.join(5)
    assert not thread.is_alive() and escaped == []  # the first call loads again and raises it to its caller
