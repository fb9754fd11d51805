"""Load on the durable runtime: concurrent debates, a queue of debates drained by workers, and
dashboard sessions in Chromium while the concurrent debates run.

Three stages, each on a fresh database of one throwaway PostgreSQL server (tests/pg_kit.py, Debian's binaries;
``CLEARSIDE_TEST_DATABASE_URL`` names an existing server instead), against bench/latency_server.py run as its own
process (the OpenAI-compatible wire, a fixed time to first token and tokens/s per request, each request on its own:
the model costs no CPU, so what is measured is ClearSide's queueing, checks, checkpoints and store writes):

1. **Concurrent** (``--debates``, default 100): the flagship question saved N times, then every debate queued on
   the runtime at once (``workflows.enqueue_static``, what ``debate --enqueue`` does), run by
   ``--concurrent-workers`` ``python -m clearside worker`` processes (default 2) started first, each with
   ``--concurrency ceil(N / workers)`` so that the server queue lets all N run at once. (The queue's limit is per
   host, set by ``worker --concurrency`` and kept by DBOS for every host; a host runs at most 64 workflows at once,
   its executor's threads, so 100 at once takes two hosts or more.) The dashboard, when it runs (stage 3), is a
   host too and may take some of them: the figures say which host ran how many.
2. **Queued** (``--queued``, default 1,000): all queued first, then ``--workers`` workers (default 4) started at
   ``--queued-concurrency`` each (default 4, the server queue's default) drain them; plus the drain rate
   (debates a minute, from the moment every worker serves to the last debate finished).
3. **Dashboard sessions** (``--sessions``, default 20): one ``streamlit run app.py`` on stage 1's database, and
   S Chromium pages (each its own browser context: its own cookie, its own Streamlit session) opened while the
   concurrent debates run; each loads the Debate page, picks the latency server in the sidebar (**Use it**, the
   Concurrency field set to ``--endpoint-concurrency``), generates a debate and follows it until the moderator's
   synthesis shows. Figures: first contentful paint, the page's header visible, click on Generate to "Analyzing
   both sides..." (bench/ui_latency.py's measures, for one page), click to the finished debate shown, and how many
   of stage 1's debates were running at each click. A page still showing progress 30 s after its debate ended
   is an error, "stuck": its screenshot is kept with the logs and a reload tells whether the debate shows then. One
   page is loaded before stage 1 starts, unmeasured (the
   server's first page imports the app). Driver: Playwright's async API, not Locust: a Streamlit session is a
   websocket whose every widget event is a protobuf message, and what a user waits for is the page drawn, which
   only a browser shows; Locust's HTTP users would measure neither (so there is no bench-only requirement).

Per stage: errors (a debate or a job that failed), time from its queueing to its first section saved (the
``sections`` row, what a page following it shows first) and to the finished debate (the job's completion), p50 and
p95; the most debates running at once (from the jobs' dequeue and completion times); each worker's memory (VmHWM,
the peak, and VmRSS at the end, from /proc/<pid>/status) and CPU seconds; **lost** (a debate queued that did not
finish, or whose job or record vanished) and **run twice** (model calls beyond one per stage: the latency server
counts them by agent, as tests/runtime/test_runtime_workers.py does; plus any job a worker log shows started twice).

The substance checks run as configured: each worker loads the MiniLM embedding model (torch) beside its debates,
and that is most of the CPU each debate costs here; ``--semantic-checks 0`` sets ``CLEARSIDE_SEMANTIC_CHECKS=0``
in the workers and the dashboard (the lexical checks only) to show the difference. The default keeps them on.

Run from the repository root (the full run is long: a quiet machine, several cores):
  python bench/load.py [--debates 100] [--queued 1000] [--workers 4] [--sessions 20] [--semantic-checks 1]
Small scale:  python bench/load.py --debates 10 --queued 40 --workers 2 --sessions 3
Writes bench/results/load.json and prints a Markdown table with the machine's load before and after.
``report(quick=True)``, for ``python -m bench``: 8 concurrent debates, 24 queued on 2 workers, 2 sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pg_kit  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from helpers import free_port  # noqa: E402

from bench.latency_server import MODEL  # noqa: E402
from bench.run_all import git  # noqa: E402
from bench.scale import workers as start_workers  # noqa: E402
from clearside import runtime  # noqa: E402
from clearside.providers.openai_compat import OpenAIProvider  # noqa: E402
from clearside.quality.references import flagship  # noqa: E402
from clearside.static import workflow as workflows  # noqa: E402
from clearside.static.recorder import StaticRecorder  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402
from clearside.store import open_store  # noqa: E402

AGENTS = ("orchestrator", "pro", "con", "moderator")
MAX_PER_HOST = 60  # a host runs at most 64 workflows at once (runtime.Host: max_executor_threads); keep a margin
RESULTS = ROOT / "bench" / "results" / "load.json"
STUCK_S = 30.0  # a page still showing progress this long after its debate ended is stuck (then reloaded)


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def pct(values: list[float], q: float) -> float | None:
    """The q-th percentile (nearest rank) of ``values``, None for none."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)], 3)


def spread(values: list[float]) -> dict[str, Any]:
    return {"n": len(values), "p50": pct(values, 50), "p95": pct(values, 95),
            "max": round(max(values), 3) if values else None}


# -- processes -----------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def latency_server(ttft: float, tps: float, logs: Path):
    """bench/latency_server.py in its own process (so that the bench's own threads and browser driver do not hold
    its pace back); yields its base URL and a dict that holds its stats (requests by agent) once it stopped."""
    port = free_port()
    log = logs / f"latency-{port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "latency_server.py"), "--port", str(port),
                                 "--ttft", str(ttft), "--tps", str(tps)], cwd=ROOT, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/v1/models", timeout=2).read()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit(f"the latency server did not start:\n{log.read_text()}") from None
            time.sleep(0.2)
    stats: dict[str, Any] = {}
    try:
        yield f"{url}/v1", stats
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        for line in reversed(log.read_text().splitlines()):
            if line.startswith("{"):
                stats.update(json.loads(line))
                break


def proc_status(pid: int) -> dict[str, float]:
    """Memory (MB: VmHWM, the peak, and VmRSS) and CPU seconds (user + system) of a live process."""
    out: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmHWM:", "VmRSS:")):
                out[line.split(":")[0].lower()] = round(int(line.split()[1]) / 1024, 1)
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        out["cpu_s"] = round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 1)
    except (OSError, IndexError, ValueError):
        pass
    return out


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def dashboard(url: str, base_url: str, env_extra: dict[str, str], logs: Path) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` on the store at ``url``, offered the latency server (OPENAI_BASE_URL)."""
    port = free_port()
    env = {**os.environ, **env_extra, "DATABASE_URL": url, "OPENAI_BASE_URL": base_url,
           "OPENAI_API_KEY": "not-needed", "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",  # no Ollama offered
           "CLEARSIDE_DATA": tempfile.mkdtemp(prefix="clearside-load-ui-")}
    out = (logs / "streamlit.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.address", "127.0.0.1", "--server.port", str(port),
                             "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env, stdout=out,
                            stderr=subprocess.STDOUT)
    page = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{page}/_stcore/health", timeout=2).read() == b"ok":
                return proc, page
        except OSError:
            time.sleep(0.3)
    stop([proc])
    raise SystemExit(f"streamlit did not start:\n{(logs / 'streamlit.log').read_text()}")


# -- debates -------------------------------------------------------------------------------------------------------


def enqueue(url: str, provider: OpenAIProvider, n: int) -> list[tuple[str, float]]:
    """Save ``n`` debates of the flagship question, then queue them all, one right after the other; each
    ``(debate id, wall time it was queued)`` (the job's id is the debate's)."""
    store = open_store(url)
    question = flagship().proposition
    ids = [StaticRecorder(store, DebateRun.from_input(question), provider).id for _ in range(n)]
    queued = []
    for debate_id in ids:
        at = time.time()
        workflows.enqueue_static(debate_id, provider, lend=False, store=store)
        queued.append((debate_id, at))
    return queued


def wait_finished(ids: list[str], deadline: float) -> bool:
    """Until every job finished (True) or the deadline passed (False)."""
    client = runtime.dbos_client()
    while time.monotonic() < deadline:
        rows = client.list_workflows(workflow_ids=ids, load_input=False, load_output=False)
        if len(rows) == len(ids) and all(runtime.job_state(r).finished for r in rows):
            return True
        time.sleep(1.0)
    return False


def outcomes(url: str, queued: list[tuple[str, float]]) -> list[dict[str, Any]]:
    """Per debate: its job's state and host, seconds from its queueing to its first section saved, to its job's
    dequeue and to its completion, and its record's status."""
    ids = [d for d, _ in queued]
    jobs = {w.workflow_id: w for w in runtime.dbos_client().list_workflows(workflow_ids=ids, load_input=False)}
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            first = dict(conn.execute(sa.text("SELECT debate_id, min(created_at) FROM sections WHERE debate_id = "
                                              "ANY(:ids) GROUP BY debate_id"), {"ids": ids}).all())
            records = {r[0]: (r[1], r[2]) for r in conn.execute(
                sa.text("SELECT id, status, document IS NOT NULL FROM debates WHERE id = ANY(:ids)"), {"ids": ids})}
    finally:
        engine.dispose()
    out = []
    for debate_id, at in queued:
        job = jobs.get(debate_id)
        state = runtime.job_state(job) if job else None
        record = records.get(debate_id)
        section = first.get(debate_id)
        row: dict[str, Any] = {
            "id": debate_id, "queued_at": at, "job": state.status if state else "missing",
            "error": state.error if state else "", "host": (job.executor_id or "").split("-")[0] if job else "",
            "record": record[0] if record else "missing", "document": bool(record and record[1]),
            "first_section_s": round(section.timestamp() - at, 3) if section else None,
            "dequeued_s": round(job.dequeued_at / 1000 - at, 3) if job and job.dequeued_at else None,
            "finished_s": (round((job.completed_at or job.updated_at) / 1000 - at, 3) if job and state
                           and state.status == "done" else None),
            "start": job.dequeued_at / 1000 if job and job.dequeued_at else None,
            "end": (job.completed_at or job.updated_at) / 1000 if job and (job.completed_at or job.updated_at)
            else None}
        out.append(row)
    return out


def most_at_once(rows: list[dict[str, Any]]) -> int:
    """The most jobs running at the same moment (between their dequeue and their completion)."""
    edges = sorted([(r["start"], 1) for r in rows if r["start"] and r["end"]]
                   + [(r["end"], -1) for r in rows if r["start"] and r["end"]], key=lambda e: (e[0], e[1]))
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def running_at(rows: list[dict[str, Any]], moment: float) -> int:
    return sum(1 for r in rows if r["start"] and r["start"] <= moment and (not r["end"] or r["end"] > moment))


def started_twice(logs: list[Path], ids: list[str]) -> int:
    """Jobs that a worker log shows started more than once (a job taken over, or run by two hosts)."""
    text = "\n".join(log.read_text(errors="replace") for log in logs if log.exists())
    counts = Counter(re.findall(r"job (\S+) started", text))
    return sum(1 for i in ids if counts.get(i, 0) > 1)


def summary(rows: list[dict[str, Any]], stats: dict[str, Any], expected: int, logs: list[Path]) -> dict[str, Any]:
    """The stage's figures from its debates' rows and the latency server's counts."""
    errors = [r for r in rows if r["job"] in ("failed", "cancelled") or r["record"] == "failed"]
    lost = [r for r in rows if r not in errors and not (r["job"] == "done" and r["record"] == "done"
                                                       and r["document"])]
    asked = stats.get("agents") or {}
    extra = {a: asked.get(a, 0) - expected for a in AGENTS if asked.get(a, 0) != expected}
    return {
        "debates": len(rows), "done": sum(r["job"] == "done" and r["record"] == "done" for r in rows),
        "errors": len(errors), "error_messages": dict(Counter(r["error"][:160] for r in errors).most_common(5)),
        "lost": len(lost), "lost_states": dict(Counter(f"job {r['job']}, record {r['record']}" for r in lost)),
        "model_calls_beyond_one_per_stage": sum(max(0, v) for v in extra.values()),
        "model_calls_by_agent": asked, "calls_off_by_agent": extra, "jobs_started_twice": started_twice(logs, [
            r["id"] for r in rows]),
        "first_section_s": spread([r["first_section_s"] for r in rows if r["first_section_s"] is not None]),
        "finished_s": spread([r["finished_s"] for r in rows if r["finished_s"] is not None]),
        "waited_in_queue_s": spread([r["dequeued_s"] for r in rows if r["dequeued_s"] is not None]),
        "first_section_after_start_s": spread([r["first_section_s"] - r["dequeued_s"] for r in rows
                                               if r["first_section_s"] is not None and r["dequeued_s"] is not None]),
        "most_running_at_once": most_at_once(rows), "ran_by_host": dict(Counter(r["host"] for r in rows)),
        "max_in_flight_at_model": stats.get("max_in_flight")}


def cpu_per_debate(result: dict[str, Any]) -> float | None:
    """The workers' CPU seconds per debate they ran (the model costs none here: the substance checks' embedding
    model, the engine and the store writes do)."""
    seconds = sum(h.get("cpu_s", 0) for h in result["hosts"] if h["process"].startswith("worker"))
    ran = result["ran_by_host"].get("worker", 0)
    return round(seconds / ran, 2) if ran else None


def hosts(workers: list[subprocess.Popen], streamlit: subprocess.Popen | None = None) -> list[dict[str, Any]]:
    made = [{"process": f"worker {i}", "pid": w.pid, **proc_status(w.pid)} for i, w in enumerate(workers)]
    if streamlit is not None:
        made.append({"process": "dashboard (streamlit)", "pid": streamlit.pid, **proc_status(streamlit.pid)})
    return made


# -- dashboard sessions --------------------------------------------------------------------------------------------


async def one_session(browser, url: str, store_url: str, shots: Path, n: int, concurrency: int,
                      timeout_s: float) -> dict[str, Any]:
    """A user's page: load, pick the latency server, generate, follow to the finished debate."""
    from playwright.async_api import expect

    row: dict[str, Any] = {"session": n, "error": ""}
    context = await browser.new_context(viewport={"width": 1440, "height": 900})
    page = await context.new_page()
    try:
        started = time.perf_counter()
        await page.goto(url, timeout=timeout_s * 1000)
        await expect(page.get_by_text("Think both sides. Decide with clarity.")).to_be_visible(
            timeout=timeout_s * 1000)
        row["header_s"] = round(time.perf_counter() - started, 3)
        row["first_paint_s"] = round(await page.evaluate(
            "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1") / 1000, 3)
        await page.get_by_role("button", name="Use it").click(timeout=timeout_s * 1000)
        await expect(page.get_by_text("Using the OpenAI-compatible server", exact=False)).to_be_visible(
            timeout=timeout_s * 1000)
        await page.get_by_test_id("stSidebar").get_by_text("Generation").click()
        spin = page.get_by_role("spinbutton", name="Concurrency")
        await spin.fill(str(concurrency))
        await spin.press("Enter")
        await page.wait_for_timeout(500)
        question = page.get_by_role("textbox", name="Question or claim")
        await question.fill(flagship().proposition)
        await question.blur()
        await page.wait_for_timeout(300)
        row["clicked_at"] = time.time()
        started = time.perf_counter()
        await page.get_by_role("button", name="Generate Pro & Con Debate").click()
        await expect(page.get_by_text("Analyzing both sides...")).to_be_visible(timeout=timeout_s * 1000)
        row["click_to_progress_s"] = round(time.perf_counter() - started, 3)
        await page.wait_for_url("**debate=*", timeout=timeout_s * 1000)
        row["debate"] = page.url.split("debate=")[1][:32]
        synthesis = page.get_by_text("MODERATOR SYNTHESIS")
        store, deadline, ended = open_store(store_url), time.monotonic() + timeout_s, None
        while not await synthesis.count():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no finished debate shown in {timeout_s:g} s")
            if ended is None:
                status = (await asyncio.to_thread(store.get, row["debate"])).status
                ended = time.monotonic() if status in ("done", "failed", "paused") else None
            elif time.monotonic() - ended > STUCK_S:  # finished, and the page still shows its progress
                row["stuck_page"] = True
                await page.screenshot(path=str(shots / f"session-{n}-stuck.png"), full_page=True)
                await page.reload()
                await synthesis.wait_for(timeout=120_000)
                row["shown_after_reload"] = True
                raise RuntimeError(f"the page did not show the finished debate within {STUCK_S:g} s of its end; "
                                   "a reload did")
            await page.wait_for_timeout(250)
        row["click_to_done_s"] = round(time.perf_counter() - started, 3)
    except Exception as exc:  # a session that fails is an error row; the others go on
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    finally:
        await context.close()
    return row


async def sessions(url: str, store_url: str, shots: Path, count: int, concurrency: int, timeout_s: float,
                   warm: bool) -> list[dict[str, Any]]:
    from browser_kit import CHROMIUM, CHROMIUM_ARGS
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            if warm:  # the server's first page imports the app: start-up, not load (bench/startup.py has it)
                page = await browser.new_page()
                await page.goto(url, timeout=180_000)
                await page.get_by_text("Think both sides. Decide with clarity.").wait_for(timeout=180_000)
                await page.close()
                return []
            return list(await asyncio.gather(*(one_session(browser, url, store_url, shots, n, concurrency, timeout_s)
                                               for n in range(count))))
        finally:
            await browser.close()


def session_summary(rows: list[dict[str, Any]], debates: list[dict[str, Any]], url: str) -> dict[str, Any]:
    store = open_store(url)
    done = 0
    for r in rows:
        r["bench_debates_running_at_click"] = running_at(debates, r["clicked_at"]) if r.get("clicked_at") else None
        if r.get("debate"):
            with contextlib.suppress(Exception):
                r["record"] = store.get(r["debate"]).status
                done += r["record"] == "done"
    values = lambda key: [r[key] for r in rows if r.get(key) is not None]  # noqa: E731
    return {"sessions": len(rows), "errors": sum(bool(r["error"]) for r in rows),
            "error_messages": dict(Counter(r["error"] for r in rows if r["error"]).most_common(5)),
            "debates_done": done, "stuck_pages": sum(bool(r.get("stuck_page")) for r in rows),
            "first_paint_s": spread([v for v in values("first_paint_s") if v >= 0]),
            "header_s": spread(values("header_s")), "click_to_progress_s": spread(values("click_to_progress_s")),
            "click_to_done_s": spread(values("click_to_done_s")),
            "bench_debates_running_at_click": spread(values("bench_debates_running_at_click")), "rows": rows}


# -- stages --------------------------------------------------------------------------------------------------------


def concurrent_stage(admin: str, args: argparse.Namespace, env_extra: dict[str, str], logs: Path) -> dict[str, Any]:
    n, hosts_n = args.debates, args.concurrent_workers
    per_host = math.ceil(n / hosts_n)
    if per_host > MAX_PER_HOST:
        raise SystemExit(f"{n} debates at once on {hosts_n} workers is {per_host} a worker; a host runs at most "
                         f"{MAX_PER_HOST}: use --concurrent-workers {math.ceil(n / MAX_PER_HOST)} or more")
    url = pg_kit.new_database(admin)
    os.environ["DATABASE_URL"] = url
    folder = logs / "concurrent"
    folder.mkdir()
    result: dict[str, Any] = {"stage": "concurrent", "workers": hosts_n, "worker_concurrency": per_host,
                              "load_before": loadavg()}
    started: list[subprocess.Popen] = []
    ui = None
    try:
        with latency_server(args.ttft, args.tps, folder) as (base_url, stats):
            provider = OpenAIProvider(MODEL, base_url=base_url, concurrency=args.endpoint_concurrency)
            started = start_workers(hosts_n, url, per_host, folder)
            if args.sessions:
                ui, page_url = dashboard(url, base_url, env_extra, folder)
                asyncio.run(sessions(page_url, url, folder, 0, args.endpoint_concurrency, 180, warm=True))
            t0 = time.monotonic()
            queued = enqueue(url, provider, n)
            result["enqueue_s"] = round(time.monotonic() - t0, 2)
            session_rows: list[dict[str, Any]] = []
            if args.sessions:
                session_rows = asyncio.run(sessions(page_url, url, folder, args.sessions, args.endpoint_concurrency,
                                                    args.timeout, warm=False))
            finished = wait_finished([d for d, _ in queued], time.monotonic() + args.timeout)
            result["seconds"] = round(time.monotonic() - t0, 2)
            result["timed_out"] = not finished
            result["hosts"] = hosts(started, ui)
        rows = outcomes(url, queued)
        sessions_generated = sum(bool(r.get("debate")) for r in session_rows)
        result.update(summary(rows, stats, n + sessions_generated, list(folder.glob("worker-*.log"))))
        result["worker_cpu_s_per_debate"] = cpu_per_debate(result)
        if args.sessions:
            result["dashboard"] = session_summary(session_rows, rows, url)
    finally:
        stop(started + ([ui] if ui else []))
        runtime.reset()
    result["load_after"] = loadavg()
    return result


def queued_stage(admin: str, args: argparse.Namespace, logs: Path) -> dict[str, Any]:
    url = pg_kit.new_database(admin)
    os.environ["DATABASE_URL"] = url
    folder = logs / "queued"
    folder.mkdir()
    result: dict[str, Any] = {"stage": "queued", "workers": args.workers,
                              "worker_concurrency": args.queued_concurrency, "load_before": loadavg()}
    started: list[subprocess.Popen] = []
    try:
        with latency_server(args.ttft, args.tps, folder) as (base_url, stats):
            provider = OpenAIProvider(MODEL, base_url=base_url, concurrency=args.endpoint_concurrency)
            t0 = time.monotonic()
            queued = enqueue(url, provider, args.queued)
            result["enqueue_s"] = round(time.monotonic() - t0, 2)
            started = start_workers(args.workers, url, args.queued_concurrency, folder)
            serving = time.time()
            finished = wait_finished([d for d, _ in queued], time.monotonic() + args.timeout)
            result["timed_out"] = not finished
            result["hosts"] = hosts(started)
        rows = outcomes(url, queued)
        result.update(summary(rows, stats, args.queued, list(folder.glob("worker-*.log"))))
        result["worker_cpu_s_per_debate"] = cpu_per_debate(result)
        ends = [r["end"] for r in rows if r["job"] == "done" and r["end"]]
        if ends:
            drain = max(ends) - serving
            result["drain_s"] = round(drain, 2)
            result["per_minute"] = round(len(ends) / drain * 60, 1)
        result["service_s"] = spread([r["end"] - r["start"] for r in rows if r["start"] and r["end"]
                                      and r["job"] == "done"])
    finally:
        stop(started)
        runtime.reset()
    result["load_after"] = loadavg()
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    env_extra = {} if args.semantic_checks is None else {"CLEARSIDE_SEMANTIC_CHECKS": str(args.semantic_checks)}
    os.environ.update(env_extra)  # the workers inherit it (bench/scale.py's workers take this environment)
    os.environ.setdefault("OPENAI_API_KEY", "not-needed")
    logs = Path(tempfile.mkdtemp(prefix="clearside-load-logs-"))
    commit = git("rev-parse", "HEAD")
    result: dict[str, Any] = {"settings": dict(vars(args)), "cpu_count": os.cpu_count(), "commit": commit,
                              "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                              "load_before": loadavg(), "logs": str(logs), "stages": []}
    print(f"load before: {result['load_before']} on {os.cpu_count()} CPUs; logs in {logs}", flush=True)
    with pg_kit.server() as admin:
        more_connections(admin, args.pg_max_connections)
        if args.debates:
            result["stages"].append(concurrent_stage(admin, args, env_extra, logs))
            print(json.dumps(brief(result["stages"][-1])), flush=True)
        if args.queued:
            result["stages"].append(queued_stage(admin, args, logs))
            print(json.dumps(brief(result["stages"][-1])), flush=True)
    result["load_after"] = loadavg()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    print(f"wrote {out}")
    return result


def more_connections(admin: str, count: int) -> None:
    """Raise PostgreSQL's max_connections (default 100) on the throwaway server: every host keeps pools on the
    store, the system database and the progress rows. Needs pg_kit.restart; else the server keeps its own."""
    restart = getattr(pg_kit, "restart", None)
    restartable = getattr(pg_kit, "restartable", lambda _: False)
    if not count or restart is None or not restartable(admin):
        return
    import psycopg

    with psycopg.connect(admin.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET max_connections = {int(count)}")
    restart(admin)


def brief(stage: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in stage.items() if k not in ("dashboard", "model_calls_by_agent")}


def table(result: dict[str, Any]) -> str:
    lines = [f"\nload {result['load_before']} -> {result['load_after']} on {result['cpu_count']} CPUs\n",
             "| stage | debates | workers × concurrency | errors | lost | beyond one call a stage | started twice "
             "| most at once | first section p50 / p95 s | finished p50 / p95 s | per minute | worker peak RSS MB "
             "| worker CPU s | CPU s a debate |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in result["stages"]:
        workers = [h for h in s.get("hosts", []) if h["process"].startswith("worker")]
        lines.append(
            f"| {s['stage']} | {s['debates']} | {s['workers']} × {s['worker_concurrency']} | {s['errors']} "
            f"| {s['lost']} | {s['model_calls_beyond_one_per_stage']} | {s['jobs_started_twice']} "
            f"| {s['most_running_at_once']} | {s['first_section_s']['p50']} / {s['first_section_s']['p95']} "
            f"| {s['finished_s']['p50']} / {s['finished_s']['p95']} | {s.get('per_minute', '—')} "
            f"| {', '.join(str(h.get('vmhwm', '?')) for h in workers)} "
            f"| {', '.join(str(h.get('cpu_s', '?')) for h in workers)} | {s.get('worker_cpu_s_per_debate')} |")
    for s in result["stages"]:
        d = s.get("dashboard")
        if d:
            lines += ["", f"dashboard: {d['sessions']} sessions, {d['errors']} errors, {d['debates_done']} debates "
                      f"done, {d['stuck_pages']} pages stuck until a reload; p50 / p95 s:", "",
                      "| figure | p50 | p95 | max |", "|---|---|---|---|"]
            for key in ("first_paint_s", "header_s", "click_to_progress_s", "click_to_done_s",
                        "bench_debates_running_at_click"):
                lines.append(f"| {key} | {d[key]['p50']} | {d[key]['p95']} | {d[key]['max']} |")
            ui = [h for h in s.get("hosts", []) if h["process"].startswith("dashboard")]
            if ui:
                lines.append(f"\ndashboard process: peak RSS {ui[0].get('vmhwm')} MB, CPU {ui[0].get('cpu_s')} s; "
                             f"debates by host: {s['ran_by_host']}")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    made.add_argument("--debates", type=int, default=100, help="concurrent debates (stage 1; 0 skips it)")
    made.add_argument("--concurrent-workers", type=int, default=2, help="workers running them (at most "
                      f"{MAX_PER_HOST} debates each)")
    made.add_argument("--queued", type=int, default=1000, help="debates queued up front (stage 2; 0 skips it)")
    made.add_argument("--workers", type=int, default=4, help="workers draining the queue")
    made.add_argument("--queued-concurrency", type=int, default=4, help="jobs each draining worker runs at once")
    made.add_argument("--sessions", type=int, default=20, help="Chromium dashboard sessions during stage 1")
    made.add_argument("--endpoint-concurrency", type=int, default=64, help="requests in flight at the model "
                      "server per process (the provider's concurrency; also set in each session's sidebar, max 64)")
    made.add_argument("--semantic-checks", type=int, choices=(0, 1), default=None, help="CLEARSIDE_SEMANTIC_CHECKS "
                      "for the workers and the dashboard (default: as configured, on)")
    made.add_argument("--ttft", type=float, default=0.3)
    made.add_argument("--tps", type=float, default=60.0)
    made.add_argument("--timeout", type=float, default=3600, help="seconds a stage may take")
    made.add_argument("--pg-max-connections", type=int, default=500)
    made.add_argument("--out", default=str(RESULTS))
    return made


def report(quick: bool = True) -> list[dict]:
    """The benchmark report's rows (bench/run_all.py): quick mode runs 8 concurrent debates on 2 workers with 2
    dashboard sessions, then 24 queued debates drained by 2 workers; full mode the defaults (100; 1,000 on 4; 20)."""
    from browser_kit import CHROMIUM

    argv = ["--debates", "8", "--queued", "24", "--workers", "2", "--sessions", "2"] if quick else []
    if not os.path.exists(CHROMIUM):
        argv += ["--sessions", "0"]
    return rows(run(parser().parse_args(argv + ["--timeout", "900" if quick else "3600"])))


def rows(result: dict[str, Any]) -> list[dict]:
    """The report's rows of one run's result (what ``run`` returned and wrote to its --out file)."""
    rows: list[dict] = []
    for s in result["stages"]:
        name = f"{s['debates']} {'concurrent' if s['stage'] == 'concurrent' else 'queued'} debates"
        where = f"{s['workers']} worker(s) × {s['worker_concurrency']}"
        rows += [
            {"figure": f"{name}: errors", "value": s["errors"], "unit": "", "goal": "0", "met": s["errors"] == 0,
             "note": f"{where}; {s['done']} done; {s['error_messages'] or 'no error'}"},
            {"figure": f"{name}: lost", "value": s["lost"], "unit": "", "goal": "0", "met": s["lost"] == 0,
             "note": "queued but not finished with its document" + (" (timed out)" if s["timed_out"] else "")},
            {"figure": f"{name}: run twice", "value": s["model_calls_beyond_one_per_stage"] + s["jobs_started_twice"],
             "unit": "", "goal": "0", "met": not (s["model_calls_beyond_one_per_stage"] or s["jobs_started_twice"]),
             "note": f"model calls beyond one a stage {s['model_calls_beyond_one_per_stage']}, jobs started twice "
                     f"{s['jobs_started_twice']}"},
            {"figure": f"{name}: to the first section, p95", "value": s["first_section_s"]["p95"], "unit": "s",
             "goal": None, "met": None, "note": f"p50 {s['first_section_s']['p50']} s, from its queueing; from its "
                                                f"start p50 {s['first_section_after_start_s']['p50']} s"},
            {"figure": f"{name}: to the finished debate, p95", "value": s["finished_s"]["p95"], "unit": "s",
             "goal": None, "met": None, "note": f"p50 {s['finished_s']['p50']} s; most running at once "
                                                f"{s['most_running_at_once']}"},
            {"figure": f"{name}: memory per worker (peak)", "unit": "MB", "goal": None, "met": None,
             "value": max((h.get("vmhwm", 0) for h in s["hosts"] if h["process"].startswith("worker")), default=None),
             "note": "VmHWM, MB: " + ", ".join(f"{h['process']} {h.get('vmhwm')}" for h in s["hosts"])
                     + f"; worker CPU {s['worker_cpu_s_per_debate']} s a debate (checks and store writes)"},
        ]
        if s["stage"] == "queued" and s.get("per_minute") is not None:
            rows.append({"figure": f"{name}: drain rate", "value": s["per_minute"], "unit": "debates/min",
                         "goal": None, "met": None, "note": f"{s['drain_s']} s from every worker serving"})
        d = s.get("dashboard")
        if d:
            rows += [
                {"figure": f"{d['sessions']} dashboard sessions: errors", "value": d["errors"], "unit": "",
                 "goal": "0", "met": d["errors"] == 0 and d["debates_done"] == d["sessions"],
                 "note": f"{d['debates_done']} debates done; {d['stuck_pages']} pages stuck until a reload; "
                         f"{d['error_messages'] or 'no error'}"},
                {"figure": f"{d['sessions']} dashboard sessions: first paint, p95", "value": d["first_paint_s"]["p95"],
                 "unit": "s", "goal": None, "met": None,
                 "note": f"p50 {d['first_paint_s']['p50']} s, while {name} run"},
                {"figure": f"{d['sessions']} dashboard sessions: click to progress, p95",
                 "value": d["click_to_progress_s"]["p95"], "unit": "s", "goal": None, "met": None,
                 "note": f"p50 {d['click_to_progress_s']['p50']} s; click to done p50 "
                         f"{d['click_to_done_s']['p50']} s"}]
    return rows


def main() -> None:
    run(parser().parse_args())


if __name__ == "__main__":
    main()
