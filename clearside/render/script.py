"""Debate script: the document replayed as a moderated debate.

As docs/design/schema.md#output-formats describes it: opening statements, rebuttals,
cross-examination and closing arguments. Every line is built from the document itself; nothing is
invented. Cross-examination puts each side's conflicting assumption to it (no
answers are made up), rebuttal points are the moderator's core disagreements,
and the closing is each side's own list of what remains uncertain.
"""

from __future__ import annotations

from clearside.render.markdown import (
    ACTION_LABELS,
    CATEGORY_LABELS,
    CLASSIFICATION_LABELS,
    CONFIDENCE_LABELS,
    EVIDENCE_LABELS,
    bullets,
    context_line,
    numbered,
    partial_lines,
)
from clearside.schema import Document, Side


def _heading(section: str) -> list[str]:
    return [f"## {section}", ""]


def _constructive(label: str, side: Side) -> list[str]:
    lines = [f"**{label}:**", ""]
    for number, arg in enumerate(side.arguments, start=1):
        tags = (f"{CATEGORY_LABELS[arg.category]} · evidence: {EVIDENCE_LABELS[arg.evidence_type]}"
                f" · confidence: {CONFIDENCE_LABELS[arg.confidence]}")
        lines += [f"{number}. **{arg.claim}** ({tags})", "", f"   {arg.explanation}", ""]
    return lines


def _cross_examination(doc: Document) -> list[str]:
    lines = _heading("CROSS-EXAMINATION")
    for conflict in doc.moderator.assumption_conflicts:
        lines += [f"**MODERATOR** (to FOR): Your case assumes: \"{conflict.pro_assumption}\". "
                  "What would it take for that assumption to fail?", "",
                  f"**MODERATOR** (to AGAINST): Your case assumes: \"{conflict.con_assumption}\". "
                  "What would it take for that assumption to fail?", ""]
        if conflict.conflict_description:
            lines += [f"**MODERATOR:** Why these collide: {conflict.conflict_description}", ""]
    for item in doc.challenges.responses:
        body = item.response
        lines += [f"**USER CHALLENGE** ({ACTION_LABELS[item.action]}): {item.target}", "",
                  f"**CHALLENGE AGENT** (classification: {CLASSIFICATION_LABELS[body.classification]}):", "",
                  *bullets(body.analysis), ""]
        if body.historical_context:
            lines += ["Historical context:", "", *bullets(body.historical_context), ""]
    return lines


def debate_script(doc: Document) -> str:
    """The document as a debate transcript, ending with the moderator's no-verdict synthesis."""
    prop, mod = doc.proposition, doc.moderator
    lines = [f"# Debate script: {prop.normalized_question}", "", *partial_lines(doc), *_heading("INTRODUCTION"),
             f"**MODERATOR:** Today's proposition: \"{prop.normalized_question}\"", "",
             f"**MODERATOR:** As originally asked: \"{prop.raw_input}\"", ""]
    context = context_line(doc)
    if context:
        lines += [f"**MODERATOR:** Scope: {context}.", ""]
    lines += ["**MODERATOR:** Each side will make its strongest case. I will not declare a winner.", ""]

    lines += _heading("OPENING STATEMENTS")
    lines += ["**FOR:**", "", *bullets(doc.pro.executive_summary), "",
              "**AGAINST:**", "", *bullets(doc.con.executive_summary), ""]

    lines += _heading("CONSTRUCTIVE ARGUMENTS")
    lines += _constructive("FOR", doc.pro) + _constructive("AGAINST", doc.con)

    lines += _cross_examination(doc)

    lines += _heading("REBUTTAL POINTS")
    lines += ["*The points each side contests, as identified by the moderator:*", ""]
    for number, item in enumerate(mod.core_disagreements, start=1):
        lines += [f"{number}. **{item.topic}**: {item.description}", ""]
        if item.root_cause:
            lines += [f"   Root cause: {item.root_cause}", ""]

    lines += _heading("CLOSING")
    lines += ["**What remains uncertain for FOR:**", "", *bullets(doc.pro.uncertainties), "",
              "**What remains uncertain for AGAINST:**", "", *bullets(doc.con.uncertainties), ""]

    lines += _heading("MODERATOR SYNTHESIS")
    lines += ["**Areas of agreement:**", "", *bullets(mod.areas_of_agreement), "",
              "**Evidence gaps:**", "", *bullets(mod.evidence_gaps), "",
              "**Decision hinges:** the debate would materially shift if we knew:", "",
              *numbered(mod.decision_hinges), "",
              "**MODERATOR:** No winner is declared. The decision rests with you."]
    return "\n".join(lines) + "\n"
