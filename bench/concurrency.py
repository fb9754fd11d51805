"""Pro||con concurrency: wall time of concurrent vs sequential advocates against a concurrent endpoint.

The embedded provider serialises every call on one ``Llama``, so concurrency can
only pay off against an endpoint that serves requests in parallel. On a 2-core
machine this builds one from real parts: two ``python -m llama_cpp.server``
processes (``--n_threads 1`` each) on free loopback ports, and a round-robin
reverse proxy (stdlib ``ThreadingHTTPServer`` + ``http.client``, streaming each
response body through chunk by chunk) that sends each ``/v1/...`` request to the
next backend. ``OpenAIProvider`` points at the proxy. The same 4-call debate is
run K times with the engine as-is (pro and con concurrent) and K times with
pro then con in sequence, alternating; the goal is concurrent/sequential <= 0.7.

Run from the repository root:  python bench/concurrency.py [--runs 2]
Writes bench/results/concurrency.json. Results depend on machine load, which is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside import agents  # noqa: E402
from clearside.engine import DebateRun, Engine  # noqa: E402
from clearside.errors import ClearSideError  # noqa: E402
from clearside.providers.embedded import default_model_path  # noqa: E402
from clearside.providers.openai_compat import OpenAIProvider  # noqa: E402

QUESTION = "Build or buy our feature-flag service?"
RATIO_GOAL = 0.7
BACKENDS = 2
RESULTS = Path(__file__).resolve().parent / "results"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade",
              "proxy-connection", "proxy-authenticate", "proxy-authorization", "host"}


def machine() -> dict:
    return {"loadavg": [round(x, 2) for x in os.getloadavg()], "cpu_count": os.cpu_count()}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_backend(port: int, log: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "llama_cpp.server", "--host", "127.0.0.1", "--port", str(port),
               "--model", str(default_model_path()), "--n_threads", "1", "--n_ctx", "4096",
               "--interrupt_requests", "False"]  # else a second request cuts the first one's stream short
    with open(log, "wb") as stderr:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)


def wait_ready(port: int, proc: subprocess.Popen, log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"llama_cpp.server on port {port} did not start:\n{log.read_text(errors='replace')[-3000:]}")


class Proxy(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, backends: list[int]) -> None:
        super().__init__(("127.0.0.1", port), ProxyHandler)
        self._backends, self._lock, self.log = itertools.cycle(backends), threading.Lock(), []

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):  # a client hung up
            super().handle_error(request, client_address)

    def next_backend(self, path: str) -> int:
        with self._lock:
            port = next(self._backends)
            self.log.append((path, port))
            return port


class ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Proxy

    def log_message(self, format: str, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.next_backend(self.path), timeout=600)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            reply = upstream.getresponse()
            self.send_response(reply.status, reply.reason)
            for key, value in reply.getheaders():
                if key.lower() not in HOP_BY_HOP | {"date", "server"}:
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while chunk := reply.read1(65536):  # pass each piece on as soon as it arrives
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        finally:
            upstream.close()


@contextlib.contextmanager
def concurrent_endpoint(backends: int = 2) -> Iterator[tuple[OpenAIProvider, Proxy]]:
    """``backends`` llama.cpp servers (1 thread each) on the embedded GGUF behind the round-robin proxy, as a
    provider (and the proxy, whose ``log`` lists where each request went); everything is stopped on exit."""
    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    ports = [free_port() for _ in range(backends)]
    started, proxy = [], None
    try:
        for port in ports:
            started.append((start_backend(port, logs / f"clearside-bench-{port}.log"), port))
        for proc, port in started:
            wait_ready(port, proc, logs / f"clearside-bench-{port}.log")
        proxy = Proxy(free_port(), ports)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        base_url = f"http://127.0.0.1:{proxy.server_address[1]}/v1"
        # llama-cpp-python's server takes response_format json_object only: skip the provider's probe for it
        OpenAIProvider._json_object_urls.add(base_url)
        provider = OpenAIProvider("", base_url=base_url)
        provider.list_models()
        print(f"backends on ports {ports} (1 thread each), round-robin proxy at {base_url}", flush=True)
        yield provider, proxy
    finally:
        if proxy:
            proxy.shutdown()
            proxy.server_close()
        for proc, _ in started:
            proc.terminate()
        for proc, _ in started:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


class SequentialEngine(Engine):
    """The same engine with pro, then con, one after the other."""

    def _advocates(self, run: DebateRun) -> None:
        for spec in (agents.PRO, agents.CON):
            if getattr(run, spec.name) is None:
                self._advocate(run, spec)


def one_debate(engine: Engine) -> dict:
    run = DebateRun.from_input(QUESTION)
    started = time.perf_counter()
    engine.run(run)
    wall = time.perf_counter() - started
    serial = run.usage["orchestrator"].seconds + run.usage["moderator"].seconds
    return {"wall_seconds": round(wall, 2), "advocate_phase_seconds": round(wall - serial, 2),
            "calls": sum(u.calls for u in run.usage.values()),
            "completion_tokens": sum(u.completion_tokens for u in run.usage.values()),
            "agents": {n: {"seconds": round(u.seconds, 2), "tokens": u.completion_tokens, "attempts": u.calls}
                       for n, u in run.usage.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="debates per mode (K); default 2")
    args = parser.parse_args()
    before = machine()
    print(f"load before: {before['loadavg']} on {before['cpu_count']} CPUs")

    with concurrent_endpoint(BACKENDS) as (provider, proxy):
        modes = {"concurrent": Engine(provider, retries=2), "sequential": SequentialEngine(provider, retries=2)}
        results: dict[str, list[dict]] = {mode: [] for mode in modes}
        for i in range(args.runs):
            for mode, engine in modes.items():
                try:
                    result = one_debate(engine)
                except ClearSideError as exc:  # a schema failure after every re-ask: report, keep going
                    print(f"  run {i + 1} {mode:<11} FAILED: {exc}")
                    continue
                results[mode].append(result)
                print(f"  run {i + 1} {mode:<11} {result['wall_seconds']:6.1f} s  {result['calls']} calls  "
                      f"{result['completion_tokens']} tokens  "
                      + "  ".join(f"{n} {a['seconds']:.1f}s" for n, a in result["agents"].items()))

    if not all(results.values()):
        sys.exit("a mode has no successful debate: no ratio")

    def mean(key: str) -> dict[str, float]:
        return {mode: round(sum(r[key] for r in rs) / len(rs), 2) for mode, rs in results.items()}

    walls, phases, tokens = mean("wall_seconds"), mean("advocate_phase_seconds"), mean("completion_tokens")
    ratio = round(walls["concurrent"] / walls["sequential"], 3)
    phase_ratio = round(phases["concurrent"] / phases["sequential"], 3)
    after = machine()
    print(f"\n{'mode':<12}{'mean wall s':>12}{'pro+con phase s':>17}{'mean tokens':>13}")
    for mode in results:
        print(f"{mode:<12}{walls[mode]:>12.1f}{phases[mode]:>17.1f}{tokens[mode]:>13.0f}")
    print(f"concurrent/sequential = {ratio} (goal <= {RATIO_GOAL}: {'ok' if ratio <= RATIO_GOAL else 'MISSED'}); "
          f"pro+con phase alone {phase_ratio}")
    print(f"load after: {after['loadavg']} on {after['cpu_count']} CPUs")

    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "concurrency.json"
    out.write_text(json.dumps({"question": QUESTION, "backends": BACKENDS, "threads_per_backend": 1,
                               "machine_before": before, "machine_after": after, "runs": results,
                               "mean_wall_seconds": walls, "mean_advocate_phase_seconds": phases,
                               "mean_completion_tokens": tokens, "ratio": ratio, "advocate_phase_ratio": phase_ratio,
                               "goal": RATIO_GOAL, "proxy_log": proxy.log}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
