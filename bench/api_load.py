"""Load on the HTTP API: 100 debates at once through ``python -m clearside serve``, run by 2 workers on PostgreSQL.

A throwaway PostgreSQL server (tests/pg_kit.py), bench/latency_server.py in its own process (the OpenAI-compatible
wire at a fixed pace: the model costs no CPU, so what is measured is ClearSide's API, queueing, checks, checkpoints
and store writes), ``--workers`` ``python -m clearside worker`` processes (default 2) at ``ceil(N / workers)`` jobs
each, and ``--api`` ``serve --workers-here 0`` processes (default 1: they only queue and follow). Then N clients
(threads, one token each, as N users; default 100), released together: each POSTs a debate and follows its
server-sent events to the end (``?deltas=false``, the milestones). Every ``--leave-every``-th client (default 5)
closes its stream mid-debate, after its first progress event, and polls ``GET /v1/debates/{id}`` instead: its
debate must finish all the same.

Figures: errors (a refused POST, a stream or a poll that failed, a debate that did not end done), **lost** (a
debate the API accepted that has no document in the store at the end), **run twice** (model calls beyond one a stage:
the latency server counts them by agent), the time to the 202, to the first progress event and to the end event
(p50, p95, max), the API's and the workers' peak memory and CPU, and the machine's load before and after.

Run from the repository root on a quiet machine:  python bench/api_load.py [--debates 100] [--workers 2]
Writes bench/results/api_load.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pg_kit  # noqa: E402
from helpers import free_port  # noqa: E402

from bench.load import latency_server, loadavg, more_connections, proc_status, spread, stop  # noqa: E402
from bench.run_all import git  # noqa: E402
from bench.scale import workers as start_workers  # noqa: E402
from clearside.quality.references import flagship  # noqa: E402
from clearside.store import Store  # noqa: E402
from clearside.store.tokens import create_token  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "api_load.json"
AGENTS = ("orchestrator", "pro", "con", "moderator")


def serve(url: str, base_url: str, endpoint: int, logs: Path) -> tuple[subprocess.Popen, int]:
    """``serve --workers-here 0`` on a free port, once it answers."""
    port = free_port()
    log = logs / f"serve-{port}.log"
    env = {**os.environ, "DATABASE_URL": url, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "not-needed",
           "PYTHONUNBUFFERED": "1"}
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "clearside", "serve", "--port", str(port), "--workers-here",
                                 "0", "--provider", "openai", "--concurrency", str(endpoint)], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if call(port, "GET", "/v1/health", None, "")[0] == 200:
                return proc, port
        except OSError:
            time.sleep(0.2)
    stop([proc])
    raise SystemExit(f"serve did not start:\n{log.read_text()}")


def call(port: int, method: str, path: str, body: Any, token: str, timeout: float = 120) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = conn.getresponse()
        text = response.read().decode()
        return response.status, json.loads(text) if text else None
    finally:
        conn.close()


def client(port: int, token: str, leave: bool, gate: threading.Barrier, timeout: float) -> dict[str, Any]:
    """One user: POST a debate, follow its events to the end (or leave mid-debate and poll); what happened, timed."""
    out: dict[str, Any] = {"left": leave, "error": ""}
    gate.wait()
    t0 = time.monotonic()
    try:
        status, made = call(port, "POST", "/v1/debates", {"question": flagship().proposition}, token)
        out["accepted_s"] = time.monotonic() - t0
        if status != 202:
            out["error"] = f"POST {status}: {made}"
            return out
        out["id"] = made["id"]
        end = follow(port, made["links"]["events"], token, leave, t0, out, timeout)
        if leave:
            end = poll(port, made["links"]["self"], token, timeout)
        out["ended_s"] = time.monotonic() - t0
        out["status"] = (end or {}).get("status")
        if out["status"] != "done":
            out["error"] = f"ended {out['status']}: {(end or {}).get('error')}"
    except Exception as exc:  # noqa: BLE001 - every failure is a figure
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def follow(port: int, path: str, token: str, leave: bool, t0: float, out: dict[str, Any],
           timeout: float) -> dict[str, Any] | None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", f"{path}?deltas=false", headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        if response.status != 200:
            raise RuntimeError(f"events {response.status}")
        kind = ""
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "progress" and "first_s" not in out:
                out["first_s"] = time.monotonic() - t0
                if leave:
                    return None  # gone mid-debate: the connection closes here
            elif line.startswith("data: ") and kind == "end":
                return json.loads(line[6:])
        raise RuntimeError("the stream ended without its end event")
    finally:
        conn.close()


def poll(port: int, path: str, token: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, state = call(port, "GET", path, None, token)
        if status == 200 and state["status"] in ("done", "failed", "cancelled"):
            return state
        time.sleep(1.0)
    return {"status": "timeout"}


def measure(args: argparse.Namespace, url: str, base_url: str, logs: Path) -> dict[str, Any]:
    store = Store(url)
    per_worker = math.ceil(args.debates / args.workers)
    workers = start_workers(args.workers, url, per_worker, logs)
    apis = [serve(url, base_url, args.endpoint_concurrency, logs) for _ in range(args.api)]
    tokens = [create_token(store, f"load {n}")[1] for n in range(args.debates)]
    gate = threading.Barrier(args.debates)
    results: list[dict[str, Any]] = [{} for _ in range(args.debates)]

    def run(n: int) -> None:
        results[n] = client(apis[n % len(apis)][1], tokens[n], args.leave_every > 0 and n % args.leave_every == 0,
                            gate, args.timeout)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(args.debates)]
    t0 = time.monotonic()
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.monotonic() - t0
        hosts = {f"worker {i}": proc_status(p.pid) for i, p in enumerate(workers)}
        hosts.update({f"api {i}": proc_status(p.pid) for i, (p, _) in enumerate(apis)})
    finally:
        stop([p for p, _ in apis] + workers)
    accepted = [r["id"] for r in results if r.get("id")]
    lost = [i for i in accepted if store.get(i).document is None]
    store.close()
    return {"debates": args.debates, "workers": args.workers, "worker_concurrency": per_worker, "api": args.api,
            "left_mid_debate": sum(r["left"] for r in results), "accepted": len(accepted),
            "errors": sum(bool(r["error"]) for r in results), "error_samples": [r["error"] for r in results
                                                                                 if r["error"]][:5],
            "lost": len(lost), "wall_s": round(wall, 2),
            "accepted_s": spread([r["accepted_s"] for r in results if "accepted_s" in r]),
            "first_event_s": spread([r["first_s"] for r in results if "first_s" in r]),
            "finished_s": spread([r["ended_s"] for r in results if r.get("status") == "done"]), "hosts": hosts}


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.semantic_checks is not None:
        os.environ["CLEARSIDE_SEMANTIC_CHECKS"] = str(args.semantic_checks)
    os.environ.setdefault("OPENAI_API_KEY", "not-needed")
    logs = Path(tempfile.mkdtemp(prefix="clearside-api-load-"))
    result: dict[str, Any] = {"settings": dict(vars(args)), "cpu_count": os.cpu_count(), "commit": git("rev-parse",
                                                                                                     "HEAD"),
                              "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_before": loadavg(),
                              "logs": str(logs)}
    print(f"load before: {result['load_before']} on {os.cpu_count()} CPUs; logs in {logs}", flush=True)
    with pg_kit.server() as admin:
        more_connections(admin, args.pg_max_connections)
        url = pg_kit.new_database(admin)
        with latency_server(args.ttft, args.tps, logs) as (base_url, stats):
            result.update(measure(args, url, base_url, logs))
        calls = stats.get("agents", {})
        result["model_calls_by_agent"] = calls
        result["model_calls_beyond_one_per_stage"] = sum(max(0, calls.get(a, 0) - result["accepted"])
                                                         for a in AGENTS)
    result["load_after"] = loadavg()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    print(f"wrote {out}")
    return result


def table(r: dict[str, Any]) -> str:
    def row(name: str, s: dict[str, Any]) -> str:
        return f"| {name} | {s['p50']} s | {s['p95']} s | {s['max']} s |"

    hosts = ", ".join(f"{name} {h.get('vmhwm', '?')} MB / {h.get('cpu_s', '?')} s" for name, h in r["hosts"].items())
    return "\n".join([
        f"\nload {r['load_before']} -> {r['load_after']} on {r['cpu_count']} CPUs, commit {r['commit'][:10]}, "
        f"{r['when']}\n",
        "| figure | value |", "|---|---|",
        f"| debates through the API at once | {r['debates']} ({r['left_mid_debate']} clients left mid-debate) |",
        f"| workers × jobs each; API processes | {r['workers']} × {r['worker_concurrency']}; {r['api']} |",
        f"| accepted (202) | {r['accepted']} |", f"| errors | {r['errors']} |", f"| lost | {r['lost']} |",
        f"| model calls beyond one a stage | {r['model_calls_beyond_one_per_stage']} |",
        f"| wall time, first POST to last end | {r['wall_s']} s |", "",
        "| time from the POST | p50 | p95 | max |", "|---|---|---|---|",
        row("202 Accepted", r["accepted_s"]), row("first progress event", r["first_event_s"]),
        row("end event (or, gone, the poll that saw it done)", r["finished_s"]), "",
        f"Peak memory / CPU: {hosts}."])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debates", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--api", type=int, default=1, help="serve processes (clients spread over them)")
    parser.add_argument("--leave-every", type=int, default=5, help="every N-th client leaves mid-debate (0: none)")
    parser.add_argument("--endpoint-concurrency", type=int, default=64, help="requests in flight at the model "
                                                                             "server per host")
    parser.add_argument("--semantic-checks", type=int, choices=(0, 1), default=None)
    parser.add_argument("--ttft", type=float, default=0.3)
    parser.add_argument("--tps", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--pg-max-connections", type=int, default=500)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    result = run(args)
    return 0 if not result["errors"] and not result["lost"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
