"""One run of a regression batch on the Regression page: its debate beside the reference (section by section, or
whole), and its metrics with the detail behind them (coverage of the key points, neutrality hits, duplicates).

Every text of a debate, a reference or a metric's detail goes through ``esc``."""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside.errors import ClearSideError
from clearside.quality.references import Reference
from clearside.schema import Document
from clearside_ui import jobs, view
from clearside_ui.format import MISSING, SIDES, bullets, esc
from clearside_ui.regression_view import headline_table, table_height
from clearside_ui.state import Regression
from clearside_ui.view import context_parts

DEBATE = "app_pages/debate.py"
LAYOUTS = {"sections": "Section by section", "columns": "Whole debates side by side", "stacked": "One above the other"}


def key_points(reference: Reference, side: str) -> None:
    title, colour = {name: (title, colour) for name, title, colour in SIDES}[side]
    st.markdown(f"### :{colour}[{title}]")
    st.markdown("**Reference key points**\n\n" + bullets(reference.key_points[side]))


def hinges(reference: Reference) -> None:
    st.markdown("### :gray[DECISION HINGES]")
    if reference.decision_hinges:
        st.markdown(bullets(reference.decision_hinges))
    else:
        st.caption(f"Reference {esc(reference.name)} has no decision hinges: only key points per side.")


def key_points_view(reference: Reference) -> None:
    """A reference without a document: its proposition, key points per side and hinges."""
    st.markdown(f"#### {esc(reference.proposition)}")
    st.caption(f"Reference {esc(reference.name)}: expert key points per side")
    for side in ("pro", "con"):
        key_points(reference, side)
    if reference.decision_hinges:
        hinges(reference)


def header(document: Document) -> None:
    """The question and context line that tops a debate (as ``document_view`` shows them)."""
    prop, meta = document.proposition, document.meta
    st.markdown(f"#### {esc(prop.normalized_question)}")
    st.caption(" · ".join([f"Asked: {esc(prop.raw_input)}", *context_parts(document),
                           f"Model: {esc(meta.model_info.provider)}:{esc(meta.model_info.model)}"]))


def run_document(debate_id: str | None) -> Document | None:
    """The run's finished debate; None (with a note) when it was not saved, is gone or did not finish."""
    if not debate_id:
        st.caption("No debate was saved for this run.")
        return None
    try:
        record = jobs.store().get(debate_id)
    except ClearSideError as exc:
        st.warning(esc(f"The debate is gone: {exc.for_dashboard()}"))
        return None
    if record.document is None:
        st.caption("The debate did not finish: the sections that did are shown.")
        return None
    return Document.model_validate(record.document)


def whole(document: Document | None, debate_id: str | None, reference: Reference | None, *, stacked: bool) -> None:
    """The run's whole debate (or its finished sections) and the whole reference, side by side or stacked."""
    mine, theirs = (st.container(), st.container()) if stacked else st.columns(2, gap="large")
    with mine:
        st.markdown("### This run's debate")
        if document is not None:
            view.document_view(document, level=4)  # under "This run's debate" (h3)
        elif debate_id and jobs.store().exists(debate_id):
            view.sections_view(jobs.store().sections(debate_id), level=4)
    with theirs:
        st.markdown("### The reference")
        if reference is None:
            st.caption("This run's item has no reference.")
        elif reference.document:
            view.document_view(Document.model_validate(reference.document), level=4)
        else:
            key_points_view(reference)


def by_section(document: Document, reference: Reference | None) -> None:
    """The run's debate and the reference in two aligned columns, one row per section (FOR, AGAINST, moderator)."""
    ref_doc = Document.model_validate(reference.document) if reference and reference.document else None
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("### This run's debate")
        header(document)
    with right:
        st.markdown("### The reference")
        if ref_doc is not None:
            header(ref_doc)
        elif reference is not None:
            st.markdown(f"#### {esc(reference.proposition)}")
            st.caption(f"Reference {esc(reference.name)}: expert key points per side")
        else:
            st.caption("This run's item has no reference.")
    responses = view.responses_by_target(document)
    for side, title, colour in SIDES:
        left, right = st.columns(2, gap="large")
        with left.container(border=True):
            view.side_view(getattr(document, side), title, colour, responses)
        if reference is not None:
            with right.container(border=True):
                if ref_doc is not None:
                    view.side_view(getattr(ref_doc, side), title, colour, {})
                else:
                    key_points(reference, side)
    left, right = st.columns(2, gap="large")
    with left.container(border=True):
        view.moderator_view(document, responses)
    if reference is not None:
        with right.container(border=True):
            if ref_doc is not None:
                view.moderator_view(ref_doc, {})
            else:
                hinges(reference)


def _unavailable(detail: dict[str, Any], name: str) -> str:
    part = detail.get(name)
    if isinstance(part, dict) and part.get("available") is False:
        return part.get("reason", "not available")
    return ""


def coverage_view(detail: dict[str, Any]) -> None:
    st.markdown("**Coverage of the reference key points**")
    why = _unavailable(detail, "coverage")
    if why or "mean" not in detail.get("coverage", {}):
        st.caption(esc(why or "Not computed."))
        return
    cov = detail["coverage"]
    for side, title, _colour in SIDES:
        part = cov.get(side, {})
        covered = [f"{p['point']} ← {p['by']} ({p.get('centred', 0):g})" for p in part.get("covered", [])]
        points = len(covered) + len(part.get("missed", []))
        st.markdown(f"*{title}: {len(covered)} of {points} key points expressed ({part.get('coverage', 0):g})*")
        if covered:
            st.markdown("Covered:\n\n" + bullets(covered))
        if part.get("missed"):
            st.markdown("Missed:\n\n" + bullets(part["missed"]))
    hinges = detail.get("hinges", {})
    if "coverage" in hinges:
        st.markdown(f"*Reference decision hinges raised: {hinges['coverage']:g}*")
        if hinges.get("missed"):
            st.markdown("Hinges missed:\n\n" + bullets(hinges["missed"]))


def neutrality_view(detail: dict[str, Any]) -> None:
    st.markdown("**Moderator neutrality**")
    part = detail.get("neutrality", {})
    if "violations" not in part:
        st.caption(esc(_unavailable(detail, "neutrality") or "Not computed."))
        return
    if not part["violations"] and not part.get("warnings"):
        st.caption("No verdict, recommendation or certainty phrases in the moderator's text.")
    for title, hits in (("Violations (verdict or recommendation)", part["violations"]),
                        ("Warnings (certainty or dismissal)", part.get("warnings", []))):
        if hits:
            st.markdown(f"*{title}:*\n\n" + "\n".join(
                f"- {esc(h.get('field', ''))} · {esc(h.get('kind', ''))} · “{esc(h.get('phrase', ''))}” in: "
                f"{esc(h.get('text', ''))}" for h in hits))


def duplicates_view(detail: dict[str, Any]) -> None:
    st.markdown("**Repeated claims**")
    part = detail.get("diversity", {})
    if "pro" not in part:
        st.caption(esc(_unavailable(detail, "diversity") or "Not computed."))
        return
    lines = [f"{title}: “{d['a']}” ≈ “{d['b']}” ({d['similarity']:g})"
             for side, title, _colour in SIDES for d in part[side].get("duplicates", [])]
    lines += [f"Both sides: FOR “{d['pro']}” ≈ AGAINST “{d['con']}” ({d['similarity']:g})"
              for d in part.get("cross_side_duplicates", [])]
    if lines:
        st.markdown(bullets(lines))
    else:
        st.caption("No near-duplicate claims.")
    flagged = [f"{side.upper()}: {f['claim']} ({f['similarity']:g})" for side in ("pro", "con")
               for f in detail.get("relevance", {}).get(side, {}).get("flagged", [])]
    if flagged:
        st.markdown("*Claims far from the proposition:*\n\n" + bullets(flagged))


def detail_view(row: dict[str, Any]) -> None:
    """A run's headline metrics and the detail behind them: coverage, neutrality hits, duplicates."""
    data = row.get("data") or {}
    headline = row.get("metrics") or {}
    if headline:
        table = headline_table(headline)
        st.dataframe(table, hide_index=True,
                     placeholder=MISSING, key=Regression.headline(row["id"]), height=table_height(len(table)))
    detail = data.get("detail")
    if not detail:
        st.caption("No metrics detail was saved for this run.")
        return
    coverage, neutrality = st.columns(2, gap="large")
    with coverage:
        coverage_view(detail)
    with neutrality:
        neutrality_view(detail)
        duplicates_view(detail)
    errors = detail.get("schema_validity", {}).get("errors") or []
    if errors:
        st.markdown("**Schema errors**\n\n" + bullets([str(e) for e in errors]))
