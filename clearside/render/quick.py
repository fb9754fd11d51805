"""Quick view: short bullet lists for each side, with confidence and uncertainty flags.

As docs/design/schema.md#output-formats describes it: concise bullets for pros and cons with
confidence and uncertainty flags. An argument is flagged when its confidence is low or its
evidence is a projection or a value judgment, i.e. inference rather than fact.
"""

from __future__ import annotations

from clearside.cruxes import CAVEAT, LOAD_NOTE, dependants_line, load_line, sorted_by_load
from clearside.render.markdown import CONFIDENCE_LABELS, EVIDENCE_LABELS, NO_VERDICT, bullets, numbered, partial_lines
from clearside.schema import Argument, Document

FLAG = "⚠"
FLAGGED_EVIDENCE = frozenset({"projection", "value_judgment"})


def is_flagged(argument: Argument) -> bool:
    """True when the claim rests on low confidence or on inference (projection, value judgment)."""
    return argument.confidence == "low" or argument.evidence_type in FLAGGED_EVIDENCE


def _argument_bullet(argument: Argument) -> str:
    who = f" ({argument.persona})" if argument.persona else ""
    line = f"- {argument.claim}{who} [{CONFIDENCE_LABELS[argument.confidence]}]"
    if is_flagged(argument):
        line += f" {FLAG} {EVIDENCE_LABELS[argument.evidence_type]}"
    return line


def _cruxes(doc: Document) -> list[str]:
    """The hinges by load: each with its load, what rests on it, and what a yes or a no would test."""
    lines = [f"*{LOAD_NOTE}*", ""]
    for rank, (hinge, crux) in enumerate(sorted_by_load(doc), start=1):
        lines.append(f"{rank}. {hinge} [{load_line(doc, crux)}]")
        lines += [f"   - {dependants_line(crux)}", f"   - {crux.if_yes}"]
        if crux.if_no != crux.if_yes:
            lines.append(f"   - {crux.if_no}")
    return [*lines, "", f"*{CAVEAT}*", ""]


def quick_view(doc: Document) -> str:
    """A short Markdown summary of both sides, the key uncertainties and the decision hinges."""
    lines = [f"# {doc.proposition.normalized_question}", "", *partial_lines(doc), "**FOR**", ""]
    lines += [_argument_bullet(argument) for argument in doc.pro.arguments]
    lines += ["", "**AGAINST**", ""]
    lines += [_argument_bullet(argument) for argument in doc.con.arguments]
    lines += ["", "**Key uncertainties**", ""]
    lines += bullets(f"FOR: {item}" for item in doc.pro.uncertainties)
    lines += bullets(f"AGAINST: {item}" for item in doc.con.uncertainties)
    lines += ["", "**Decision hinges**", ""]
    lines += _cruxes(doc) if doc.moderator.cruxes else [*numbered(doc.moderator.decision_hinges), ""]
    if doc.moderator.lens_divergence:
        lines += ["**Where the lenses diverge**", "", *bullets(doc.moderator.lens_divergence), ""]
    lines += [f"*{FLAG} = low confidence, or evidence that is a projection or a value judgment.*", "",
              f"*{NO_VERDICT}*"]
    return "\n".join(lines) + "\n"
