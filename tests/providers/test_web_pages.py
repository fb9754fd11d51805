"""A server that answers with a web page (a web server's 404, a proxy's 500) is said to be what it is: the status,
what answered (its server and content type) and what that means, never its HTML; and only Ollama's own answer is
taken for Ollama ("run ollama pull" only when Ollama said it has no such model). Real servers on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from helpers import WebPages

from clearside.errors import ProviderError
from clearside.providers.base import ChatRequest
from clearside.providers.detect import detect_servers
from clearside.providers.ollama import OllamaProvider
from clearside.providers.openai_compat import OpenAIProvider

CALL = ChatRequest(messages=[{"role": "user", "content": "Reply with OK."}], max_tokens=4)


def failure(provider) -> str:
    with pytest.raises(ProviderError) as caught:
        provider.complete(CALL)
    return str(caught.value)


def never_the_page(said: str) -> None:
    assert "<" not in said and "nginx/1.25.3</center>" not in said and "html>" not in said, said


@pytest.mark.parametrize(("status", "meaning"), [
    (404, "not Ollama's JSON, so what answers at this address is not Ollama"),
    (500, "an error page of that server or of a proxy in front of it, not Ollama's own error"),
])
def test_ollama_at_an_address_that_serves_a_web_page_says_what_answered(status, meaning):
    with WebPages(status) as pages:
        said = failure(OllamaProvider("llama3.2", host=pages.url, backoff=0.01))
    assert f"HTTP {status} with an HTML page (server: nginx/1.25.3, text/html): {meaning}" in said, said
    assert "ollama pull" not in said and "has no model" not in said, "not Ollama: no Ollama advice"
    never_the_page(said)


def test_ollamas_own_model_not_found_still_says_pull_it():
    body = json.dumps({"error": 'model "llama3.2" not found, try pulling it first'})
    with WebPages(404, content_type="application/json; charset=utf-8", body=body) as pages:
        said = failure(OllamaProvider("llama3.2", host=pages.url))
    assert "has no model 'llama3.2'" in said and "ollama pull llama3.2" in said, said


@pytest.mark.parametrize(("status", "meaning"), [
    (404, "not an OpenAI-compatible API's JSON, so what answers at this address is not an OpenAI-compatible API"),
    (500, "an error page of that server or of a proxy in front of it"),
])
def test_an_openai_base_url_that_serves_a_web_page_says_what_answered(status, meaning):
    with WebPages(status) as pages:
        said = failure(OpenAIProvider("m", base_url=f"{pages.url}/v1", api_key="k", backoff=0.01))
    assert f"HTTP {status} with an HTML page (server: nginx/1.25.3, text/html): {meaning}" in said, said
    assert "does not know the model" not in said
    never_the_page(said)


def test_detection_lists_a_web_page_as_something_else_not_as_ollama(monkeypatch):
    with WebPages(404) as pages:
        monkeypatch.setenv("OLLAMA_HOST", pages.url)
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        [found] = detect_servers(timeout=5)
    assert found.foreign and found.models == [] and found.error.startswith("HTTP 404 with an HTML page")
    never_the_page(found.error)
