"""A local server that speaks Ollama's HTTP wire format over the REAL embedded model.

This is a translation layer, not a fake: ``POST /api/chat`` turns Ollama's request
(``model``, ``messages``, ``stream``, ``format``, ``options``) into a
``create_chat_completion`` call on the shared in-process ``Llama``
(``clearside.providers.embedded.load_llama``) and streams the model's own tokens
back as Ollama's NDJSON chunks. ``GET /api/tags`` lists the served model, and any
further names given as ``also_serves`` (the same GGUF answers to each, like an
``ollama cp`` alias). A model name it does not serve gets HTTP 404 ``{"error": "model 'x' not found"}``
as Ollama answers. Every request body is kept in ``requests`` for assertions.

    with OllamaWire() as server:
        OllamaProvider("smollm2:135m", host=server.url)

``start(load=False)`` serves without loading the model first (a chat still loads it),
for tests that only list models.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from clearside.providers.embedded import default_model_path, load_llama

SERVED_MODEL = "smollm2:135m"


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


# Ollama's own sampling defaults, applied where a request's ``options`` leave them out.
OLLAMA_DEFAULTS = {"temperature": 0.8, "top_p": 0.9, "top_k": 40, "repeat_penalty": 1.1}


def _sampling(options: dict[str, Any]) -> dict[str, Any]:
    """Ollama ``options`` → llama-cpp-python keyword arguments; ``num_predict`` -1 or absent means no cap."""
    kwargs: dict[str, Any] = dict(OLLAMA_DEFAULTS)
    for name in ("temperature", "top_p", "top_k", "repeat_penalty", "seed", "stop"):
        if options.get(name) is not None:
            kwargs[name] = options[name]
    if options.get("num_predict") is not None and int(options["num_predict"]) >= 0:
        kwargs["max_tokens"] = int(options["num_predict"])
    return kwargs


def _response_format(fmt: Any) -> dict[str, Any] | None:
    if isinstance(fmt, dict):
        return {"type": "json_object", "schema": fmt}
    if fmt == "json":
        return {"type": "json_object"}
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    # -- plumbing ---------------------------------------------------------------------------------
    def _send_json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, line: dict[str, Any]) -> None:
        data = json.dumps(line).encode() + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    # -- routes -----------------------------------------------------------------------------------
    def do_GET(self) -> None:
        if self.path == "/api/tags":
            self._send_json(200, {"models": [self.server.model_entry(name) for name in self.server.model_names]})
        elif self.path == "/api/version":
            self._send_json(200, {"version": "0.0.0-clearside-wire"})
        else:
            self._send_json(404, {"error": "404 page not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, {"error": f"invalid JSON: {exc}"})
            return
        self.server.requests.append(body)
        if self.path != "/api/chat":
            self._send_json(404, {"error": "404 page not found"})
            return
        model = body.get("model", "")
        if model not in self.server.model_names:
            self._send_json(404, {"error": f"model '{model}' not found"})
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client went away mid-stream
            self._chat(body)

    def _chat(self, body: dict[str, Any]) -> None:
        stream = body.get("stream", True)  # Ollama streams unless told otherwise
        llm, lock = load_llama(self.server.model_path, self.server.n_ctx, self.server.n_threads)
        kwargs = _sampling(body.get("options") or {})
        created, started = _now(), time.perf_counter_ns()
        if stream:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
        parts: list[str] = []
        first_token_ns = 0
        with lock:
            chunks = llm.create_chat_completion(body.get("messages") or [], stream=True,
                                                response_format=_response_format(body.get("format")), **kwargs)
            finish = "stop"
            for chunk in chunks:
                choice = chunk["choices"][0]
                finish = choice.get("finish_reason") or finish
                delta = choice["delta"].get("content")
                if not delta:
                    continue
                first_token_ns = first_token_ns or time.perf_counter_ns()
                parts.append(delta)
                if stream:
                    self._chunk({"model": body["model"], "created_at": _now(),
                                 "message": {"role": "assistant", "content": delta}, "done": False})
            total_tokens = llm.n_tokens
        ended = time.perf_counter_ns()
        first_token_ns = first_token_ns or ended
        final = {
            "model": body["model"], "created_at": _now() if stream else created,
            "message": {"role": "assistant", "content": "" if stream else "".join(parts)},
            "done": True, "done_reason": "length" if finish == "length" else "stop",
            "total_duration": ended - started, "load_duration": 0,
            "prompt_eval_count": max(total_tokens - len(parts), 0),
            "prompt_eval_duration": first_token_ns - started,
            "eval_count": len(parts), "eval_duration": ended - first_token_ns,
        }
        if stream:
            self._chunk(final)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        else:
            self._send_json(200, final)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], *, model_names: tuple[str, ...], model_path: Path, n_ctx: int,
                 n_threads: int) -> None:
        super().__init__(address, _Handler)
        self.model_names, self.model_path, self.n_ctx, self.n_threads = model_names, model_path, n_ctx, n_threads
        self.requests: list[dict[str, Any]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):  # a client hung up
            super().handle_error(request, client_address)

    def model_entry(self, name: str) -> dict[str, Any]:
        stat = self.model_path.stat()
        digest = hashlib.sha256(f"{self.model_path}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
        return {
            "name": name, "model": name,
            "modified_at": datetime.fromtimestamp(stat.st_mtime, UTC).isoformat().replace("+00:00", "Z"),
            "size": stat.st_size, "digest": f"sha256:{digest}",
            "details": {"parent_model": "", "format": "gguf", "family": "llama", "families": ["llama"],
                        "parameter_size": "135M", "quantization_level": "Q4_1"},
        }


class OllamaWire:
    """Runs the wire server on a free loopback port in a background thread."""

    def __init__(self, model_name: str = SERVED_MODEL, *, also_serves: tuple[str, ...] = (),
                 model_path: Path | None = None, n_ctx: int = 4096, n_threads: int = 2) -> None:
        self._server = _Server(("127.0.0.1", 0), model_names=(model_name, *also_serves),
                               model_path=Path(model_path or default_model_path()), n_ctx=n_ctx, n_threads=n_threads)
        self._thread = threading.Thread(target=self._server.serve_forever, name="ollama-wire", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._server.requests

    def start(self, *, load: bool = True) -> OllamaWire:
        if load:  # load before serving, so the first chat does not pay for it
            load_llama(self._server.model_path, self._server.n_ctx, self._server.n_threads)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> OllamaWire:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
