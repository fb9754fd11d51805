"""AppTest for the sidebar settings: provider switch, Test connection results, nothing secret in session state."""

from __future__ import annotations

from pathlib import Path

import pytest

from clearside.providers.scripted import ScriptedProvider

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture
def at():
    return AppTest.from_file(APP, default_timeout=30).run()


def test_the_default_is_the_embedded_model(at):
    assert at.selectbox(key="provider_name").value == "embedded"
    assert at.text_input(key="embedded_model").value == ""
    assert at.title[0].value == "ClearSide"


@pytest.mark.parametrize(("name", "fields", "message"), [
    ("openai", {"openai_base_url": "http://127.0.0.1:9/v1", "openai_model": "m"}, "not reachable"),
    ("ollama", {"ollama_host": "http://127.0.0.1:9", "ollama_model": "llama3.2"}, "ollama serve"),
    ("embedded", {"embedded_model": "/nonexistent/model.gguf"}, "not found"),
])
def test_switching_provider_and_testing_the_connection_reports_clearly(at, name, fields, message, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    at.selectbox(key="provider_name").set_value(name).run()
    for key, value in fields.items():
        at.text_input(key=key).set_value(value).run()
    at.button(key="test_connection").click().run()
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert all("sk-test" not in str(at.session_state[k]) for k in at.session_state), "keys never enter state"


def test_a_working_provider_reports_success(at):
    at.session_state["provider_override"] = ScriptedProvider()
    at.button(key="test_connection").click().run()
    assert any("always available" in s.value for s in at.success)
