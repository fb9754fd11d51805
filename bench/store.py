"""Debate store latency on SQLite and PostgreSQL: static save/load, live turn saves, and library search.

For each database (a SQLite file in a temporary folder, and a throwaway PostgreSQL
server started here from Debian's binaries by ``tests/pg_kit.py``, run with
fsync=off) it measures, as p50/p95 in milliseconds:

1. a full static debate as the app saves it (``start_static``, four ``save_section``
   calls, ``finish_static``) and loads it (``get``), from ``tests/fixtures/microservices.json``;
2. a 21-turn live transcript saved after every appended turn (``LiveWriter.save``,
   ~150-word speeches, ~2 KB prompt and reply per turn) and loaded (``load_live``);
3. the library on ``--rows`` saved debates (a third live, with their turn text in
   ``search_text``): ``list(search, limit=50)`` for several queries, after ANALYZE (the
   statistics autovacuum keeps; without them PostgreSQL may skip the trigram index). Goal: under 300 ms;
4. the Library page on those debates as the dashboard opens it (``clearside_ui/app_pages/library.py``): every
   store query the page makes, in its order (any debate at all, the unfinished ones by status, the facets, the
   first page of 25, their versions and sources), without a search and with one ("scaling", a common word).
   Goal: under 1 s. Measured right after the filling and ANALYZE, before 3.; the first load of each
   is reported apart.

``report(quick=True)`` (``python -m bench``) saves and loads fewer debates (``--reps 20 --live-reps 3
--list-reps 5``) but fills the same 10,000; ``quick=False`` runs the defaults. Without PostgreSQL's binaries its
half is skipped, saying why.

Run from the repository root:  python bench/store.py [--reps 200] [--live-reps 20] [--rows 10000] [--only sqlite]
Writes bench/results/store.json. Results depend on machine load, which is printed.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import pg_kit  # noqa: E402
import sqlalchemy  # noqa: E402
from sqlalchemy import text  # noqa: E402

from clearside.live.exchange import load_live  # noqa: E402
from clearside.live.protocol import PLAN  # noqa: E402
from clearside.live.transcript import Transcript, Turn  # noqa: E402
from clearside.runtime.status import debate_statuses  # noqa: E402
from clearside.static.recorder import start_static  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402
from clearside.store import LiveWriter, NewDebate, Store, new_id  # noqa: E402
from clearside.store.store import search_text  # noqa: E402
from clearside.store.tables import Debate  # noqa: E402

DOC = json.loads((ROOT / "tests" / "fixtures" / "microservices.json").read_text(encoding="utf-8"))
LIST_GOAL_MS = 300.0
PAGE_GOAL_MS = 1000.0
PAGE_SIZE = 25  # clearside_ui/library_view.py's
UNFINISHED = ("queued", "running", "paused", "failed")  # the same file's
PAGE_SEARCH = "scaling"
RESULTS = Path(__file__).resolve().parent / "results"
STAMP = "2026-11-22T08:00:00.000Z"
WORDS = sorted({w for w in json.dumps([DOC[k] for k in ("pro", "con", "moderator")]).lower()
                 .replace('"', " ").replace(",", " ").replace(".", " ").split() if w.isalpha()})
PROVIDERS = {"openai": ["gpt-4o", "gpt-4o-mini"], "anthropic": ["claude-sonnet-4", "claude-haiku-4"],
             "ollama": ["llama3.1:8b", "qwen2.5:14b"], "embedded": ["qwen2.5-3b-instruct-q4"]}
SUBJECTS = ["microservices", "a four-day work week", "remote work", "nuclear power", "a carbon tax", "Kubernetes",
            "Rust for the backend", "our own data center", "a feature-flag service", "rent control", "electric buses",
            "universal basic income", "school uniforms", "open-sourcing the SDK", "a hiring freeze"]
QUERIES = {"common word": ("scaling", {}), "one word": ("nuclear", {}), "two words": ("kubernetes complexity", {}),
           "no match": ("zyzzyva", {}),
           "provider filter": ("", {"provider": "anthropic"}),
           "date range": ("", {"since": date(2026, 3, 1), "until": date(2026, 3, 31)})}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def stats(seconds: list[float]) -> dict:
    return {"n": len(seconds), "p50_ms": round(pct(seconds, 0.5) * 1000, 2),
            "p95_ms": round(pct(seconds, 0.95) * 1000, 2)}


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - started, result


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def bench_static(store: Store, reps: int) -> dict:
    saves, loads = [], []
    usage = {a: {"prompt_tokens": 900, "completion_tokens": 400, "seconds": 6.1, "calls": 1}
             for a in ("orchestrator", "pro", "con", "moderator")}
    for _ in range(reps):
        run = DebateRun.from_input(DOC["proposition"]["raw_input"])
        started = time.perf_counter()
        debate_id = start_static(store, run, provider="openai", model="gpt-4o", prompt_versions={"advocate": "1.0.0"})
        for name in ("proposition", "pro", "con", "moderator"):
            store.save_section(debate_id, name, DOC[name])
        store.finish_static(debate_id, DOC, usage=usage, violations=0)
        saves.append(time.perf_counter() - started)
        seconds, record = timed(store.get, debate_id)
        assert record.document["pro"] == DOC["pro"]
        loads.append(seconds)
    return {"save": stats(saves), "load": stats(loads)}


def live_turns(rng: random.Random) -> list[Turn]:
    turns = []
    for n, step in enumerate(PLAN, start=1):
        speech = prose(rng, 150)
        reply = json.dumps({"speech": speech, "claims": [prose(rng, 40) for _ in range(6)]})[:2048]
        turns.append(Turn(turn=n, step=step.index, phase=step.phase, kind=step.kind, speaker=step.speaker,
                          label=step.label, text=speech, fields={"speech": speech, "claims": [prose(rng, 12)] * 3},
                          budget_tokens=390, used_tokens=200, sees=list(range(1, n)), prompt=prose(rng, 300)[:2048],
                          reply=reply, started_at=STAMP, finished_at=STAMP, seconds=14.2, first_token_seconds=0.6,
                          completion_tokens=210))
    return turns


def bench_live(store: Store, reps: int, rng: random.Random) -> dict:
    saves, loads, turns = [], [], live_turns(rng)
    for _ in range(reps):
        transcript = Transcript(id=new_id(), created_at=STAMP, updated_at=STAMP, question=DOC["proposition"]
                                ["raw_input"], proposition=DOC["proposition"], provider="ollama", model="qwen2.5:14b")
        writer = LiveWriter(store, transcript.id)
        writer.save(transcript)  # LiveDebate.create saves the empty transcript first
        for turn in turns:
            transcript.turns.append(turn.model_copy())
            transcript.cursor += 1
            saves.append(timed(writer.save, transcript)[0])
        transcript.state, transcript.document = "done", DOC
        saves.append(timed(writer.save, transcript)[0])
        seconds, loaded = timed(load_live, store, transcript.id)
        assert len(loaded.turns) == len(PLAN)
        loads.append(seconds)
    return {"save_per_turn": stats(saves), "load": stats(loads)}


def populate(store: Store, rows: int, rng: random.Random) -> float:
    """Bulk-insert ``rows`` debates in transactions of 1,000; returns seconds."""
    texts = [prose(rng, 150) for _ in range(300)]
    started, start_day = time.perf_counter(), datetime(2025, 12, 1, tzinfo=UTC)
    for first in range(0, rows, 1000):
        with store.write() as session:
            for _ in range(min(1000, rows - first)):
                provider = rng.choice(list(PROVIDERS))
                question = f"Should we adopt {rng.choice(SUBJECTS)} {rng.choice(['now', 'next year', 'by 2028'])}?"
                kind, done = rng.choices(["static", "live"], [2, 1])[0], rng.random() < 0.7
                document = None
                if done and kind == "static":
                    document = copy.deepcopy(DOC)
                    document["proposition"]["normalized_question"] = question
                    for side in ("pro", "con"):
                        for argument in document[side]["arguments"]:
                            argument["claim"] = " ".join(rng.sample(WORDS, 8)).capitalize()
                debate_id = store.create(NewDebate(kind, question, provider=provider,
                                                   model=rng.choice(PROVIDERS[provider]), document=document,
                                                   status="done" if done else "running",
                                                   created_at=start_day + timedelta(
                                                       minutes=rng.randrange(365 * 24 * 60))), session=session)
                if kind == "live":  # LiveWriter indexes the turns' speeches; create() alone does not
                    session.get(Debate, debate_id).search_text = search_text(question, question,
                                                                            *rng.sample(texts, 21))
    return time.perf_counter() - started


def bench_list(store: Store, reps: int) -> dict:
    results = {}
    for label, (search, filters) in QUERIES.items():
        seconds = [timed(store.list, search, limit=50, **filters)[0] for _ in range(reps)]
        row = stats(seconds)
        results[label] = {**row, "pass": row["p95_ms"] < LIST_GOAL_MS, "search": search,
                          "filters": {k: str(v) for k, v in filters.items()},
                          "total": store.list(search, limit=50, **filters).total}
    return results


def library_page(store: Store, search: str = "") -> int:
    """The store work of opening the Library page (clearside_ui/app_pages/library.py ``library()`` and
    clearside_ui/library_view.py), in its order; returns the number of matches."""
    if store.list(limit=1).total == 0:
        return 0
    counts: dict[str, int] = {}  # the unfinished notice (library_view.unfinished)
    for status in UNFINISHED:
        page = store.list(status=status, origin="own", limit=500)
        for label in debate_statuses(store, page.items).values():
            counts[label] = counts.get(label, 0) + 1
    store.facets()  # the filter bar
    page = store.list(search, origin="own", limit=PAGE_SIZE, offset=0)  # library_view.results
    ids = [item.id for item in page.items]
    store.version_counts(ids)
    store.source_counts(ids)
    debate_statuses(store, page.items)  # the table's status column
    return page.total


def bench_library_page(store: Store, reps: int) -> dict:
    results = {}
    for label, search in (("first page", ""), ("search", PAGE_SEARCH)):
        first, total = timed(library_page, store, search)
        seconds = [timed(library_page, store, search)[0] for _ in range(reps)]
        row = stats(seconds)
        results[label] = {**row, "first_ms": round(first * 1000, 2), "search": search, "total": total,
                          "pass": max(row["p95_ms"], first * 1000) < PAGE_GOAL_MS}
    return results


def show(label: str, parts: dict) -> None:
    print(f"{label:16}" + "   ".join(f"{name.replace('_', ' ')} p50 {row['p50_ms']:7.2f} ms, "
                                     f"p95 {row['p95_ms']:7.2f} ms" for name, row in parts.items()))


def bench(name: str, url: str, args: argparse.Namespace) -> dict:
    store, rng = Store(url), random.Random(20261122)
    with store.engine.connect() as connection:
        version = connection.execute(text("SHOW server_version" if store.dialect == "postgresql"
                                          else "SELECT sqlite_version()")).scalar()
    print(f"\n== {name}: {version}")
    result = {"database": name, "version": version, "static": bench_static(store, args.reps)}
    show("static debate", result["static"])
    result["live"] = bench_live(store, args.live_reps, rng)
    show("live, 21 turns", result["live"])
    result["populate_seconds"] = round(populate(store, args.rows, rng), 1)
    with store.engine.connect() as connection:  # steady state: planner statistics as autovacuum would keep them
        connection.exec_driver_sql("ANALYZE")
        connection.commit()
    result["rows"] = store.list(limit=1).total
    result["library_page"] = bench_library_page(store, args.list_reps)
    print(f"library: {result['rows']} debates; the Library page (every query it makes, {PAGE_SIZE} a page), "
          f"goal < {PAGE_GOAL_MS:.0f} ms:")
    for label, row in result["library_page"].items():
        print(f"  {label:16} first {row['first_ms']:8.1f} ms  p50 {row['p50_ms']:8.1f} ms  p95 {row['p95_ms']:8.1f} ms"
              f"  {row['total']:6} found  {'PASS' if row['pass'] else 'MISS'}")
    print(f"library: {result['rows']} debates (inserted {args.rows} in {result['populate_seconds']} s); "
          f"list(limit=50) over {args.list_reps} runs, goal p95 < {LIST_GOAL_MS:.0f} ms:")
    result["list"] = bench_list(store, args.list_reps)
    for label, row in result["list"].items():
        print(f"  {label:16} p50 {row['p50_ms']:8.1f} ms  p95 {row['p95_ms']:8.1f} ms  {row['total']:6} found  "
              f"{'PASS' if row['pass'] else 'MISS'}")
    store.close()
    return result


def postgresql_missing() -> str:
    """Why the PostgreSQL half cannot run here ("" when it can)."""
    if os.environ.get("CLEARSIDE_TEST_DATABASE_URL"):
        return ""
    try:
        pg_kit._bin("initdb")
    except RuntimeError as exc:
        return str(exc)
    return ""


def run(args: argparse.Namespace) -> dict:
    """The benchmark with the command line's settings: prints its tables, writes bench/results/store.json and
    returns what it wrote."""
    load_before = [round(x, 2) for x in os.getloadavg()]
    print(f"CPUs {os.cpu_count()}, load average {load_before}; SQLAlchemy {sqlalchemy.__version__}, "
          f"Python sqlite3 library {sqlite3.sqlite_version}")
    results, skipped = [], {}
    if args.only in (None, "sqlite"):
        with tempfile.TemporaryDirectory() as tmp:
            results.append(bench("SQLite", f"sqlite:///{Path(tmp) / 'clearside.db'}", args))
    if args.only in (None, "postgresql"):
        if why := postgresql_missing():
            skipped["PostgreSQL"] = why
            print(f"\n== PostgreSQL skipped: {why}")
        else:
            with pg_kit.server() as admin_url:
                results.append(bench("PostgreSQL", pg_kit.new_database(admin_url), args))
    load_after = [round(x, 2) for x in os.getloadavg()]
    out = {"machine": {"loadavg_before": load_before, "loadavg_after": load_after, "cpu_count": os.cpu_count()},
           "sqlalchemy": sqlalchemy.__version__, "settings": vars(args), "databases": results, "skipped": skipped}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "store.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(f"\nload average before {load_before}, after {load_after}; wrote {RESULTS / 'store.json'}")
    return out


def report(quick: bool = True) -> list[dict]:
    """The benchmark report's rows (bench/run_all.py): the Library page and a search on 10,000 debates, and the
    library query's slowest p95, per database."""
    settings = argparse.Namespace(reps=20 if quick else 200, live_reps=3 if quick else 20, rows=10_000,
                                  list_reps=5 if quick else 20, only=None)
    out = run(settings)
    rows = []
    for result in out["databases"]:
        name, n = result["database"], result["rows"]
        for label, figure in (("first page", "first Library page"), ("search", f"Library search '{PAGE_SEARCH}'")):
            row = result["library_page"][label]
            worst = max(row["p95_ms"], row["first_ms"]) / 1000
            rows.append({"figure": f"Store, {figure}, {n:,} debates, {name}", "value": round(worst, 3), "unit": "s",
                         "goal": f"< {PAGE_GOAL_MS / 1000:g} s", "met": worst < PAGE_GOAL_MS / 1000,
                         "note": f"every query the page makes; the slower of the first load ({row['first_ms']:.0f} ms)"
                                 f" and p95 of {row['n']} ({row['p95_ms']:.0f} ms; p50 {row['p50_ms']:.0f} ms); "
                                 f"{row['total']:,} found"})
        slowest = max(result["list"].items(), key=lambda kv: kv[1]["p95_ms"])
        rows.append({"figure": f"Store, library query p95 (slowest of {len(result['list'])}), {name}",
                     "value": round(slowest[1]["p95_ms"] / 1000, 3), "unit": "s",
                     "goal": f"< {LIST_GOAL_MS / 1000:g} s", "met": all(r["pass"] for r in result["list"].values()),
                     "note": f"list(limit=50), the slowest: {slowest[0]}; filled in {result['populate_seconds']} s"})
    for name, why in out["skipped"].items():
        rows.append({"figure": f"Store, first Library page, 10,000 debates, {name}", "value": None, "unit": "s",
                     "goal": f"< {PAGE_GOAL_MS / 1000:g} s", "met": None, "note": f"not measured: {why}"})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="static debates saved and loaded (default 200)")
    parser.add_argument("--live-reps", type=int, default=20, help="live transcripts of 21 turns (default 20)")
    parser.add_argument("--rows", type=int, default=10_000, help="debates in the library (default 10,000)")
    parser.add_argument("--list-reps", type=int, default=20, help="runs of each library query (default 20)")
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    run(parser.parse_args())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
