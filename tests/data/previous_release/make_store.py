"""Build the previous-release compatibility fixture: a store written by release b95a83e, and what that release
says about every item in it (tests/test_previous_release.py reads it back with the code under test).

Run it with the code of release b95a83e (it imports ``clearside`` from the current directory and the reply
builders of that release's ``tests/helpers.py`` and ``tests/perspectives_kit.py``):

    git worktree add /tmp/release b95a83e && cd /tmp/release && python3 /path/to/make_store.py OUT_DIR

OUT_DIR (created; it must not hold a store yet) receives:

* ``store.db``: the SQLite store (``DATABASE_URL=sqlite:///OUT_DIR/store.db``), and ``jobs.db`` beside it, the
  runtime's system database (``clearside.runtime.system_url``), every job in it finished;
* ``manifest.json``: each item (id, kind, what it is), each command whose output is expected and its file, each
  dashboard page to open and the downloads it offers;
* ``expected/``: those outputs, made by the release from a copy of the store: ``python -m clearside export``,
  ``render`` (every format, of the exported file), ``status --format json``, ``list``; and the files the
  dashboard pages offer for download (streamlit's AppTest).

Nothing here calls a real model: every reply comes from the scripted provider, in this process, which hosts the
runtime (``clearside.hosting.host``) and runs the dashboard's own jobs (``static_job``, ``live_job``,
``perspectives.job``, ``batch_jobs``). Ids are random (``uuid4``): the manifest records them. Generating again
makes a new store with new ids and times: replace the whole folder, never part of it.
"""

# ruff: noqa: I001 - the imports name release b95a83e's modules, which later code moved
from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RELEASE = "b95a83e"
REPO = Path.cwd()
OUT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None
if OUT is None or (OUT / "store.db").exists():
    sys.exit(f"usage: python3 {Path(__file__).name} OUT_DIR (a folder without a store.db), from a checkout of "
             f"release {RELEASE}")
OUT.mkdir(parents=True, exist_ok=True)
DATA = Path(tempfile.mkdtemp(prefix="clearside-fixture-data-"))  # the data folder: nothing lands in ~/.clearside
os.environ["CLEARSIDE_DATA"] = str(DATA)
os.environ["DATABASE_URL"] = f"sqlite:///{OUT / 'store.db'}"
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import helpers  # noqa: E402  (the release's reply builders)
import perspectives_kit as kit  # noqa: E402

from clearside import hosting, personas, remap, runtime, sources, workflows  # noqa: E402
from clearside.batch_jobs import CompareJob, RegressionJob  # noqa: E402
from clearside.engine import DebateRun  # noqa: E402
from clearside.live import LiveConfig, LiveDebate  # noqa: E402
from clearside.live_job import LiveJob  # noqa: E402
from clearside.perspectives import PerspectivesRun  # noqa: E402
from clearside.perspectives.job import PerspectivesJob  # noqa: E402
from clearside.providers.scripted import ScriptedProvider  # noqa: E402
from clearside.references import flagship  # noqa: E402
from clearside.schema import AssumptionStance, Weights  # noqa: E402
from clearside.static_job import ChallengeJob, RemapJob, new_job  # noqa: E402
from clearside.store import open_store  # noqa: E402

QUESTION = helpers.QUESTION  # "Should we adopt microservices architecture?"
AGENTS = ("orchestrator", "pro", "con", "moderator")
ITEMS: list[dict[str, Any]] = []


def item(name: str, kind: str, item_id: str, what: str, **extra: Any) -> None:
    ITEMS.append({"name": name, "kind": kind, "id": item_id, "what": what, **extra})
    print(f"{name:28} {kind:13} {item_id}  {what}", flush=True)


def until(check, timeout: float = 60, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def scripted(**overrides: Any) -> ScriptedProvider:
    provider = ScriptedProvider(chunk_size=16)
    helpers.scripted_debate(provider, **overrides)
    return provider


# -- static debates -----------------------------------------------------------------------------------------------

def static_finished(store) -> None:
    """Finished, then a challenge answered and a re-map saved as version 1 (the dashboard's three jobs)."""
    provider = scripted()
    snap = new_job(store, DebateRun.from_input(QUESTION, geography="Europe", timeframe="next three years",
                                               domain="Software architecture"), provider,
                   temperature=0.4).start().wait(120)
    assert snap.state == "done", snap.error
    document = snap.document
    provider.enqueue(helpers.challenge_reply(), agent="challenge")
    state, _, error = ChallengeJob(store, snap.id, "question_assumption", document.pro.assumptions[0],
                                   provider).start().wait(120)
    assert state == "done", error
    reply = helpers.moderator_reply()
    reply["decision_hinges"] = list(reversed(reply["decision_hinges"]))
    provider.enqueue(*({name: reply[name]} for name in remap.REMAPPED), agent="moderator")
    stance = AssumptionStance(side="con", index=0, assumption=document.con.assumptions[0], stance="reject")
    job = RemapJob(store, snap.id, Weights(economic=3), [stance], provider).start()
    state, _, error = job.wait(120)
    assert state == "done" and job.version == 1, error
    item("static-finished", "static", snap.id, "finished static debate with one challenge answer (question an "
         "assumption) and one re-map saved as version 1 (economic weight 3, a con assumption rejected)")


PERSONA_POINTS = {
    "economist": [("economic", "independent scaling of each microservice lowers infrastructure cost",
                   "each service scales with its own load instead of the whole application scaling"),
                  ("economic", "running many microservices multiplies the cost of monitoring and operations",
                   "each service needs its own pipeline, logging and on-call ownership")],
    "ethicist": [("ethical", "small autonomous teams owning their microservices gain fair responsibility",
                  "clear ownership of a service makes accountability for failures transparent"),
                 ("ethical", "the on-call burden of many microservices falls unfairly on a few engineers",
                  "night pages multiply when every service can fail on its own")],
}


def persona_reply(name: str, stance: str) -> dict[str, Any]:
    tag = name.capitalize()

    def argument(i: int) -> dict[str, Any]:
        category, claim, explanation = PERSONA_POINTS[name][i]
        return {"category": category, "claim": f"{tag}: {claim}", "explanation": f"{tag} explains that {explanation}.",
                "evidence_type": ("projection", "fact")[i], "confidence": ("medium", "high")[i]}

    return {"stance": stance, "arguments_for": [argument(0)], "arguments_against": [argument(1)],
            "assumptions": [f"{tag} assumes that the team keeps growing every year",
                            f"{tag} assumes that the platform budget stays stable over time"],
            "uncertainties": [f"{tag} is unsure whether cost savings survive real usage",
                              f"{tag} is unsure how long the teams take to adapt"]}


def static_personas(store) -> None:
    provider = ScriptedProvider(chunk_size=16)
    question = "Should our company adopt microservices for its new platform?"
    provider.enqueue(helpers.orchestrator_reply(question), agent="orchestrator")
    provider.enqueue(persona_reply("economist", "for"), agent="persona-1")
    provider.enqueue(persona_reply("ethicist", "against"), agent="persona-2")
    moderator = helpers.moderator_reply()
    moderator["assumption_conflicts"] = [{"pro_assumption": "P1", "con_assumption": "C1",
                                          "conflict_description": "Moderator: the lenses read the team's growth "
                                                                  "differently"}]
    moderator["lens_divergence"] = ["Moderator: the economist weighs cost while the ethicist weighs the on-call "
                                    "burden"]
    provider.enqueue(moderator, agent="moderator")
    run = DebateRun.from_input(question, personas=personas.choose(["economist", "ethicist"], []))
    snap = new_job(store, run, provider, temperature=0.4).start().wait(120)
    assert snap.state == "done", snap.error
    item("static-personas", "static", snap.id, "finished persona debate (economist for, ethicist against)")


SCALING = ("Our platform team measured the move in 2025. Scaling each service on its own halved the monthly "
           "hosting bill within a year. The checkout service alone handles the holiday peaks now.")
TRACING = ("An incident review found that outages crossed four services on average. Debugging one failed request "
           "took the on-call engineer three hours without tracing. The team has no tracing budget this year.")
GOOD = "Scaling each service on its own halved the monthly hosting bill within a year."
TRACED = "Debugging one failed request took the on-call engineer three hours without tracing."


def cited(reply: dict[str, Any], *pairs: tuple[str, str] | None) -> dict[str, Any]:
    for n, argument in enumerate(reply["arguments"]):
        pair = pairs[n] if n < len(pairs) else None
        argument["citations"] = [{"passage": pair[0], "quote": pair[1]}] if pair else []
    return reply


def static_sources(store) -> None:
    files = sources.read_sources([("scaling report.txt", SCALING.encode()), ("incidents.md", TRACING.encode())])
    question = "Should we adopt a microservices architecture for our checkout system?"
    provider = scripted(orchestrator=helpers.orchestrator_reply(question),
                        pro=cited(helpers.side_reply("pro"), ("S1.1", GOOD)),
                        con=cited(helpers.side_reply("con"), ("S2.1", TRACED)))
    snap = new_job(store, DebateRun.from_input(question, sources=files), provider, temperature=0.4).start().wait(120)
    assert snap.state == "done", snap.error
    assert snap.document.pro.arguments[0].support == "cited", "the quote verified"
    item("static-sources", "static", snap.id, "finished debate with two sources (a .txt and a .md), one verified "
         "quote per side")


def static_failed(store) -> None:
    broken = {"areas_of_agreement": ["Only one key here"]}
    question = "Should our team move its monolith to microservices this year?"
    provider = scripted(orchestrator=helpers.orchestrator_reply(question), moderator=broken)
    provider.enqueue(broken, broken, agent="moderator")
    snap = new_job(store, DebateRun.from_input(question), provider, temperature=0.4).start().wait(120)
    assert snap.state == "failed", snap.state
    item("static-failed", "static", snap.id, "failed static debate: the moderator's reply failed its schema three "
         "times; proposition, pro and con saved")


def static_paused(store) -> None:
    question = "Should a ten-person startup split its product into microservices?"
    provider = ScriptedProvider(chunk_size=4, chunk_delay=0.02)
    helpers.scripted_debate(provider, orchestrator=helpers.orchestrator_reply(question))
    job = new_job(store, DebateRun.from_input(question), provider, temperature=0.4).start()
    until(lambda: job.run.proposition is not None or job.state().finished, 120, "the proposition")
    assert job.run.proposition is not None, job.snapshot().error
    job.cancel()
    snap = job.wait(120)
    assert snap.state == "cancelled", snap.state
    until(lambda: workflows.wait_stopped(job.job_id), 120, "the cancelled step to stop")
    until(lambda: store.get(job.id).status == "paused", 30, "the paused status")
    item("static-paused", "static", job.id, "static debate cancelled by the user after its proposition (saved as "
         "paused: Resume completes it)")


# -- live debates -------------------------------------------------------------------------------------------------

class Responder(helpers.LiveResponder):
    """The release's live responder, whose proposition restates ``question`` (not the microservices default)."""

    def __init__(self, question: str, **options: Any) -> None:
        super().__init__(**options)
        self.question = question

    def build(self, schema: dict[str, Any], agent: str, n: int, key: str = "") -> Any:
        if key == "normalized_question":
            return self.question
        return super().build(schema, agent, n, key)


def live_finished(store) -> None:
    provider = ScriptedProvider(fallback=helpers.LiveResponder(speech_words=30), chunk_size=16)
    debate = LiveDebate.create(QUESTION, provider, config=LiveConfig(words_per_minute=150), store=store)
    job = LiveJob(debate, step_mode=True).start()
    until(lambda: job.snapshot().status == "waiting", 120, "step mode to wait")
    for n in (1, 2):
        job.step()
        until(lambda n=n: (lambda s: len(s.transcript.turns) == n and s.status == "waiting")(job.snapshot()), 120,
              f"turn {n}")
    job.submit("direct_question", "What is your weakest assumption about team size?", "pro")
    until(lambda: job.snapshot().transcript.interventions[0].status == "answered", 120, "the answer")
    job.submit("inject_evidence", "A 2024 survey found 40 percent of teams merged services back.")
    job.set_step_mode(False)
    snap = job.wait(120)
    assert snap.status == "done" and snap.transcript.document is not None, (snap.status, snap.error)
    item("live-finished", "live", job.id, "finished live debate (21 turns): a direct question to pro answered after "
         "turn 2, evidence injected and delivered")


def live_stopped(store) -> None:
    question = "Should a bank move its core ledger to microservices?"
    provider = ScriptedProvider(fallback=Responder(question, speech_words=60), chunk_size=6, chunk_delay=0.01)
    debate = LiveDebate.create(question, provider,
                               config=LiveConfig(words_per_minute=150), store=store)
    job = LiveJob(debate).start()
    until(lambda: (lambda s: len(s.transcript.turns) >= 3 and len(s.speech) > 20)(job.snapshot()), 120, "turn 4")
    job.pause()
    until(lambda: (lambda s: s.status == "paused" and s.transcript.state == "paused")(job.snapshot()), 120, "pause")
    until(lambda: live_workflow_waiting(job.job_id), 30, "the workflow to wait")
    job.cancel()
    until(lambda: runtime.state(job.job_id).finished and job.job_id not in workflows.RUNNING, 120, "the cancel")
    saved = store.get(job.id)
    assert saved.status == "paused", saved.status
    from clearside.live.exchange import load_live

    turns = len(load_live(store, job.id).turns)
    item("live-stopped", "live", job.id, f"live debate paused mid-turn after {turns} finished turns (the speech so "
         "far kept), then its job cancelled")


def live_workflow_waiting(job_id: str) -> bool:
    from clearside import live_workflow

    state = live_workflow.STATE.get(job_id) or {}
    return bool(state.get("waiting") and state.get("paused"))


# -- perspectives sessions ----------------------------------------------------------------------------------------

def perspectives_finished(store) -> None:
    provider = ScriptedProvider(script=kit.script(2), chunk_size=16)
    job = PerspectivesJob(PerspectivesRun.create(kit.QUESTION, provider, rounds=2, store=store))
    snap = job.ask().wait(120)
    assert snap.session.state == "CLARIFICATION_PENDING", snap.session.state
    snap = job.answer(kit.ANSWERS).wait(120)
    assert snap.session.state == "COMPLETE", (snap.session.state, snap.error)
    item("perspectives-finished", "perspectives", job.id, "finished perspectives session: clarification answered, "
         "2 rounds, synthesis")


def perspectives_waiting(store) -> None:
    provider = ScriptedProvider(script=kit.script(0), chunk_size=16)
    question = "My manager keeps moving my deadlines without telling me. What can I do?"
    job = PerspectivesJob(PerspectivesRun.create(question, provider, rounds=2, store=store))
    snap = job.ask().wait(120)
    assert snap.session.state == "CLARIFICATION_PENDING", snap.session.state
    item("perspectives-waiting", "perspectives", job.id, "perspectives session waiting for the answers to its "
         "clarifying questions")


# -- batches ------------------------------------------------------------------------------------------------------

def flagship_provider(model: str = "") -> ScriptedProvider:
    replies = helpers.flagship_replies()
    return ScriptedProvider(model, script={agent: [replies[agent]] for agent in AGENTS}, chunk_size=64)


def regression(store) -> None:
    job = RegressionJob("flagship", flagship_provider(), store, runs=1).start()
    until(lambda: job._state().finished, 180, "the regression batch")  # noqa: SLF001
    assert job.state == "done", job.error
    item("regression", "regression", job.id, "regression batch of the built-in flagship suite, 1 run")
    for n, row in enumerate(job.rows(), 1):
        item(f"regression-debate-{n}", "static", row["debate_id"], f"the debate of the regression batch's run {n}",
             batch=job.id)


def comparison(store) -> None:
    job = CompareJob(flagship().proposition, [flagship_provider("model-a"), flagship_provider("model-b")],
                     store).start()
    until(lambda: job._state().finished, 180, "the comparison")  # noqa: SLF001
    assert job.state == "done", job.error
    item("comparison", "comparison", job.id, "model comparison of the flagship question on two scripted models "
         "(scripted:model-a, scripted:model-b)")
    labels = {job._label(row): row for row in job.rows()}  # noqa: SLF001
    for n, label in enumerate(sorted(labels), 1):
        item(f"comparison-debate-{n}", "static", labels[label]["debate_id"],
             f"the debate of the comparison's model {label}", batch=job.id)


def build() -> None:
    hosting.host(role="fixture")
    store = open_store()
    for make in (static_finished, static_personas, static_sources, static_failed, static_paused, live_finished,
                 live_stopped, perspectives_finished, perspectives_waiting, regression, comparison):
        make(store)
    unfinished = [w for status in ("PENDING", "ENQUEUED") for w in runtime.client().list_workflows(status=status)]
    assert not unfinished, f"jobs left unfinished: {[(w.workflow_id, w.status) for w in unfinished]}"
    runtime.reset()
    store.close()


def checkpoint() -> None:
    """Fold the SQLite write-ahead logs into the files, so the two files alone are the store."""
    for name in ("store.db", "jobs.db"):
        with contextlib.closing(sqlite3.connect(OUT / name)) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for leftover in [*OUT.glob("*.db-wal"), *OUT.glob("*.db-shm")]:
        leftover.unlink()


# -- what the release says about it -------------------------------------------------------------------------------

def commands() -> list[dict[str, Any]]:
    """Every command whose output is expected, in order; ``@NAME`` in an argument is the path of the file an
    earlier command of this list wrote (its actual output)."""
    out = [{"args": ["list"], "file": "list.txt"},
           {"args": ["list", "--format", "json", "--limit", "100"], "file": "list.json"},
           {"args": ["runs"], "file": "runs.txt"},
           {"args": ["runs", "--format", "json"], "file": "runs.json"}]
    for entry in ITEMS:
        name, item_id = entry["name"], entry["id"]
        out.append({"args": ["export", item_id], "file": f"{name}.export.json"})
        out.append({"args": ["status", item_id, "--format", "json"], "file": f"{name}.status.json"})
        if entry["kind"] == "static" and entry.get("finished", True):
            for fmt, ext in (("md", "md"), ("quick", "quick.md"), ("script", "script.md"), ("json", "json")):
                out.append({"args": ["render", f"@{name}.export.json", "--format", fmt],
                            "file": f"{name}.render.{ext}"})
    return out


def run_commands(copy: Path, expected: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{copy / 'store.db'}", "CLEARSIDE_DATA": str(copy / "data")}
    done = []
    for command in commands():
        args = [str(expected / a[1:]) if a.startswith("@") else a for a in command["args"]]
        result = subprocess.run([sys.executable, "-m", "clearside", *args], cwd=REPO, env=env, capture_output=True,
                                text=True, timeout=300)
        if result.returncode not in (0, 1, 2):  # 1: status of a failed or cancelled job; 2: refused (an unfinished
            raise SystemExit(f"{args}: exit {result.returncode}\n{result.stderr}")  # debate has no document)
        (expected / command["file"]).write_text(result.stdout, encoding="utf-8")
        errors = [line.replace(str(copy), "<FIXTURE>") for line in result.stderr.splitlines()
                  if line.startswith("error:")]
        done.append({**command, "exit": result.returncode, **({"errors": errors} if errors else {})})
        print(f"exit {result.returncode}  clearside {' '.join(command['args'])}", flush=True)
    return done


PAGES = {"static": [("page", "app_pages/debate.py", "debate")],
         "live": [("page", "app_pages/timeline.py", "debate"), ("watch", "app_pages/live.py", "live")],
         "perspectives": [("page", "app_pages/perspectives.py", "perspectives")],
         "comparison": [("page", "app_pages/compare.py", "compare")],
         "regression": [("page", "app_pages/regression.py", "batch")]}


def open_pages(copy: Path, expected: Path) -> list[dict[str, Any]]:
    """Each item on its dashboard page (and a live debate on the Live page too), as AppTest runs it: what the page
    shows of it, and every file it offers for download."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.testing.v1 import AppTest

    from clearside.modes import BATCH_MODES, MODES
    from clearside.providers import get_provider

    for kind, pages in PAGES.items():  # the registry agrees with this table
        entry = MODES.get(kind) or BATCH_MODES[kind]
        assert entry.page == pages[0][1], (kind, entry.page)
    os.environ["DATABASE_URL"] = f"sqlite:///{copy / 'store.db'}"
    os.environ["CLEARSIDE_DATA"] = str(copy / "data")
    files: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        files[file_id] = path_or_data
        return file_id

    MemoryMediaFileStorage.load_and_get_id = record
    store = open_store()
    out = []
    for entry in ITEMS:
        record_ = store.get(entry["id"]) if store.exists(entry["id"]) else None
        for role, page, param in PAGES[entry["kind"]]:
            at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
            at.session_state["provider_override"] = get_provider("scripted")
            at.session_state["detected_servers"] = []
            at.query_params[param] = entry["id"]
            at.switch_page(f"clearside_ui/{page}")
            at.run()
            assert not at.exception, (entry["name"], page, at.exception)
            errors = [e.value for e in at.error]
            assert not errors, (entry["name"], page, errors)
            text = "\n".join(e.value for kind in ("title", "header", "subheader", "markdown", "caption", "info",
                                                  "warning", "success", "text_area", "text_input", "selectbox")
                             for e in at.get(kind) if isinstance(getattr(e, "value", None), str)).replace("\\", "")
            # a debate or session: its title or question; a batch: its question, else its id (or its first 8)
            candidates = [record_.title, record_.question] if record_ is not None else []
            candidates += [entry.get("question", "")] + ([entry["id"], entry["id"][:8]] if record_ is None else [])
            shows = next((c for c in candidates if c and c in text), None)
            assert shows, (entry["name"], page, candidates, text[:2000])
            downloads = {}
            for button in at.get("download_button"):
                label = button.proto.label
                data = files[button.proto.url.rsplit("/", 1)[-1].split(".")[0]]
                slug = "".join(c if c.isalnum() else "-" for c in label.lower()).strip("-")
                file = f"{entry['name']}.{role}.{slug}.txt"
                (expected / file).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
                downloads[label] = file
            out.append({"item": entry["name"], "role": role, "shows": shows, "downloads": downloads})
            print(f"page {role:5} {entry['name']:28} shows {shows[:50]!r}; downloads {sorted(downloads)}", flush=True)
    runtime.reset()
    MemoryMediaFileStorage.load_and_get_id = original
    return out


def describe() -> None:
    store = open_store()
    from clearside import regress

    for entry in ITEMS:
        if store.exists(entry["id"]):
            record = store.get(entry["id"])
            entry.update(question=record.question, title=record.title, status=record.status)
            entry["finished"] = record.document is not None
        else:
            batch = regress.find_batch(store, entry["id"])
            entry.update(suite=batch.suite, planned=batch.planned)
            if entry["kind"] == "comparison":
                entry["question"] = flagship().proposition
    runtime.reset()
    store.close()


def main() -> None:
    started = time.monotonic()
    build()
    describe()
    checkpoint()
    expected = OUT / "expected"
    if expected.exists():
        shutil.rmtree(expected)
    expected.mkdir()
    with tempfile.TemporaryDirectory(prefix="clearside-fixture-copy-") as tmp:
        copy = Path(tmp)
        for name in ("store.db", "jobs.db"):
            shutil.copy2(OUT / name, copy / name)
        done = run_commands(copy, expected)
        pages = open_pages(copy, expected)
        for path in expected.iterdir():  # the copy's own folder is the one thing a run may not share
            text = path.read_text(encoding="utf-8")
            if str(copy) in text:
                path.write_text(text.replace(str(copy), "<FIXTURE>"), encoding="utf-8")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    manifest = {
        "release": commit or RELEASE,
        "made_by": "tests/data/previous_release/make_store.py (see its docstring)",
        "store": "store.db", "system_database": "jobs.db",
        "items": [{k: v for k, v in entry.items()} for entry in ITEMS],
        "commands": done,
        "pages": pages,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.rmtree(DATA, ignore_errors=True)
    print(f"done in {time.monotonic() - started:.0f} s: {len(ITEMS)} items, {len(done)} commands, {len(pages)} pages "
          f"-> {OUT}", flush=True)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # workflow threads are not daemons
