"""Regression runs: a suite's propositions debated n times on one provider:model, scored, compared.

Each debate is saved in the store as it runs and gets a row in ``runs`` the
moment it finishes (suite, provider, model, prompt versions, headline metrics,
with the batch id in ``data``), so a batch stopped half-way keeps what it did.
A batch passes when its mean metrics meet the absolute gates and, once a batch
of the suite has been blessed, when no metric is worse than the baseline's by
more than its tolerance plus the larger of the two spreads. Only ``bless``
moves a baseline.

Versions are pinned: each run's ``data["versions"]`` records the metric suite, the embedding model, the ClearSide
version and the provider settings (its ``prompt_versions`` column the prompts). A comparison across a metric-suite
or embedding-model change (``compare_runs``, a batch against its baseline) is refused with :class:`VersionChange`
unless ``allow_version_change``, then shown with a warning; other differences are notes. Blessing records a row of
the bless history: a note of why (required on the flagship suite) and a warning when the batch is not
significantly better than the baseline it replaces on the quality metrics (``bless``).
"""

from __future__ import annotations

import functools
import importlib.metadata
import statistics
import subprocess
import threading
import time
import tomllib
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import prompts
from ..errors import ClearSideError, InputError, NotFound
from ..providers import Provider
from ..runtime import status
from ..runtime.events import Event
from ..static import swap
from ..static.recorder import PROMPTS, start_static
from ..static.run import DebateRun
from ..store import Store
from . import metrics, paired, references, suites
from .references import Reference
from .scored import run_scored
from .suites import Case, Suite

SUITES: dict[str, Callable[[], list[Reference]]] = {
    "flagship": lambda: [references.flagship()],
    "argkp-dev": lambda: list(references.argkp_dev()),
}
# Absolute gates (min / max on the batch mean) and tolerances against the baseline's mean.
# Spec 001 §8.3: schema validation and moderator neutrality are hard gates; the rest may not
# get worse than the blessed baseline. Time and tokens are reported, never gated (machine load).
THRESHOLDS: dict[str, dict[str, float]] = {
    "schema_valid": {"min": 1.0},
    "neutrality_violations": {"max": 0.0},
    "false_certainty": {"tolerance": 0.5},
    "count_ratio": {"tolerance": 0.15},
    "length_ratio": {"tolerance": 0.15},
    "evidence_divergence": {"tolerance": 0.2},
    "confidence_gap": {"tolerance": 0.3},
    "assumption_linkage": {"tolerance": 0.15},
    "conflicts_two_sided": {"tolerance": 0.25},
    "diversity": {"tolerance": 0.05},
    "duplicate_pairs": {"tolerance": 0.5},
    "off_topic": {"tolerance": 0.1},
    "grounding": {"tolerance": 0.2},
    "coverage": {"tolerance": 0.1},
    "stance_margin": {"min": 0.0, "tolerance": 0.1},
    "hinge_coverage": {"tolerance": 0.25},
    # substance checks: garbage left in the finished document must stay at zero; what the checks caught on
    # the way (repaired or re-asked) may rise only within tolerance, or the model or prompts got worse
    "garbage_left": {"max": 0.0},
    "checks_caught": {"tolerance": 1.0},
    "reasks": {"tolerance": 0.5},
    # the swap check (only in batches that ask for it): no gate of its own, no worse than a baseline that has it
    "flip_rate": {"tolerance": 0.2},
}


def suite_items(suite: str) -> list[Reference]:
    """A built-in suite's references (what an enqueued batch's workers debate)."""
    if suite not in SUITES:
        raise InputError(f"Unknown suite {suite!r}: use one of {', '.join(SUITES)}.")
    return SUITES[suite]()


def load_suite(suite: str | Suite) -> Suite:
    """A built-in suite by name, or the user's suite file at that path (see :mod:`clearside.suites`)."""
    return suite if isinstance(suite, Suite) else suites.resolve(suite)


def suite_names(store: Store) -> list[str]:
    """Every suite the store has runs of: the built-ins first, then the user's suites, then comparisons."""
    found = set(store.suites())
    return [*SUITES, *sorted(found - {*SUITES, "compare"}), "compare"]


def stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "mean": round(statistics.fmean(values), 4),
            "stdev": round(statistics.stdev(values), 4) if len(values) > 1 else 0.0,
            "min": round(min(values), 4), "max": round(max(values), 4), "values": [round(v, 4) for v in values]}


def aggregate(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Mean and spread of every headline metric over a batch's finished runs (failed runs count as invalid)."""
    names = [name for name in metrics.SUMMARY if any(name in (r.get("metrics") or {}) for r in rows)]
    return {name: stats([float(r["metrics"][name]) for r in rows if name in (r.get("metrics") or {})])
            for name in names}


def check(current: dict[str, dict[str, Any]], baseline: dict[str, dict[str, Any]] | None,
          thresholds: dict[str, dict[str, float]] | None = None) -> list[dict[str, Any]]:
    """One row per metric: its gates, its delta from the baseline and pass, fail or info."""
    thresholds = {**THRESHOLDS, **(thresholds or {})}
    out = []
    for name, now in current.items():
        if not now.get("n"):
            continue
        direction = metrics.SUMMARY[name][0]
        rule = thresholds.get(name, {})
        row: dict[str, Any] = {"metric": name, "better": direction, "mean": now["mean"], "stdev": now["stdev"],
                               "status": "pass" if rule else "info", "reasons": []}
        if "min" in rule and now["mean"] < rule["min"]:
            row["reasons"].append(f"mean {now['mean']:g} is below the gate {rule['min']:g}")
        if "max" in rule and now["mean"] > rule["max"]:
            row["reasons"].append(f"mean {now['mean']:g} is above the gate {rule['max']:g}")
        base = (baseline or {}).get(name)
        if base and base.get("n"):
            delta = now["mean"] - base["mean"]
            worse = -delta if direction == "higher" else delta
            spread = max(now["stdev"], base["stdev"])
            row.update(baseline_mean=base["mean"], baseline_stdev=base["stdev"], delta=round(delta, 4),
                       spread=spread)
            if "tolerance" in rule:
                allowed = rule["tolerance"] + spread
                row["allowed"] = round(allowed, 4)
                if worse > allowed + 1e-9:
                    row["reasons"].append(f"{worse:g} worse than the baseline's {base['mean']:g}; allowed "
                                          f"{rule['tolerance']:g} + spread {spread:g}")
        if row["reasons"]:
            row["status"] = "fail"
        out.append(row)
    return out


@dataclass
class Batch:
    """The runs of one ``regress`` (or comparison) invocation."""

    id: str
    suite: str
    provider: str
    model: str
    created_at: str
    rows: list[dict[str, Any]]

    @property
    def baseline(self) -> bool:
        return any(r["baseline"] for r in self.rows)

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.model}" if self.model else self.provider

    @property
    def started_at(self) -> str:
        """When the batch started (microseconds; older batches: their first run's creation, to the second)."""
        return (self.rows[0].get("data") or {}).get("started_at") or self.created_at

    @property
    def planned(self) -> int:
        """How many runs the batch was started with (older batches: how many it saved)."""
        return int((self.rows[0].get("data") or {}).get("planned") or len(self.rows))

    def state(self, job: Any = None) -> str:
        """Its job's status while the runtime has it under way (``job``: the batch's
        :class:`clearside.runtime.JobState`), else interrupted or done: see :mod:`clearside.runtime.status`."""
        return status.batch_state(self.rows, job)

    def aggregate(self) -> dict[str, dict[str, Any]]:
        return aggregate([r for r in self.rows if r["status"] in ("done", "failed")])


def batches(store: Store, suite: str) -> list[Batch]:
    """A suite's batches, oldest first (by the moment the batch started, to the microsecond)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in store.runs(suite):
        grouped.setdefault((row.get("data") or {}).get("batch") or row["id"], []).append(row)
    found = [Batch(id=key, suite=suite, provider=rows[0]["provider"], model=rows[0]["model"],
                   created_at=rows[0]["created_at"], rows=rows) for key, rows in grouped.items()]
    return sorted(found, key=lambda b: (b.started_at, b.created_at))


def find_batch(store: Store, batch_id: str) -> Batch | None:
    """A batch of any suite (built-in, the user's or comparisons) by its id."""
    rows = store.runs(batch=batch_id)  # through the runs' batch index
    if not rows:
        return None
    rows = [r for r in rows if r["suite"] == rows[0]["suite"]]
    return Batch(id=batch_id, suite=rows[0]["suite"], provider=rows[0]["provider"], model=rows[0]["model"],
                 created_at=rows[0]["created_at"], rows=rows)


def baseline(store: Store, suite: str) -> Batch | None:
    return next((b for b in reversed(batches(store, suite)) if b.baseline), None)


# -- pinned versions ---------------------------------------------------------------------------------------------

# What a run records (``data["versions"]``, its ``prompt_versions`` column the prompts), in words. A change of the
# first two makes metrics incomparable: a comparison across one is refused unless allowed, then warned about. The
# others are listed as notes.
VERSION_FIELDS = {"metric_suite": "metric suite", "embedding_model": "embedding model", "prompts": "prompt versions",
                  "clearside": "ClearSide version", "provider": "provider settings"}
INCOMPARABLE = ("metric_suite", "embedding_model")
ALLOW_FLAG = "--allow-version-change"


class VersionChange(InputError):
    """Two batches (or a batch and its baseline) were scored by different metric suites or embedding models."""


@functools.cache
def clearside_version() -> str:
    """ClearSide's version: the installed package's, else the checkout's pyproject.toml, with the git commit of a
    checkout (``0.1.0+g1a2b3c4``), so two runs of one release made from different code are told apart."""
    root = Path(__file__).resolve().parents[2]
    try:
        version = importlib.metadata.version("clearside")
    except importlib.metadata.PackageNotFoundError:
        try:
            version = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            version = "unknown"
    if (root / ".git").exists():
        try:
            commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True, timeout=5, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            commit = ""
        if commit:
            version = f"{version}+g{commit}"
    return version


def provider_settings(provider: Provider, *, temperature: float, retries: int, concurrency: int,
                      swap_check: bool = False) -> dict[str, Any]:
    """The settings a batch ran with: provider:model, temperature, re-asks, concurrency, the swap check, and the
    server (Ollama's host, an OpenAI-compatible base URL) where there is one. Never a key."""
    out: dict[str, Any] = {"spec": provider.spec, "temperature": temperature, "retries": retries,
                           "concurrency": concurrency, "swap_check": bool(swap_check)}
    for name in ("host", "base_url"):
        value = getattr(provider, name, None)
        if isinstance(value, str) and value:
            out[name] = value
    return out


def pinned_versions(provider: Provider, *, temperature: float, retries: int, concurrency: int,
                    swap_check: bool = False) -> dict[str, Any]:
    """What every run of a batch records in ``data["versions"]`` (the prompts are in its own column)."""
    return {"metric_suite": metrics.suite_version(), "embedding_model": metrics.embedding_model(),
            "clearside": clearside_version(),
            "provider": provider_settings(provider, temperature=temperature, retries=retries,
                                          concurrency=concurrency, swap_check=swap_check)}


def batch_versions(batch: Batch) -> dict[str, Any]:
    """The versions a batch was made with: its first run's that records them, and its prompts. A batch made before
    versions were pinned has only ``prompts``."""
    recorded = next(((r.get("data") or {}).get("versions") for r in batch.rows
                     if isinstance((r.get("data") or {}).get("versions"), dict)), None) or {}
    prompts_used = next((r.get("prompt_versions") for r in batch.rows if r.get("prompt_versions")), None)
    return {**recorded, **({"prompts": prompts_used} if prompts_used else {})}


def _changed(a: dict[str, Any], b: dict[str, Any]) -> str:
    keys = [k for k in sorted({*a, *b}) if a.get(k) != b.get(k)]
    return ", ".join(f"{k} {a.get(k, '—')} → {b.get(k, '—')}" for k in keys)


def version_differences(a: dict[str, Any], b: dict[str, Any],
                        names: tuple[str, str] = ("A", "B")) -> tuple[list[str], list[str]]:
    """``(changes, notes)`` between two batches' versions: ``changes`` make the metrics incomparable (metric
    suite, embedding model); ``notes`` are the other differences, and a batch that records no versions."""
    changes, notes = [], []
    for key in INCOMPARABLE:
        if a.get(key) and b.get(key) and a[key] != b[key]:
            changes.append(f"{VERSION_FIELDS[key]} {a[key]} in {names[0]}, {b[key]} in {names[1]}")
    unrecorded = [name for name, v in zip(names, (a, b), strict=True) if not v.get("metric_suite")]
    if unrecorded:
        notes.append(f"{' and '.join(unrecorded)} record{'s' if len(unrecorded) == 1 else ''} no metric suite, "
                     "embedding model, ClearSide version or provider settings (made before versions were pinned, or "
                     "queued for the workers): a change of metric suite or embedding model cannot be ruled out.")
    if a.get("prompts") and b.get("prompts") and a["prompts"] != b["prompts"]:
        notes.append(f"{VERSION_FIELDS['prompts']} differ: {_changed(a['prompts'], b['prompts'])}.")
    if a.get("clearside") and b.get("clearside") and a["clearside"] != b["clearside"]:
        notes.append(f"{VERSION_FIELDS['clearside']} differs: {a['clearside']} in {names[0]}, {b['clearside']} in "
                     f"{names[1]}.")
    if isinstance(a.get("provider"), dict) and isinstance(b.get("provider"), dict) and a["provider"] != b["provider"]:
        notes.append(f"{VERSION_FIELDS['provider']} differ: {_changed(a['provider'], b['provider'])}.")
    return changes, notes


def refuse_version_change(what: str, changes: list[str], action: str) -> VersionChange:
    """The refusal of a comparison across a metric-suite or embedding-model change, naming the flag."""
    return VersionChange(
        f"{what} across a version change: {'; '.join(changes)}. Metrics from a different metric suite or embedding "
        f"model are not comparable. Pass {ALLOW_FLAG} to {action} anyway, with a warning.",
        dashboard=f"{what} across a version change: {'; '.join(changes)}. Metrics from a different metric suite or "
                  "embedding model are not comparable; tick “Compare across the version change” to see them "
                  "anyway, with a warning.")


def version_warning(changes: list[str]) -> str:
    return (f"Compared across a version change ({'; '.join(changes)}, {ALLOW_FLAG}): the differences may come from "
            "the change of measure, not from the debates.")


def age(stamp: str, now: datetime | None = None) -> str:
    """How long ago ``stamp`` (ISO 8601) was, in words: ``3 days``, ``5 hours``, ``under a minute``."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return "unknown"
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    seconds = max(0.0, ((now or datetime.now(UTC)) - moment).total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return "under a minute"


def versions_text(versions: dict[str, Any]) -> str:
    """A batch's versions in one line (``metric suite 1.0.0 (checks 1.2.0); embedding model ...``)."""
    if not versions.get("metric_suite"):
        parts = ["versions not recorded (made before they were pinned, or queued for the workers)"]
    else:
        parts = [f"{VERSION_FIELDS[k]} {versions[k]}" for k in ("metric_suite", "embedding_model", "clearside")
                 if versions.get(k)]
        settings = versions.get("provider") or {}
        if settings:
            parts.append("provider " + ", ".join(f"{k} {v}" for k, v in settings.items()))
    if versions.get("prompts"):
        parts.append("prompts " + ", ".join(f"{k} {v}" for k, v in sorted(versions["prompts"].items())))
    return "; ".join(parts)


def baseline_summary(base: Batch) -> dict[str, Any]:
    """A baseline as reports show it: its batch, model, when, how long ago, and its versions."""
    return {"batch": base.id, "provider": base.spec, "created_at": base.created_at, "age": age(base.created_at),
            "versions": batch_versions(base)}


# -- blessing ----------------------------------------------------------------------------------------------------

FLAGSHIP = "flagship"
NOTE_REQUIRED = (FLAGSHIP,)  # suites whose baseline moves only with a note of why (spec 000)


def quality_metrics(thresholds: dict[str, dict[str, float]] | None = None) -> list[str]:
    """The metrics a baseline is judged on: every gated metric (time and tokens are reported, never gated)."""
    rules = {**THRESHOLDS, **(thresholds or {})}
    return [name for name in metrics.SUMMARY if rules.get(name)]


@dataclass
class Blessed:
    """What ``bless`` did: the batch now the baseline, the one it replaced, the note and the warnings recorded."""

    batch: Batch
    previous: str | None
    note: str
    warnings: list[str]


def _batch_named(store: Store, batch_or_run: str) -> Batch:
    wanted = (batch_or_run or "").strip().lower()
    # a batch's id (or a run outside any batch) through the index; else a run of a batch, by its own id
    for row in store.runs(batch=wanted) or [r for r in store.runs() if r["id"] == wanted]:
            batch_id = (row.get("data") or {}).get("batch") or row["id"]
            return next(b for b in batches(store, row["suite"]) if b.id == batch_id)
    raise NotFound(f"No run or batch has the id {batch_or_run}: `python -m clearside runs` lists them.")


def review_against(store: Store, current: Batch | None, batch: Batch) -> tuple[list[str], dict[str, Any]]:
    """Is ``batch`` significantly better than the baseline ``current`` on the quality metrics? ``(warnings,
    review)``: a warning when no quality metric improved significantly (paired, Holm-corrected: ``compare_runs``),
    when one got significantly worse, when they cannot be compared, and for a version change."""
    if current is None:
        return [], {"compared": False, "reason": "no baseline before"}
    new, old = batch.id[:8], current.id[:8]
    try:
        report = compare_runs(store, current.id, batch.id, allow_version_change=True)
    except ClearSideError as exc:
        return ([f"Batch {new} could not be compared run by run with the baseline {old} it replaces ({exc}), so it "
                 "is not known to be significantly better on the quality metrics."],
                {"compared": False, "against": current.id, "reason": str(exc)})
    quality = set(quality_metrics())
    rows = [m for m in report["metrics"] if m["metric"] in quality]
    improved = [m["metric"] for m in rows if m["verdict"] == "improvement"]
    worse = [m["metric"] for m in rows if m["significant"] and m["worse_by"] > 0]
    warnings = []
    why = (" Spec 000: change the flagship baseline only if reasoning quality improves."
           if batch.suite == FLAGSHIP else "")
    if not improved:
        warnings.append(f"Batch {new} is not significantly better than the baseline {old} it replaces on the quality "
                        f"metrics: none improved significantly (Holm p < {report['alpha']:g}) over "
                        f"{report['pairs']} pair(s) of runs"
                        + (f", and {', '.join(worse)} got significantly worse" if worse else "") + "." + why)
    elif worse:
        warnings.append(f"Batch {new} improved significantly on {', '.join(improved)} but got significantly worse on "
                        f"{', '.join(worse)} than the baseline {old} it replaces." + why)
    if report["version_changes"]:
        warnings.append(f"Versions changed since the baseline {old}: {'; '.join(report['version_changes'])}.")
    review = {"compared": True, "against": current.id, "pairs": report["pairs"], "improved": improved,
              "worse": worse, "regressions": report["regressions"], "version_changes": report["version_changes"],
              "version_notes": report["version_notes"]}
    return warnings, review


def bless(store: Store, batch_or_run: str, note: str = "") -> Blessed:
    """Make a batch (named by its id or any of its runs' ids) its suite's baseline, and record it in the bless
    history. On the flagship suite ``note`` (why) is required; a batch not significantly better than the baseline
    it replaces on the quality metrics is still blessed, with the warning recorded and returned."""
    batch = _batch_named(store, batch_or_run)
    note = (note or "").strip()
    if batch.suite in NOTE_REQUIRED and not note:
        raise InputError(f"Blessing a new {batch.suite} baseline needs a note of why (spec 000: the flagship changes "
                         f"only if reasoning quality improves): `python -m clearside bless {batch.id} --note "
                         "\"what improved\"`.",
                         dashboard=f"Blessing a new {batch.suite} baseline needs a note of why (spec 000: the flagship "
                                   "changes only if reasoning quality improves): write it in “Why this baseline”.")
    current = baseline(store, batch.suite)
    if current is not None and current.id == batch.id:
        raise InputError(f"Batch {batch.id} is already the {batch.suite} baseline.")
    warnings, review = review_against(store, current, batch)
    store.bless_batch(batch.suite, batch.id, note=note, warnings=warnings,
                      detail={"provider": batch.spec, "runs": len(batch.rows), "batch_created_at": batch.created_at,
                              "versions": batch_versions(batch), "review": review})
    blessed = next(b for b in batches(store, batch.suite) if b.id == batch.id)
    return Blessed(batch=blessed, previous=current.id if current else None, note=note, warnings=warnings)


def history(store: Store, suite: str | None = None) -> list[dict[str, Any]]:
    """The bless history, newest first: the store's rows with each batch's age."""
    return [{**row, "age": age(row["created_at"])} for row in store.blessings(suite)]


def history_markdown(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No batch has been blessed yet: `python -m clearside bless BATCH --note \"why\"` makes a baseline.\n"
    lines = []
    for row in rows:
        replaced = f", replacing {row['previous']}" if row.get("previous") else ", the suite's first baseline"
        lines.append(f"{row['created_at'][:16].replace('T', ' ')} UTC ({row['age']} ago)  {row['suite']}: batch "
                     f"{row['batch']} ({(row.get('detail') or {}).get('provider', '?')}){replaced}")
        lines.append(f"    note: {row['note'] or '(none)'}")
        lines += [f"    warning: {w}" for w in row.get("warnings") or []]
    return "\n".join(lines) + "\n"


OnRun = Callable[[dict[str, Any]], None]


def run_batch(suite: str | Suite, provider: Provider, store: Store, *, runs: int = 3, concurrency: int | None = None,
              retries: int = 2, temperature: float = 0.4, thresholds: dict[str, dict[str, float]] | None = None,
              on_run: OnRun | None = None, batch_id: str | None = None, cancel: threading.Event | None = None,
              on_event: Callable[[str, Event], None] | None = None, swap_check: bool = False,
              allow_version_change: bool = False) -> dict[str, Any]:
    """Debate every case of ``suite`` (a built-in's name, a suite file's path or a loaded :class:`Suite`) ``runs``
    times, save and score each as it finishes; return the report. Runs are filed under the suite's name, each with
    its case id (``item``) and repeat (``index``), which ``compare_runs`` pairs by.
    ``on_event(label, event)``: each run's agent events as they happen (label ``flagship #1``), for progress.
    ``swap_check``: each finished debate also gets the swap check's ``flip_rate`` (one more moderator call).
    Every run records the versions it is made with (``pinned_versions``); against a baseline scored by another
    metric suite or embedding model the batch is refused before any model call (:class:`VersionChange`), unless
    ``allow_version_change`` (then the report warns)."""
    if runs < 1:
        raise InputError(f"--runs must be at least 1 (got {runs}).")
    loaded = load_suite(suite)
    suite, items = loaded.name, list(loaded.cases)
    concurrency = max(1, concurrency or provider.concurrency)
    batch_id = batch_id or uuid.uuid4().hex
    versions = prompts.versions(*PROMPTS)
    base = baseline(store, suite)
    pinned = pinned_versions(provider, temperature=temperature, retries=retries, concurrency=concurrency,
                             swap_check=swap_check)
    if base is not None and not allow_version_change:
        changes, _ = version_differences(batch_versions(base), {**pinned, "prompts": versions},
                                         ("the baseline", "this batch"))
        if changes:
            raise refuse_version_change(f"A {suite} batch cannot be judged against its baseline {base.id}", changes,
                                        "run it")
    started, started_at = time.perf_counter(), datetime.now(UTC).isoformat(timespec="microseconds")
    tasks = [(item, i) for i in range(runs) for item in items]

    def one(task: tuple[Case, int]) -> dict[str, Any]:
        item, index = task
        data = {"batch": batch_id, "item": item.name, "index": index, "question": item.proposition,
                "started_at": started_at, "planned": len(tasks), "versions": pinned}
        if not loaded.builtin:
            data["suite_file"] = loaded.source
        context = item.context_fields()
        if context:
            data["context"] = context
        if cancel is not None and cancel.is_set():
            return {"status": "cancelled", **data}
        label = f"{item.name} #{index + 1}"
        debate_id = None
        if context:  # saved first with its context: run_scored then completes that debate
            debate_id = start_static(store, DebateRun.from_input(item.proposition, **context), provider=provider.name,
                                     model=provider.model, prompt_versions=versions)
        scored = run_scored(item.proposition, provider, store, suite=suite, data=data, retries=retries,
                            temperature=temperature, reference=item.scoring_reference(), debate_id=debate_id,
                            on_event=(lambda event: on_event(label, event)) if on_event else None,
                            swap_check=swap_check)
        result = item_result(scored, data)
        if on_run:
            on_run(result)
        return result

    with ThreadPoolExecutor(max_workers=min(concurrency, len(tasks)), thread_name_prefix="regress") as pool:
        results = list(pool.map(one, tasks))
    return batch_report(suite, provider.spec, items, runs, batch_id, concurrency, versions, started_at,
                        round(time.perf_counter() - started, 2), results, base, thresholds,
                        pinned={**pinned, "prompts": versions})


def item_result(scored: Any, data: dict[str, Any]) -> dict[str, Any]:
    """One batch item's row in the report, from its scored run (``scored.run_scored``) and its ``data``."""
    result: dict[str, Any] = {"id": scored.run_id, "status": scored.status, "metrics": scored.metrics, **data}
    if scored.status == "failed":
        result["error"] = scored.error
    elif scored.status == "done":
        result["detail"] = scored.detail
    result.update(debate_id=scored.debate_id, wall_seconds=scored.wall_seconds)
    return result


def batch_report(suite: str, spec: str, items: list[Reference] | list[Case], runs: int, batch_id: str, concurrency: int,
                 versions: dict[str, str], started_at: str, wall_seconds: float, results: list[dict[str, Any]],
                 base: Batch | None, thresholds: dict[str, dict[str, float]] | None,
                 pinned: dict[str, Any] | None = None) -> dict[str, Any]:
    """The batch's report: its metrics against the baseline ``base`` and the gates, and each debate's outcome;
    ``pinned``: the versions the batch was made with (``pinned_versions`` and its prompts), compared with the
    baseline's (``version_changes`` warned about, ``version_notes`` listed)."""
    planned = runs * len(items)
    done = [r for r in results if r["status"] in ("done", "failed")]
    current = aggregate(done)
    checks = check(current, base.aggregate() if base else None, thresholds)
    failures = [c for c in checks if c["status"] == "fail"]
    pinned = pinned or {"prompts": versions}
    changes, notes = (version_differences(batch_versions(base), pinned, ("the baseline", "this batch"))
                      if base is not None else ([], []))
    return {
        "suite": suite, "batch": batch_id, "provider": spec, "runs": runs,
        "items": [item.name for item in items], "concurrency": concurrency, "prompt_versions": versions,
        "versions": pinned, "started_at": started_at, "wall_seconds": wall_seconds,
        "metrics": current,
        "baseline": None if base is None else {**baseline_summary(base), "metrics": base.aggregate()},
        "version_changes": changes, "version_notes": notes,
        "warnings": [version_warning(changes)] if changes else [],
        "checks": checks, "passed": not failures and len(done) == planned,
        "failures": [f"{c['metric']}: {'; '.join(c['reasons'])}" for c in failures]
        + ([f"{planned - len(done)} of {planned} runs were cancelled"] if len(done) < planned else []),
        "debates": [{k: r.get(k) for k in ("id", "debate_id", "item", "index", "status", "error", "wall_seconds")}
                    for r in results if r["status"] != "cancelled"],
    }


def markdown(report: dict[str, Any]) -> str:
    verdict = "PASS" if report["passed"] else "REGRESSION"
    lines = [f"# Regression: {report['suite']} on {report['provider']} — {verdict}", "",
             f"{report['runs']} run(s) of {', '.join(report['items'])}, batch `{report['batch']}`, "
             f"{report['wall_seconds']} s wall, concurrency {report['concurrency']}.", ""]
    base = report["baseline"]
    lines.append(f"Baseline: batch `{base['batch']}` ({base['provider']}, {base['created_at']}, {base['age']} "
                 f"old), made with {versions_text(base['versions'])}." if base
                 else "No blessed baseline yet: only the absolute gates apply. Bless a batch with "
                      "`python -m clearside bless BATCH`.")
    lines.append(f"This batch: {versions_text(report.get('versions') or {})}.")
    lines += [f"\nWarning: {w}" for w in report.get("warnings") or []]
    if report.get("version_notes"):
        lines += ["", "Version notes:", *[f"- {n}" for n in report["version_notes"]]]
    lines += ["", "| metric | mean | spread | baseline | delta | status |", "|---|---|---|---|---|---|"]
    for c in report["checks"]:
        lines.append(f"| {c['metric']} | {c['mean']:g} | ±{c['stdev']:g} | "
                     f"{c.get('baseline_mean', '—')} | {c.get('delta', '—')} | {c['status']} |")
    flips = next((c for c in report["checks"] if c["metric"] == "flip_rate"), None)
    if flips:
        p = swap.PUBLISHED
        lines += ["", f"Swap check: a mean {flips['mean']:.1%} of the moderator's synthesis items flipped side or "
                      f"vanished with FOR and AGAINST exchanged. Context: {p['what']} is about {p['flip_rate']:.1%} "
                      f"({p['source']}); {p['note']}."]
    if report["failures"]:
        lines += ["", "Failures:", *[f"- {f}" for f in report["failures"]]]
    failed = [d for d in report["debates"] if d["status"] == "failed"]
    if failed:
        lines += ["", "Debates that failed:", *[f"- {d['item']} #{d['index'] + 1}: {d['error']}" for d in failed]]
    return "\n".join(lines) + "\n"


# -- paired comparison of two batches (compare-runs) -------------------------------------------------------------

def _gate_tolerance(rule: dict[str, float]) -> float | None:
    """How much worse a metric may get before a significant change is a regression: its tolerance; 0 for a
    metric with only a gate (any significant worsening counts); ``None`` for one reported, never gated."""
    if "tolerance" in rule:
        return float(rule["tolerance"])
    return 0.0 if ("min" in rule or "max" in rule) else None


def run_failures(row: dict[str, Any], thresholds: dict[str, dict[str, float]] | None = None) -> list[str]:
    """Why one run fails on its own ([] when it passes): it did not finish, or a metric misses its absolute gate
    (the batch gates of ``THRESHOLDS`` applied to this run's value)."""
    if row["status"] != "done":
        error = (row.get("data") or {}).get("error")
        return [f"the debate {row['status']}" + (f": {error}" if error else "")]
    reasons = []
    for name, rule in {**THRESHOLDS, **(thresholds or {})}.items():
        value = (row.get("metrics") or {}).get(name)
        if value is None:
            continue
        if "min" in rule and value < rule["min"]:
            reasons.append(f"{name} {value:g} is below the gate {rule['min']:g}")
        if "max" in rule and value > rule["max"]:
            reasons.append(f"{name} {value:g} is above the gate {rule['max']:g}")
    return reasons


def _pairable(batch: Batch) -> dict[tuple[str, int], dict[str, Any]]:
    """The batch's finished runs (done or failed) by (case id, repeat)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for row in batch.rows:
        data = row.get("data") or {}
        if row["status"] in ("done", "failed") and data.get("item") is not None:
            out[(str(data["item"]), int(data.get("index") or 0))] = row
    return out


def _side(batch: Batch) -> dict[str, Any]:
    return {"batch": batch.id, "suite": batch.suite, "provider": batch.spec, "created_at": batch.created_at,
            "runs": len(batch.rows)}


def compare_runs(store: Store, batch_a: str, batch_b: str, thresholds: dict[str, dict[str, float]] | None = None,
                 *, allow_version_change: bool = False) -> dict[str, Any]:
    """Batch B against batch A, run by run: pairs by case id and repeat, every metric's paired statistics
    (:mod:`clearside.paired`: mean difference B - A, bootstrap interval, sign-flip test, Holm), the pairs that
    flipped between passing and failing on their own (``run_failures``), and the verdict: a regression only where
    a metric is significantly worse by more than its tolerance. ``InputError`` for an unknown batch, one still
    running, the same batch twice or two batches with no case in common; :class:`VersionChange` for two batches
    scored by different metric suites or embedding models, unless ``allow_version_change`` (then a warning).
    Other version differences (prompts, ClearSide, provider settings) are ``version_notes``."""
    found = []
    for name in (batch_a, batch_b):
        batch = find_batch(store, name)
        if batch is None:
            raise NotFound(f"No batch has the id {name}: `python -m clearside runs` lists them.")
        running = sum(r["status"] == "running" for r in batch.rows)
        if running:
            raise InputError(f"Batch {name} is still running ({running} of its {len(batch.rows)} runs unfinished): "
                             f"wait for it (`python -m clearside status {name} --wait`) and compare again.")
        found.append(batch)
    a, b = found
    if a.id == b.id:
        raise InputError(f"compare-runs needs two different batches (got {a.id} twice).")
    versions_a, versions_b = batch_versions(a), batch_versions(b)
    changes, notes = version_differences(versions_a, versions_b)
    if changes and not allow_version_change:
        raise refuse_version_change(f"Batches {a.id} and {b.id} cannot be compared", changes, "compare them")
    runs_a, runs_b = _pairable(a), _pairable(b)
    keys = sorted(set(runs_a) & set(runs_b))
    if not keys:
        ids_a = sorted({k[0] for k in runs_a}) or ["none finished"]
        ids_b = sorted({k[0] for k in runs_b}) or ["none finished"]
        raise InputError(f"Batches {a.id} ({a.suite}) and {b.id} ({b.suite}) have no finished case and repeat in "
                         f"common (A: {', '.join(ids_a[:5])}; B: {', '.join(ids_b[:5])}): compare two batches "
                         "of the same suite.")
    rules = {**THRESHOLDS, **(thresholds or {})}
    values: dict[str, tuple[list[float], list[float]]] = {}
    for name in metrics.SUMMARY:
        both = [(float(runs_a[k]["metrics"][name]), float(runs_b[k]["metrics"][name])) for k in keys
                if name in (runs_a[k].get("metrics") or {}) and name in (runs_b[k].get("metrics") or {})]
        if both:
            values[name] = ([x for x, _ in both], [y for _, y in both])
    cases = sorted({k[0] for k in keys})
    rows = paired.compare(values, better={n: metrics.SUMMARY[n][0] for n in values},
                          tolerance={n: _gate_tolerance(rules.get(n, {})) for n in values}, cases=len(cases))
    flips = []
    for key in keys:
        fail_a, fail_b = run_failures(runs_a[key], thresholds), run_failures(runs_b[key], thresholds)
        if bool(fail_a) != bool(fail_b):
            flips.append({"case": key[0], "repeat": key[1], "change": "pass → fail" if fail_b else "fail → pass",
                          "a": _flip_side(runs_a[key], fail_a), "b": _flip_side(runs_b[key], fail_b),
                          "metrics": _side_by_side(runs_a[key], runs_b[key], rules)})
    regressions = [r.metric for r in rows if r.verdict == "regression"]
    warnings = [] if a.suite == b.suite else [f"The batches are of different suites ({a.suite} and {b.suite}): "
                                              "only the case ids they share are compared."]
    if changes:
        warnings.insert(0, version_warning(changes))
    return {"a": _side(a), "b": _side(b), "pairs": len(keys), "cases": cases,
            "repeats": max(k[1] for k in keys) + 1, "alpha": paired.ALPHA, "confidence": paired.CONFIDENCE,
            "power": paired.POWER,
            "unpaired": {"a": [f"{c} #{i + 1}" for c, i in sorted(set(runs_a) - set(keys))],
                         "b": [f"{c} #{i + 1}" for c, i in sorted(set(runs_b) - set(keys))]},
            "metrics": [r.as_dict() for r in rows], "flips": flips, "regressions": regressions,
            "too_few": [r.metric for r in rows if r.too_few], "regression": bool(regressions), "warnings": warnings,
            "versions": {"a": versions_a, "b": versions_b}, "version_changes": changes, "version_notes": notes}


def _flip_side(row: dict[str, Any], failures: list[str]) -> dict[str, Any]:
    return {"run": row["id"], "debate_id": row.get("debate_id"), "status": row["status"],
            "passed": not failures, "failures": failures}


def _side_by_side(a: dict[str, Any], b: dict[str, Any], rules: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """The two runs' values of every metric that differs between them, gated metrics first."""
    ma, mb = a.get("metrics") or {}, b.get("metrics") or {}
    names = [n for n in metrics.SUMMARY if (n in ma or n in mb) and ma.get(n) != mb.get(n)]
    names.sort(key=lambda n: not ({"min", "max"} & set(rules.get(n, {}))))
    return [{"metric": n, "a": ma.get(n), "b": mb.get(n)} for n in names]


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.1e}"


def paired_markdown(report: dict[str, Any]) -> str:
    """The paired comparison as a readable report: the table, what needs more repeats, the flipped cases."""
    a, b = report["a"], report["b"]
    verdict = "REGRESSION" if report["regression"] else "NO REGRESSION"
    lines = [f"# Paired comparison: B against A — {verdict}", "",
             f"- A: batch `{a['batch']}` ({a['suite']}, {a['provider']}, {a['created_at'][:16]})",
             *([f"  - versions: {versions_text(report['versions']['a'])}"] if report.get("versions") else []),
             f"- B: batch `{b['batch']}` ({b['suite']}, {b['provider']}, {b['created_at'][:16]})",
             *([f"  - versions: {versions_text(report['versions']['b'])}"] if report.get("versions") else []), "",
             f"{report['pairs']} pair(s) of runs over {len(report['cases'])} case(s), paired by case id and repeat. "
             f"Difference = B − A; {report['confidence']:.0%} bootstrap interval; p from a two-sided sign-flip "
             f"permutation test, Holm-corrected across the metrics. A regression is a metric significantly worse "
             f"(Holm p < {report['alpha']:g}) by more than its tolerance."]
    for warning in report["warnings"]:
        lines += ["", f"Warning: {warning}"]
    if report.get("version_notes"):
        lines += ["", "Version notes:", *[f"- {n}" for n in report["version_notes"]]]
    for side in ("a", "b"):
        if report["unpaired"][side]:
            shown = report["unpaired"][side]
            lines += ["", f"Only in {side.upper()} (not compared): {', '.join(shown[:10])}"
                          + (f" and {len(shown) - 10} more" if len(shown) > 10 else "")]
    lines += ["", "| metric | better | pairs | mean A | mean B | B − A | 95% CI | p | p (Holm) | tolerance | verdict |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in report["metrics"]:
        tol = "not gated" if m["tolerance"] is None else f"{m['tolerance']:g}"
        lines.append(f"| {m['metric']} | {m['better']} | {m['n']} | {_num(m['mean_a'])} | {_num(m['mean_b'])} | "
                     f"{m['diff']:+.3g} | [{m['ci_low']:+.3g}, {m['ci_high']:+.3g}] | {_num(m['p'])} | "
                     f"{_num(m['p_holm'])} | {tol} | {m['verdict']} |")
    few = [m for m in report["metrics"] if m["too_few"]]
    if few:
        lines += ["", f"Too few repeats to tell (alpha {report['alpha']:g}, power {report['power']:.0%}, for the "
                      "spread observed):"]
        for m in few:
            size = f"{m['tolerance']:g} (its tolerance)" if m["tolerance"] else f"{abs(m['diff']):.3g} (as observed)"
            lines.append(f"- {m['metric']}: {m['n']} pair(s), spread ±{m['sd']:.3g}; detecting a difference of "
                         f"{size} needs about {m['pairs_needed']} pairs: {m['repeats_needed']} repeat(s) per case "
                         f"(`--runs {m['repeats_needed']}`).")
    if report["flips"]:
        lines += ["", f"Cases that flipped ({len(report['flips'])}):"]
        for f in report["flips"]:
            lines += ["", f"### {f['case']} #{f['repeat'] + 1}: {f['change']}", "",
                      f"- A (run `{f['a']['run']}`): " + ("passes" if f["a"]["passed"] else
                                                           "fails: " + "; ".join(f["a"]["failures"])),
                      f"- B (run `{f['b']['run']}`): " + ("passes" if f["b"]["passed"] else
                                                           "fails: " + "; ".join(f["b"]["failures"]))]
            if f["metrics"]:
                lines += ["", "| metric | A | B |", "|---|---|---|",
                          *[f"| {m['metric']} | {_num(m['a'], 4)} | {_num(m['b'], 4)} |" for m in f["metrics"]]]
    else:
        lines += ["", "No case flipped between passing and failing."]
    if report["regressions"]:
        lines += ["", f"Regressions: {', '.join(report['regressions'])}."]
    return "\n".join(lines) + "\n"
