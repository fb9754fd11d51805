"""Markdown for one document's metrics (``python -m clearside metrics --format md``)."""

from __future__ import annotations

from typing import Any

from . import SUMMARY, summary


def _list(title: str, items: list[str]) -> list[str]:
    return [f"{title}:", *[f"- {item}" for item in items]] if items else []


def markdown(m: dict[str, Any], source: str = "") -> str:
    lines = [f"# Metrics{': ' + source if source else ''}", ""]
    if m.get("reference"):
        lines += [f"Reference: {m['reference']}", ""]
    lines += ["| metric | value | better | meaning |", "|---|---|---|---|"]
    for name, value in summary(m).items():
        better, meaning = SUMMARY[name]
        lines.append(f"| {name} | {value:g} | {better} | {meaning} |")
    validity = m["schema_validity"]
    if not validity["valid"]:
        lines += ["", *_list("Schema errors", validity["errors"][:20])]
    n = m.get("neutrality", {})
    if n.get("violations"):
        lines += ["", *_list("Neutrality violations", [f"{v['field']}: “{v['phrase']}” in “{v['text']}”"
                                                       for v in n["violations"]])]
    if n.get("warnings"):
        lines += ["", *_list("Neutrality warnings", [f"{w['field']}: “{w['phrase']}” ({w['kind']})"
                                                     for w in n["warnings"]])]
    sub = m.get("substance", {})
    if sub.get("left"):
        lines += ["", *_list("Substance checks failed in the finished document",
                             [f"{x['agent']} {x['where']}: {x['message']}" for x in sub["left"]])]
    if sub.get("record", {}).get("by_check"):
        lines += ["", *_list("Caught while generating (quality record)",
                             [f"{name}: {c['caught']} caught, {c['repaired']} repaired"
                              for name, c in sub["record"]["by_check"].items()])]
    d = m.get("diversity", {})
    if "pro" in d:
        dupes = [f"{side}: “{p['a']}” ≈ “{p['b']}” ({p['similarity']})" for side in ("pro", "con")
                 for p in d[side]["duplicates"]]
        dupes += [f"both sides: “{p['pro']}” ≈ “{p['con']}” ({p['similarity']})" for p in d["cross_side_duplicates"]]
        lines += ["", *_list("Near-duplicate claims", dupes)] if dupes else []
    r = m.get("relevance", {})
    if "pro" in r:
        off = [f"{side}: “{f['claim']}” ({f['similarity']})" for side in ("pro", "con") for f in r[side]["flagged"]]
        lines += ["", *_list("Possibly off-topic", off)] if off else []
    c = m.get("coverage", {})
    if "pro" in c:
        lines += ["", *_list("Reference points missed", [f"{side}: {p}" for side in ("pro", "con")
                                                        for p in c[side]["missed"]])]
    s = m.get("stance", {})
    if "passed" in s:
        lines += ["", f"Stance (side-swap test): {'passed' if s['passed'] else 'FAILED'}, margin {s['margin']:g}."]
    u = m.get("usage", {})
    if u.get("available"):
        lines += ["", "| agent | calls | prompt tokens | completion tokens | seconds |", "|---|---|---|---|---|"]
        lines += [f"| {name} | {a['calls']} | {a['prompt_tokens']} | {a['completion_tokens']} | {a['seconds']:.1f} |"
                  for name, a in u["agents"].items()]
    unavailable = [f"{name}: {v['reason']}" for name, v in m.items()
                   if isinstance(v, dict) and v.get("available") is False and name != "usage"]
    if unavailable:
        lines += ["", *_list("Not measured", unavailable)]
    return "\n".join(lines).rstrip() + "\n"
