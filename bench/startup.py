"""Start-up time of the command line: ``--help`` of every command, and a few cheap commands.

Each figure is the wall time of a fresh ``python -m clearside ...`` process, from spawn to exit, the median of
``--runs`` runs (default 5; ``--quick``: 3), after one unmeasured warm-up run (so the OS file cache and Python's
bytecode cache are warm, as they are for a person running the command twice). Measured:

1. ``python -m clearside --help``, and ``--help`` of every command the parser has (read from
   ``clearside.cli.build_parser`` in a child process, so a new command is measured without editing this file),
   nested ones included (``suite validate --help``); ``worker --help`` is one of them. Goal: each at most 1 s.
2. cheap commands on a throwaway store (a temporary ``CLEARSIDE_DATA``, ``DATABASE_URL`` unset, so the user's
   debates are never read): ``list``, ``schema``, ``suite validate flagship``, ``export <id>`` and ``status <id>`` of
   ``tests/fixtures/microservices.json`` imported once before timing. No goal: they do real work (open the store,
   validate a document), and are here to show what a command pays beyond the parser.
3. ``worker`` until it serves: from spawn to its "serving queued and interrupted jobs" line (the store opened and
   migrated, DBOS launched on it), then stopped with SIGTERM; no goal.
4. ``python -c pass``: the interpreter's own start-up on this machine, the floor under every figure.

Run from the repository root:  python bench/startup.py [--runs 5] [--quick] [--only list,export]
Prints a table with the machine's load before and after, and writes bench/results/startup.json.
``report(quick=True)`` returns the same figures as rows for the benchmark runner (``python -m bench``); it writes
nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL_S = 1.0
WORKER = ["-m", "clearside", "worker"]  # timed until it serves (_worker_ready), not until it exits
GOAL = "≤ 1 s"
RESULTS = Path(__file__).resolve().parent / "results"
FIXTURE = ROOT / "tests" / "fixtures" / "microservices.json"

# Every command of the parser, as argv lists, nested sub-commands expanded (``suite`` -> ``suite validate``).
_COMMANDS = """
import argparse, json
from clearside.cli import build_parser

def walk(parser, prefix):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [prefix]
    return [path for name, child in subs[0].choices.items() for path in walk(child, [*prefix, name])]

print(json.dumps(walk(build_parser(), [])))
"""



def cheap(debate_id: str) -> dict[str, list[str]]:
    """The cheap commands, ``debate_id`` the fixture's id in the throwaway store."""
    return {"list": ["list"], "schema": ["schema"], "suite validate flagship": ["suite", "validate", "flagship"],
            "export <id>": ["export", debate_id], "status <id>": ["status", debate_id]}


def _env(data_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(CLEARSIDE_DATA=data_dir, PYTHONPATH=str(ROOT))
    return env


def _run(argv: list[str], env: dict[str, str], check: bool = True) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return elapsed


def _worker_ready(env: dict[str, str]) -> float:
    """Seconds from spawning ``python -m clearside worker`` to its "serving" line; the worker is then stopped."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "clearside", "worker"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:
            if "serving queued" in line:
                return time.perf_counter() - start
        raise RuntimeError(f"the worker exited {proc.wait()} before serving")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def _samples(argv: list[str], env: dict[str, str], runs: int) -> list[float]:
    def once() -> float:
        return _worker_ready(env) if argv == WORKER else _run(argv, env)

    once()  # warm-up, not counted
    return [round(once(), 3) for _ in range(runs)]


def commands(env: dict[str, str]) -> list[list[str]]:
    """Every command path of the parser (``[["debate"], ..., ["suite", "validate"], ...]``)."""
    out = subprocess.run([sys.executable, "-c", _COMMANDS], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def measure(runs: int = 5, only: set[str] | None = None, progress: bool = False) -> dict:
    """The figures: ``{"machine": ..., "runs": n, "rows": [row, ...]}`` (rows as :func:`report` returns them)."""
    load_before = os.getloadavg()
    rows, samples = [], {}
    with tempfile.TemporaryDirectory(prefix="clearside-startup-") as data_dir:
        env = _env(data_dir)
        paths = commands(env)
        imported = subprocess.run([sys.executable, "-m", "clearside", "import", str(FIXTURE)], cwd=ROOT, env=env,
                                  capture_output=True, text=True, check=True)  # the store the cheap commands read
        debate_id = imported.stdout.split()[-1]

        cases: list[tuple[str, list[str], str | None, str]] = [
            ("python -c pass", ["-c", "pass"], None, "the interpreter alone: the floor under every figure")]
        cases.append(("--help", ["-m", "clearside", "--help"], GOAL, "the parser with every command"))
        cases += [(" ".join(p) + " --help", ["-m", "clearside", *p, "--help"], GOAL, "the parser, this command's help")
                  for p in paths]
        cases += [(name, ["-m", "clearside", *argv], None, "a cheap command on a store of one debate")
                  for name, argv in cheap(debate_id).items()]
        cases.append(("worker (until it serves)", WORKER, None,
                      "spawn to its 'serving' line: store migrated, DBOS launched; then SIGTERM"))
        for figure, argv, goal, note in cases:
            if only and not ({figure, figure.removesuffix(" --help"), figure.split()[0]} & only):
                continue
            name = f"python -m clearside {figure}" if argv[0] == "-m" else figure
            samples[name] = _samples(argv, env, runs)
            value = statistics.median(samples[name])
            rows.append({"figure": name, "value": round(value, 3), "unit": "s", "goal": goal,
                         "met": None if goal is None else value <= GOAL_S,
                         "note": f"{note}; median of {runs} after a warm-up"})
            if progress:
                print(f"  {name}: {value:.3f} s", file=sys.stderr, flush=True)
    return {"machine": {"cpu_count": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                        "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
            "python": sys.version.split()[0], "runs": runs, "goal_s": GOAL_S, "rows": rows, "samples_s": samples}


def report(quick: bool = True) -> list[dict]:
    """One row per command: ``{"figure", "value" (s), "unit", "goal", "met", "note"}``; ``quick``: 3 runs, else 5."""
    return measure(runs=3 if quick else 5)["rows"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (the median is kept)")
    parser.add_argument("--quick", action="store_true", help="3 runs per figure")
    parser.add_argument("--only", help="comma-separated commands (e.g. 'list,export,--help,worker')")
    args = parser.parse_args()
    only = {name.strip() for name in args.only.split(",")} if args.only else None
    result = measure(runs=3 if args.quick else args.runs, only=only, progress=True)
    machine = result["machine"]
    print(f"\nload average before {machine['loadavg_before']}, after {machine['loadavg_after']} "
          f"({machine['cpu_count']} cores); median of {result['runs']} runs\n")
    print("| command | s | goal | met |\n|---|---|---|---|")
    for row in result["rows"]:
        met = "" if row["met"] is None else ("yes" if row["met"] else "NO")
        print(f"| `{row['figure']}` | {row['value']:.3f} | {row['goal'] or ''} | {met} |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "startup.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS / 'startup.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
