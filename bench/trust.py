"""The trust report: what ClearSide promises under faults, load, hostile input, and for accessibility, each
figure measured now, in one file.

It runs, one after the other (never two at once):
1. ``bench/faults.py``: a static debate against tests/fault_server.py for every provider fault, once and on every
   call, over the OpenAI-compatible and Ollama wire formats: the outcome, what was kept, whether "retrying (2/N)…"
   was shown and whether the failure names the provider, model and endpoint;
2. ``bench/load.py`` (``report(quick)``): concurrent and queued debates through the runtime, with errors, p50/p95,
   memory per worker and whether anything was lost or run twice (``--skip-load`` leaves it out);
3. the trust tests, through pytest with a JUnit report: hostile input at the command line and in the browser,
   database faults, rate limits, and accessibility (axe-core on every page). Each test is one promise with its
   inputs; the report lists each with its outcome and time, and the axe results per page that
   tests/ui/test_browser_a11y.py writes when ``CLEARSIDE_A11Y_TABLE`` names a file.

Writes bench/TRUST.md and bench/results/trust.json, with the machine's load before and after each part.

Run from the repository root, on a quiet machine:  python bench/trust.py [--skip-load] [--full]
[--load-from FILE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.run_all import git  # noqa: E402

RESULTS = ROOT / "bench" / "results"

TEST_GROUPS = {  # section -> test modules (a missing module becomes a row saying so)
    "Hostile input, command line and imports": ["tests/cli/test_hostile_cli.py"],
    "Hostile input, every page in Chromium": ["tests/ui/test_hostile_browser.py"],
    "Database faults": ["tests/store/test_db_faults.py"],
    "Rate limits and exposure": ["tests/ui/test_rate_limits.py"],
    "Accessibility (axe-core, keyboard)": ["tests/ui/test_browser_a11y.py"],
}


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def provider_faults() -> list[dict[str, Any]]:
    """bench/faults.py's rows: every fault once and persistently, on both wire formats."""
    sys.path.insert(0, str(ROOT / "tests"))
    from bench import faults

    rows = []
    with faults.start() as server:
        for wire in ("openai", "ollama"):
            for fault in faults.FAULTS:
                for persistent in (False, True):
                    rows.append(faults.one(server, wire, fault, persistent))
    return rows


def load_rows(quick: bool) -> list[dict[str, Any]]:
    from bench import load

    return load.report(quick=quick)


def earlier_load(paths: list[str]) -> dict[str, Any]:
    """The load part from the result files of earlier ``bench/load.py`` runs (a full-scale run takes longer than
    the rest of this report together): their rows, and when, where and at what load each was measured."""
    from bench import load

    rows, runs = [], []
    for path in paths:
        result = json.loads(Path(path).read_text(encoding="utf-8"))
        rows += load.rows(result)
        # a file from before load.py recorded its start: the time it was written, at the run's end (a copy keeps
        # it only if copied with its time: cp -p)
        when = (f"run {result['when']}" if result.get("when") else
                f"finished {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(os.path.getmtime(path)))}")
        stages = ", ".join(f"{stage['debates']} {stage['stage']}" for stage in result["stages"])
        runs.append(f"{stages}: {when}, commit "
                    f"`{result.get('commit', '')[:10] or 'not recorded'}`, {result['cpu_count']} CPUs, load "
                    f"{result['load_before']} -> {result['load_after']}")
    return {"rows": rows, "runs": runs}


def run_tests(modules: list[str], axe_out: Path) -> dict[str, Any]:
    """Run ``modules`` under pytest; each test's outcome, seconds and failure message from the JUnit report."""
    present = [m for m in modules if (ROOT / m).exists()]
    missing = [m for m in modules if m not in present]
    if not present:
        return {"tests": [], "missing": missing, "exit": None}
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                               *present], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "CLEARSIDE_A11Y_TABLE": str(axe_out)})
        tests = []
        if junit.exists():
            for case in ET.parse(junit).getroot().iter("testcase"):
                failure = next((c for c in case if c.tag in ("failure", "error")), None)
                skipped = next((c for c in case if c.tag == "skipped"), None)
                outcome = "failed" if failure is not None else "skipped" if skipped is not None else "passed"
                message = (failure.get("message") if failure is not None
                           else skipped.get("message") if skipped is not None else "") or ""
                tests.append({"module": case.get("classname", ""), "name": case.get("name", ""),
                              "outcome": outcome, "seconds": round(float(case.get("time", 0)), 2),
                              "message": message[:300]})
    return {"tests": tests, "missing": missing, "exit": done.returncode,
            "tail": done.stdout.strip().splitlines()[-1:] if done.stdout else []}


def markdown(out: dict[str, Any]) -> str:
    lines = ["# Trust report", "",
             f"Written by `python bench/trust.py` on {out['machine']['cpu_count']} CPUs, commit "
             f"`{out['machine']['commit'][:10]}`, {out['machine']['when']}. Load average before and after each part "
             "is given with it. Every figure below was measured in this run, except where a part says otherwise.", ""]
    faults = out.get("faults")
    if faults is not None:
        rows = faults["rows"]
        named = sum(r["message_names_call"] for r in rows if r["outcome"] != "done")
        failed = sum(r["outcome"] != "done" for r in rows)
        lines += ["## Provider faults (bench/faults.py)", "",
                  f"{len(rows)} faults injected; {sum(r['outcome'] == 'done' for r in rows)} debates finished "
                  f"anyway; of the {failed} that failed (with a typed error), {named} named the provider, the model "
                  f"and the endpoint. Load {faults['load_before']} -> {faults['load_after']}.", "",
                  "| wire | fault | when | outcome | kept | retrying shown | names provider, model, endpoint |",
                  "|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['wire']} | {r['fault']} | {'every call' if r['persistent'] else 'once'} | "
                         f"{r['outcome']} | {', '.join(r['finished_kept']) or '-'} | {r['retrying_shown']} | "
                         f"{r['message_names_call'] if r['outcome'] != 'done' else '(no failure)'} |")
        lines.append("")
    load = out.get("load")
    if load is not None:
        lines += ["## Load (bench/load.py)", ""]
        if load.get("runs"):
            lines += ["Not measured in this run: the figures of earlier `bench/load.py` runs, given with "
                      "`--load-from`:", "", *(f"- {run}" for run in load["runs"]), ""]
        else:
            lines += [f"Load {load['load_before']} -> {load['load_after']}.", ""]
        if load.get("error"):
            lines += [f"Not measured: {load['error']}", ""]
        else:
            lines += ["| figure | value | goal | met | note |", "|---|---|---|---|---|"]
            for r in load["rows"]:
                value = "—" if r.get("value") is None else f"{r['value']} {r.get('unit', '')}".strip()
                met = {True: "yes", False: "**no**", None: ""}[r.get("met")]
                lines.append(f"| {r['figure']} | {value} | {r.get('goal') or ''} | {met} | {r.get('note', '')} |")
            lines.append("")
    for section, result in out.get("tests", {}).items():
        tests = result["tests"]
        passed = sum(t["outcome"] == "passed" for t in tests)
        lines += [f"## {section}", "", f"{passed} of {len(tests)} passed"
                  + (f"; missing: {', '.join(result['missing'])}" if result["missing"] else "")
                  + f". Load {result['load_before']} -> {result['load_after']}.", "",
                  "| test (the promise and its inputs) | outcome | s |", "|---|---|---|"]
        for t in tests:
            note = f" — {t['message']}" if t["message"] and t["outcome"] != "passed" else ""
            lines.append(f"| `{t['name']}` | {t['outcome']}{note} | {t['seconds']} |")
        lines.append("")
    if out.get("axe"):  # tests/ui/test_browser_a11y.py's own table, as it wrote it
        lines += ["## axe-core results per page", "", out["axe"].strip(), ""]
    return "\n".join(lines)


def kept_sections(old: str, written: str) -> str:
    """The sections of the report before this run that it did not write: figures other benches recorded by hand
    (bench/study_load.py, bench/argmap.py) stay below the ones measured now."""
    headings = {line for line in written.splitlines() if line.startswith("## ")}
    sections = re.split(r"(?m)^(?=## )", old)[1:]
    kept = [section for section in sections if section.splitlines()[0] not in headings]
    return "".join(["\n" if kept and not written.endswith("\n\n") else "", *kept])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-load", action="store_true", help="leave out bench/load.py")
    parser.add_argument("--skip-faults", action="store_true", help="leave out bench/faults.py")
    parser.add_argument("--full", action="store_true", help="bench/load.py at full scale (quick otherwise)")
    parser.add_argument("--load-from", nargs="+", metavar="FILE", help="the result files of earlier bench/load.py "
                        "runs (their --out) to report instead of running it")
    args = parser.parse_args(argv)
    commit = git("rev-parse", "HEAD")
    out: dict[str, Any] = {"machine": {"cpu_count": os.cpu_count(), "commit": commit,
                                       "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                       "load_before": loadavg()}}
    if not args.skip_faults:
        before = loadavg()
        rows = provider_faults()
        out["faults"] = {"rows": rows, "load_before": before, "load_after": loadavg()}
        print(f"provider faults: {len(rows)} injected", flush=True)
    if args.load_from:
        out["load"] = earlier_load(args.load_from)
    elif not args.skip_load:
        before = loadavg()
        try:
            out["load"] = {"rows": load_rows(quick=not args.full)}
        except Exception as exc:  # the report says why rather than stopping
            out["load"] = {"error": f"{type(exc).__name__}: {exc}"}
        out["load"].update(load_before=before, load_after=loadavg())
        print("load: done", flush=True)
    out["tests"] = {}
    with tempfile.TemporaryDirectory() as tmp:
        axe_out = Path(tmp) / "axe.md"
        for section, modules in TEST_GROUPS.items():
            before = loadavg()
            result = run_tests(modules, axe_out)
            result.update(load_before=before, load_after=loadavg())
            out["tests"][section] = result
            print(f"{section}: {sum(t['outcome'] == 'passed' for t in result['tests'])}/{len(result['tests'])} "
                  "passed", flush=True)
        out["axe"] = axe_out.read_text(encoding="utf-8") if axe_out.exists() else ""
    out["machine"]["load_after"] = loadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "trust.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    report = ROOT / "bench" / "TRUST.md"
    written = markdown(out)
    old = report.read_text(encoding="utf-8") if report.exists() else ""
    report.write_text(written + kept_sections(old, written), encoding="utf-8")
    print(f"wrote {ROOT / 'bench' / 'TRUST.md'} and {RESULTS / 'trust.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
