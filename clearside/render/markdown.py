"""Structured report: the full debate document as a Markdown essay.

Layout follows docs/design/schema.md#output-formats (structured report) and the flagship
demo: proposition, FOR and AGAINST cases (arguments grouped by category), the
moderator's synthesis with no verdict, then any challenge responses. Text from
the document goes out as-is; only table cells are escaped. This module also
holds the human labels for enum values that the other renderers share.
"""

from __future__ import annotations

from collections.abc import Iterable

from clearside.checks.record import tally
from clearside.cruxes import CAVEAT, LOAD_NOTE, dependants, load_line, sorted_by_load
from clearside.schema import CATEGORY_VALUES, Argument, Document, Side
from clearside.store.records import missing_parts, partial_notice

CATEGORY_ORDER: tuple[str, ...] = CATEGORY_VALUES  # economic, ethical, technical, social, political, environmental
CATEGORY_LABELS = {category: category.capitalize() for category in CATEGORY_ORDER}
EVIDENCE_LABELS = {"fact": "fact", "projection": "projection", "analogy": "analogy", "value_judgment": "value judgment"}
CONFIDENCE_LABELS = {"low": "low", "medium": "medium", "high": "high"}
CLASSIFICATION_LABELS = {"factual": "factual", "uncertain": "uncertain", "values_dependent": "values-dependent"}
ACTION_LABELS = {
    "question_assumption": "Question an assumption",
    "stronger_counterargument": "Ask for a stronger counterargument",
    "evidence_that_changes_outcome": "What evidence would change the outcome",
    "question_source": "Is this source reliable for this claim?",
}
NO_VERDICT = "ClearSide does not pick a winner: it lays out both cases and leaves the decision to you."


def by_category(arguments: Iterable[Argument]) -> list[tuple[str, list[Argument]]]:
    """Arguments grouped by category in the stable ``CATEGORY_ORDER``, keeping input order within a group."""
    groups: dict[str, list[Argument]] = {category: [] for category in CATEGORY_ORDER}
    for argument in arguments:
        groups[argument.category].append(argument)
    return [(category, items) for category, items in groups.items() if items]


def partial_lines(doc: Document) -> list[str]:
    """A partial debate's notice (a persona dropped: :func:`clearside.store.records.missing_parts`), shown first in
    every rendering so a partial debate is never read as a whole one; none for a whole debate."""
    notice = partial_notice(missing_parts(doc.dump()))
    return [f"> **{notice}**", ""] if notice else []


def evidence_line(argument: Argument) -> str:
    return f"Evidence: {EVIDENCE_LABELS[argument.evidence_type]} · Confidence: {CONFIDENCE_LABELS[argument.confidence]}"


def context_line(doc: Document) -> str | None:
    """Geography, timeframe and domain; a value the model inferred (not the user) is marked "(inferred)"."""
    context = doc.proposition.context
    if context is None:
        return None
    inferred = set(doc.quality.inferred) if doc.quality else set()
    parts = [f"{label}: {value}{' (inferred)' if label.lower() in inferred else ''}" for label, value in
             (("Geography", context.geography), ("Timeframe", context.timeframe), ("Domain", context.domain)) if value]
    return " · ".join(parts) or None


def table_cell(text: str | None) -> str:
    """A value made safe for one GFM table cell: ``|`` escaped, line breaks as ``<br>``."""
    if not text:
        return "—"
    text = text.replace("|", "\\|")
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def bullets(items: Iterable[str]) -> list[str]:
    return [f"- {item}" for item in items]


def numbered(items: Iterable[str]) -> list[str]:
    return [f"{number}. {item}" for number, item in enumerate(items, start=1)]


def _side(title: str, side: Side) -> list[str]:
    lines = [f"## {title}", "", "### Executive summary", "", *bullets(side.executive_summary), "",
             "### Arguments by category", ""]
    for category, arguments in by_category(side.arguments):
        lines += [f"#### {CATEGORY_LABELS[category]}", ""]
        for argument in arguments:
            who = f" *({argument.persona})*" if argument.persona else ""  # a persona debate: whose argument
            lines += [f"- **{argument.claim}**{who}", "", f"  {argument.explanation}", "",
                      f"  *{evidence_line(argument)}*", "", *_support(argument)]
    lines += ["### Assumptions", "", *bullets(side.assumptions), "",
              "### Uncertainties", "", *bullets(side.uncertainties), ""]
    return lines


FACT_NO_SOURCE = "Fact claimed, no source."


def _support(argument: Argument) -> list[str]:
    """An argument's verified quotes, each with its passage's marker; a fact that cites none is said to."""
    lines = [f'  > [{c.passage}] "{c.quote}"' for c in argument.citations or []]
    if argument.support == "unsupported" and argument.evidence_type == "fact":
        lines.append(f"  *{FACT_NO_SOURCE}*")
    return [*lines, ""] if lines else []


def _references(doc: Document) -> list[str]:
    """The user's sources, each with the passages the arguments quote (every quote was checked against them)."""
    if not doc.sources:
        return []
    lines = ["## References", "", "The sources you attached; every quote above was checked word for word against "
             "its passage.", ""]
    for source in doc.sources:
        pages = f", {source.pages} pages" if source.pages else ""
        lines.append(f"- **{source.ref}** {source.name} ({source.kind}{pages}; SHA-256 {source.sha256[:12]}…)")
        for passage in source.passages:
            page = f" (page {passage.page})" if passage.page else ""
            lines.append(f"  - [{passage.id}]{page} {' '.join(passage.text.split())}")
        if not source.passages:
            lines.append("  - No argument quotes it.")
    return [*lines, ""]


STANCES = {"for": "for", "against": "against", "mixed": "mixed (for and against)"}


def _personas(doc: Document) -> list[str]:
    """A persona debate's panel: each persona, its lens and its stance (its arguments are in FOR and AGAINST)."""
    if not doc.personas:
        return []
    lines = ["## The personas", "", "Each wrote its case blind to the others; their arguments are listed under FOR "
             "and AGAINST, labelled with the persona.", ""]
    for case in doc.personas:
        kind = "built-in" if case.persona.builtin else "your own"
        lines.append(f"- **{case.persona.name}** ({kind}): {case.persona.lens} · Stance: {STANCES[case.stance]}")
    return [*lines, ""]


def _moderator(doc: Document) -> list[str]:
    mod = doc.moderator
    lines = ["## Moderator synthesis (no verdict)", "", f"*{NO_VERDICT}*", "",
             "### Areas of agreement", "", *bullets(mod.areas_of_agreement), "",
             "### Core disagreements", "", "| Topic | Description | Root cause |", "| --- | --- | --- |"]
    lines += [f"| {table_cell(d.topic)} | {table_cell(d.description)} | {table_cell(d.root_cause)} |"
              for d in mod.core_disagreements]
    lines += ["", "### Assumption conflicts", ""]
    for number, conflict in enumerate(mod.assumption_conflicts, start=1):
        lines += [f"{number}. **FOR assumes:** {conflict.pro_assumption}", "",
                  f"   **AGAINST assumes:** {conflict.con_assumption}", "",
                  f"   **Why they conflict:** {conflict.conflict_description or 'Not stated by the moderator.'}", ""]
    if mod.lens_divergence:
        lines += ["### Where the lenses diverge", "", *bullets(mod.lens_divergence), ""]
    lines += ["### Evidence gaps", "", *bullets(mod.evidence_gaps), "",
              "### Decision hinges", "", "The debate would materially shift if we knew:", ""]
    return lines + (_cruxes(doc) if mod.cruxes else [*numbered(mod.decision_hinges), ""])


def _cruxes(doc: Document) -> list[str]:
    """The hinges by load, each with what rests on it and what a yes or a no would test."""
    lines = [f"*{LOAD_NOTE} {CAVEAT}*", ""]
    for rank, (hinge, crux) in enumerate(sorted_by_load(doc), start=1):
        items = dependants(doc, crux)
        lines += [f"{rank}. **{hinge}** (hinge {crux.hinge + 1})", "", f"   Load: {load_line(doc, crux)}", ""]
        lines += ["   Rests on it:", "", *(f"   - {who}: {text}" for who, text in items), ""] if items else []
        lines += [f"   {crux.if_yes}", ""] if crux.if_yes == crux.if_no else \
            [f"   {crux.if_yes}", "", f"   {crux.if_no}", ""]
    return lines


def _challenges(doc: Document) -> list[str]:
    responses = doc.challenges.responses
    if not responses:
        return []
    lines = ["## Challenge responses", ""]
    for number, item in enumerate(responses, start=1):
        lines += [f"### {number}. {ACTION_LABELS[item.action]}", "", f"**Target:** {item.target}", "",
                  f"**Classification:** {CLASSIFICATION_LABELS[item.response.classification]}", "",
                  "**Analysis**", "", *bullets(item.response.analysis), ""]
        if item.response.historical_context:
            lines += ["**Historical context**", "", *bullets(item.response.historical_context), ""]
        if item.response.citations:  # a challenge of a citation quotes the passage it discusses
            lines += ["**Quotes the passage**", "", *bullets(f'[{c.passage}] "{c.quote}"'
                                                         for c in item.response.citations), ""]
    return lines


def _quality(doc: Document) -> list[str]:
    if doc.quality is None:
        return []
    counts = tally(doc.quality)
    lines = ["## Quality checks", "",
             f"{counts['caught']} caught, {counts['repaired']} repaired, {counts['reasks']} re-asks "
             f"(checks {doc.quality.checks_version}, {doc.quality.strategy} generation"
             f"{'' if doc.quality.semantic else ', lexical checks only'}).", ""]
    items = [(agent, item) for agent, record in doc.quality.agents.items() for item in record.items]
    if items:
        lines += ["| Agent | Check | Action | Where | Text |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {agent} | {item.check} | {item.action} | {table_cell(item.path)} | {table_cell(item.text)} |"
                  for agent, item in items]
        lines.append("")
    return lines


def structured_report(doc: Document) -> str:
    """The whole document as a Markdown structured report."""
    meta, prop = doc.meta, doc.proposition
    lines = [f"# {prop.normalized_question}", "", *partial_lines(doc), f"**Question as asked:** {prop.raw_input}", ""]
    context = context_line(doc)
    if context:
        lines += [f"**Context:** {context}", ""]
    meta_parts = [f"Generated by {meta.model_info.provider} / {meta.model_info.model}",
                  f"at {meta.generated_at}", f"· Overall confidence: {CONFIDENCE_LABELS[meta.confidence_level]}",
                  f"· Schema {meta.schema_version}"]
    if meta.notes:
        meta_parts.append(f"· Notes: {meta.notes}")
    lines += [f"*{' '.join(meta_parts)}*", "", NO_VERDICT, ""]
    lines += _personas(doc)
    lines += _side("FOR the proposition", doc.pro)
    lines += _side("AGAINST the proposition", doc.con)
    lines += _moderator(doc)
    lines += _challenges(doc)
    lines += _references(doc)
    lines += _quality(doc)
    return "\n".join(lines).rstrip("\n") + "\n"
