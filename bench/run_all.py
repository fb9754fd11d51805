"""The benchmark report: every benchmark below, one after the other, and bench/REPORT.md.

Each bench module has ``report(quick: bool = True) -> list[dict]``, rows of ``{"figure", "value", "unit", "goal",
"met", "note"}`` (``value`` a number or None, ``goal`` text or None, ``met`` True, False or None). Quick mode (the
default: a few minutes in all) runs each in its quickest setting that still measures the figure (its docstring says
which); ``--full`` runs their full settings. Benches run in this process, one at a time, never two at once; the
machine's load average (1, 5 and 15 minutes) is read before and after each and for the whole run. A bench that is
missing, has no ``report()``, lacks a prerequisite or fails is a row saying why, and the run goes on (Ctrl-C stops
it, and what was measured is still written).

Writes bench/REPORT.md (the figures with their goals and whether each is met, each bench's seconds and load, and
the machine: CPUs, model file, commit) and bench/results/report.json (the same rows).

Run from the repository root:  python -m bench [--full] [--only NAME ...] [--list]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "bench" / "REPORT.md"
RESULTS = ROOT / "bench" / "results" / "report.json"


@dataclass(frozen=True)
class Bench:
    module: str  # importable module name
    section: str  # the figures of one section are shown together (e.g. ratios of one question)
    quick: str  # what quick mode runs, and about how long it takes on the 2-core development machine

    @property
    def name(self) -> str:
        return self.module.rsplit(".", 1)[-1]

    @property
    def path(self) -> str:
        return self.module.replace(".", "/") + ".py"


BENCHES: list[Bench] = [
    Bench("bench.startup", "Start-up", "each command's start, median of 3 after a warm-up: ~1-3 min"),
    Bench("bench.debate_embedded", "Static debate", "1 debate, its raw llama.cpp replay and 1 challenge: ~1-2 min"),
    Bench("bench.batching", "Pro‖con", "the advocates' stage once a width after a warm-up, embedded model: ~2 min"),
    Bench("bench.concurrency", "Pro‖con", "1 debate a mode against llama-server --parallel 2: ~3 min (its first "
          "build, cached in bench/.cache/, 10-16 min more)"),
    Bench("bench.live_embedded", "Live debate", "2 live debates (prefill on, off), the whole protocol at 150 wpm: "
          "~5-6 min"),
    Bench("bench.perspectives_embedded", "Perspectives", "1 session of 2 rounds: ~1 min"),
    Bench("bench.ui_latency", "Dashboard", "2 page loads and clicks in Chromium: ~30 s"),
    Bench("bench.store", "Store", "10,000 debates on SQLite and on PostgreSQL, fewer saves: ~1-2 min"),
    Bench("bench.load", "Load", "8 concurrent debates on 2 workers with 2 Chromium sessions, 24 queued on 2: ~8 min"),
]

KEYS = ("figure", "value", "unit", "goal", "met", "note")


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def model_file() -> dict[str, Any]:
    """The embedded default GGUF, found without loading it."""
    try:
        from clearside.providers.embedded import default_model_path

        path = default_model_path()
        return {"name": path.name, "bytes": path.stat().st_size, "path": str(path)}
    except Exception as exc:  # the report says why rather than stopping
        return {"name": None, "error": f"{type(exc).__name__}: {exc}"}


SETTINGS = ("CLEARSIDE_THREADS", "CLEARSIDE_N_CTX", "CLEARSIDE_BATCH", "CLEARSIDE_SEMANTIC_CHECKS", "CLEARSIDE_WPM")


def machine() -> dict[str, Any]:
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"cpu_count": os.cpu_count(), "cpu_model": cpu_model(), "platform": platform.platform(),
            "python": platform.python_version(), "model_file": model_file(),
            "commit": git("rev-parse", "HEAD"), "commit_subject": git("log", "-1", "--format=%s")[:100],
            "uncommitted_changes": bool(status), "settings": {k: os.environ[k] for k in SETTINGS if k in os.environ}}


def row(figure: str, note: str, **fields: Any) -> dict[str, Any]:
    return {"figure": figure, "value": None, "unit": "", "goal": None, "met": None, "note": note, **fields}


def checked(rows: Any, bench: Bench) -> list[dict[str, Any]]:
    """The rows a report() returned, with every key (a row that is not a mapping is an error)."""
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"{bench.path}: report() returned {type(rows).__name__}, not a list of rows")
    out = []
    for r in rows:
        value = r.get("value")
        out.append({"figure": str(r.get("figure") or bench.name), "value": None if value is None else float(value),
                    "unit": str(r.get("unit") or ""), "goal": None if r.get("goal") is None else str(r["goal"]),
                    "met": None if r.get("met") is None else bool(r["met"]), "note": str(r.get("note") or "")})
    return out or [row(bench.name, "report() returned no rows")]


def missing_module(exc: ModuleNotFoundError, module: str) -> bool:
    """Whether the bench module itself is missing (not one of its imports)."""
    parts = module.split(".")
    return exc.name in {".".join(parts[: i + 1]) for i in range(len(parts))}


def run_bench(bench: Bench, quick: bool) -> tuple[str, list[dict[str, Any]], str]:
    """(outcome, rows, traceback or ""): outcome is ok, not available, prerequisite missing or failed."""
    try:
        module = importlib.import_module(bench.module)
    except ModuleNotFoundError as exc:
        if missing_module(exc, bench.module):
            return "not available", [row(bench.name, f"not available: {bench.path} is missing")], ""
        return ("prerequisite missing", [row(bench.name, f"prerequisite missing: {exc}")],
                traceback.format_exc())
    except Exception as exc:  # a bench that cannot even be imported is a row too
        return "failed", [row(bench.name, f"failed on import: {type(exc).__name__}: {exc}")], traceback.format_exc()
    report = getattr(module, "report", None)
    if not callable(report):
        return "not available", [row(bench.name, f"not available: {bench.path} has no report() yet")], ""
    try:
        return "ok", checked(report(quick=quick), bench), ""
    except (Exception, SystemExit) as exc:  # the run goes on
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return "failed", [row(bench.name, f"failed: {type(exc).__name__}{': ' + why if why else ''}")], \
            traceback.format_exc()


def run(benches: list[Bench] | None = None, quick: bool = True, report_path: Path | None = None,
        json_path: Path | None = None, command: str = "python -m bench") -> dict[str, Any]:
    """Run ``benches`` (default: BENCHES) one after the other; write REPORT.md and report.json; return the latter."""
    benches = BENCHES if benches is None else benches
    report_path, json_path = report_path or REPORT, json_path or RESULTS
    started_at, started = datetime.now(UTC), time.perf_counter()
    load_before = loadavg()
    info = machine()
    done: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    interrupted = False
    for n, bench in enumerate(benches, start=1):
        before = loadavg()
        print(f"\n=== [{n}/{len(benches)}] {bench.name} ({'quick' if quick else 'full'}), load average {before}",
              flush=True)
        t0 = time.perf_counter()
        try:
            outcome, bench_rows, trace = run_bench(bench, quick)
        except KeyboardInterrupt:
            outcome, bench_rows, trace, interrupted = "interrupted", [row(bench.name, "interrupted (Ctrl-C)")], "", True
        seconds = round(time.perf_counter() - t0, 1)
        after = loadavg()
        if trace:
            print(trace, file=sys.stderr, flush=True)
        print(f"=== {bench.name}: {outcome} in {seconds} s, load average {before} -> {after}", flush=True)
        done.append({"bench": bench.name, "module": bench.module, "section": bench.section, "outcome": outcome,
                     "seconds": seconds, "load_before": before, "load_after": after, "traceback": trace})
        rows += [{"bench": bench.name, "section": bench.section, **r} for r in bench_rows]
        if interrupted:
            break
    result = {"mode": "quick" if quick else "full", "command": command, "started": started_at.isoformat(),
              "seconds": round(time.perf_counter() - started, 1), "load_before": load_before,
              "load_after": loadavg(), "interrupted": interrupted, "machine": info, "benches": done, "rows": rows}
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    report_path.write_text(render(result) + kept(report_path), encoding="utf-8")
    print(f"\nwrote {report_path} and {json_path} ({result['seconds']} s in all)")
    return result


def kept(path: Path) -> str:
    """The sections other benches wrote below the report's keep mark (bench/reader_report.py), kept as they are."""
    from bench.reader_report import kept as below_mark

    return below_mark(path)


# -- REPORT.md -----------------------------------------------------------------------------------------------------


def cell(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"


def shown_value(r: dict[str, Any]) -> str:
    if r["value"] is None:
        return "—"
    unit = r["unit"]
    return f"{number(r['value'])}×" if unit == "x" else f"{number(r['value'])} {unit}".strip()


def shown_met(r: dict[str, Any]) -> str:
    if r["met"] is True:
        return "yes"
    if r["met"] is False:
        return "**no**"
    if r["value"] is None:
        return "not measured"
    return "no goal" if r["goal"] is None else "—"


def load(values: list[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


def render(result: dict[str, Any]) -> str:
    info, rows = result["machine"], result["rows"]
    model = info["model_file"]
    model_text = (f"{model['name']} ({model['bytes'] / 1e6:.1f} MB)" if model.get("name")
                  else f"not found ({model.get('error', '')})")
    commit = (info["commit"][:12] + (" with uncommitted changes" if info["uncommitted_changes"] else "")
              if info["commit"] else "unknown")
    goals = [r for r in rows if r["goal"] is not None]
    met = sum(r["met"] is True for r in goals)
    missed = sum(r["met"] is False for r in goals)
    unmeasured = sum(r["value"] is None for r in rows)
    mode = "Quick mode (`python -m bench`)" if result["mode"] == "quick" else "Full mode (`python -m bench --full`)"
    lines = [
        "# ClearSide benchmark report",
        "",
        f"{mode}, {result['started'][:19].replace('T', ' ')} UTC, {result['seconds']:.0f} s in all"
        + (" (**interrupted**)" if result["interrupted"] else "") + f": `{result['command']}`. Written by "
        "bench/run_all.py; the same rows "
        "are in bench/results/report.json and each bench's details in bench/results/. Figures depend on the "
        "machine's load, given for each bench below.",
        "",
        f"**{met} of {len(goals)} goals met, {missed} missed**"
        + (f"; {unmeasured} figure{'s' if unmeasured != 1 else ''} not measured (see the note)." if unmeasured
           else "."),
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPUs | {info['cpu_count']} × {cell(info['cpu_model'])} |",
        f"| Model file | {cell(model_text)} |",
        f"| Commit | {cell(commit)}{' — ' + cell(info['commit_subject']) if info['commit_subject'] else ''} |",
        f"| Python, platform | {info['python']}, {cell(info['platform'])} |",
        f"| Settings | {cell(', '.join(f'{k}={v}' for k, v in info['settings'].items()) or 'defaults')} |",
        f"| Load average (1 / 5 / 15 min) | {load(result['load_before'])} before the run, "
        f"{load(result['load_after'])} after |",
        "",
        "## Figures",
        "",
        "Ratios compare two things measured side by side in the same run (the note gives both).",
        "",
    ]
    for section in dict.fromkeys(r["section"] for r in rows):
        lines += [f"### {section}", "", "| Figure | Value | Goal | Met | Bench | Note |", "|---|--:|---|---|---|---|"]
        for r in rows:
            if r["section"] == section:
                lines.append(f"| {cell(r['figure'])} | {shown_value(r)} | {cell(r['goal'] or '')} | {shown_met(r)} "
                             f"| {r['bench']} | {cell(r['note'])} |")
        lines.append("")
    lines += ["## Benches", "", "Load average (1 / 5 / 15 min) before and after each, one after the other.", "",
              "| Bench | Outcome | Seconds | Load before | Load after |", "|---|---|--:|---|---|"]
    for b in result["benches"]:
        lines.append(f"| {b['bench']} | {b['outcome']} | {b['seconds']:.1f} | {load(b['load_before'])} "
                     f"| {load(b['load_after'])} |")
    return "\n".join(lines) + "\n"


# -- command line --------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every bench in its full settings (long: a quiet "
                        "machine, nothing else running)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these benches only (names: --list)")
    parser.add_argument("--list", action="store_true", help="the benches, in order, and what quick mode runs")
    args = parser.parse_args(argv)
    if args.list:
        for bench in BENCHES:
            print(f"{bench.name:<22} {bench.quick}")
        return 0
    chosen = BENCHES
    if args.only:
        names = {b.name for b in BENCHES}
        unknown = [n for n in args.only if n not in names]
        if unknown:
            parser.error(f"unknown bench {', '.join(unknown)}: choose from {', '.join(b.name for b in BENCHES)}")
        chosen = [b for b in BENCHES if b.name in args.only]
    command = "python -m bench" + (" --full" if args.full else "") + (f" --only {' '.join(args.only)}"
                                                                     if args.only else "")
    result = run(chosen, quick=not args.full, command=command)
    return 1 if result["interrupted"] else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
