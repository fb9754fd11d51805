"""The versions a regression run is made with, pinned so that incomparable batches are never compared as alike.

Each run's ``data["versions"]`` records the metric suite, the embedding model, the ClearSide version and the
provider settings (its ``prompt_versions`` column the prompts). A comparison across a metric-suite or
embedding-model change (``compare_runs``, a batch against its baseline) is refused with :class:`VersionChange`
unless ``allow_version_change``, then shown with a warning; other differences are notes.
"""

from __future__ import annotations

import functools
import importlib.metadata
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..providers import Provider
from ..store import Store
from . import metrics
from .batch import Batch, baseline

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
                      swap_check: bool = False, strategy: str | None = None) -> dict[str, Any]:
    """The settings a batch ran with: provider:model, temperature, re-asks, concurrency, the swap check, the
    generation strategy when one was chosen, and the server (Ollama's host, an OpenAI-compatible base URL) where
    there is one. Never a key."""
    out: dict[str, Any] = {"spec": provider.spec, "temperature": temperature, "retries": retries,
                           "concurrency": concurrency, "swap_check": bool(swap_check)}
    if strategy:
        out["strategy"] = strategy
    for name in ("host", "base_url"):
        value = getattr(provider, name, None)
        if isinstance(value, str) and value:
            out[name] = value
    return out


def pinned_versions(provider: Provider, *, temperature: float, retries: int, concurrency: int,
                    swap_check: bool = False, strategy: str | None = None) -> dict[str, Any]:
    """What every run of a batch records in ``data["versions"]`` (the prompts are in its own column)."""
    return {"metric_suite": metrics.suite_version(), "embedding_model": metrics.embedding_model(),
            "clearside": clearside_version(),
            "provider": provider_settings(provider, temperature=temperature, retries=retries,
                                          concurrency=concurrency, swap_check=swap_check, strategy=strategy)}


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


def refuse_against_baseline(store: Store, suite: str, pinned: dict[str, Any]) -> None:
    """:class:`VersionChange` when the suite's baseline was scored by another metric suite or embedding model than a
    batch made with ``pinned`` (:func:`pinned_versions` and its prompts) would be: said before anything is queued."""
    base = baseline(store, suite)
    if base is None:
        return
    changes, _ = version_differences(batch_versions(base), pinned, ("the baseline", "this batch"))
    if changes:
        raise refuse_version_change(f"A {suite} batch cannot be judged against its baseline {base.id}", changes,
                                    "run it")
