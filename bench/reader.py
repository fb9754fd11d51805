"""What reaches the reader, and how fast, on questions of our own: the command line as a user runs it.

Static part: each question of :data:`QUESTIONS` (nine of our own, three each of policy, engineering and personal
decisions; none is the flagship, none was used to write a check) is debated by ``python -m clearside debate Q``
in its own process (through bench/reader_probe.py, which notes each model call and load), one after the other.
Per debate:

- *wall*: spawn to exit of that process (imports, model load, the embedding model, the debate, the store);
- *items shown* and *items with each problem kind*: ClearSide's checks over the finished document
  (``clearside.checks.document_findings`` with embeddings), by check; and measured apart from those checks
  (bench/reader_text.py): *cut mid-phrase* (a sentence without terminal punctuation, any string ending on a
  dangling word), *code soup* (letter-digit codes, runs of dates and numbers), and *off-topic* (an item whose
  similarity to the question, by the same MiniLM, is under the least similarity any item of the flagship reference
  or the schema's example document (tests/fixtures/microservices.json) has to its own question: neither would
  lose an item);
- *re-asks per agent* (the document's quality record) and the *tokens and seconds of re-asks*: every call of an
  agent after its first (whole re-asks and the calls that mend a failing part), from the probe;
- *raw*: tokens shown × llama.cpp's seconds per decoded token, calibrated in this run (bench/reader_raw.py: the
  method), and the ratio wall / raw (goal ≤ 1.4);
- where the time went (bench/reader_runs.py ``breakdown``).

Persona part: ``--runs`` debates (10 for the figure) with the economist, the ethicist and the environmentalist,
the questions of :data:`PERSONA_QUESTIONS` in turn; each is *whole* (every persona and the synthesis, no partial
mark), *partial* (a document written that lacks a persona, a side or the synthesis: :func:`clearside.missing_parts`) or
*failed* (no document, or past ``--timeout``), with its wall time (goal: ≥ 9 of 10 finish, each under 3 min).

The debates use a data folder of the bench's own (bench/.cache/reader-data/LABEL, made before timing). ``--rev
REV`` runs the ClearSide of commit REV (exported with ``git archive`` to bench/.cache/tree-REV) instead of this
tree's, with this bench. Never run it beside another model job: the figures are the machine's, and its load
average is kept with each.

Run from the repository root:
    python -m bench.reader --label before [--rev REV] [--part static|personas|all] [--runs 10] [--limit N]
Writes bench/results/reader-LABEL.json (after each debate, so a stopped run keeps what it measured) and the
LABEL block of bench/REPORT.md's reader section.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import clearside  # noqa: E402
from bench import reader_raw, reader_report, reader_runs  # noqa: E402

QUESTIONS = [  # written for this bench (2026-11-28); none seen while a check or a prompt was written
    ("policy", "Should our city charge drivers a congestion fee to enter the centre at rush hour?"),
    ("policy", "Should the national government cap yearly rent increases at 3%?"),
    ("policy", "Should primary schools replace letter grades with written feedback?"),
    ("engineering", "Should our team rewrite the billing service in Rust?"),
    ("engineering", "Should our startup move its servers from the cloud to its own hardware?"),
    ("engineering", "Should our mobile team replace its two native apps with one cross-platform codebase?"),
    ("personal", "Should I take a job offer abroad that pays 30% more?"),
    ("personal", "Should I sell my car and get around by bike and car-sharing?"),
    ("personal", "Should I go back to university at 35 to retrain as a nurse?"),
]
PERSONA_QUESTIONS = [
    "Should our region build an offshore wind farm within sight of its tourist beaches?",
    "Should the government tax meat to cut farm emissions?",
    "Should our town allow a lithium mine that would bring 800 jobs?",
]
PERSONAS = "economist,ethicist,environmentalist"
REFERENCES = (ROOT / "clearside/quality/references/flagship.json", ROOT / "tests/fixtures/microservices.json")
CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"
REPORT = ROOT / "bench" / "REPORT.md"


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def tree_of(rev: str | None) -> Path:
    """The tree whose ClearSide runs: this one, or commit ``rev`` exported once to bench/.cache/tree-REV."""
    if not rev:
        return ROOT
    commit = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    if not commit:
        raise SystemExit(f"--rev {rev}: no such commit")
    tree = CACHE / f"tree-{commit[:12]}"
    if not (tree / "clearside").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def off_topic_threshold(embeddings: Any) -> float | None:
    """Just under the least similarity any item of the reference documents has to its own question."""
    least = []
    for path in REFERENCES:
        data = json.loads(path.read_text(encoding="utf-8"))
        least.append(reader_runs.least_similarity(data.get("document", data), embeddings))
    least = [x for x in least if x is not None]
    return round(min(least) - 0.01, 3) if least else None


def static_row(area: str, question: str, spec: str, timeout: float, context: dict[str, Any]) -> dict[str, Any]:
    load_before = loadavg()
    result = reader_runs.run_command(["debate", question, "--provider", spec], timeout=timeout, env=context["env"],
                                     tree=context["tree"])
    row: dict[str, Any] = {"area": area, "question": question, "exit": result["exit"], "wall": result["wall"],
                           "timed_out": result["timed_out"], "load_before": load_before, "load_after": loadavg(),
                           "clearside": result["clearside"], "usage": reader_runs.usage_by_agent(result["events"]),
                           "breakdown": reader_runs.breakdown(result), "timeline": reader_runs.timeline(result)}
    row["reask_tokens"] = sum(u["reask_tokens"] for u in row["usage"].values())
    row["reask_seconds"] = round(sum(u["reask_seconds"] for u in row["usage"].values()), 3)
    document = result["document"]
    if document is None:
        row["error"] = result["stderr_tail"]
        return row
    from clearside import checks

    embeddings = context["embeddings"]
    off = reader_runs.off_topic_items(document, embeddings, context["threshold"]) if context["threshold"] else []
    row["score"] = reader_runs.score(document, checks.document_findings(document, embeddings), off)
    row["reasks"] = reader_runs.reasks(document)
    row["document"] = document
    return row


def persona_row(question: str, spec: str, timeout: float, env: dict[str, str], tree: Path) -> dict[str, Any]:
    load_before = loadavg()
    result = reader_runs.run_command(["debate", question, "--provider", spec, "--personas", PERSONAS],
                                     timeout=timeout, env=env, tree=tree)
    outcome, why, finished = persona_outcome(result)
    return {"question": question, "exit": result["exit"], "wall": result["wall"], "outcome": outcome, "why": why,
            "personas_finished": finished, "timed_out": result["timed_out"], "load_before": load_before,
            "load_after": loadavg(), "usage": reader_runs.usage_by_agent(result["events"]),
            "stderr_tail": result["stderr_tail"] if outcome != "whole" else ""}


def persona_outcome(result: dict[str, Any]) -> tuple[str, str, int]:
    """``(whole | partial | failed, why, personas finished)``."""
    document = result["document"]
    if result["timed_out"]:
        return "failed", f"past the time limit ({result['wall']:.0f} s)", 0
    if document is None:
        last = [line for line in result["stderr_tail"].splitlines() if line.strip()]
        return "failed", f"exit {result['exit']}: {last[-1][:160] if last else 'no document'}", 0
    finished = len(document.get("personas") or [])
    missing = clearside.missing_parts(document)  # the library's one definition of a partial debate
    if finished < len(PERSONAS.split(",")) or missing:
        return "partial", f"{finished} personas; missing: {', '.join(missing) or 'a persona'}", finished
    return "whole", "", finished


def add_raw(rows: list[dict[str, Any]], provider: Any, calibration: dict[str, Any]) -> None:
    """Each finished debate's tokens shown, raw decoding seconds and wall / raw."""
    per_token = (calibration.get("unconstrained") or {}).get("seconds_per_token")
    tokenize = reader_raw.tokenizer(provider)
    for row in rows:
        if row.get("document") and per_token:
            row["tokens_shown"] = reader_raw.tokens_shown(row["document"], tokenize)
            row["raw_seconds"] = round(row["tokens_shown"] * per_token, 3)
            row["ratio"] = round(row["wall"] / row["raw_seconds"], 3)


def prepare(env: dict[str, str], tree: Path) -> None:
    """The bench's data folder made and migrated before anything is timed."""
    Path(env["CLEARSIDE_DATA"]).mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "clearside", "list"], cwd=tree, env={**os.environ, **env},
                   capture_output=True, timeout=120)


def run_static(args: argparse.Namespace, out: dict[str, Any], save: Any) -> None:
    from clearside import checks

    embeddings = checks.Embeddings()
    embeddings.warm()
    out["off_topic_threshold"] = off_topic_threshold(embeddings)
    context = {"env": out["env"], "embeddings": embeddings, "threshold": out["off_topic_threshold"],
               "tree": tree_of(args.rev)}
    out["static"] = []
    for area, question in QUESTIONS[: args.limit or None]:
        row = static_row(area, question, args.provider, args.timeout, context)
        out["static"].append(row)
        print(f"{row['wall']:6.1f} s exit {row['exit']} {question} {row.get('score', {}).get('checks')} "
              f"reasks {row.get('reasks')}", file=sys.stderr, flush=True)
        save()
    if args.calibrate and out["static"]:
        from clearside.providers import get_provider

        provider = get_provider(args.provider)
        out["calibration"] = reader_raw.calibrate(provider, QUESTIONS[0][1])
        add_raw(out["static"], provider, out["calibration"])
    done = sorted((r for r in out["static"] if r.get("score")), key=lambda r: r["wall"])
    if done:
        middle = done[len(done) // 2]
        out["breakdown_of"], out["breakdown"] = middle["question"], middle["breakdown"]
        out["timeline"] = middle["timeline"]


def run_personas(args: argparse.Namespace, out: dict[str, Any], save: Any) -> None:
    out["personas"] = []
    for n in range(args.runs):
        row = persona_row(PERSONA_QUESTIONS[n % len(PERSONA_QUESTIONS)], args.provider, args.timeout, out["env"],
                          tree_of(args.rev))
        out["personas"].append(row)
        print(f"persona run {n + 1}: {row['outcome']} in {row['wall']:.1f} s {row['why']}", file=sys.stderr,
              flush=True)
        save()


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.reader", description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="run", help="the run's name in the results and REPORT.md (before...)")
    parser.add_argument("--part", choices=("static", "personas", "all"), default="all")
    parser.add_argument("--runs", type=int, default=10, help="persona debates (10 for the figure)")
    parser.add_argument("--limit", type=int, default=0, help="the first N static questions only")
    parser.add_argument("--provider", default="embedded")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a debate counts as failed")
    parser.add_argument("--no-calibrate", dest="calibrate", action="store_false",
                        help="no raw decoding calibration (a provider other than the embedded one)")
    parser.add_argument("--rev", default="", help="run the ClearSide of this commit (default: this tree's)")
    parser.add_argument("--data", default="", help="the data folder the debates use (default: "
                        "bench/.cache/reader-data/LABEL)")
    parser.add_argument("--results", default=str(RESULTS))
    parser.add_argument("--report", default=str(REPORT))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    path = Path(args.results) / f"reader-{args.label}.json"
    earlier = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    out: dict[str, Any] = {**earlier, "label": args.label, "started": datetime.now(UTC).isoformat(),
                           "command": "python -m bench.reader " + " ".join(argv if argv is not None else sys.argv[1:]),
                           "commit": git("rev-parse", args.rev or "HEAD"), "bench_commit": git("rev-parse", "HEAD"),
                           "dirty": not args.rev and bool(git("status", "--porcelain", "-uno")),
                           "cpu_count": os.cpu_count(), "load_before": loadavg(),
                           "env": {"CLEARSIDE_DATA": args.data or str(CACHE / "reader-data" / args.label)}}

    def save() -> None:
        out["load_after"] = loadavg()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        reader_report.write_section(Path(args.report), args.label, reader_report.section(out))

    prepare(out["env"], tree_of(args.rev))
    if args.part in ("static", "all"):
        run_static(args, out, save)
    if args.part in ("personas", "all"):
        run_personas(args, out, save)
    save()
    print(reader_report.section(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
