"""AppTest for the sidebar settings: provider switch, Test connection results, nothing secret in session state."""

from __future__ import annotations

import pytest
from app_kit import open_page
from fault_server import MODEL, FaultServer

from clearside.store import NewDebate
from clearside.store.privacy import scrub


@pytest.fixture
def at():
    return open_page()


@pytest.fixture(scope="module")
def server():
    """A real OpenAI-compatible and Ollama server on 127.0.0.1 (tests/fault_server.py), answering normally."""
    with FaultServer().start() as running:
        yield running


def test_the_default_is_the_embedded_model(at):
    assert at.selectbox(key="provider_name").value == "embedded"
    assert at.text_input(key="embedded_model").value == ""
    assert at.title[0].value == "ClearSide"


@pytest.mark.parametrize(("name", "fields", "message"), [
    ("openai", {"openai_base_url": "http://127.0.0.1:9/v1", "openai_model": "m"},
     "not reachable — start it, check the sidebar's Base URL"),
    ("ollama", {"ollama_host": "http://127.0.0.1:9", "ollama_model": "llama3.2"},
     "start it with `ollama serve`, check the sidebar's Ollama host"),
    ("ollama", {"ollama_host": "htp:/127.0.0.1", "ollama_model": "llama3.2"},
     "is not a valid Ollama URL (the port after ':' must be a number)"),
    ("openai", {"openai_base_url": "ftp://127.0.0.1/v1", "openai_model": "m"},
     "must start with http:// or https://, not ftp): use one like http://127.0.0.1:8000/v1, in the sidebar's "
     "Base URL field"),
    ("embedded", {"embedded_model": "/nonexistent/model.gguf"}, "not found"),
])
def test_switching_provider_and_testing_the_connection_reports_clearly(at, name, fields, message, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    at.selectbox(key="provider_name").set_value(name).run()
    for key, value in fields.items():
        at.text_input(key=key).set_value(value).run()
    at.button(key="sidebar_test_connection").click().run()
    assert not at.exception
    # (what a reader sees: escapes removed, and the code marks that keep an address from becoming a link)
    assert any(message.replace("`", "") in e.value.replace("\\", "").replace("`", "") for e in at.error), [
        e.value for e in at.error]
    assert not any("--provider" in e.value or "OLLAMA_HOST" in e.value or "OPENAI_BASE_URL" in e.value
                   for e in at.error), "dashboard errors use the dashboard's words"
    assert all("sk-test" not in str(at.session_state[k]) for k in at.session_state), "keys never enter state"


@pytest.mark.parametrize(("name", "fields", "spec"), [
    ("openai", {"openai_base_url": "{base_url}", "openai_model": MODEL}, f"openai:{MODEL}"),
    ("ollama", {"ollama_host": "{url}", "ollama_model": MODEL}, f"ollama:{MODEL}"),
])
def test_test_connection_succeeds_against_a_running_server(at, server, name, fields, spec):
    """The sidebar's server answers the debate's first call on its schema: the page says so, with what answered
    and the models the server offers; the server saw exactly that one call."""
    server.reset()
    at.selectbox(key="provider_name").set_value(name).run()
    for key, value in fields.items():
        at.text_input(key=key).set_value(value.format(base_url=server.base_url, url=server.url)).run()
    at.button(key="sidebar_test_connection").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [success] = [s.value.replace("\\", "") for s in at.success]
    assert success.startswith(f"{spec} answered a debate's first call (the orchestrator, on its schema) in ")
    assert success.endswith("tokens, schema-valid.")
    assert any(c.value.replace("\\", "") == f"Models offered: {MODEL}" for c in at.caption)
    assert server.served == [("orchestrator", "ok")], "one real call, the orchestrator's"
    [request] = server.received
    assert request["path"] == ("/api/chat" if name == "ollama" else "/v1/chat/completions")
    assert request["body"]["model"] == MODEL


def test_an_openai_key_in_streamlit_secrets_reaches_the_server_and_is_scrubbed(server, store, monkeypatch):
    """the OpenAI key is read from the environment or ``.streamlit/secrets.toml`` (here st.secrets) and
    never stored: it is sent to the server, kept out of session state, and redacted from anything written."""
    key = "sk-from-streamlit-secrets-7f3a91c2"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert scrub(f"key {key}") == f"key {key}", "not known as a secret before the page reads it"
    server.reset()
    at = open_page(secrets={"OPENAI_API_KEY": key})
    at.selectbox(key="provider_name").set_value("openai").run()
    at.text_input(key="openai_base_url").set_value(server.base_url).run()
    at.text_input(key="openai_model").set_value(MODEL).run()
    at.button(key="sidebar_test_connection").click().run()
    assert not at.exception and at.success, [e.value for e in at.error]
    [request] = server.received
    headers = {name.lower(): value for name, value in request["headers"].items()}
    assert headers["authorization"] == f"Bearer {key}", "the key from st.secrets is the one sent"
    assert all(key not in str(at.session_state[k]) for k in at.session_state), "keys never enter state"
    debate_id = store.create(NewDebate("static", f"Is {key} safe to share?", provider="openai", model=MODEL))
    assert store.get(debate_id).question == "Is [redacted] safe to share?", "scrubbed from what the store writes"


def test_a_web_page_where_ollama_should_be_is_said_to_be_one_and_never_shown(monkeypatch):
    """A web server's 404 page at the Ollama host (a real server on 127.0.0.1): the sidebar does not offer it as
    Ollama, and Test connection says what answered and what that means, not the page, and no `ollama pull`."""
    from helpers import WebPages

    with WebPages(404) as pages:
        monkeypatch.setenv("OLLAMA_HOST", pages.url)
        at = open_page()
        found = " ".join(c.value for c in at.sidebar.caption).replace("\\", "")
        assert "Something answers at" in found and "but not as Ollama: HTTP 404 with an HTML page" in found, found
        assert not at.sidebar.info and not [b for b in at.button if b.key == "sidebar_use_ollama"], "not offered"
        at.selectbox(key="provider_name").set_value("ollama").run()
        at.text_input(key="ollama_model").set_value("llama3.2").run()
        at.button(key="sidebar_test_connection").click().run()
    [error] = [e.value.replace("\\", "") for e in at.error]
    assert "HTTP 404 with an HTML page (server: nginx/1.25.3, text/html)" in error, error
    assert "what answers at this address is not Ollama" in error and "check the address" in error
    assert "ollama pull" not in error and "<" not in error and "center>" not in error


def test_a_running_ollama_is_offered_and_its_models_fill_the_model_field(monkeypatch):
    """The real Ollama wire server (tests/ollama_wire.py) serving three names; only listed, no model loaded."""
    from ollama_wire import SERVED_MODEL, OllamaWire

    from clearside_ui import settings

    served = sorted((SERVED_MODEL, "qwen2.5:7b", "llama3.2:3b"))
    server = OllamaWire(also_serves=("qwen2.5:7b", "llama3.2:3b")).start(load=False)
    try:
        port = server.url.rsplit(":", 1)[1]
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")  # no scheme, as the ollama client accepts it
        at = open_page()
        [offer] = [i.value.replace("\\", "") for i in at.sidebar.info]
        assert offer == f"Ollama is running at `{server.url}` (3 models).", "an address is shown as code, not a link"
        assert at.selectbox(key="provider_name").value == "embedded", "offered, not switched behind one's back"

        at.button(key="sidebar_use_ollama").click().run()
        assert not at.exception, at.exception
        assert at.selectbox(key="provider_name").value == "ollama"
        assert at.text_input(key="ollama_host").value == server.url
        assert not at.sidebar.info and any("Using Ollama" in c.value for c in at.sidebar.caption)
        model = at.selectbox(key="ollama_model")
        assert model.options == served and model.value == served[0]
        model.set_value("qwen2.5:7b").run()
        assert at.selectbox(key="ollama_model").value == "qwen2.5:7b"

        # build_provider reads exactly what the sidebar left in session state
        state = {key: at.session_state[key] for key in ("provider_name", "ollama_host", "ollama_model")}
        with monkeypatch.context() as patch:
            patch.setattr(settings.st, "session_state", state)
            provider = settings.build_provider()
        assert (provider.name, provider.model, provider.host) == ("ollama", "qwen2.5:7b", server.url)

        at.text_input(key="ollama_host").set_value("http://127.0.0.1:9").run()
        assert at.text_input(key="ollama_model"), "another host: the free-text field again"
    finally:
        server.stop()


def test_nothing_running_keeps_the_free_text_model_field_and_look_again_finds_a_server(monkeypatch):
    from helpers import free_port
    from ollama_wire import OllamaWire

    server = OllamaWire().start(load=False)
    try:
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
        at = open_page()
        assert not at.sidebar.info and any("No model server found" in c.value for c in at.sidebar.caption)
        at.selectbox(key="provider_name").set_value("ollama").run()
        assert at.text_input(key="ollama_model"), "nothing detected: type the model"
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        at.run()
        assert not at.sidebar.info, "the probe is cached for the session"
        at.button(key="sidebar_look_again").click().run()
        assert any("Ollama is running at" in i.value for i in at.sidebar.info)
    finally:
        server.stop()


def test_the_sidebar_concurrency_limits_what_the_dashboard_sends_a_server(at, monkeypatch):
    """A server's Generation settings offer Concurrency (default 4); the provider the pages build carries it,
    and requests through it never exceed it at the real latency server."""
    import threading

    from bench.latency_server import start
    from clearside.providers import ChatRequest
    from clearside_ui import settings

    with start(0, ttft=0.2, tps=2000) as server:
        at.selectbox(key="provider_name").set_value("openai").run()
        at.text_input(key="openai_base_url").set_value(server.base_url).run()
        at.text_input(key="openai_model").set_value("clearside-latency").run()
        assert at.number_input(key="sidebar_concurrency").value == 4
        at.number_input(key="sidebar_concurrency").set_value(2).run()
        assert not at.exception, at.exception
        state = {key: at.session_state[key] for key in ("provider_name", "openai_base_url", "openai_model",
                                                        "sidebar_concurrency")}
        with monkeypatch.context() as patch:
            patch.setattr(settings.st, "session_state", state)
            provider = settings.build_provider()
        assert provider.concurrency == 2
        call = ChatRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=8)
        threads = [threading.Thread(target=provider.complete, args=(call,)) for _ in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert server.stats()["requests"] == 5 and server.stats()["max_in_flight"] == 2
