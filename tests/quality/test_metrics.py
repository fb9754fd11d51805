"""Quality metrics on hand-made documents: neutral vs winner-picking moderators, duplicated arguments, sides
swapped or off-topic (caught by the side-swap test and coverage), balance, usage, and the ``metrics`` command.

Embedding metrics use the real offline MiniLM (loaded once per test process). Documents built from the ArgKP
dev split's human arguments stand in for a debate whose sides are known to be right.
"""

from __future__ import annotations

import copy
import json

import pytest
from helpers import fixture_dict, full_script

from clearside.cli import main
from clearside.contract import jsonschema_errors, validate_document
from clearside.quality import metrics, references
from clearside.quality.metrics.report import markdown


def argument(claim: str, *, evidence: str = "value_judgment", confidence: str = "medium") -> dict:
    return {"category": "social", "claim": claim, "explanation": claim, "evidence_type": evidence,
            "confidence": confidence}


def debate_of(topic: str, pro: list[str], con: list[str]) -> dict:
    """A valid document whose sides are exactly these claims."""
    doc = fixture_dict()
    doc["proposition"].update(raw_input=topic, normalized_question=topic)
    doc["pro"]["arguments"] = [argument(c) for c in pro]
    doc["con"]["arguments"] = [argument(c) for c in con]
    return doc


def human_debate(ref, n: int = 10) -> dict:
    args = references.argkp_arguments(ref.proposition)
    return debate_of(ref.proposition, args["pro"][:n], args["con"][:n])


# --- the flagship reference ---------------------------------------------------------------------------------

def test_flagship_reference_is_a_valid_v1_document_with_points_and_hinges():
    ref = references.flagship()
    assert jsonschema_errors(ref.document) == []
    validate_document(ref.document)
    assert "moratorium" in ref.proposition and "data center" in ref.proposition
    assert len(ref.key_points["pro"]) >= 5 and len(ref.key_points["con"]) >= 5
    assert ref.decision_hinges == ref.document["moderator"]["decision_hinges"] and len(ref.decision_hinges) == 4
    result = metrics.compute(ref.document, reference=ref)
    assert result["neutrality"]["violations"] == [] and result["stance"]["passed"]


def test_reference_loading_and_refusals(tmp_path):
    assert [r.name for r in references.argkp_dev()] == [f"argkp-dev:{i}" for i in range(1, 5)]
    assert references.load("argkp-dev:2").key_points["pro"]
    with pytest.raises(ValueError, match="argkp-dev:1 to argkp-dev:4"):
        references.load("argkp-dev:9")
    with pytest.raises(ValueError, match="Unknown reference"):
        references.load("nonsense")
    bad = tmp_path / "ref.json"
    bad.write_text(json.dumps({"proposition": "X", "key_points": {"pro": []}}), encoding="utf-8")
    with pytest.raises(ValueError, match="non-empty 'pro' and 'con'"):
        references.load(str(bad))
    good = tmp_path / "mine.json"
    good.write_text(json.dumps({"proposition": "Cities should ban cars", "key_points": {
        "pro": ["Cars pollute city air"], "con": ["People need cars to get to work"]}}), encoding="utf-8")
    assert references.load(str(good)).name == "mine"


# --- validity and neutrality (no embeddings needed) ------------------------------------------------------

def test_invalid_document_reports_errors_and_measures_nothing_else():
    doc = fixture_dict()
    doc["pro"]["arguments"][0]["confidence"] = "certain"
    del doc["moderator"]
    result = metrics.compute(doc)
    assert result["schema_validity"]["valid"] is False
    assert any("moderator" in e for e in result["schema_validity"]["errors"])
    assert any("certain" in e for e in result["schema_validity"]["errors"])
    assert result["neutrality"] == {"available": False, "reason": "the document is not a valid v1 document"}
    assert metrics.summary(result) == {"schema_valid": 0.0}
    assert metrics.compute([1, 2])["schema_validity"] == {"valid": False, "errors": ["(root): not a JSON object"]}


def test_neutral_moderator_passes_and_a_winner_picking_one_is_listed_with_its_text():
    neutral = fixture_dict()
    neutral["moderator"]["core_disagreements"][0]["description"] = (
        "Pro argues that the company should split the monolith; Con holds that it should not.")
    neutral["moderator"]["decision_hinges"].append("Whether regulators should require audits of the platform?")
    result = metrics.compute(neutral, semantic_metrics=False)
    assert result["neutrality"]["passed"] and result["neutrality"]["violations"] == []

    biased = copy.deepcopy(neutral)
    biased["moderator"]["core_disagreements"][0]["description"] = "On balance, the pro side makes the stronger case."
    biased["moderator"]["decision_hinges"][0] = "The team should adopt microservices now."
    biased["moderator"]["evidence_gaps"][0] = "Benchmarks would obviously confirm the gains."
    n = metrics.compute(biased, semantic_metrics=False)["neutrality"]
    assert not n["passed"]
    found = {(v["field"], v["kind"]) for v in n["violations"]}
    assert ("core_disagreements[0].description", "verdict") in found
    assert ("decision_hinges[0]", "recommendation") in found
    assert all(v["severity"] == "hard" and v["text"] and v["phrase"] for v in n["violations"])
    assert "On balance, the pro side makes the stronger case." in {v["text"] for v in n["violations"]}
    assert [w["phrase"] for w in n["warnings"]] == ["obviously"] and n["false_certainty"] == 1
    assert metrics.summary(metrics.compute(biased, semantic_metrics=False))["neutrality_violations"] == 3


def test_balance_counts_lengths_evidence_and_confidence():
    doc = debate_of("Should cities ban cars?", ["Cars pollute city air badly", "Streets could be parks",
                                                "Buses move more people", "Noise harms sleep"],
                    ["Workers need cars", "Shops lose customers"])
    doc["con"]["arguments"] = [argument(a["claim"], evidence="fact", confidence="high")
                               for a in doc["con"]["arguments"]]
    b = metrics.compute(doc, semantic_metrics=False)["balance"]
    assert b["count_ratio"] == 0.5 and b["pro"]["arguments"] == 4 and b["con"]["arguments"] == 2
    assert b["evidence_divergence"] == 1.0  # all value judgments against all facts
    assert b["confidence_gap"] == 1.0
    even = metrics.compute(debate_of("Q?", ["a claim here", "another one"], ["a claim there", "another two"]),
                           semantic_metrics=False)["balance"]
    assert even["count_ratio"] == 1.0 and even["evidence_divergence"] == 0.0 and even["length_ratio"] == 1.0


# --- embedding metrics --------------------------------------------------------------------------------------

def test_duplicated_arguments_are_flagged_and_lower_diversity():
    topic = "Should cities ban private cars from their centres?"
    varied = debate_of(topic, ["Car-free centres cut air pollution", "Shops gain foot traffic without cars",
                               "Streets become safer for children"],
                       ["Delivery vans still need access", "Disabled residents depend on cars",
                        "Suburban commuters lose their route to work"])
    repeated = copy.deepcopy(varied)
    repeated["pro"]["arguments"][1] = argument("Car-free city centres reduce air pollution")
    repeated["con"]["arguments"][2] = argument("Car-free centres cut air pollution")  # pro's claim, made by con
    v, r = metrics.compute(varied), metrics.compute(repeated)
    assert v["diversity"]["pro"]["duplicates"] == [] and v["diversity"]["cross_side_duplicates"] == []
    [pair] = r["diversity"]["pro"]["duplicates"]
    assert {pair["a"], pair["b"]} == {"Car-free centres cut air pollution",
                                      "Car-free city centres reduce air pollution"}
    assert pair["similarity"] >= 0.76
    assert r["diversity"]["cross_side_duplicates"][0]["con"] == "Car-free centres cut air pollution"
    assert r["diversity"]["pro"]["mean_distance"] < v["diversity"]["pro"]["mean_distance"]
    assert r["diversity"]["pro"]["vendi"] < v["diversity"]["pro"]["vendi"]
    assert metrics.summary(r)["duplicate_pairs"] >= 2 > metrics.summary(v)["duplicate_pairs"]


@pytest.mark.parametrize("index", range(4))
def test_side_swap_test_passes_human_sides_and_catches_them_swapped(index):
    ref = references.argkp_dev()[index]
    right = metrics.compute(human_debate(ref), reference=ref)
    doc = human_debate(ref)
    doc["pro"], doc["con"] = doc["con"], doc["pro"]
    swapped = metrics.compute(doc, reference=ref)
    assert right["stance"]["passed"] and right["stance"]["margin"] > 0
    assert not swapped["stance"]["passed"] and swapped["stance"]["margin"] < 0


def test_off_topic_side_gets_no_coverage_and_is_flagged():
    school, guns = references.argkp_dev()[0], references.argkp_dev()[1]
    doc = human_debate(school)
    doc["con"]["arguments"] = human_debate(guns)["con"]["arguments"]
    result = metrics.compute(doc, reference=school)
    on_topic = metrics.compute(human_debate(school), reference=school)
    assert result["coverage"]["con"]["coverage"] == 0.0 < on_topic["coverage"]["con"]["coverage"]
    assert result["relevance"]["con"]["flagged_fraction"] > on_topic["relevance"]["con"]["flagged_fraction"]
    assert result["coverage"]["con"]["missed"] == school.key_points["con"]


def test_key_points_stated_as_claims_are_covered():
    ref = references.argkp_dev()[2]
    doc = debate_of(ref.proposition, ref.key_points["pro"], ref.key_points["con"])
    cov = metrics.compute(doc, reference=ref)["coverage"]
    assert cov["pro"]["coverage"] == 1.0 and cov["con"]["coverage"] == 1.0 and cov["mean"] == 1.0
    assert {c["point"] for c in cov["pro"]["covered"]} == set(ref.key_points["pro"])


def test_without_a_reference_coverage_and_stance_say_why():
    result = metrics.compute(fixture_dict())
    for name in ("coverage", "stance", "hinges"):
        assert result[name]["available"] is False and "--reference" in result[name]["reason"]
    assert result["usage"]["available"] is False
    assert 0 <= result["grounding"]["two_sided"] <= 1 and result["assumptions"]["pro"]["count"] >= 1


def test_hinges_are_matched_against_the_flagship():
    ref = references.flagship()
    doc = copy.deepcopy(ref.document)
    assert metrics.compute(doc, reference=ref)["hinges"]["coverage"] == 1.0
    doc["moderator"]["decision_hinges"] = ["What is the price of coffee in Rome?", "Who painted the Mona Lisa?"]
    doc["moderator"]["core_disagreements"] = doc["moderator"]["core_disagreements"][:1]
    hinges = metrics.compute(doc, reference=ref)["hinges"]
    assert hinges["coverage"] < 0.5 and len(hinges["missed"]) >= 3


# --- the metrics command ------------------------------------------------------------------------------------

def test_metrics_command_json_has_one_key_per_metric(tmp_path, capsys):
    path = tmp_path / "debate.json"
    doc = fixture_dict()
    doc["moderator"]["decision_hinges"][0] = "In my view the pro side wins the debate."
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["metrics", str(path), "--reference", "flagship"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"schema_validity", "neutrality", "balance", "assumptions", "diversity", "relevance", "grounding",
            "coverage", "stance", "hinges", "usage"} <= set(result)
    assert sorted(v["kind"] for v in result["neutrality"]["violations"]) == ["recommendation", "verdict"]
    assert result["reference"] == "flagship" and result["coverage"]["mean"] < 0.5  # microservices vs moratorium


def test_metrics_command_markdown_and_a_saved_debate_with_usage(tmp_path, capsys):
    assert main(["debate", "Should we adopt microservices architecture?", "--save",
                 "--provider", full_script(tmp_path)]) == 0
    debate_id = capsys.readouterr().err.split("Saved debate ")[1].split()[0]
    assert main(["metrics", debate_id, "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "| schema_valid | 1 |" in text and "| orchestrator |" in text and "Not measured" in text
    assert main(["metrics", debate_id]) == 0
    usage = json.loads(capsys.readouterr().out)["usage"]
    assert usage["available"] and set(usage["agents"]) == {"orchestrator", "pro", "con", "moderator"}
    assert usage["completion_tokens"] > 0


def test_metrics_command_bad_input_exits_2(tmp_path, capsys):
    assert main(["metrics", str(tmp_path / "missing.json")]) == 2
    assert "Cannot read debate" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["metrics", str(bad)]) == 2
    good = tmp_path / "good.json"
    good.write_text(json.dumps(fixture_dict()), encoding="utf-8")
    assert main(["metrics", str(good), "--reference", "argkp-dev:7"]) == 2
    assert "argkp-dev:1 to argkp-dev:4" in capsys.readouterr().err
    assert main(["metrics", "0" * 32]) == 2  # an id the store does not have


def test_markdown_lists_violations_duplicates_and_missed_points():
    ref = references.flagship()
    doc = copy.deepcopy(ref.document)
    doc["moderator"]["evidence_gaps"][0] = "We recommend a pause until 2030."
    doc["pro"]["arguments"][1] = copy.deepcopy(doc["pro"]["arguments"][0])
    text = markdown(metrics.compute(doc, reference=ref), "x.json")
    assert "Neutrality violations:" in text and "We recommend a pause until 2030." in text
    assert "Near-duplicate claims:" in text and "Stance (side-swap test): passed" in text


def test_metrics_of_a_reference_file_or_a_live_transcript_score_their_document(tmp_path, capsys):
    transcript = tmp_path / "live.json"
    transcript.write_text(json.dumps({"turns": [], "interventions": [], "document": fixture_dict()}), encoding="utf-8")
    assert main(["metrics", str(transcript), "--no-embeddings"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["schema_validity"]["valid"] and result["diversity"]["available"] is False
    assert main(["metrics", str(references.FLAGSHIP), "--no-embeddings"]) == 0
    assert json.loads(capsys.readouterr().out)["balance"]["count_ratio"] == 1.0


def test_neutrality_counts_what_the_moderator_wrote_not_the_cruxes_composed_from_the_sides():
    from clearside.quality.metrics.lexical import neutrality_metric
    moderator = fixture_dict()["moderator"]
    before = neutrality_metric(moderator)
    quoted = "FOR's argument 1 (\"The moratorium is clearly the best policy and must be adopted\") holds"
    moderator["cruxes"] = [{"hinge": 0, "pro_arguments": [0], "con_arguments": [], "pro_assumptions": [],
                            "con_assumptions": [], "load": {"pro": 0.5, "con": 0.0}, "if_yes": quoted, "if_no": quoted}]
    assert neutrality_metric(moderator) == before
    moderator["decision_hinges"].append("The moratorium is clearly the best policy and must be adopted")
    assert neutrality_metric(moderator) != before, "a verdict the moderator writes still counts"
