"""A 3-run flagship regression on the embedded model: wall time, and the speed-up from concurrent runs.

Three modes, each a real regression batch run as ``regress`` runs it (its workflow in
this process; debates saved and scored as they finish) into a throwaway store:

1. ``in-process``: the embedded provider (SmolLM2-135M in this process), runs one
   at a time; the in-process model serialises calls anyway.
2. ``endpoint-sequential``: the same GGUF behind an endpoint that serves requests
   concurrently, ``--concurrency 1``: bench/concurrency.py's, chosen by ``--endpoint``
   (llama.cpp's ``llama-server`` with ``--parallel 2`` and continuous batching, built
   once by bench/llama_server.py, when it builds; else, or with ``--endpoint proxy``,
   two ``python -m llama_cpp.server`` processes, one thread each, behind a
   round-robin proxy).
3. ``endpoint-concurrent``: the same endpoint, ``--concurrency 3``.

Speed-up = sequential wall / concurrent wall. On 2 cores the ceiling is about 2x
(pro and con already overlap within a debate). The embedding model is loaded
before timing (its load time is reported separately). Machine load is printed.

Run from the repository root:  python bench/regress_embedded.py [--runs 3] [--endpoint auto|llama-server|proxy]
Writes bench/results/regress_embedded.json (with the endpoint used).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.concurrency import ENDPOINTS, concurrent_endpoint, machine  # noqa: E402
from clearside import embed
from clearside.cli import here  # noqa: E402
from clearside.providers import get_provider  # noqa: E402
from clearside.quality import workflow as batches  # noqa: E402
from clearside.store import Store  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def batch(name: str, provider, runs: int, concurrency: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{folder}/bench.db")
        started = time.perf_counter()
        with here.hosting(store.url):  # this process runs the batch's workflow and its debates
            settings = batches.RegressSettings(runs=runs, window=concurrency)
            batch_id = batches.enqueue_regress("flagship", provider, settings, here=True, store_url=store.url)
            report = here.follow(batch_id, None, store_url=store.url).result["report"]
        wall = time.perf_counter() - started
        for r in report["debates"]:
            print(f"    {name}: run {r['index'] + 1} {r['status']} in {r['wall_seconds']} s", flush=True)
        store.close()
    means = {k: v.get("mean") for k, v in report["metrics"].items()}
    result = {"mode": name, "concurrency": concurrency, "runs": runs, "wall_seconds": round(wall, 1),
              "per_debate_seconds": [d["wall_seconds"] for d in report["debates"]],
              "valid": means.get("schema_valid"), "passed_gates": report["passed"], "failures": report["failures"],
              "mean_metrics": means, "loadavg": machine()["loadavg"]}
    print(f"  {name}: {result['wall_seconds']} s wall for {runs} runs (valid {result['valid']}); "
          f"load {result['loadavg']}", flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-in-process", action="store_true")
    parser.add_argument("--endpoint", choices=ENDPOINTS, default="auto",
                        help="the concurrent endpoint (see bench/concurrency.py); default: llama-server if it "
                             "builds, else the two-process proxy")
    args = parser.parse_args()
    out = {"machine_before": machine()}
    print(f"load before: {out['machine_before']}", flush=True)
    started = time.perf_counter()
    embed.encode(["warm up"])
    out["embedding_model_load_s"] = round(time.perf_counter() - started, 2)

    modes = []
    if not args.skip_in_process:
        modes.append(batch("in-process", get_provider("embedded"), args.runs, 1))

    with concurrent_endpoint(args.endpoint) as (provider, endpoint):
        out["endpoint"], out["endpoint_description"] = endpoint.name, endpoint.description
        modes.append(batch("endpoint-sequential", provider, args.runs, 1))
        modes.append(batch("endpoint-concurrent", provider, args.runs, args.runs))

    out["modes"] = modes
    walls = {m["mode"]: m["wall_seconds"] for m in modes}
    out["speedup_concurrent_vs_sequential"] = round(walls["endpoint-sequential"] / walls["endpoint-concurrent"], 2)
    out["machine_after"] = machine()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "regress_embedded.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in out.items() if k != "modes"}, indent=2))
    print({m["mode"]: m["wall_seconds"] for m in modes})
    return 0


if __name__ == "__main__":
    sys.exit(main())
