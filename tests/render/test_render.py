"""Renderers: every format carries the document's content, labelled and in order."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from clearside.contract import jsonschema_errors
from clearside.errors import InputError
from clearside.render import FORMATS, debate_script, quick_view, render, structured_report
from clearside.schema import Document

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "microservices.json"

EXTRA_PRO = [
    {"category": "economic", "claim": "Per-service scaling cuts cloud spend for uneven load",
     "explanation": "Only hot services get more replicas.", "evidence_type": "projection", "confidence": "medium"},
    {"category": "social", "claim": "Small teams owning a façade service work with more autonomy",
     "explanation": "Team boundaries follow service boundaries.", "evidence_type": "value_judgment",
     "confidence": "low"},
    {"category": "economic", "claim": "Independent deploys shorten time to market",
     "explanation": "Teams release without a shared train.", "evidence_type": "analogy", "confidence": "medium"},
]
EXTRA_CON = [
    {"category": "environmental", "claim": "Duplicated infrastructure per service raises energy use",
     "explanation": "Every service carries its own sidecars and databases.", "evidence_type": "projection",
     "confidence": "low"},
    {"category": "ethical", "claim": "On-call load shifts onto fewer senior engineers",
     "explanation": "Distributed failures need rare expertise.", "evidence_type": "analogy",
     "confidence": "low"},
]
CHALLENGE = {
    "action": "question_assumption",
    "target": "The organization has sufficient DevOps maturity",
    "response": {
        "analysis": ["Maturity is asserted, not measured", "Deployment frequency data would settle part of it"],
        "historical_context": ["Early microservice adopters invested in platform teams first"],
        "classification": "values_dependent",
    },
}
PIPE_DISAGREEMENT = {"topic": "Cost | benefit", "description": "Pro counts savings\nCon counts overhead"}


def fixture_dict() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture
def doc() -> Document:
    """The contract's example (docs/design/schema.md#example), enriched: more categories, a piped disagreement and one
    challenge response."""
    data = copy.deepcopy(fixture_dict())
    data["pro"]["arguments"] += EXTRA_PRO
    data["con"]["arguments"] += EXTRA_CON
    data["moderator"]["core_disagreements"].append(PIPE_DISAGREEMENT)
    data["moderator"]["assumption_conflicts"].append(
        {"pro_assumption": "Tooling keeps improving", "con_assumption": "Tool ecosystem churn stays high"})
    data["challenges"]["responses"].append(CHALLENGE)
    return Document.model_validate(data)


def claims(document: Document) -> list[str]:
    return [a.claim for a in document.pro.arguments + document.con.arguments]


def section(text: str, start: str, end: str | None) -> str:
    begin = text.index(start)
    return text[begin: text.index(end, begin) if end else len(text)]


def test_fixture_is_the_complete_spec_example():
    data = fixture_dict()
    assert set(data) == {"meta", "proposition", "pro", "con", "moderator", "challenges"}
    assert data["meta"]["notes"] == "No citations requested"
    assert data["proposition"]["context"]["domain"] == "Software Architecture"
    assert data["challenges"]["responses"] == []
    assert Document.model_validate(data).dump() == data


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_carries_every_claim(doc, fmt):
    text = render(doc, fmt)
    if fmt == "argdown":  # every punctuation mark escaped with a backslash
        text = re.sub(r"\\(.)", r"\1", text)
    assert text.endswith("\n")
    for claim in claims(doc):
        assert claim in text, f"{fmt} lost claim {claim!r}"


def test_render_dispatches_to_each_renderer(doc):
    assert render(doc, "md") == structured_report(doc)
    assert render(doc, "quick") == quick_view(doc)
    assert render(doc, "script") == debate_script(doc)


@pytest.mark.parametrize("fmt", ["html", "markdown", "", "pdf"])
def test_unknown_format_raises_input_error(doc, fmt):
    with pytest.raises(InputError, match="json, md, quick, script"):
        render(doc, fmt)


def test_json_round_trips_and_validates(doc):
    text = render(doc, "json")
    data = json.loads(text)
    assert data == doc.dump()
    assert Document.model_validate(data) == doc
    assert jsonschema_errors(data) == []
    assert "façade" in text  # ensure_ascii=False keeps text readable
    assert text.startswith('{\n  "meta"')


def test_report_header_and_no_verdict(doc):
    report = structured_report(doc)
    assert report.startswith(f"# {doc.proposition.normalized_question}\n")
    assert "Should we adopt microservices architecture?" in report
    assert "Geography: Global · Timeframe: 2025-2027 · Domain: Software Architecture" in report
    assert "openai / gpt-4" in report and "2025-01-20T18:42:00Z" in report
    assert "Overall confidence: medium" in report and "No citations requested" in report
    assert "## Moderator synthesis (no verdict)" in report
    assert "does not pick a winner" in report


def test_report_groups_arguments_by_category_in_stable_order(doc):
    report = structured_report(doc)
    pro = section(report, "## FOR the proposition", "## AGAINST the proposition")
    con = section(report, "## AGAINST the proposition", "## Moderator synthesis")
    assert re.findall(r"^#### (\w+)$", pro, re.M) == ["Economic", "Technical", "Social"]
    assert re.findall(r"^#### (\w+)$", con, re.M) == ["Ethical", "Technical", "Environmental"]
    economic = section(pro, "#### Economic", "#### Technical")
    assert "**Per-service scaling cuts cloud spend for uneven load**" in economic
    assert "**Independent deploys shorten time to market**" in economic
    assert "Small teams" not in economic
    social = section(pro, "#### Social", "### Assumptions")
    assert "**Small teams owning a façade service work with more autonomy**" in social
    for claim in claims(doc):
        assert f"**{claim}**" in report


def test_report_labels_evidence_and_confidence(doc):
    report = structured_report(doc)
    assert "Evidence: projection · Confidence: medium" in report
    assert "Evidence: value judgment · Confidence: low" in report
    assert "Evidence: fact · Confidence: high" in report
    assert "value_judgment" not in report
    assert report.count("Evidence: ") == len(claims(doc))


def test_report_lists_assumptions_uncertainties_and_synthesis(doc):
    report = structured_report(doc)
    for item in doc.pro.assumptions + doc.con.assumptions + doc.pro.uncertainties + doc.con.uncertainties:
        assert f"- {item}" in report
    for item in doc.moderator.areas_of_agreement + doc.moderator.evidence_gaps:
        assert f"- {item}" in report
    hinges = section(report, "### Decision hinges", "## Challenge responses")
    for number, hinge in enumerate(doc.moderator.decision_hinges, start=1):
        assert f"\n{number}. {hinge}\n" in hinges
    conflicts = section(report, "### Assumption conflicts", "### Evidence gaps")
    assert "**FOR assumes:** Organization has sufficient DevOps maturity" in conflicts
    assert "**AGAINST assumes:** Team has limited distributed systems experience" in conflicts
    assert "**Why they conflict:** Directly contradictory assessments of team readiness" in conflicts
    assert "Not stated by the moderator." in conflicts  # the added conflict has no description


def test_report_table_escapes_pipes_and_newlines(doc):
    report = structured_report(doc)
    rows = [line for line in report.splitlines() if line.startswith("| ")]
    assert rows[0] == "| Topic | Description | Root cause |"
    assert "| Complexity management | Pro sees complexity as manageable with modern tools; " in rows[2]
    assert rows[-1] == r"| Cost \| benefit | Pro counts savings<br>Con counts overhead | — |"
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == 4, row


def test_report_challenge_responses(doc):
    challenges = section(structured_report(doc), "## Challenge responses", None)
    assert "### 1. Question an assumption" in challenges
    assert "**Target:** The organization has sufficient DevOps maturity" in challenges
    assert "**Classification:** values-dependent" in challenges
    assert "- Maturity is asserted, not measured" in challenges
    assert "- Early microservice adopters invested in platform teams first" in challenges


def test_report_without_optional_fields_or_challenges():
    data = fixture_dict()
    del data["meta"]["notes"], data["proposition"]["context"]
    del data["moderator"]["core_disagreements"][0]["root_cause"]
    report = structured_report(Document.model_validate(data))
    assert "None" not in report
    assert "Notes:" not in report and "**Context:**" not in report
    assert "## Challenge responses" not in report
    assert report.rstrip().endswith("3. Is the current monolith actually impeding development velocity?")


def test_quick_view_bullets_flags_and_hinges(doc):
    view = quick_view(doc)
    lines = view.splitlines()
    assert len(lines) < 40
    assert "- Independent scalability improves resource efficiency [high]" in lines  # fact/high: no flag
    assert "- Independent deploys shorten time to market [medium]" in lines  # analogy/medium: no flag
    assert "- Per-service scaling cuts cloud spend for uneven load [medium] ⚠ projection" in lines
    assert "- Small teams owning a façade service work with more autonomy [low] ⚠ value judgment" in lines
    assert "- On-call load shifts onto fewer senior engineers [low] ⚠ analogy" in lines  # low confidence alone flags
    for_part = section(view, "**FOR**", "**AGAINST**")
    against_part = section(view, "**AGAINST**", "**Key uncertainties**")
    assert all(a.claim in for_part and a.claim not in against_part for a in doc.pro.arguments)
    assert all(a.claim in against_part for a in doc.con.arguments)
    uncertainties = section(view, "**Key uncertainties**", "**Decision hinges**")
    assert "- FOR: Actual cost savings depend on usage patterns" in uncertainties
    assert "- AGAINST: Tool ecosystem continues evolving" in uncertainties
    hinges = section(view, "**Decision hinges**", "*⚠")
    assert "1. Does the team have proven distributed systems experience?" in hinges
    assert "3. Is the current monolith actually impeding development velocity?" in hinges


def test_script_sections_in_order(doc):
    script = debate_script(doc)
    headings = re.findall(r"^## (.+)$", script, re.M)
    assert headings == ["INTRODUCTION", "OPENING STATEMENTS", "CONSTRUCTIVE ARGUMENTS", "CROSS-EXAMINATION",
                        "REBUTTAL POINTS", "CLOSING", "MODERATOR SYNTHESIS"]
    intro = section(script, "## INTRODUCTION", "## OPENING STATEMENTS")
    assert f"**MODERATOR:** Today's proposition: \"{doc.proposition.normalized_question}\"" in intro
    opening = section(script, "## OPENING STATEMENTS", "## CONSTRUCTIVE ARGUMENTS")
    assert opening.index("Microservices enable independent scaling") < opening.index("**AGAINST:**")
    assert opening.index("**AGAINST:**") < opening.index("Debugging across services is challenging")
    constructive = section(script, "## CONSTRUCTIVE ARGUMENTS", "## CROSS-EXAMINATION")
    assert "(Environmental · evidence: projection · confidence: low)" in constructive
    assert "(Technical · evidence: fact · confidence: high)" in constructive
    assert script.rstrip().endswith("No winner is declared. The decision rests with you.")


def test_script_cross_examination_rebuttals_and_closing_come_from_the_document(doc):
    script = debate_script(doc)
    cross = section(script, "## CROSS-EXAMINATION", "## REBUTTAL POINTS")
    assert '(to FOR): Your case assumes: "Organization has sufficient DevOps maturity"' in cross
    assert '(to AGAINST): Your case assumes: "Team has limited distributed systems experience"' in cross
    assert "Directly contradictory assessments of team readiness" in cross
    assert '(to AGAINST): Your case assumes: "Tool ecosystem churn stays high"' in cross
    assert "**USER CHALLENGE** (Question an assumption): The organization has sufficient DevOps maturity" in cross
    assert "(classification: values-dependent)" in cross
    assert "- Maturity is asserted, not measured" in cross
    rebuttals = section(script, "## REBUTTAL POINTS", "## CLOSING")
    assert "1. **Complexity management**: Pro sees complexity" in rebuttals
    assert "Root cause: Different assessments of team capability and tool maturity" in rebuttals
    assert "2. **Cost | benefit**: Pro counts savings" in rebuttals
    closing = section(script, "## CLOSING", "## MODERATOR SYNTHESIS")
    assert closing.index("uncertain for FOR") < closing.index("Team adaptation time is variable")
    assert closing.index("uncertain for AGAINST") < closing.index("True complexity cost emerges over time")
    synthesis = section(script, "## MODERATOR SYNTHESIS", None)
    assert "- Both recognize trade-offs between flexibility and complexity" in synthesis
    assert "- Projected growth requirements" in synthesis
    assert "2. What are the actual scaling requirements for the next 2 years?" in synthesis


def test_a_persona_debate_renders_its_panel_labels_and_where_the_lenses_diverge():
    from test_schema import with_additions
    doc = Document.model_validate(with_additions())
    report, quick = render(doc, "md"), render(doc, "quick")
    assert "## The personas" in report
    assert "- **Night-shift nurse** (your own): what it does to a 12-hour shift · Stance: mixed" in report
    claim = doc.pro.arguments[0].claim
    assert f"- **{claim}** *(Economist)*" in report and f"- {claim} (Economist) [" in quick
    for text in (report, quick):
        assert "Where the lenses diverge" in text and "The economist counts cost; the nurse counts hours" in text
    plain = render(Document.model_validate(fixture_dict()), "md")
    assert "The personas" not in plain and "lenses diverge" not in plain
