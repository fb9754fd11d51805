"""Reports to share: a regression batch or a paired comparison as a self-contained HTML file and
as JUnit XML for CI. Plain values in, text or files out; never imports streamlit (the page calls it, so does the CLI).

    report = compare_runs.compare_runs(store, a, b)     # or a batch's regress.batch_report(...)
    reports.write_html(reports.attach_debates(report, store), "report.html")
    reports.write_junit(report, "report.xml")
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Protocol

from ...errors import NotFound
from .html import kind, render_html, write_html
from .junit import junit_xml, write_junit

__all__ = ["attach_debates", "junit_xml", "kind", "render_html", "write_html", "write_junit"]

EXCERPT_LINES = 3
EXCERPT_CHARS = 300
FLIPS_WITH_DEBATES = 50


class _Debates(Protocol):
    def get(self, debate_id: str) -> Any: ...


def _line(item: Any) -> str:
    if isinstance(item, Mapping):
        item = next((item[k] for k in ("question", "claim", "text", "topic", "statement") if item.get(k)),
                    next((v for v in item.values() if isinstance(v, str)), ""))
    text = " ".join(str(item).split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 1] + "…"


def excerpt(document: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """A few lines of a debate to show beside another: FOR's and AGAINST's summaries, the decision hinges."""
    document = document or {}
    found = {"pro": (document.get("pro") or {}).get("executive_summary"),
             "con": (document.get("con") or {}).get("executive_summary"),
             "hinges": (document.get("moderator") or {}).get("decision_hinges")}
    return {key: [_line(i) for i in items[:EXCERPT_LINES]] for key, items in found.items() if isinstance(items, list)}


def map_rows(document: Mapping[str, Any] | None) -> list[tuple[int, str]] | None:
    """The debate's argument map as the nested list the map view shows (None for a document that is not whole)."""
    from ...render.argmap import argument_map
    from ...render.mapsvg import outline
    from ...schema import Document

    try:
        return outline(argument_map(Document.model_validate(document)))
    except ValueError:  # pydantic's ValidationError: a partial or foreign record has no map
        return None


def _question(record: Any) -> str:
    document = getattr(record, "document", None) or {}
    proposition = document.get("proposition") or {}
    return proposition.get("normalized_question") or proposition.get("raw_input") or getattr(record, "question", "")


def attach_debates(report: Mapping[str, Any], store: _Debates, *, flips: int = FLIPS_WITH_DEBATES) -> dict[str, Any]:
    """A copy of ``report`` with what its debates say, read from ``store`` (anything with ``get(debate_id)``, such as
    :class:`clearside.store.Store`): for a paired comparison, each side of the first ``flips`` flipped cases gets the
    ``question`` and an ``excerpt`` of its debate (``debate``), shown side by side; for a batch, ``questions``: each
    case's question. A debate that is gone (deleted since) is left out. One primary-key read per debate."""
    out = copy.deepcopy(dict(report))

    def read(debate_id: str | None) -> Any:
        if not debate_id:
            return None
        try:
            return store.get(debate_id)
        except NotFound:  # deleted since the run
            return None

    if kind(out) == "paired":
        for flip in out.get("flips", [])[:flips]:
            for side in ("a", "b"):
                record = read(flip[side].get("debate_id"))
                if record is not None:
                    flip[side]["question"] = _question(record)
                    flip[side]["debate"] = excerpt(getattr(record, "document", None))
                    flip[side]["map"] = map_rows(getattr(record, "document", None))
    else:
        questions: dict[str, str] = {}
        for row in out.get("debates") or []:
            if row.get("item") not in questions:
                record = read(row.get("debate_id"))
                if record is not None:
                    questions[str(row["item"])] = _question(record)
        out["questions"] = questions
    return out
