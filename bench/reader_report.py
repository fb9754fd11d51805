"""bench/reader.py's tables, and its section of bench/REPORT.md (kept when bench/run_all.py rewrites the report).

The section sits below :data:`KEEP` in REPORT.md; each labelled run (``before``, ``after``...) is a block between
``<!-- reader:LABEL -->`` and ``<!-- /reader:LABEL -->``, replaced when that label is run again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

KEEP = "<!-- Below: sections other benches write; bench/run_all.py keeps them when it rewrites this report. -->"
HEADING = "## What reaches the reader (bench/reader.py)"
RATIO_GOAL, PERSONA_GOAL_S = 1.4, 180.0


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _load(values: list[float] | None) -> str:
    return " / ".join(f"{v:.2f}" for v in values) if values else "?"


def static_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| # | Question | Exit | Wall s | Raw s | Wall/raw | Tokens shown / written | Items | Cut (dangling) | "
             "Soup | Off-topic | Check findings (items) | Re-asks by agent | Re-ask tokens / s | Load before |",
             "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|--:|---|"]
    for n, r in enumerate(rows, start=1):
        s = r.get("score") or {}
        checks = ", ".join(f"{k} {v}" for k, v in (s.get("checks") or {}).items()) or "-"
        reasks = ", ".join(f"{k} {v}" for k, v in (r.get("reasks") or {}).items() if v) or "-"
        ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "-"
        raw = f"{r['raw_seconds']:.1f}" if r.get("raw_seconds") else "-"
        written = sum(u["first_tokens"] + u["reask_tokens"] for u in (r.get("usage") or {}).values())
        lines.append(f"| {n} | {_cell(r['question'])} | {r['exit']} | {r['wall']:.1f} | {raw} | {ratio} | "
                     f"{r.get('tokens_shown', '-')} / {written or '-'} | {s.get('items_shown', '-')} | "
                     f"{s.get('cut_mid_phrase', '-')} ({s.get('cut_dangling', '-')}) | "
                     f"{s.get('code_soup', '-')} | "
                     f"{s.get('off_topic', '-')} | {_cell(checks)} | {_cell(reasks)} | "
                     f"{r.get('reask_tokens', 0)} / {r.get('reask_seconds', 0.0):.1f} | "
                     f"{_load(r.get('load_before'))} |")
    return lines


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    done = [r for r in rows if r.get("score")]
    walls = sorted(r["wall"] for r in rows) or [0.0]
    ratios = [r["ratio"] for r in rows if r.get("ratio")]
    return {"debates": len(rows), "finished": len(done),
            "cut_mid_phrase": sum(r["score"]["cut_mid_phrase"] for r in done),
            "code_soup": sum(r["score"]["code_soup"] for r in done),
            "off_topic_max": max((r["score"]["off_topic"] for r in done), default=0),
            "wall_median": walls[len(walls) // 2], "wall_mean": round(sum(walls) / len(walls), 2),
            "ratio_median": sorted(ratios)[len(ratios) // 2] if ratios else None,
            "ratio_max": max(ratios) if ratios else None,
            "reask_calls": sum(u["reask_calls"] for r in rows for u in (r.get("usage") or {}).values()),
            "reask_tokens": sum(r.get("reask_tokens", 0) for r in rows),
            "reask_seconds": round(sum(r.get("reask_seconds", 0.0) for r in rows), 2)}


def persona_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| Run | Question | Outcome | Exit | Wall s | Personas finished | Load before | Why |",
             "|--:|---|---|--:|--:|--:|---|---|"]
    for n, r in enumerate(rows, start=1):
        lines.append(f"| {n} | {_cell(r['question'])} | {r['outcome']} | {r['exit']} | {r['wall']:.1f} | "
                     f"{r.get('personas_finished', '-')} | {_load(r.get('load_before'))} | {_cell(r.get('why', ''))} |")
    return lines


def breakdown_table(parts: dict[str, float]) -> list[str]:
    lines = ["| Phase | Seconds |", "|---|--:|"]
    lines += [f"| {_cell(k)} | {v:.2f} |" for k, v in parts.items()]
    return lines


def timeline_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| What | From s | To s | Prompt tokens (reused) | Tokens written | To first token s |",
             "|---|--:|--:|--:|--:|--:|"]
    for r in rows:
        prompt = f"{r['prompt_tokens']} ({r['cached_prompt_tokens']})" if "prompt_tokens" in r else ""
        first = f"{r['first_token_seconds']:.2f}" if "first_token_seconds" in r else ""
        lines.append(f"| {_cell(r['what'])} | {r['start']:.2f} | {r['end']:.2f} | {prompt} | "
                     f"{r.get('completion_tokens', '')} | {first} |")
    return lines


def section(result: dict[str, Any]) -> str:
    """The Markdown block of one labelled run."""
    lines = [f"### {result['label']}: {result['started'][:16].replace('T', ' ')} UTC, commit {result['commit'][:12]}"
             f"{' (uncommitted changes)' if result.get('dirty') else ''}", "",
             f"`{result['command']}`; load average {_load(result.get('load_before'))} before, "
             f"{_load(result.get('load_after'))} after, on {result.get('cpu_count')} cores.", ""]
    static = result.get("static") or []
    if static:
        s = summary(static)
        cal = result.get("calibration") or {}
        lines += ["#### Static debates", "",
                  f"{s['finished']}/{s['debates']} finished; items cut mid-phrase {s['cut_mid_phrase']} (goal 0), "
                  f"code soup {s['code_soup']} (goal 0), most off-topic items in one debate {s['off_topic_max']} "
                  f"(goal ≤ 1); wall median {s['wall_median']:.1f} s, mean {s['wall_mean']:.1f} s; wall/raw median "
                  f"{s['ratio_median']} , worst {s['ratio_max']} (goal ≤ {RATIO_GOAL}); re-asks: "
                  f"{s['reask_calls']} calls, {s['reask_tokens']} tokens, {s['reask_seconds']} s. Raw decoding: "
                  f"{_rate(cal, 'unconstrained')} unconstrained ({_rate(cal, 'grammar')} under the advocates' "
                  f"grammar), off-topic threshold {result.get('off_topic_threshold')}.", ""]
        lines += static_table(static) + [""]
    if result.get("breakdown"):
        lines += [f"#### Where the time went: debate {result['breakdown_of']}", ""]
        lines += breakdown_table(result["breakdown"]) + [""]
        lines += timeline_table(result.get("timeline") or []) + [""]
    personas = result.get("personas") or []
    if personas:
        whole = sum(r["outcome"] == "whole" for r in personas)
        partial = sum(r["outcome"] == "partial" for r in personas)
        fast = sum(r["outcome"] != "failed" and r["wall"] < PERSONA_GOAL_S for r in personas)
        lines += ["#### Persona debates (economist, ethicist, environmentalist)", "",
                  f"{whole} whole, {partial} honestly partial, {len(personas) - whole - partial} failed of "
                  f"{len(personas)}; {fast} finished under {PERSONA_GOAL_S:.0f} s (goal: ≥ 9 of 10 finish, each "
                  "under 3 minutes).", ""]
        lines += persona_table(personas) + [""]
    return "\n".join(lines)


def _rate(calibration: dict[str, Any], kind: str) -> str:
    value = (calibration.get(kind) or {}).get("seconds_per_token")
    return f"{1 / value:.1f} tokens/s" if value else "not measured"


def write_section(path: Path, label: str, block: str) -> None:
    """Put ``block`` in REPORT.md as the run ``label`` of this bench's section, replacing that label's last one."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# ClearSide benchmark report\n"
    if KEEP not in text:
        text = text.rstrip("\n") + f"\n\n{KEEP}\n"
    if HEADING not in text:
        text = text.rstrip("\n") + f"\n\n{HEADING}\n\nWritten by bench/reader.py (its docstring: the method).\n"
    start, end = f"<!-- reader:{label} -->", f"<!-- /reader:{label} -->"
    wrapped = f"{start}\n{block.rstrip()}\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + wrapped + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n{wrapped}\n"
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def kept(path: Path) -> str:
    """What REPORT.md holds from :data:`KEEP` on (bench/run_all.py adds it back after its own figures)."""
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8")
    return "\n" + text[text.index(KEEP):] if KEEP in text else ""
