"""Faults injected and survived: a static debate against tests/fault_server.py for each fault, once (the fault
hits the pro advocate's first call) and persistently (every call of the moderator), over both wire formats.

For each: the outcome (done, or failed with the typed error), whether a finished section was lost, whether the
user saw "retrying (n/N)…", whether the failure message names the provider, the model and the endpoint, the
provider requests and the seconds. Writes bench/results/faults.json and prints the table (for bench/trust.py or the
benchmark report).

Run:  python bench/faults.py [--out bench/results/faults.json]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fault_server import MODEL, FaultServer, Step, start  # noqa: E402

from clearside.cli.common import progress  # noqa: E402
from clearside.errors import DebateFailed  # noqa: E402
from clearside.providers.ollama import OllamaProvider  # noqa: E402
from clearside.providers.openai_compat import OpenAIProvider  # noqa: E402
from clearside.quality.references import flagship  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402

TIMEOUT, ATTEMPTS = 0.5, 3
FAULTS = {
    "429 Retry-After": Step("status", status=429, retry_after=0.2),
    "500": Step("status", status=500),
    "503": Step("status", status=503),
    "400": Step("status", status=400),
    "hang": Step("hang", seconds=2),
    "drop mid-stream": Step("drop"),
    "stream cut": Step("cut"),
    "garbled wire JSON": Step("garbled"),
    "truncated JSON": Step("truncated"),
    "schema-breaking JSON": Step("invalid"),
    "slow (20 tokens/s)": Step("slow", tps=20),
}


def one(server: FaultServer, wire: str, fault: str, persistent: bool) -> dict[str, Any]:
    server.reset()
    step = FAULTS[fault]
    if persistent:
        server.plan(*[step] * 6, agent="moderator")
    else:
        server.plan(step, agent="pro")
    options = {"timeout": TIMEOUT, "backoff": 0.01, "attempts": ATTEMPTS}
    provider = (OpenAIProvider(MODEL, base_url=server.base_url, **options) if wire == "openai"
                else OllamaProvider(MODEL, host=server.url, **options))
    out = io.StringIO()
    run = DebateRun.from_input(flagship().proposition)
    started = time.monotonic()
    try:
        Engine(provider, retries=1, on_event=progress(out), substance=False).run(run)
        outcome, message = "done", ""
    except DebateFailed as exc:
        outcome, message = f"failed ({type(exc.cause).__name__})", str(exc)
    lines = out.getvalue()
    where = server.base_url if wire == "openai" else server.url
    return {"wire": wire, "fault": fault, "persistent": persistent, "outcome": outcome,
            "seconds": round(time.monotonic() - started, 2), "requests": len(server.served),
            "retrying_shown": "retrying (2/" in lines,
            "finished_kept": sorted(name for name in ("proposition", "pro", "con", "moderator")
                                    if getattr(run, name) is not None),
            "message_names_call": bool(message) and wire in message and MODEL in message and where in message,
            "message": message[:300]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "faults.json"))
    args = parser.parse_args(argv)
    rows = []
    with start() as server:
        for wire in ("openai", "ollama"):
            for fault in FAULTS:
                for persistent in (False, True):
                    rows.append(one(server, wire, fault, persistent))
                    r = rows[-1]
                    print(f"{wire:7} {fault:22} {'every call' if persistent else 'once':10} {r['outcome']:36} "
                          f"kept {','.join(r['finished_kept']) or '-':32} retrying shown {r['retrying_shown']!s:5} "
                          f"names call {r['message_names_call']!s:5} {r['seconds']:5.1f} s", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    print(f"Wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
