"""One command-line debate as bench/reader.py measures it: the process run (bench/reader_probe.py inside it), its
events read back, the document scored, the time it took taken apart.

- :func:`run_command`: ``python -m clearside ARGS`` (through the probe) in its own process, the wall time around
  the whole process, the document it wrote and its events.
- :func:`usage_by_agent`: per agent, its first attempt and its re-asks (every call after the first: whole re-asks
  and the calls that mend a failing part), tokens and seconds each.
- :func:`breakdown`: where the wall time went (start-up before the first model call, model load, each agent's
  first attempt and re-asks, the rest), from the events' timestamps.
- :func:`score`: items shown, items with each problem kind (ClearSide's checks over the finished document, and the
  reader's measures of bench/reader_text.py), off-topic items by similarity.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench import reader_text

ROOT = Path(__file__).resolve().parents[1]


def run_command(args: list[str], *, timeout: float, env: dict[str, str] | None = None,
                tree: Path = ROOT) -> dict[str, Any]:
    """Run ``python -m clearside ARGS --format json --out FILE`` through the probe, with the ClearSide of ``tree``
    (its working directory); ``{"exit", "wall", "events", "document" (or None), "stderr_tail", "timed_out"}``.
    Spawn to exit is the wall time: imports, loads, the debate, the store, writing the file."""
    with tempfile.TemporaryDirectory(prefix="clearside-reader-") as folder:
        log, out = Path(folder) / "events.jsonl", Path(folder) / "debate.json"
        probe = Path(__file__).resolve().parent / "reader_probe.py"
        command = [sys.executable, str(probe), str(log), *args, "--format", "json", "--out", str(out)]
        spawned = time.time()
        started = time.perf_counter()
        timed_out = False
        with subprocess.Popen(command, cwd=tree, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) as proc:
            try:
                _, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, stderr = proc.communicate()
                timed_out = True
        wall = time.perf_counter() - started
        events = read_events(log)
        document = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    imported = next((e.get("clearside") for e in events if e["event"] == "cli_imported"), None)
    return {"exit": proc.returncode, "wall": round(wall, 3), "spawned": spawned, "clearside": imported,
            "ended": spawned + wall,
            "events": events, "document": document, "stderr_tail": (stderr or "")[-600:], "timed_out": timed_out}


def read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by a killed process
            continue
    return events


def calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted((e for e in events if e["event"] == "call"), key=lambda e: e["start"])


def usage_by_agent(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per agent: calls, first attempt's tokens and seconds, and the re-asks' (every later call of that agent)."""
    out: dict[str, dict[str, Any]] = {}
    for call in calls(events):
        row = out.setdefault(call["agent"], {"calls": 0, "first_tokens": 0, "first_seconds": 0.0,
                                             "reask_calls": 0, "reask_tokens": 0, "reask_seconds": 0.0})
        row["calls"] += 1
        kind = "first" if row["calls"] == 1 else "reask"
        row[f"{kind}_tokens"] += call["completion_tokens"]
        row[f"{kind}_seconds"] = round(row[f"{kind}_seconds"] + call["seconds"], 3)
        row["reask_calls"] += kind == "reask"
    return out


def _one(events: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((e for e in events if e["event"] == name), None)


def breakdown(result: dict[str, Any]) -> dict[str, float]:
    """Seconds of the wall time by phase, from the events (phases that overlap are told apart in the note of the
    report: MiniLM loads on a side thread while the first agent writes; pro and con may decode together)."""
    events, spawned, ended = result["events"], result["spawned"], result["ended"]
    start, cli = _one(events, "start"), _one(events, "cli_imported")
    model, embeddings, done = _one(events, "model_load"), _one(events, "embeddings"), _one(events, "exit")
    made = calls(events)
    out: dict[str, float] = {}
    if start:
        out["interpreter"] = start["t"] - spawned
    if start and cli:
        out["import_cli"] = cli["t"] - start["t"]
    if made:
        out["until_first_call"] = made[0]["start"] - (cli or start or {"t": spawned})["t"]
        out["first_call_to_last_call_end"] = max(c["end"] for c in made) - made[0]["start"]
        out["after_last_call"] = (done["t"] if done else ended) - max(c["end"] for c in made)
    if done:
        out["process_exit"] = ended - done["t"]
    if model:
        out["model_load"] = model["end"] - model["start"]
    if embeddings:
        out["embeddings_first"] = embeddings["end"] - embeddings["start"]
        out["embeddings_load"] = embeddings.get("load_seconds") or 0.0
    for agent, row in usage_by_agent(events).items():
        out[f"{agent}_first"] = row["first_seconds"]
        out[f"{agent}_reasks"] = row["reask_seconds"]
    return {k: round(v, 3) for k, v in out.items()}


def timeline(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every noted span, seconds from the spawn: loads and each call (prompt tokens, of them already evaluated,
    tokens written, time to the first token), in order of start."""
    spawned = result["spawned"]
    rows = []
    for e in result["events"]:
        if e["event"] in ("model_load", "embeddings"):
            rows.append({"what": e["event"], "start": e["start"] - spawned, "end": e["end"] - spawned})
        elif e["event"] == "call":
            rows.append({"what": f"call {e['agent']}", "start": e["start"] - spawned, "end": e["end"] - spawned,
                         "prompt_tokens": e["prompt_tokens"], "cached_prompt_tokens": e["cached_prompt_tokens"],
                         "completion_tokens": e["completion_tokens"],
                         "first_token_seconds": e["first_token_seconds"]})
        elif e["event"] in ("start", "cli_imported", "exit"):
            rows.append({"what": e["event"], "start": e["t"] - spawned, "end": e["t"] - spawned})
    rows.append({"what": "process ended", "start": result["wall"], "end": result["wall"]})
    rows.sort(key=lambda r: r["start"])
    return [{**r, "start": round(r["start"], 3), "end": round(r["end"], 3)} for r in rows]


def off_topic_items(document: dict[str, Any], embeddings: Any, threshold: float) -> list[dict[str, Any]]:
    """Shown sentences whose similarity to the question (the best of the user's and the normalized one) is below
    ``threshold``, by item (an argument counts once, by its claim and explanation together)."""
    prop = document.get("proposition") or {}
    anchors = [t for t in (prop.get("raw_input"), prop.get("normalized_question")) if t]
    texts: dict[str, list[str]] = defaultdict(list)
    for path, text, kind in reader_text.shown(document):
        if kind == "sentence" and not path.startswith("proposition/"):
            texts[reader_text.item_of(path)].append(text)
    items = list(texts)
    sims = embeddings.similarities([" ".join(texts[i]) for i in items], anchors) if items else None
    if sims is None:
        return []
    return [{"item": item, "similarity": round(float(sims[n].max()), 3), "text": " ".join(texts[item])[:200]}
            for n, item in enumerate(items) if float(sims[n].max()) < threshold]


def least_similarity(document: dict[str, Any], embeddings: Any) -> float | None:
    """The least similarity any item of ``document`` has to its own question (the off-topic threshold is set just
    under it on reference documents, so that none of their items would count)."""
    found = off_topic_items(document, embeddings, threshold=2.0)
    return min((f["similarity"] for f in found), default=None)


def score(document: dict[str, Any], findings: list[tuple[str, Any]], off_topic: list[dict[str, Any]]) -> dict:
    """Items shown and items with each problem kind: ``checks`` (by check name: the distinct items each flags),
    ``cut_mid_phrase``, ``code_soup``, ``off_topic`` (the similarity measure), with examples."""
    by_check: dict[str, set[str]] = defaultdict(set)
    for agent, finding in findings:
        by_check[finding.check].add(f"{agent}:{reader_text.item_of(finding.where)}")
    problems = reader_text.reader_problems(document)
    items = reader_text.items_shown(document)
    return {"items_shown": sum(items.values()), "items_by_section": items,
            "checks": {name: len(found) for name, found in sorted(by_check.items())},
            "cut_mid_phrase": len({reader_text.item_of(p["path"]) for p in problems["cut_mid_phrase"]}),
            "cut_dangling": len({reader_text.item_of(p["path"]) for p in problems["cut_mid_phrase"]
                                 if p["reason"] == "dangling"}),
            "code_soup": len({reader_text.item_of(p["path"]) for p in problems["code_soup"]}),
            "off_topic": len(off_topic),
            "off_topic_by_checks": sum(n for name, n in Counter({k: len(v) for k, v in by_check.items()}).items()
                                       if "topic" in name),
            "examples": {"cut_mid_phrase": problems["cut_mid_phrase"][:5], "code_soup": problems["code_soup"][:5],
                         "off_topic": off_topic[:5]}}


def reasks(document: dict[str, Any]) -> dict[str, int]:
    """Re-asks per agent, from the document's quality record."""
    agents = ((document or {}).get("quality") or {}).get("agents") or {}
    return {name: int(a.get("reasks", 0)) for name, a in agents.items()}
