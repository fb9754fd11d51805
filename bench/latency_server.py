"""A model server with a fixed pace, for measuring ClearSide under load without a model's CPU cost.

A real HTTP server (stdlib ``ThreadingHTTPServer``) on 127.0.0.1 that speaks the OpenAI-compatible wire
format (``GET /v1/models``, ``POST /v1/chat/completions``, streaming SSE or not) and Ollama's
(``GET /api/tags``, ``POST /api/chat``, NDJSON). Every chat request waits ``ttft`` seconds before its first
token, then sends ``tps`` tokens a second, each request on its own (so N requests at once take as long as
one: the server scales). The reply is schema-valid JSON for the ClearSide agent that asked
(bench/latency_replies.py). It counts requests and the most in flight at once, and can answer HTTP 429
(or another status) to the first K chat requests, with or without ``Retry-After``.

    server = start(0, ttft=0.3, tps=60)          # port 0: a free port
    OpenAIProvider("", base_url=server.base_url)  # or OllamaProvider(MODEL, host=server.url)
    ...; server.stats() -> {"requests": ..., "max_in_flight": ...}; server.stop()

Run:  python bench/latency_server.py --port 8089 --ttft 0.3 --tps 60 [--fail-first 3 --fail-status 429]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.latency_replies import agent_of, reply_for  # noqa: E402

MODEL = "clearside-latency"
_TOKEN = re.compile(r"\s*\S+")  # a word with the spaces before it: one "token"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LatencyServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    finish_hook = None  # a chat request's end, called before its last bytes are written (LatencyServer.counting)

    def _finishing(self) -> None:
        hook, self.finish_hook = self.finish_hook, None
        if hook is not None:
            hook()

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._finishing()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        if not data:  # the last chunk: the answer is complete once it arrives
            self._finishing()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _overloaded(self, ollama: bool) -> None:
        headers = {} if self.server.retry_after is None else {"Retry-After": f"{self.server.retry_after:g}"}
        message = f"overloaded (benchmark server, HTTP {self.server.fail_status})"
        self._send_json(self.server.fail_status,
                        {"error": message} if ollama else {"error": {"message": message, "type": "busy"}}, headers)

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/api/tags") and self.server.listing():
            self._overloaded(self.path.startswith("/api/"))
        elif self.path.rstrip("/") == "/v1/models":
            self._send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                                              "owned_by": "clearside-bench"}]})
        elif self.path == "/api/tags":
            self._send_json(200, {"models": [{"name": MODEL, "model": MODEL, "size": 0, "digest": "0" * 64,
                                              "modified_at": "2026-01-01T00:00:00Z"}]})
        else:
            self._send_json(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        ollama = self.path == "/api/chat"
        if not ollama and self.path.rstrip("/") != "/v1/chat/completions":
            self._send_json(404, {"error": "not found"})
            return
        with self.server.counting(self) as failing, contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if failing:
                self._overloaded(ollama)
                return
            schema = body.get("format") if ollama else _schema(body.get("response_format"))
            schema = schema if isinstance(schema, dict) else None
            self.server.asked(agent_of(schema, body.get("messages") or []))
            text = json.dumps(reply_for(schema, body.get("messages") or []))
            (self._ollama if ollama else self._openai)(body, _TOKEN.findall(text))

    def _paced(self, tokens: list[str]):
        time.sleep(self.server.ttft)
        for token in tokens:
            yield token
            time.sleep(1 / self.server.tps)

    def _openai(self, body: dict[str, Any], tokens: list[str]) -> None:
        usage = {"prompt_tokens": _prompt_tokens(body), "completion_tokens": len(tokens)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        base = {"id": "chatcmpl-bench", "created": int(time.time()), "model": body.get("model") or MODEL}
        if not body.get("stream"):
            text = "".join(self._paced(tokens))
            self._send_json(200, self._report_cache(body, {
                **base, "object": "chat.completion", "usage": usage, "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}))
            return
        self._start("text/event-stream")
        for token in self._paced(tokens):
            self._chunk(b"data: %s\n\n" % json.dumps({**base, "object": "chat.completion.chunk", "choices": [
                {"index": 0, "delta": {"content": token}, "finish_reason": None}]}).encode())
        self._chunk(b"data: %s\n\n" % json.dumps(self._report_cache(body, {
            **base, "object": "chat.completion.chunk", "usage": usage,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})).encode())
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _ollama(self, body: dict[str, Any], tokens: list[str]) -> None:
        started = time.perf_counter_ns()
        base = {"model": body.get("model") or MODEL, "created_at": "2026-01-01T00:00:00Z"}
        stream = body.get("stream", True)
        if stream:
            self._start("application/x-ndjson")
        parts = []
        for token in self._paced(tokens):
            parts.append(token)
            if stream:
                self._chunk(json.dumps({**base, "message": {"role": "assistant", "content": token},
                                        "done": False}).encode() + b"\n")
        final = {**base, "message": {"role": "assistant", "content": "" if stream else "".join(parts)},
                 "done": True, "done_reason": "stop", "total_duration": time.perf_counter_ns() - started,
                 "prompt_eval_count": _prompt_tokens(body), "eval_count": len(tokens)}
        final = self._report_cache(body, final)
        if not stream:
            self._send_json(200, final)
            return
        self._chunk(json.dumps(final).encode() + b"\n")
        self._chunk(b"")

    def _report_cache(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        """The last reply of a chat (the final chunk or line, or the whole body) as sent; this server has no
        prefix cache to report (tests/fault_server.py's has)."""
        return reply

    def _start(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()


def _schema(response_format: Any) -> Any:
    """The schema in an OpenAI ``response_format`` (``json_schema`` or llama.cpp's ``json_object`` form)."""
    if not isinstance(response_format, dict):
        return None
    return (response_format.get("json_schema") or {}).get("schema") or response_format.get("schema")


def _prompt_tokens(body: dict[str, Any]) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])


class LatencyServer(ThreadingHTTPServer):
    """The server; :func:`start` runs one on a background thread."""

    daemon_threads = True

    def __init__(self, port: int = 0, *, ttft: float = 0.3, tps: float = 60.0, fail_first: int = 0,
                 fail_status: int = 429, retry_after: float | None = None, fail_lists: int = 0,
                 host: str = "127.0.0.1") -> None:
        if ttft < 0 or tps <= 0 or fail_first < 0 or fail_lists < 0:
            raise ValueError("ttft must be 0 or more seconds, tps more than 0, fail_first and fail_lists 0 or more")
        super().__init__((host, port), _Handler)
        self.ttft, self.tps = ttft, tps
        self.fail_first, self.fail_status, self.retry_after = fail_first, fail_status, retry_after
        self.fail_lists = fail_lists  # model-list requests (GET /v1/models, /api/tags) to turn away first
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.reset()

    def reset(self) -> None:
        """Start counting afresh (the first ``fail_first`` requests from now on fail again)."""
        with self._lock:
            self.requests = self.failed = self.in_flight = self.max_in_flight = self.list_requests = 0
            self.spans: list[tuple[float, float]] = []  # (start, end) of each chat request, time.monotonic()
            self.agents: dict[str, int] = {}  # answered chat requests by the ClearSide agent that asked

    def asked(self, agent: str) -> None:
        with self._lock:
            self.agents[agent] = self.agents.get(agent, 0) + 1

    def listing(self) -> bool:
        """One model-list request; whether it is to be answered with ``fail_status``."""
        with self._lock:
            self.list_requests += 1
            return self.list_requests <= self.fail_lists

    @contextlib.contextmanager
    def counting(self, handler: Any = None):
        """One chat request in flight; yields whether it is to be answered with ``fail_status``. With ``handler``,
        the request stops counting as its last bytes go out (``handler.finish_hook``), not once its handler returns:
        a client that has read the whole answer may send its next request before that, and was counted twice."""
        with self._lock:
            self.requests += 1
            failing = self.requests <= self.fail_first
            self.failed += failing
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        started, done = time.monotonic(), []

        def finish() -> None:
            with self._lock:
                if not done:
                    done.append(True)
                    self.in_flight -= 1
                    self.spans.append((started, time.monotonic()))

        if handler is not None:
            handler.finish_hook = finish
        try:
            yield failing
        finally:
            finish()
            if handler is not None:
                handler.finish_hook = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):  # a client hung up
            super().handle_error(request, client_address)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"requests": self.requests, "failed": self.failed, "list_requests": self.list_requests,
                    "in_flight": self.in_flight,
                    "max_in_flight": self.max_in_flight, "ttft": self.ttft, "tps": self.tps,
                    "agents": dict(self.agents)}

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """For the OpenAI-compatible provider (``OPENAI_BASE_URL``); Ollama's host is :attr:`url`."""
        return f"{self.url}/v1"

    def start(self) -> LatencyServer:
        self._thread = threading.Thread(target=self.serve_forever, name="latency-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread:
            self._thread.join(timeout=10)

    def __enter__(self) -> LatencyServer:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(port: int = 0, ttft: float = 0.3, tps: float = 60.0, **options: Any) -> LatencyServer:
    """A running server on 127.0.0.1:``port`` (0: a free port); options: fail_first, fail_status, retry_after,
    fail_lists (see :class:`LatencyServer`)."""
    return LatencyServer(port, ttft=ttft, tps=tps, **options).start()


def _stop(*_: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--ttft", type=float, default=0.3, help="seconds before each request's first token")
    parser.add_argument("--tps", type=float, default=60.0, help="tokens a second per request")
    parser.add_argument("--fail-first", type=int, default=0, help="answer the first K chat requests with an error")
    parser.add_argument("--fail-status", type=int, default=429, help="that error's HTTP status (default 429)")
    parser.add_argument("--retry-after", type=float, help="send this Retry-After (seconds) with those errors")
    args = parser.parse_args(argv)
    try:
        server = LatencyServer(args.port, ttft=args.ttft, tps=args.tps, fail_first=args.fail_first,
                               fail_status=args.fail_status, retry_after=args.retry_after)
    except (ValueError, OSError) as exc:  # a bad pace, or the port is taken
        parser.error(f"{exc}: pick other values, or another --port")
    print(f"Serving {MODEL} at {server.base_url} (OpenAI-compatible) and {server.url} (Ollama); "
          f"ttft {args.ttft} s, {args.tps} tokens/s. Ctrl-C stops.", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, _stop)  # a benchmark running it as a subprocess stops it with terminate()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        print(json.dumps(server.stats()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
