"""Pro||con concurrency: wall time of concurrent vs sequential advocates against a concurrent endpoint.

The embedded provider serialises every call on one ``Llama``, so concurrency can
only pay off against an endpoint that serves requests in parallel. Two endpoints
run the embedded GGUF (``--endpoint``):

* ``llama-server`` (the default when it builds): llama.cpp's own server, built once
  from the llama.cpp vendored in the installed llama-cpp-python's sdist
  (bench/llama_server.py; about 10 minutes on 2 cores, cached under
  bench/.cache/), with ``--parallel 2`` slots of 4096 tokens and ``--threads 2``:
  it batches the requests in flight itself (continuous batching);
* ``proxy`` (the fallback, or when llama-server cannot be built): two
  ``python -m llama_cpp.server`` processes (``--n_threads 1`` each) on free
  loopback ports behind a round-robin reverse proxy (stdlib
  ``ThreadingHTTPServer`` + ``http.client``, streaming each response body through
  chunk by chunk) that sends each ``/v1/...`` request to the next backend.

``OpenAIProvider`` points at the endpoint, declared small (``--small``: it is the
embedded model). The same 4-call debate is run K times with the engine as-is (pro
and con concurrent) and K times with pro then con in sequence, alternating, with
the substance checks off (what is timed is the calls); the goal is
concurrent/sequential wall <= 0.6.
:func:`report` runs it for ``python -m bench`` (quick: K=1; full: K=2).

Run from the repository root:  python bench/concurrency.py [--runs 2] [--endpoint auto|llama-server|proxy]
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
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import llama_server  # noqa: E402
from clearside import agents  # noqa: E402
from clearside.errors import ClearSideError  # noqa: E402
from clearside.providers.embedded import default_model_path  # noqa: E402
from clearside.providers.openai_compat import OpenAIProvider  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402

QUESTION = "Build or buy our feature-flag service?"
RATIO_GOAL = 0.6
BACKENDS = 2  # the proxy's llama_cpp.server processes
ENDPOINTS = ("auto", "llama-server", "proxy")
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


@dataclass
class Endpoint:
    """Which concurrent endpoint a bench ran against: ``name`` "llama-server" or "proxy", a description, and for
    the proxy the route each request took, as (path, backend port)."""

    name: str
    description: str
    routes: list[tuple[str, int]] = field(default_factory=list)


@contextlib.contextmanager
def proxy_endpoint(backends: int = BACKENDS) -> Iterator[tuple[OpenAIProvider, Endpoint]]:
    """``backends`` llama.cpp servers (1 thread each) on the embedded GGUF behind the round-robin proxy, as a
    provider (and the endpoint, whose ``routes`` is the proxy's log of where each request went); everything is
    stopped on exit."""
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
        description = (f"{backends} python -m llama_cpp.server processes (1 thread each, ports {ports}) behind a "
                       f"round-robin proxy at {base_url}")
        print(description, flush=True)
        yield provider, Endpoint("proxy", description, proxy.log)
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


@contextlib.contextmanager
def llama_server_endpoint(binary: Path | None = None) -> Iterator[tuple[OpenAIProvider, Endpoint]]:
    """llama.cpp's llama-server (``--parallel 2``, continuous batching) on the embedded GGUF, built first if need
    be (bench/llama_server.py), as a provider; stopped on exit."""
    with llama_server.llama_server(binary=binary) as server:
        provider = OpenAIProvider("", base_url=server.base_url)
        provider.list_models()
        print(server.describe(), flush=True)
        yield provider, Endpoint("llama-server", server.describe())


def choose_endpoint(endpoint: str = "auto") -> tuple[str, Path | None, str]:
    """The endpoint to run (``auto``: llama-server if it is built or builds, else the proxy), the llama-server
    binary for it, and why the proxy was chosen ("" otherwise). Building takes about 10 minutes the first time."""
    if endpoint not in ENDPOINTS:
        raise ValueError(f"Unknown endpoint {endpoint!r}: use one of {', '.join(ENDPOINTS)}")
    if endpoint == "proxy":
        return "proxy", None, "asked for"
    try:
        return "llama-server", llama_server.ensure_binary(), ""
    except RuntimeError as exc:
        if endpoint == "llama-server":
            raise
        reason = f"llama-server could not be built ({str(exc).splitlines()[0]})"
        print(f"{reason}: falling back to the two-process proxy", file=sys.stderr, flush=True)
        return "proxy", None, reason


@contextlib.contextmanager
def concurrent_endpoint(endpoint: str = "auto") -> Iterator[tuple[OpenAIProvider, Endpoint]]:
    """A provider for an endpoint that serves requests concurrently, and which endpoint it is (see the module's
    docstring; ``endpoint`` "auto", "llama-server" or "proxy")."""
    name, binary, reason = choose_endpoint(endpoint)
    with (llama_server_endpoint(binary) if name == "llama-server" else proxy_endpoint()) as (provider, chosen):
        if reason and reason != "asked for":
            chosen.description += f" ({reason})"
        yield provider, chosen


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
            # of the prompts' tokens, those the server reported taking from its prefix cache (llama-server does)
            "prompt_tokens": sum(u.prompt_tokens for u in run.usage.values()),
            "cached_prompt_tokens": sum(u.cached_prompt_tokens for u in run.usage.values()),
            "agents": {n: {"seconds": round(u.seconds, 2), "tokens": u.completion_tokens, "attempts": u.calls}
                       for n, u in run.usage.items()}}


def measure(runs: int = 2, endpoint: str = "auto") -> dict[str, Any]:
    """K=``runs`` debates per mode, alternating, against the endpoint; everything concurrency.json records."""
    before = machine()
    print(f"load before: {before['loadavg']} on {before['cpu_count']} CPUs", flush=True)
    with concurrent_endpoint(endpoint) as (provider, chosen):
        provider.small = True  # it is the embedded model: the prompts and strategy ClearSide gives small models
        # what is timed is the calls, not their substance: the checks are off (SmolLM2-135M behind a server fails
        # them often enough to lose a run, and a re-ask in one mode only would skew the ratio)
        modes = {"concurrent": Engine(provider, retries=2, substance=False),
                 "sequential": SequentialEngine(provider, retries=2, substance=False)}
        results: dict[str, list[dict]] = {mode: [] for mode in modes}
        for i in range(runs):
            for mode, engine in modes.items():
                try:
                    result = one_debate(engine)
                except ClearSideError as exc:  # a schema failure after every re-ask: report, keep going
                    print(f"  run {i + 1} {mode:<11} FAILED: {exc}")
                    continue
                results[mode].append(result)
                print(f"  run {i + 1} {mode:<11} {result['wall_seconds']:6.1f} s  {result['calls']} calls  "
                      f"{result['completion_tokens']} tokens  "
                      + "  ".join(f"{n} {a['seconds']:.1f}s" for n, a in result["agents"].items()), flush=True)
    out: dict[str, Any] = {"question": QUESTION, "endpoint": chosen.name, "endpoint_description": chosen.description,
                           "machine_before": before, "runs": results, "goal": RATIO_GOAL}
    if chosen.name == "proxy":
        out.update(backends=BACKENDS, threads_per_backend=1, proxy_log=chosen.routes)
    else:
        out.update(parallel=llama_server.PARALLEL, threads=llama_server.THREADS,
                   slot_context=llama_server.SLOT_CONTEXT)
    out["machine_after"] = machine()
    if not all(results.values()):
        out["ratio"] = None
        return out

    def mean(key: str) -> dict[str, float]:
        return {mode: round(sum(r[key] for r in rs) / len(rs), 2) for mode, rs in results.items()}

    walls, phases, tokens = mean("wall_seconds"), mean("advocate_phase_seconds"), mean("completion_tokens")
    out.update(mean_wall_seconds=walls, mean_advocate_phase_seconds=phases, mean_completion_tokens=tokens,
               ratio=round(walls["concurrent"] / walls["sequential"], 3),
               advocate_phase_ratio=round(phases["concurrent"] / phases["sequential"], 3))
    return out


def report(quick: bool = True) -> list[dict]:
    """The figures for ``python -m bench``: the concurrent/sequential wall ratio against the endpoint (goal
    <= 0.6) and both walls, the endpoint in each note. Quick: 1 debate a mode; full: 2."""
    out = measure(runs=1 if quick else 2)
    load = f"load {out['machine_before']['loadavg']} -> {out['machine_after']['loadavg']}"
    runs = {mode: len(rs) for mode, rs in out["runs"].items()}
    note = f"against {out['endpoint_description']}; {runs['concurrent']} debate(s) a mode; {load}"
    ratio = out["ratio"]
    walls = out.get("mean_wall_seconds", {})
    rows = [{"figure": "pro‖con concurrent/sequential wall", "value": ratio, "unit": "ratio",
             "goal": f"≤ {RATIO_GOAL:g}", "met": None if ratio is None else ratio <= RATIO_GOAL,
             "note": note if ratio is not None else f"a mode had no successful debate: no ratio; {note}"}]
    for mode in ("concurrent", "sequential"):
        tokens = out.get("mean_completion_tokens", {}).get(mode)
        rows.append({"figure": f"debate wall, pro‖con {mode}", "value": walls.get(mode), "unit": "s", "goal": None,
                     "met": None, "note": f"mean of {runs[mode]} debate(s) against {out['endpoint']}"
                                          + (f", {tokens:.0f} tokens generated" if tokens is not None else "")})
    if ratio is not None:
        rows.append({"figure": "pro‖con advocate phase concurrent/sequential", "value": out["advocate_phase_ratio"],
                     "unit": "ratio", "goal": None, "met": None,
                     "note": f"the debate's wall less the orchestrator's and moderator's time; {out['endpoint']}"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="debates per mode (K); default 2")
    parser.add_argument("--endpoint", choices=ENDPOINTS, default="auto",
                        help="llama-server (built first if need be), proxy (two llama_cpp.server processes), or "
                             "auto: llama-server if it builds, else the proxy (default)")
    args = parser.parse_args()
    out = measure(args.runs, args.endpoint)
    if out["ratio"] is None:
        sys.exit("a mode has no successful debate: no ratio")
    walls, phases, tokens = out["mean_wall_seconds"], out["mean_advocate_phase_seconds"], out["mean_completion_tokens"]
    print(f"\nendpoint: {out['endpoint_description']}")
    print(f"{'mode':<12}{'mean wall s':>12}{'pro+con phase s':>17}{'mean tokens':>13}")
    for mode in walls:
        print(f"{mode:<12}{walls[mode]:>12.1f}{phases[mode]:>17.1f}{tokens[mode]:>13.0f}")
    ratio = out["ratio"]
    print(f"concurrent/sequential = {ratio} (goal <= {RATIO_GOAL}: {'ok' if ratio <= RATIO_GOAL else 'MISSED'}); "
          f"pro+con phase alone {out['advocate_phase_ratio']}")
    print(f"load after: {out['machine_after']['loadavg']} on {out['machine_after']['cpu_count']} CPUs")

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "concurrency.json"
    path.write_text(json.dumps(out, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
