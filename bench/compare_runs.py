"""compare-runs at scale: two batches of 200 runs each compared in a store of 10,000 runs.

For each database (a SQLite file in a temporary folder, and a throwaway PostgreSQL server started here from Debian's
binaries by ``tests/pg_kit.py`` with fsync=off; ``--database-url`` points at an existing one instead) it fills the
``runs`` table with ``--rows`` runs: batches of ``--batch-runs`` runs (20 cases x 10 repeats) of several suites, every
run with the 22 headline metrics and the ``data`` regress records (batch, item, index, question, versions). Batches A
and B are two flagship-like batches of the same cases; B is worse on coverage and 5 % of its runs miss the
neutrality gate, so the comparison has a regression and flips, and each of A's and B's runs has its debate saved (the
report reads the flipped ones). Then, ``--reps`` times, it times:

1. ``compare_runs(store, A, B)``: both batches found, paired statistics per metric (bootstrap, sign-flip
   test, Holm), flips;
2. the report: ``reports.attach_debates`` (the flipped runs' debates read), ``reports.render_html`` and
   ``reports.junit_xml``.

Goal: the whole under 3 s. It records every SQL statement ``compare_runs`` and ``attach_debates`` send, and on
PostgreSQL prints ``EXPLAIN (ANALYZE, BUFFERS)`` of each distinct one, so whether they use an index shows.

Run from the repository root:  python bench/compare_runs.py [--rows 10000] [--batch-runs 200] [--reps 5]
    [--only sqlite|postgresql] [--database-url postgresql+psycopg://...]
Writes bench/results/compare_runs.json. Results depend on machine load, which is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import pg_kit  # noqa: E402
from sqlalchemy import event, text  # noqa: E402

from clearside.quality import metrics, references, reports  # noqa: E402
from clearside.quality.batch import find_batch  # noqa: E402
from clearside.quality.compare_runs import compare_runs  # noqa: E402
from clearside.store import NewDebate, Store  # noqa: E402
from clearside.store.tables import Run  # noqa: E402

GOAL_S = 3.0
RESULTS = Path(__file__).resolve().parent / "results"
CASES = 20
SUITES = ["flagship", "argkp-dev", "ours", "compare"]
VERSIONS = {"metric_suite": "3", "embedding_model": "all-MiniLM-L6-v2", "clearside": "0.1.0",
            "provider": {"name": "scripted", "temperature": 0.4, "retries": 2, "concurrency": 2}}
PROMPTS = {"orchestrator": "1.3", "pro": "1.4", "con": "1.4", "moderator": "1.5"}


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}, {os.cpu_count()} CPUs"


def run_metrics(rng: random.Random, coverage_shift: float = 0.0, violation: bool = False) -> dict[str, float]:
    out = {}
    for name in metrics.SUMMARY:
        out[name] = round(rng.uniform(0.2, 0.9), 4)
    out.update(schema_valid=1.0, neutrality_violations=1.0 if violation else 0.0, garbage_left=0.0,
               coverage=round(min(1.0, max(0.0, rng.gauss(0.6, 0.05) + coverage_shift)), 4),
               checks_caught=float(rng.randrange(3)), reasks=float(rng.randrange(2)),
               seconds=round(rng.uniform(20, 90), 2), completion_tokens=float(rng.randrange(800, 3000)))
    return out


def populate(store: Store, rows: int, batch_runs: int, rng: random.Random) -> tuple[str, str, float]:
    """``rows`` runs in batches of ``batch_runs``, inserted in transactions of one batch; A and B are the last two
    flagship batches, their runs with debates. Returns (A, B, seconds)."""
    started, day = time.perf_counter(), datetime(2026, 1, 1, tzinfo=UTC)
    document = references.flagship().document
    batches = max(2, rows // batch_runs)
    a, b = uuid.uuid4().hex, uuid.uuid4().hex
    ids = [uuid.uuid4().hex for _ in range(batches - 2)] + [a, b]
    for n, batch in enumerate(ids):
        suite = "flagship" if batch in (a, b) else SUITES[n % len(SUITES)]
        stamp = day + timedelta(hours=n)
        with store.write() as session:
            for i in range(batch_runs):
                case, repeat = f"case-{i % CASES:02d}", i // CASES
                debate_id = None
                if batch in (a, b):
                    debate_id = store.create(NewDebate("static", f"Proposition {case}?", provider="scripted",
                                                       model="x.json", document=document, status="done",
                                                       created_at=stamp), session=session)
                worse = batch == b
                session.add(Run(
                    id=uuid.uuid4().hex, suite=suite, batch=batch, debate_id=debate_id, provider="scripted",
                    model=f"{suite}-{n}.json", prompt_versions=PROMPTS, status="done", baseline=False,
                    metrics=run_metrics(rng, -0.1 if worse else 0.0, violation=worse and rng.random() < 0.05),
                    data={"batch": batch, "item": case, "index": repeat, "question": f"Proposition {case}?",
                          "started_at": stamp.isoformat(timespec="microseconds"), "planned": batch_runs,
                          "versions": VERSIONS},
                    created_at=stamp + timedelta(seconds=i), updated_at=stamp + timedelta(seconds=i)))
    if store.dialect == "postgresql":
        with store.engine.begin() as connection:
            connection.execute(text("ANALYZE"))
    return a, b, time.perf_counter() - started


class Statements:
    """Every SQL statement the store's engine sends while ``on``, with its parameters."""

    def __init__(self, engine) -> None:
        self.on, self.seen = False, []
        event.listen(engine, "before_cursor_execute", self.record)

    def record(self, conn, cursor, statement, parameters, context, executemany) -> None:
        if self.on:
            self.seen.append((statement, parameters))

    def distinct(self) -> list[tuple[str, object]]:
        out: dict[str, object] = {}
        for statement, parameters in self.seen:
            out.setdefault(statement, parameters)
        return list(out.items())


def once(store: Store, a: str, b: str) -> dict[str, float]:
    tf = time.perf_counter()
    for batch in (a, b):  # the store's part of compare_runs, timed on its own (not in the total)
        find_batch(store, batch)
    t0 = time.perf_counter()
    report = compare_runs(store, a, b)
    t1 = time.perf_counter()
    shared = reports.attach_debates(report, store)
    t2 = time.perf_counter()
    html, xml = reports.render_html(shared), reports.junit_xml(report)
    t3 = time.perf_counter()
    assert report["pairs"] >= 200 and report["regression"] and report["flips"], "the comparison found nothing"
    assert "<svg" in html and "<testcase" in xml
    return {"find_batch_x2": t0 - tf, "compare_runs": t1 - t0, "attach_debates": t2 - t1, "render": t3 - t2,
            "total": t3 - t0,
            "pairs": report["pairs"], "flips": len(report["flips"]), "html_kb": len(html.encode()) / 1024}


def explain(store: Store, statements: list[tuple[str, object]]) -> list[str]:
    plans = []
    with store.engine.connect() as connection:
        raw = connection.connection.driver_connection  # psycopg: the statement as the driver sent it
        for statement, parameters in statements:
            with raw.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, parameters)
                plan = "\n".join(row[0] for row in cursor.fetchall())
            plans.append(f"-- {' '.join(statement.split())[:300]}\n{plan}")
        raw.rollback()
    return plans


def bench(name: str, url: str, args: argparse.Namespace) -> dict:
    store = Store(url)
    try:
        a, b, filled = populate(store, args.rows, args.batch_runs, random.Random(18))
        with store.read() as session:
            count = session.query(Run).count()
        print(f"\n{name}: {count} runs ({args.batch_runs} per batch), A {a[:8]} and B {b[:8]} (filled in "
              f"{filled:.1f} s)")
        statements = Statements(store.engine)
        once(store, a, b)  # warm: imports, the first connection, numpy
        statements.on = True
        timings = [once(store, a, b)]  # the statements of one comparison (find_batch x2 + compare_runs + report)
        statements.on = False
        per = len(statements.seen)
        timings += [once(store, a, b) for _ in range(args.reps - 1)]
        out = {"database": name, "runs": count, "batch_runs": args.batch_runs, "reps": args.reps,
               "pairs": timings[0]["pairs"], "flips": timings[0]["flips"], "html_kb": round(timings[0]["html_kb"], 1),
               "statements_per_comparison": per, "load": load()}
        for part in ("find_batch_x2", "compare_runs", "attach_debates", "render", "total"):
            values = [t[part] for t in timings]
            out[part] = {"median_s": round(statistics.median(values), 3), "min_s": round(min(values), 3),
                         "max_s": round(max(values), 3)}
        verdict = "OK" if out["total"]["median_s"] < GOAL_S else "OVER THE GOAL"
        print(f"  {out['pairs']} pairs, {out['flips']} flips, HTML {out['html_kb']} KB, {per} SQL statements in one "
              f"pass (find_batch x2 timed alone, compare_runs, report)")
        for part in ("find_batch_x2", "compare_runs", "attach_debates", "render", "total"):
            p = out[part]
            print(f"  {part:15s} median {p['median_s']:.3f} s  (min {p['min_s']:.3f}, max {p['max_s']:.3f})")
        print(f"  goal < {GOAL_S:g} s: {verdict}")
        distinct = statements.distinct()
        print(f"  distinct statements: {len(distinct)}")
        for statement, _ in distinct:
            print("   ", " ".join(statement.split())[:160])
        if store.dialect == "postgresql":
            out["plans"] = explain(store, distinct)
            print("\n  PostgreSQL plans (EXPLAIN ANALYZE, BUFFERS):")
            for plan in out["plans"]:
                print("\n" + "\n".join("    " + line for line in plan.splitlines()))
        return out
    finally:
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--batch-runs", type=int, default=200)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--database-url", help="an existing PostgreSQL database to fill (not a throwaway server)")
    args = parser.parse_args()
    print(f"compare-runs benchmark, {load()}")
    results = []
    if args.only in (None, "sqlite"):
        folder = tempfile.mkdtemp(prefix="clearside-bench-")
        results.append(bench("SQLite", f"sqlite:///{folder}/store.db", args))
    if args.only in (None, "postgresql"):
        if args.database_url:
            results.append(bench("PostgreSQL", args.database_url, args))
        else:
            with pg_kit.server() as admin_url:
                results.append(bench("PostgreSQL", pg_kit.new_database(admin_url), args))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compare_runs.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["total"]["median_s"] < GOAL_S for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
