"""The mode registry: for each kind of saved debate, how to load, export, import, resume and re-run it, and
which page of the dashboard shows it.

``MODES`` has one entry per kind the store saves (``clearside.store.KINDS``): ``static``, ``live`` and
``perspectives``. ``BATCH_MODES`` has the two kinds of batch, ``comparison`` and ``regression``: each of their
debates is saved as a static one (the static entry serves it), named by a row of the store's ``runs`` table
under the batch's id; the batch entry says which workflow runs it, how to load and export it whole, and which
page shows it. A batch is not imported whole (its debates are, one by one), and never needs a Resume: the runtime
finishes an interrupted batch itself; running it again is its page's Run (or ``regress`` / ``compare``).

Pages are named as strings (``app_pages/...``, relative to clearside_ui's directory): this module never imports
Streamlit. Resume and re-run share one signature,
``(store, debate_id, provider, *, temperature, strategy=None, owner=None)``:

* ``rerun`` saves a new debate on the saved one's question (its parent) and returns its job, already working;
* ``resume`` returns the saved debate's job, not yet working: its page starts it the way the person asked (a
  static job's ``start``, a live job's ``resume``, a perspectives job's ``answer`` or ``retry``).
  ``resumes_on_page`` says the Library leaves that to the mode's page (a live debate's step mode, a perspectives
  session's answers); a static debate resumes straight from the Library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import runtime
from .errors import InputError, NotFound
from .inputs import read_json
from .live import exchange as live_exchange
from .live import job as live_job
from .live import workflow as live_workflow
from .perspectives import exchange as perspectives_exchange
from .perspectives import job as perspectives_job
from .perspectives import load as load_perspectives
from .perspectives import workflow as perspectives_workflow
from .quality import batch as quality_batch
from .quality import compare
from .quality import job as quality_job
from .quality import workflow as quality_workflow
from .quality.understanding import exchange as understanding_exchange
from .render import aif, aif_foreign, argdown
from .static import exchange as static_exchange
from .static import job as static_job
from .static import workflow as static_workflow
from .static.recorder import load_run
from .store import KINDS, Store
from .store.exchange import Imported

Job = runtime.Job  # what resume and re-run return: a StaticJob, a LiveJob or a PerspectivesJob


@dataclass(frozen=True)
class Mode:
    kind: str
    label: str  # "Live debate"
    short: str  # "Live": the Library's kind filter
    page: str  # the page that shows a saved one
    page_title: str  # that page's title: "Timeline"
    param: str  # its query parameter on that page, holding the debate's id
    link: str  # the share link, relative to the dashboard's root: "timeline?debate={}"
    watch_page: str  # the page that follows one while it runs (a re-run, a resume)
    watch_title: str
    watch_param: str
    resumes_on_page: bool
    load: Callable[[Store, str], Any]  # the saved debate in the mode's own shape
    export: Callable[[Store, str], dict[str, Any]]  # the file `export` writes, secrets scrubbed
    resume: Callable[..., Job]
    rerun: Callable[..., Job]
    cancel: Callable[[Store, str], None] | None = None  # stop its job (``cancel ID``): what finished stays saved
    recognizes: Callable[[dict[str, Any]], bool] | None = None  # whether an imported file is of this mode
    import_data: Callable[[Store, dict[str, Any], str], Imported] | None = None  # None: not importable
    # What the dashboard says about it (plain text; ``icon`` a Material Symbols name, as Streamlit takes it)
    icon: str = ""
    resume_help: str = ""  # what Resume does
    rerun_note: str = ("Re-runs the question as a new {kind} debate with **{use}** (choose the model in the "
                       "sidebar); the original is kept.")  # {kind}, {use}: the sidebar's provider:model
    open_note: str = ""  # how to view it when another page links to it (default: open it on its page)

    def share_link(self, debate_id: str) -> str:
        return self.link.format(debate_id)

    def where(self) -> str:
        """How to view a saved one: ``open_note``, else "open it on the <page> page."."""
        return self.open_note or f"open it on the {self.page_title} page."


def _job_of(store: Store, debate_id: str) -> str:
    job_id = static_workflow.job_of(debate_id, store)
    if not job_id:
        raise InputError(f"{debate_id} was never run on the job runtime (it ran in a process of its own): there is "
                         "no job to cancel.")
    return job_id


def _cancel_live(store: Store, debate_id: str) -> None:
    runtime.cancel(_job_of(store, debate_id), store.url)  # the turn in flight halts within half a second


def _cancel_perspectives(store: Store, session_id: str) -> None:
    perspectives_workflow.cancel_session(session_id, _job_of(store, session_id), store=store)


def _cancel_static(store: Store, debate_id: str) -> None:
    _job_of(store, debate_id)
    static_workflow.cancel_static(debate_id, store=store)


MODES: dict[str, Mode] = {mode.kind: mode for mode in (
    # The Debate page is the app's default page, served at the root ("./"): its url_path "debate" would be
    # "page not found".
    Mode("static", "Static debate", "Static", page="app_pages/debate.py", page_title="Debate", param="debate",
         link="./?debate={}", watch_page="app_pages/debate.py", watch_title="Debate", watch_param="debate",
         resumes_on_page=False, load=load_run, export=static_exchange.export_static, resume=static_job.resume_job,
         rerun=static_job.rerun_job, cancel=_cancel_static, recognizes=static_exchange.is_document,
         import_data=static_exchange.import_static,
         icon=":material/article:", resume_help="Generates only what is missing, with the sidebar's model."),
    # A live debate is replayed on the Timeline page and followed (or resumed) on the Live page.
    Mode("live", "Live debate", "Live", page="app_pages/timeline.py", page_title="Timeline", param="debate",
         link="timeline?debate={}", watch_page="app_pages/live.py", watch_title="Live", watch_param="live",
         resumes_on_page=True, load=live_exchange.load_live, export=live_exchange.export_live,
         resume=live_job.resume_job, rerun=live_job.rerun_job, cancel=_cancel_live,
         recognizes=live_exchange.is_transcript,
         import_data=live_exchange.import_live, icon=":material/record_voice_over:",
         resume_help="Opens it on the Live debate page, which resumes it from its last finished turn.",
         open_note="replay it turn by turn on the Timeline page."),
    Mode("perspectives", "Perspectives session", "Perspectives", page="app_pages/perspectives.py",
         page_title="Perspectives", param="perspectives", link="perspectives?perspectives={}",
         watch_page="app_pages/perspectives.py", watch_title="Perspectives", watch_param="perspectives",
         resumes_on_page=True, load=load_perspectives, export=perspectives_exchange.export_perspectives,
         resume=perspectives_job.resume_job, rerun=perspectives_job.rerun_job, cancel=_cancel_perspectives,
         icon=":material/diversity_3:",
         resume_help="Opens it on the Perspectives page: answer its questions there, or resume it from its last "
                     "finished step.",
         rerun_note="Re-runs the question as a new perspectives session with **{use}** (choose the model in the "
                    "sidebar): it asks its own clarifying questions, answered on the Perspectives page; the "
                    "original is kept."),
)}
assert tuple(MODES) == KINDS, "every kind the store saves has exactly one mode"


def _comparison(store: Store, batch_id: str) -> dict[str, Any]:
    report, documents = compare.load(store, batch_id)
    return {"kind": "comparison", "batch": batch_id, "report": report, "debates": documents}


def _regression(store: Store, batch_id: str) -> dict[str, Any]:
    batch = quality_batch.find_batch(store, batch_id)
    if batch is None or batch.suite == compare.SUITE:
        raise NotFound(f"No regression batch has the id {batch_id}: `python -m clearside runs` lists them.")
    runs = [{k: row.get(k) for k in ("id", "debate_id", "status", "metrics", "provider", "model")}
            | {k: (row.get("data") or {}).get(k) for k in ("item", "index", "wall_seconds", "error")}
            for row in batch.rows]
    return {"kind": "regression", "batch": batch.id, "suite": batch.suite, "provider": batch.spec,
            "baseline": batch.baseline, "planned": batch.planned, "metrics": batch.aggregate(), "runs": runs}


def _with_documents(load: Callable[[Store, str], dict[str, Any]]) -> Callable[[Store, str], dict[str, Any]]:
    """A regression batch's export: what ``load`` says, and each finished debate's document by run id."""
    def export(store: Store, batch_id: str) -> dict[str, Any]:
        data = load(store, batch_id)
        data["debates"] = {run["id"]: store.get(run["debate_id"]).document for run in data["runs"]
                           if run["status"] == "done" and run["debate_id"] and store.exists(run["debate_id"])}
        return data
    return export


@dataclass(frozen=True)
class BatchMode:
    kind: str  # "comparison"
    label: str  # "Model comparison"
    workflow: str  # the runtime's name of the workflow that runs one (``status`` reads it)
    suites: tuple[str, ...]  # the ``runs`` suites its debates are saved under
    page: str  # the page that shows one
    page_title: str
    link: str  # its share link, relative to the dashboard's root
    load: Callable[[Store, str], dict[str, Any]]  # the batch: its report and runs (NotFound for another id)
    export: Callable[[Store, str], dict[str, Any]]  # the file ``export BATCH`` writes: the batch and its documents

    def share_link(self, batch_id: str) -> str:
        return self.link.format(batch_id)


BATCH_MODES: dict[str, BatchMode] = {entry.kind: entry for entry in (
    BatchMode("comparison", "Model comparison", quality_workflow.COMPARE, (compare.SUITE,), page="app_pages/compare.py",
              page_title="Compare", link="compare?compare={}", load=_comparison, export=_comparison),
    BatchMode("regression", "Regression batch", quality_workflow.REGRESS, tuple(quality_batch.SUITES),
              page="app_pages/regression.py", page_title="Regression", link="regression?batch={}",
              load=_regression, export=_with_documents(_regression)),
)}


def batch_mode(store: Store, batch_id: str) -> BatchMode:
    """The kind of the batch ``batch_id`` (NotFound when no saved run belongs to it)."""
    batch = quality_batch.find_batch(store, batch_id)
    if batch is None:
        raise NotFound(f"No debate or batch has the id {batch_id}: `python -m clearside list` shows saved debates "
                       "and `python -m clearside runs` batches.")
    return batch_mode_of_suite(batch.suite)


def batch_mode_of_suite(suite: str) -> BatchMode:
    """The batch kind whose debates are saved under ``suite`` (a suite of the user's own is a regression's)."""
    return next((entry for entry in BATCH_MODES.values() if suite in entry.suites), BATCH_MODES["regression"])


def batch_mode_of_workflow(name: str) -> BatchMode | None:
    """The batch kind a runtime workflow runs, if it runs one."""
    return next((entry for entry in BATCH_MODES.values() if entry.workflow == name), None)


# Every kind of job a page or a command holds, by the kind it is kept under (``runtime.JobRegistry.get(id, kind)``):
# each keeps the one job contract (:class:`clearside.runtime.Job`) and its snapshot speaks :data:`runtime.STATUSES`.
JOB_KINDS: dict[str, type] = {job.kind: job for job in (
    static_job.StaticJob, static_job.ChallengeJob, static_job.RemapJob, live_job.LiveJob,
    perspectives_job.PerspectivesJob, quality_job.RegressionJob, quality_job.CompareJob)}

# The modules that define every mode's workflows: DBOS runs only workflows defined before it launches, so every
# host (the dashboard, ``python -m clearside worker``, a command that runs its work here) starts through host().
WORKFLOW_MODULES = (static_workflow, live_workflow, perspectives_workflow, quality_workflow)


def host(store_url: str | None = None, *, role: str = "host", concurrency: int | None = None,
         serve: bool = True) -> runtime.Host:
    """This process as a runtime host for every mode's workflows (``concurrency``: jobs on model servers at once
    per host, a team-wide setting; ``serve=False``: an in-process host, see :mod:`clearside.runtime.host`)."""
    return runtime.start_host(store_url, role=role, concurrency=concurrency, serve=serve)


def mode(kind: str) -> Mode:
    try:
        return MODES[kind]
    except KeyError:
        raise InputError(f"Unknown debate kind {kind!r}: ClearSide knows {', '.join(MODES)}.") from None


def export_data(store: Store, debate_id: str) -> dict[str, Any]:
    """The debate as its file (its mode decides the format), secrets scrubbed; a batch's id: the batch whole."""
    if not store.exists(debate_id) and quality_batch.find_batch(store, debate_id) is not None:
        return batch_mode(store, debate_id).export(store, debate_id)
    kind = store.get(debate_id).kind  # an unknown id: the store's NotFound
    data = mode(kind).export(store, debate_id)
    if kind == "static" and (answers := understanding_exchange.exported(store, debate_id)):
        data[understanding_exchange.KEY] = answers  # the understanding check's answers travel with the debate
    return data


def import_data(store: Store, data: Any, source: str = "the file") -> Imported:
    """Add one exported debate to ``store``; refuses (InputError) anything it cannot read faithfully."""
    if not isinstance(data, dict):
        raise InputError(f"Not imported: {source} holds JSON but not a ClearSide debate (expected an object).")
    if aif.is_aif(data) or argdown.is_argdown_json(data):
        return _import_map(store, data, source)
    if data.get("kind") in BATCH_MODES and "batch" in data:
        raise InputError(f"Not imported: {source} is a whole {BATCH_MODES[data['kind']].label.lower()} "
                         f"(`export` of batch {data['batch']}); a batch is not imported whole: export its "
                         "debates one by one (`python -m clearside export DEBATE_ID`) and import those.")
    answers = understanding_exchange.read(data[understanding_exchange.KEY]) if (
        understanding_exchange.KEY in data) else []  # checked before anything is saved
    data = {key: value for key, value in data.items() if key != understanding_exchange.KEY}
    for candidate in MODES.values():
        if candidate.recognizes is not None and candidate.import_data is not None and candidate.recognizes(data):
            imported = candidate.import_data(store, data, source)
            return _with_answers(store, imported, answers) if answers else imported
    raise InputError(f"Not imported: {source} is neither a ClearSide debate document (with meta.schema_version) "
                     "nor a live transcript (with version and turns).")


def _import_map(store: Store, data: dict[str, Any], source: str) -> Imported:
    """An AIF map ClearSide made, or Argdown's JSON export of ClearSide's Argdown: its debate again (the document it
    carries, with the map's texts). Any other AIF map holds no debate (no FOR and AGAINST cases, no moderator's
    map): it is kept read-only as the map it is (kind ``map``, :mod:`clearside.store.maps`), with what could and
    could not be placed in its notes."""
    if argdown.is_argdown_json(data):
        document, notes = argdown.argdown_document(data, source)
    elif not aif.is_own(data):
        return _import_foreign(store, data, source)
    else:
        document, notes = aif.own_document(data, source)
    imported = static_exchange.import_static(store, document, source)
    imported.notes[:0] = notes
    return imported


def _import_foreign(store: Store, data: dict[str, Any], source: str) -> Imported:
    shown = aif_foreign.foreign_map(data, source)  # refuses (InputError) what it cannot read, before anything is kept
    map_id = store.save_map(data, title=shown.title(), source=source)
    notes = [f"A read-only map: {source} is an AIF map ClearSide did not make (a ClearSide debate needs FOR and "
             f"AGAINST cases and a moderator's map). {shown.placed()}"]
    if shown.unplaced:
        notes.append(shown.not_placed())
    return Imported(id=map_id, kind="map", from_version="AIF", notes=notes)


def _with_answers(store: Store, imported: Imported, answers: list[dict[str, Any]]) -> Imported:
    """The understanding check's answers added to the debate just imported; the debate is removed again when they
    cannot be saved, so an import stays all or nothing."""
    try:
        store.restore_answers(imported.id, answers)
    except Exception:
        store.delete(imported.id)
        raise
    imported.notes.append(f"Restored {len(answers)} understanding-check answer{'s' if len(answers) != 1 else ''} "
                          "(no browser owns them: `python -m clearside understanding` lists them).")
    return imported


def import_file(store: Store, path: str) -> Imported:
    return import_data(store, read_json(path, "the import file"), path)
