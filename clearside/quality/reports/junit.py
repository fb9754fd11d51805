"""JUnit XML for CI systems: one test case per gate, a failure carrying the message.

The common (Ant/Jenkins) format: ``<testsuites>`` holding one ``<testsuite>`` whose ``<testcase>`` elements are
the gates. A regression batch: one case per metric with a gate or a tolerance (``batch.check``'s rows; a metric
only reported is a skipped case), plus ``runs completed`` (every planned run finished). A paired comparison: one
case per metric, failing on a regression (significantly worse by more than its tolerance); a metric never gated is
skipped. Text that XML 1.0 cannot hold (control characters) is dropped; ElementTree escapes the rest.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import svg
from .html import kind

_NOT_XML = re.compile(r"[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: Any) -> str:
    return _NOT_XML.sub("", "" if value is None else str(value))


def _case(suite: ET.Element, classname: str, name: str, *, failure: str | None = None, skipped: str | None = None,
          out: str = "", time: float | None = None) -> None:
    case = ET.SubElement(suite, "testcase", name=_text(name), classname=_text(classname))
    if time is not None:
        case.set("time", f"{time:.3f}")
    if failure is not None:
        node = ET.SubElement(case, "failure", message=_text(failure), type="regression")
        node.text = _text(failure)
    elif skipped is not None:
        ET.SubElement(case, "skipped", message=_text(skipped))
    if out:
        ET.SubElement(case, "system-out").text = _text(out)


def _props(suite: ET.Element, values: Mapping[str, Any]) -> None:
    props = ET.SubElement(suite, "properties")
    for name, value in values.items():
        if value is not None:
            ET.SubElement(props, "property", name=_text(name), value=_text(value))


def _count(suite: ET.Element, time: float | None, timestamp: str | None) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    suite.set("errors", "0")
    suite.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))
    if time is not None:
        suite.set("time", f"{float(time):.3f}")
    if timestamp:
        suite.set("timestamp", _text(timestamp)[:19])  # ISO 8601 to the second, no zone (Ant writes it so)


def _batch(report: Mapping[str, Any]) -> ET.Element:
    classname = f"clearside.regress.{report['suite']}"
    suite = ET.Element("testsuite", name=_text(f"regress {report['suite']} on {report['provider']}"),
                       id=_text(report["batch"]))
    base = report.get("baseline") or {}
    _props(suite, {"suite": report["suite"], "batch": report["batch"], "provider": report["provider"],
                   "runs": report.get("runs"), "baseline": base.get("batch"),
                   **{f"prompt.{k}": v for k, v in (report.get("prompt_versions") or {}).items()}})
    for c in report.get("checks") or []:
        line = (f"mean {svg.num(c['mean'])} ± {svg.num(c.get('stdev'))}"
                + (f"; baseline {svg.num(c['baseline_mean'])}, delta {svg.num(c.get('delta'))}"
                   + (f", allowed {svg.num(c['allowed'])}" if "allowed" in c else "")
                   if "baseline_mean" in c else ""))
        if c["status"] == "fail":
            _case(suite, classname, c["metric"], failure=f"{c['metric']}: {'; '.join(c.get('reasons') or [])}",
                  out=line)
        elif c["status"] == "info":
            _case(suite, classname, c["metric"], skipped=f"{c['metric']} is reported, never gated ({line})")
        else:
            _case(suite, classname, c["metric"], out=line)
    planned = int(report.get("runs") or 0) * len(report.get("items") or [])
    finished = sum(d.get("status") in ("done", "failed") for d in report.get("debates") or [])
    _case(suite, classname, "runs completed", out=f"{finished} of {planned} planned runs finished",
          failure=None if finished >= planned else f"{planned - finished} of {planned} runs were cancelled")
    notes = [*(f"warning: {w}" for w in report.get("warnings") or []),
             *(f"version note: {n}" for n in report.get("version_notes") or [])]
    if notes:
        ET.SubElement(suite, "system-out").text = _text("\n".join(notes))
    _count(suite, report.get("wall_seconds"), report.get("started_at"))
    return suite


def _paired(report: Mapping[str, Any]) -> ET.Element:
    a, b = report["a"], report["b"]
    classname = f"clearside.compare-runs.{b.get('suite', 'batch')}"
    suite = ET.Element("testsuite", name=_text(f"compare-runs {b['batch']} against {a['batch']}"),
                       id=_text(f"{a['batch']}..{b['batch']}"))
    _props(suite, {"a.batch": a["batch"], "a.provider": a.get("provider"), "b.batch": b["batch"],
                   "b.provider": b.get("provider"), "pairs": report["pairs"], "alpha": report.get("alpha"),
                   "flips": len(report.get("flips") or [])})
    for m in report["metrics"]:
        line = (f"B − A = {svg.signed(m['diff'])} [{svg.signed(m['ci_low'])}, {svg.signed(m['ci_high'])}] over "
                f"{m['n']} pair(s); p {svg.num(m['p'])}, Holm p {svg.num(m['p_holm'])}; {m['verdict']}")
        if m["verdict"] == "regression":
            _case(suite, classname, m["metric"], out=line,
                  failure=f"{m['metric']}: significantly worse (Holm p {svg.num(m['p_holm'])} < "
                          f"{report.get('alpha', 0.05):g}) by {svg.num(m['worse_by'])}, beyond its tolerance "
                          f"{svg.num(m['tolerance'])}; {line}")
        elif m["tolerance"] is None:
            _case(suite, classname, m["metric"], skipped=f"{m['metric']} is reported, never gated ({line})")
        else:
            _case(suite, classname, m["metric"], out=line)
    flips = report.get("flips") or []
    if flips or report.get("warnings") or report.get("version_notes"):
        ET.SubElement(suite, "system-out").text = _text("\n".join(
            [*(f"warning: {w}" for w in report.get("warnings") or []),
             *(f"version note: {n}" for n in report.get("version_notes") or []),
             *(f"flipped: {f['case']} #{int(f['repeat']) + 1}: {f['change']}" for f in flips)]))
    _count(suite, None, b.get("created_at"))
    return suite


def junit_xml(report: Mapping[str, Any]) -> str:
    """The report (a paired comparison or a regression batch) as JUnit XML, one test case per gate."""
    suite = _paired(report) if kind(report) == "paired" else _batch(report)
    root = ET.Element("testsuites", name="clearside")
    root.append(suite)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, suite.get(key, "0"))
    if suite.get("time"):
        root.set("time", suite.get("time"))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: Mapping[str, Any], path: str | Path) -> Path:
    """Write :func:`junit_xml` of ``report`` to ``path`` (UTF-8, folders made); returns the path."""
    path = Path(path)
    text = junit_xml(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
