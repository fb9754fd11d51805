"""What the MCP tools say, in-process: the summary of a debate (its ids the argument map's), a challenge target
given by id, and the tools' choices kept equal to the core's."""

from __future__ import annotations

from typing import get_args

from helpers import fixture_dict

from clearside.mcp import summary, tools, work
from clearside.render import FORMATS
from clearside.render.argmap import argument_map
from clearside.schema import ALL_ACTIONS, Document


def test_the_summary_names_every_element_by_its_argument_map_id():
    document = Document.model_validate(fixture_dict())
    data = summary.summary("d" * 32, document)
    ids = {node.id for node in argument_map(document).nodes}
    listed = [item["id"] for side in ("for", "against") for kind in ("arguments", "assumptions")
              for item in data[side][kind]]
    listed += [item["id"] for item in data["decision_hinges"]]
    listed += [item[end] for item in data["assumption_conflicts"] for end in ("for_id", "against_id")]
    assert set(listed) <= ids
    assert len(data["for"]["arguments"]) == len(document.pro.arguments)
    text = summary.summary_text(data)
    assert text.startswith(f"Debate {'d' * 32}: {document.proposition.normalized_question}\n")
    assert ("- pro.arguments.0: Independent scalability improves resource efficiency [technical; fact; high "
            "confidence]") in text
    assert "- pro.assumptions.0 (assumption): The organization has sufficient DevOps maturity" in text
    # the conflict quotes FOR in other words than FOR's own assumption: the moderator's words get an id of their own
    assert ("- FOR moderator.assumption_conflicts.0.pro_assumption “Organization has sufficient DevOps maturity” "
            "against AGAINST con.assumptions.1 “Team has limited distributed systems experience”: Directly "
            "contradictory assessments of team readiness") in text
    assert "- moderator.decision_hinges.0: Does the team have proven distributed systems experience?" in text
    assert "partial" not in data and "Partial debate" not in text


def test_a_challenge_target_given_by_id_is_its_elements_text():
    document = Document.model_validate(fixture_dict())
    assert work.element_text(document, " con.assumptions.0 ") == document.con.assumptions[0]
    assert work.element_text(document, "moderator.decision_hinges.1") == document.moderator.decision_hinges[1]
    assert work.element_text(document, "pro.arguments.0") == document.pro.arguments[0].claim
    for free in ("proposition", "pro.arguments.99", "Is the cost estimate sound?"):
        assert work.element_text(document, free) == free


def test_the_tools_choices_are_the_cores():
    assert get_args(tools.Format) == ("summary", *FORMATS)
    assert get_args(tools.Action) == tuple(ALL_ACTIONS)
