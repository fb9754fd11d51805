"""The neutrality lexicon and the live guardrail checks on hand-written text."""

from __future__ import annotations

import pytest

from clearside import neutrality
from clearside.live.guardrails import check_turn, overlap
from clearside.live.protocol import PLAN

NEUTRAL = [
    "Both sides agree that energy demand from data centers is rising.",
    "They disagree on timing because Pro assumes grid upgrades lag while Con assumes markets adapt.",
    "Pro argues that governments should pause new permits until standards exist.",
    "The decision hinges on whether regulators should act before demand data is complete.",
    "If data showed grid capacity growing faster than demand, the case for a pause would weaken.",
    "Key evidence gap: the timeline for transmission upgrades.",
    "Would a moratorium shift construction abroad?",
    "Con contends that the US must keep building to stay competitive.",
    "The answer is still unclear because no city has measured retail footfall before and after.",
    "The answer is not yet known for cities without a tram network.",
]
VERDICTS = [
    "On balance, the moratorium is justified.",
    "Pro makes the stronger case on energy.",
    "Con wins the debate on economics.",
    "The answer is a temporary pause.",
    "The answer is clear: ban the cars.",
    "The answer is not to build the runway.",
    "I recommend that Congress pass the moratorium.",
    "In my view the risks outweigh the benefits.",
    "Policymakers should adopt the pause now.",
    "Con's argument is more convincing overall.",
    "The weight of the evidence favors building.",
]


@pytest.mark.parametrize("sentence", NEUTRAL)
def test_neutral_moderator_sentences_pass(sentence):
    assert neutrality.violations(sentence) == []


@pytest.mark.parametrize("sentence", VERDICTS)
def test_verdicts_and_recommendations_are_caught(sentence):
    [hit, *_] = neutrality.violations(sentence)
    assert hit.severity == "hard" and hit.sentence == sentence


def test_certainty_words_are_soft_warnings_only():
    hits = neutrality.scan("Energy use will clearly rise.")
    assert [(h.severity, h.kind) for h in hits] == [("soft", "certainty")]
    assert neutrality.violations("Energy use will clearly rise.") == []


def _opening(speech: str) -> dict:
    return {"position": "A pause protects grid reliability.", "previews": ["Grid strain is real."],
            "assumptions": ["Demand keeps growing."], "speech": speech}


@pytest.mark.parametrize("speech", ["My opponent ignores the grid.", "The other side will say costs rise.",
                                    "Con's view misses reliability.", "I rebut the idea that markets adapt.",
                                    "Pro argues that the grid fails."])
def test_openings_may_not_mention_the_other_side(speech):
    step = PLAN[1] if speech.startswith("Pro") else PLAN[0]
    assert [v["rule"] for v in check_turn(step, _opening(speech), opponent_claims=[], own_earlier=[])] == [
        "references_other_side"]


def test_ordinary_words_do_not_trip_the_other_side_check():
    speech = "Weighing the pros and cons of a pause, the grid's reliability comes first for consumers."
    assert check_turn(PLAN[0], _opening(speech), opponent_claims=[], own_earlier=[]) == []


def test_rebuttal_must_target_an_argument_actually_made():
    claims = ["Grid upgrades take a decade and cannot keep pace with data center demand"]
    fair = {"rebuttals": [{"target": "Grid upgrades cannot keep pace with demand", "response": "Utilities adapt."}],
            "speech": "Upgrades are faster than claimed."}
    straw = {"rebuttals": [{"target": "Pro wants to ban all computers forever", "response": "That is absurd."}],
             "speech": "Nobody wants that."}
    rebuttal = next(s for s in PLAN if s.kind == "rebuttal")
    assert check_turn(rebuttal, fair, opponent_claims=claims, own_earlier=[]) == []
    assert [v["rule"] for v in check_turn(rebuttal, straw, opponent_claims=claims, own_earlier=[])] == [
        "new_argument"]
    assert overlap("", claims) == 1.0
