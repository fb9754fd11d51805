"""A model server that misbehaves on cue, for tests and benches: bench/latency_server.py plus scripted faults.

The same real HTTP server on 127.0.0.1 (OpenAI-compatible ``/v1/chat/completions``, streaming SSE or not, and
Ollama's ``/api/chat``, streaming NDJSON or not; schema-valid replies for ClearSide's agents, at a fixed time to
first token and tokens a second), whose chat requests follow a script, one :class:`Step` per request, in order,
for one agent or for any (an unscripted request is answered normally):

* ``Step("ok")``: the normal answer;
* ``Step("status", status=429, retry_after=0.2)``: that HTTP status (429, 500, 503...), with Retry-After if given;
* ``Step("hang", seconds=5)``: nothing at all for that long (past the client's timeout), then the connection closes;
* ``Step("drop", after=4)``: a streamed answer whose connection is dropped after ``after`` tokens (no end of the
  chunked body: the client sees an incomplete read);
* ``Step("cut", after=4)``: a stream that ends cleanly after ``after`` tokens but without its final event
  (OpenAI's ``finish_reason`` and ``[DONE]``, Ollama's ``done`` line);
* ``Step("garbled")``: a stream (or body) that is not valid JSON on the wire;
* ``Step("truncated")``: a well-formed answer whose content is the agent's JSON cut in half;
* ``Step("invalid")``: a well-formed answer whose content is valid JSON that breaks the agent's schema;
* ``Step("slow", tps=1)``: the normal answer at ``tps`` tokens a second.

Every chat request is kept, as it came, in :attr:`received`: ``{"path", "headers", "body"}`` (what a client sent:
its temperature, its API key), for assertions.

A prefix cache, off by default: with ``server.prefix_cache = "usage"`` each chat reports, of its prompt's tokens
(words), those it shares from the start with an earlier prompt as cached, the way servers that cache prompt
prefixes do: OpenAI's ``usage.prompt_tokens_details.cached_tokens`` (vLLM, recent llama-server) and Ollama's
``prompt_eval_cached_count``; ``"timings"`` reports it on the OpenAI wire as llama-server's ``timings`` only
(``cache_n`` cached, ``prompt_n`` evaluated). :attr:`cached` lists each chat's (prompt tokens, cached tokens).

    with FaultServer() as server:                        # or start(ttft=0.0, tps=3000)
        server.plan(Step("status", status=503), agent="pro")
        OpenAIProvider("", base_url=server.base_url, timeout=0.5, backoff=0.01)
        ...; server.served -> [("orchestrator", "ok"), ("pro", "status"), ...]

Run:  python tests/fault_server.py --port 8090 --plan pro=status:503 --plan moderator=hang
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.latency_replies import agent_of, reply_for  # noqa: E402
from bench.latency_server import _TOKEN, MODEL, LatencyServer, _Handler, _schema  # noqa: E402

CACHE_REPORTS = ("usage", "timings")
KINDS = ("ok", "status", "hang", "drop", "cut", "garbled", "truncated", "invalid", "slow")
__all__ = ["CACHE_REPORTS", "KINDS", "MODEL", "FaultServer", "Step", "start"]


@dataclass(frozen=True)
class Step:
    """What one chat request gets (see the module's docstring)."""

    kind: str = "ok"
    status: int = 500
    retry_after: float | None = None
    seconds: float = 5.0  # a hang's length
    after: int = 4  # tokens sent before a drop or a cut
    tps: float = 1.0  # a slow answer's pace

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Unknown fault {self.kind!r}: use one of {', '.join(KINDS)}")


class _FaultHandler(_Handler):
    server: FaultServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        ollama = self.path == "/api/chat"
        if not ollama and self.path.rstrip("/") != "/v1/chat/completions":
            self._send_json(404, {"error": "not found"})
            return
        self.server.record(self.path, dict(self.headers), body)
        schema = body.get("format") if ollama else _schema(body.get("response_format"))
        schema = schema if isinstance(schema, dict) else None
        messages = body.get("messages") or []
        agent = agent_of(schema, messages)
        with self.server.counting() as failing, contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if failing:
                self._overloaded(ollama)
                return
            step = self.server.next_step(agent)
            self.tps = step.tps if step.kind == "slow" else self.server.tps
            if step.kind == "status":
                self._status(step, ollama)
                return
            if step.kind == "hang":
                self.server.sleep(step.seconds)
                self.close_connection = True
                return
            self.server.asked(agent)
            reply = reply_for(schema, messages)
            text = json.dumps(reply)
            if step.kind == "truncated":
                text = text[: len(text) // 2]
            elif step.kind == "invalid":
                text = json.dumps(_broken(reply))
            tokens = _TOKEN.findall(text)
            if step.kind in ("drop", "cut", "garbled"):
                self._faulty_stream(step, body, tokens, ollama)
            else:
                (self._ollama if ollama else self._openai)(body, tokens)

    def _report_cache(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        report = self.server.prefix_cache
        if not report:
            return reply
        prompt, cached = self.server.cache(body.get("messages") or [])
        if "done" in reply:  # Ollama's final line
            return {**reply, "prompt_eval_cached_count": cached}
        if report == "timings":  # llama-server's own figures beside the usage, no usage details
            return {**reply, "timings": {"cache_n": cached, "prompt_n": prompt - cached, "prompt_ms": 1.0,
                                         "predicted_n": reply["usage"]["completion_tokens"], "predicted_ms": 1.0}}
        return {**reply, "usage": {**reply["usage"], "prompt_tokens_details": {"cached_tokens": cached}}}

    def _paced(self, tokens: list[str]):
        time.sleep(self.server.ttft)
        for token in tokens:
            yield token
            time.sleep(1 / self.tps)

    def _status(self, step: Step, ollama: bool) -> None:
        headers = {} if step.retry_after is None else {"Retry-After": f"{step.retry_after:g}"}
        message = f"fault injected: HTTP {step.status}"
        self._send_json(step.status, {"error": message} if ollama else
                        {"error": {"message": message, "type": "fault_server"}}, headers)

    def _faulty_stream(self, step: Step, body: dict[str, Any], tokens: list[str], ollama: bool) -> None:
        stream = body.get("stream", ollama)  # Ollama streams unless told not to; OpenAI only when asked
        if step.kind == "garbled" and not stream:
            data = b'{"choices": [{"message": {"content": "{\\"norm'  # a body cut in the middle of a string
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self._start("application/x-ndjson" if ollama else "text/event-stream")
        if step.kind == "garbled":
            self._chunk(b'{"model": "x", "message": {"content": "{\\"nor\n' if ollama else
                        b'data: {"id": "chatcmpl-fault", "choices": [{"delta": {"content": "{\\"no\n\n')
            self._chunk(b"")
            return
        base = {"model": body.get("model") or MODEL, "created_at": "2026-01-01T00:00:00Z"}
        for token in self._paced(tokens[: step.after]):
            if ollama:
                line = json.dumps({**base, "message": {"role": "assistant", "content": token}, "done": False})
                self._chunk(line.encode() + b"\n")
            else:
                self._chunk(b"data: %s\n\n" % json.dumps({
                    "id": "chatcmpl-fault", "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": base["model"], "choices": [{"index": 0, "delta": {"content": token},
                                                         "finish_reason": None}]}).encode())
        if step.kind == "cut":
            self._chunk(b"")  # the body ends properly, but the final event never came
            return
        # drop: the connection goes without the chunked body's end
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _broken(reply: Any) -> Any:
    """Valid JSON that breaks the schema the reply was made for: its first required property is missing and an
    unknown one is added."""
    if isinstance(reply, dict) and reply:
        broken = dict(reply)
        broken.pop(next(iter(broken)))
        broken["unexpected"] = "not in the schema"
        return broken
    return {"unexpected": "not in the schema"}


class FaultServer(LatencyServer):
    """A latency server whose chat requests follow a script (:meth:`plan`); :attr:`served` lists what each
    request got, as (agent, kind)."""

    def __init__(self, port: int = 0, *, ttft: float = 0.0, tps: float = 3000.0, prefix_cache: str = "",
                 **options: Any) -> None:
        if prefix_cache and prefix_cache not in CACHE_REPORTS:
            raise ValueError(f"Unknown cache report {prefix_cache!r}: use one of {', '.join(CACHE_REPORTS)}")
        super().__init__(port, ttft=ttft, tps=tps, **options)
        self.RequestHandlerClass = _FaultHandler
        self._stopping = threading.Event()
        self.prefix_cache = prefix_cache  # "" (none reported), "usage" or "timings"

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self._plans: dict[str, deque[Step]] = {}
            self.served: list[tuple[str, str]] = []
            self._prompts: list[list[str]] = []  # every chat's prompt, as tokens: the prefix cache
            self.cached: list[tuple[int, int]] = []
            self.received: list[dict[str, Any]] = []  # every chat request as sent: path, headers, body

    def record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        with self._lock:
            self.received.append({"path": path, "headers": headers, "body": body})

    def cache(self, messages: list[dict[str, Any]]) -> tuple[int, int]:
        """A chat's prompt tokens and, of them, those shared from the start with an earlier chat's prompt (the
        longest such prefix); the prompt is then cached too."""
        tokens = [word for m in messages for word in str(m.get("content", "")).split()]
        with self._lock:
            cached = max((_common_prefix(tokens, seen) for seen in self._prompts), default=0)
            self._prompts.append(tokens)
            self.cached.append((len(tokens), cached))
        return len(tokens), cached

    def plan(self, *steps: Step | str, agent: str = "") -> FaultServer:
        """The next requests of ``agent`` ("" for any agent without a plan of its own) get these steps, in order."""
        with self._lock:
            self._plans.setdefault(agent, deque()).extend(Step(s) if isinstance(s, str) else s for s in steps)
        return self

    def next_step(self, agent: str) -> Step:
        with self._lock:
            queue = self._plans.get(agent) or self._plans.get("")
            step = queue.popleft() if queue else Step()
            self.served.append((agent, step.kind))
            return step

    def sleep(self, seconds: float) -> None:
        """A hang that ends early when the server stops."""
        self._stopping.wait(seconds)

    def stop(self) -> None:
        self._stopping.set()
        super().stop()


def _common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def start(port: int = 0, ttft: float = 0.0, tps: float = 3000.0, **options: Any) -> FaultServer:
    """A running fault server on 127.0.0.1:``port`` (0: a free port)."""
    return FaultServer(port, ttft=ttft, tps=tps, **options).start()


def _step(text: str) -> tuple[str, Step]:
    """``[agent=]kind[:status]``, e.g. ``pro=status:503``, ``hang``."""
    agent, _, what = text.rpartition("=")
    kind, _, status = what.partition(":")
    return agent, Step(kind, status=int(status)) if status else Step(kind)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--ttft", type=float, default=0.0)
    parser.add_argument("--tps", type=float, default=3000.0)
    parser.add_argument("--prefix-cache", choices=CACHE_REPORTS, default="",
                        help="report prompt tokens shared with an earlier prompt as cached, in usage or timings")
    parser.add_argument("--plan", action="append", default=[], metavar="[AGENT=]KIND[:STATUS]",
                        help=f"a fault for the next request (of AGENT); KIND one of {', '.join(KINDS)}")
    args = parser.parse_args(argv)
    try:
        server = FaultServer(args.port, ttft=args.ttft, tps=args.tps, prefix_cache=args.prefix_cache)
        for text in args.plan:
            agent, step = _step(text)
            server.plan(step, agent=agent)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    print(f"Serving {MODEL} at {server.base_url} (OpenAI-compatible) and {server.url} (Ollama) with faults "
          f"{args.plan or 'none'}. Ctrl-C stops.", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        print(json.dumps({**server.stats(), "served": server.served}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
