"""Substance checks on the embedded default: garbage caught, repaired, re-asked and left, and wall time.

Configurations (``--configs``):
- ``before@REV``: ClearSide as it was at commit REV (default: the commit before the checks), run from a git
  worktree through its own CLI, one process per debate (its model load is excluded from the wall time, which is
  the sum of its agents' seconds, as the in-process ones are measured too: see "wall" below);
- ``off``: today's pipeline with the substance checks off (what the model writes, unrepaired);
- ``whole``: checks on, one call per agent; a reply that fails its checks has only its failing fields
  rewritten, in parts (mending, the default);
- ``whole-reask``: checks on, one call per agent, and a failing reply is asked for again whole (no mending);
- ``focused``: checks on, each agent in smaller calls (clearside/focused.py).

Every finished document is scored with the same checks (``clearside.checks.document_findings`` with
embeddings): that is the garbage a user would read. Propositions: the flagship, the four ArgKP dev topics and
our own (``--set dev``); ``--set heldout`` runs four more of our own that were kept aside while the checks were
written, ``--set heldout2`` four more that were kept aside while mending was written (``heldout`` had been
seen by then), ``--set heldout3`` four more kept aside while the small model's re-ask was changed, and
``--set heldout4`` four more kept aside while the advocates' context, the statement grammar and the unquoted re-ask
were changed.
Wall time is measured around ``Engine.run`` in-process (the GGUF and the embedding model loaded
beforehand, once), and around the whole CLI process for ``before@REV``, which therefore also counts that
process's start and GGUF load (about 1-2 s with a warm page cache).

Run from the repository root:
    python bench/quality.py [--set dev|heldout|heldout2|heldout3|heldout4] [--configs before@1d59a0e,whole,focused]
        [--limit N]
Writes bench/results/quality-<set>.json (rows of configurations not run this time are kept from the last run on
the same propositions) and prints a Markdown table. Never run it beside another model job.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clearside import checks  # noqa: E402
from clearside.checks import record as quality_record  # noqa: E402
from clearside.errors import DebateFailed  # noqa: E402
from clearside.providers import get_provider  # noqa: E402
from clearside.quality.references import argkp_dev, flagship  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402

OURS = [
    "Should a mid-sized city ban private cars from its historic center?",
    "Should our team move from weekly releases to continuous deployment?",
    "Should public universities drop standardized test requirements for admission?",
]
HELD_OUT = [  # kept aside until the end: never looked at while the checks or prompts were written
    "Should a small bakery accept only cashless payments?",
    "Should national parks charge higher entry fees to limit overcrowding?",
    "Should a hospital replace night-shift nurses' paper handovers with a digital system?",
    "Should households be paid to install heat pumps instead of gas boilers?",
]
HELD_OUT_2 = [  # kept aside while mending (clearside/focused.py mend_*) was written
    "Should a secondary school ban smartphones during the school day?",
    "Should a software company adopt a four-day work week?",
    "Should a regional airport be expanded to take long-haul flights?",
    "Should public libraries lend tools and equipment as well as books?",
]
HELD_OUT_3 = [  # kept aside while the small-model re-ask (enforce.with_fixes) was written
    "Should a city replace its bus fleet with electric buses within five years?",
    "Should employers be allowed to monitor remote workers' screens?",
    "Should a family farm convert to organic production?",
    "Should a museum return artifacts acquired during colonial rule?",
]
HELD_OUT_4 = [  # written and kept aside while the context labelling, the statement grammar and the unquoted re-ask
    # were made (2026-11-25); first run for the closing measurement
    "Should a regional bank close its branches in small towns?",
    "Should a high school start classes an hour later?",
    "Should a city build a new football stadium with public money?",
    "Should a software team require code review for every change?",
]
RESULTS = Path(__file__).resolve().parent / "results"


def propositions(which: str) -> list[str]:
    if which == "heldout":
        return list(HELD_OUT)
    if which == "heldout2":
        return list(HELD_OUT_2)
    if which == "heldout3":
        return list(HELD_OUT_3)
    if which == "heldout4":
        return list(HELD_OUT_4)
    return [flagship().proposition, *(ref.proposition for ref in argkp_dev()), *OURS]


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def score(document: dict, embeddings: checks.Embeddings) -> Counter:
    return Counter(f.check for _, f in checks.document_findings(document, embeddings))


def run_inprocess(question: str, config: str, provider, embeddings) -> dict:
    engine = Engine(provider, substance=config != "off", strategy="focused" if config == "focused" else "whole",
                    embeddings=embeddings, mend=config != "whole-reask")
    run = DebateRun.from_input(question)
    started = time.perf_counter()
    try:
        document = engine.run(run).dump()
    except DebateFailed as exc:
        return {"ok": False, "error": str(exc), "wall": round(time.perf_counter() - started, 2),
                "agents": agent_usage(run)}
    wall = time.perf_counter() - started
    record = quality_record.tally(document["quality"]) if document.get("quality") else None
    return {"ok": True, "wall": round(wall, 2), "document": document, "record": record, "agents": agent_usage(run)}


def agent_usage(run: DebateRun) -> dict[str, dict]:
    """Per agent: model seconds, model calls and tokens written (pro and con overlap in wall time)."""
    return {name: {"seconds": round(u.seconds, 2), "calls": len(u.attempts), "tokens": u.completion_tokens}
            for name, u in run.usage.items()}


def worktree(rev: str) -> Path:
    path = Path(tempfile.gettempdir()) / f"clearside-bench-{rev}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev], check=True,
                       capture_output=True)
    return path


def run_before(question: str, rev: str) -> dict:
    tree = worktree(rev)
    out = Path(tempfile.mkdtemp()) / "debate.json"
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "clearside", "debate", question, "--format", "json", "--out",
                           str(out)], cwd=tree, capture_output=True, text=True, timeout=600)
    total = time.perf_counter() - started
    if proc.returncode != 0 or not out.exists():
        return {"ok": False, "error": proc.stderr[-500:], "wall": round(total, 2)}
    document = json.loads(out.read_text(encoding="utf-8"))
    return {"ok": True, "wall": round(total, 2), "document": document, "record": None, "process_seconds": True}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", choices=("dev", "heldout", "heldout2", "heldout3", "heldout4"), default="dev")
    parser.add_argument("--configs", default="before@1d59a0e,whole,focused")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    questions = propositions(args.set)[: args.limit or None]
    configs = args.configs.split(",")
    embeddings = checks.Embeddings()
    embeddings.warm()
    provider = get_provider("embedded")
    provider.check()  # load the GGUF before timing
    started_load = load()
    rows: dict[str, list[dict]] = {config: [] for config in configs}
    for question in questions:
        for config in configs:
            if config.startswith("before@"):
                result = run_before(question, config.split("@", 1)[1])
            else:
                result = run_inprocess(question, config, provider, embeddings)
            if result["ok"]:
                result["left"] = dict(score(result.pop("document"), embeddings))
            result["question"] = question
            rows[config].append(result)
            print(f"{config:>16} {result['wall']:6.1f}s ok={result['ok']} left={result.get('left')} "
                  f"caught={(result.get('record') or {}).get('by_check')} agents={result.get('agents')}",
                  file=sys.stderr, flush=True)
    report = {"set": args.set, "questions": questions, "load_start": started_load, "load_end": load(),
              "cpu_count": os.cpu_count(), "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"quality-{args.set}.json"
    if path.exists() and json.loads(path.read_text(encoding="utf-8")).get("questions") == questions:
        earlier = json.loads(path.read_text(encoding="utf-8"))
        report["rows"] = {**{k: v for k, v in earlier["rows"].items() if k not in rows}, **rows}
        report["earlier_loads"] = {k: earlier.get("load_start") for k in earlier["rows"] if k not in rows}
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(table(report))


def table(report: dict) -> str:
    lines = [f"Set {report['set']}: {len(report['questions'])} propositions; load {report['load_start']} → "
             f"{report['load_end']} on {report['cpu_count']} cores", "",
             "| config | completed | wall p50 s | wall mean s | garbage left (items) | left by check | caught | "
             "repaired | re-asks |", "|---|---|---|---|---|---|---|---|---|"]
    for config, rows in report["rows"].items():
        done = [r for r in rows if r["ok"]]
        walls = sorted(r["wall"] for r in done) or [0.0]
        left: Counter = Counter()
        for r in done:
            left.update(r["left"])
        records = [r["record"] for r in done if r.get("record")]
        caught = sum(r["caught"] for r in records)
        repaired = sum(r["repaired"] for r in records)
        reasks = sum(r["reasks"] for r in records)
        lines.append(f"| {config} | {len(done)}/{len(rows)} | {walls[len(walls) // 2]:.1f} | "
                     f"{sum(walls) / len(walls):.1f} | {sum(left.values())} | "
                     f"{', '.join(f'{k} {v}' for k, v in left.most_common()) or '-'} | "
                     f"{caught if records else '-'} | {repaired if records else '-'} | {reasks if records else '-'} |")
    caught_by: Counter = Counter()
    for config, rows in report["rows"].items():
        for r in rows:
            for name, c in ((r.get("record") or {}).get("by_check") or {}).items():
                caught_by[(config, name)] += c["caught"]
    if caught_by:
        lines += ["", "| config | check | caught while generating |", "|---|---|---|"]
        lines += [f"| {config} | {name} | {n} |" for (config, name), n in sorted(caught_by.items())]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
