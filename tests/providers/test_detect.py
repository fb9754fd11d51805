"""detect_servers: the real Ollama wire server (tests/ollama_wire.py, model not loaded: it only lists),
a closed port, and a small OpenAI-shaped ``/models`` endpoint that checks the bearer key."""

from __future__ import annotations

import importlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from helpers import free_port
from ollama_wire import SERVED_MODEL, OllamaWire

from clearside.providers.detect import Detected, detect_servers, ollama_url

ALSO = ("qwen2.5:7b", "llama3.2:3b")


@pytest.fixture(scope="module")
def wire():
    server = OllamaWire(also_serves=ALSO).start(load=False)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def no_servers_configured(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_a_running_ollama_is_listed_with_its_models(wire, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", wire.url)
    assert detect_servers() == [Detected("ollama", wire.url, sorted((SERVED_MODEL, *ALSO)))]


def test_ollama_host_without_a_scheme_is_read_as_the_ollama_client_reads_it(wire, monkeypatch):
    port = wire.url.rsplit(":", 1)[1]
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    [found] = detect_servers()
    assert found.base_url == wire.url and SERVED_MODEL in found.models


@pytest.mark.parametrize("host", [None, "", "1.2.3.4", ":56789", "1.2.3.4:56789", "http://example.com",
                                  "https://example.com:56789/path/", "example.com/path", "[::1]:56789"])
def test_ollama_url_matches_the_ollama_client(host):
    parse_host = importlib.import_module("ollama._client")._parse_host
    assert ollama_url(host) == parse_host(host)


def test_nothing_listening_means_nothing_listed(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    assert detect_servers(timeout=0.3) == []


def test_a_server_that_answers_with_an_error_is_listed_with_it(wire, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", wire.url + "/v1/")  # the wire server has no /v1/models: 404
    assert detect_servers() == [Detected("openai", wire.url + "/v1", [], "HTTP 404: 404 page not found")]


class _Models(BaseHTTPRequestHandler):
    """GET /v1/models as OpenAI-compatible servers answer it; 401 without the expected bearer key."""

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        if self.headers.get("Authorization") != "Bearer sk-local":
            status, body = 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
        elif self.path == "/v1/models":
            status, body = 200, {"object": "list", "data": [{"id": "qwen2.5-7b-instruct", "object": "model"},
                                                            {"id": "llama-3.1-8b", "object": "model"}]}
        else:
            status, body = 404, {"error": {"message": "not found"}}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def openai_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_an_openai_compatible_server_is_listed_with_its_models_using_the_key(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    assert detect_servers() == [Detected("openai", openai_server, ["llama-3.1-8b", "qwen2.5-7b-instruct"])]
    monkeypatch.delenv("OPENAI_API_KEY")
    assert detect_servers(api_key="sk-local")[0].models, "a key passed in (e.g. from secrets) is used"
    assert detect_servers() == [Detected("openai", openai_server, [], "HTTP 401: Incorrect API key provided")]
