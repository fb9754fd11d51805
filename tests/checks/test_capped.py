"""A string the decoder's length cap ended, with no whole clause to end it at, never reaches a reader as if it were
a sentence (bench/reader on checks 1.3.2 showed 26 such strings as if whole, "... is a complex one that requires
careful" among them): a list's item goes while the list keeps its floor, else it stays marked as cut where it stops;
it is never re-asked. One that stops on a word needing more is still left to the garbage checks, and a question is
never touched."""

from __future__ import annotations

from helpers import QUESTION, scripted_debate, side_reply

from clearside import checks
from clearside.checks.base import capped, repair
from clearside.providers.scripted import ScriptedProvider
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

CAREFUL = "The case for selling your car and getting around by bike-sharing is a complex one that requires careful"


def test_a_capped_string_with_no_whole_clause_is_dropped_or_else_marked_where_it_stops():
    found = capped(("executive_summary", 0), CAREFUL)
    assert (found.check, found.repair, found.replacement) == ("cut_sentence", "drop", CAREFUL + "…")
    assert capped(("normalized_question",), CAREFUL.replace("The case", "A case")).repair == "replace"  # no list
    assert capped(("executive_summary", 0), "Taxes on the idle land of the city fall hardest on the owners of") is None
    assert capped(("decision_hinges", 0), "Whether the city can keep buses running while the lanes are built and?") \
        is None


def test_the_item_goes_above_its_floor_and_stays_marked_at_it_never_reasked():
    data = {"executive_summary": [CAREFUL, "Selling the car saves about two thousand euros a year."]}
    found = [capped(("executive_summary", 0), CAREFUL)]
    above = repair(data, found, {"executive_summary": 1}, last_attempt=False)
    assert above.data["executive_summary"] == ["Selling the car saves about two thousand euros a year."]
    assert [action for _, action in above.done] == ["dropped"] and above.reask == []
    at = repair(data, found, {"executive_summary": 2}, last_attempt=False)
    assert at.data["executive_summary"][0] == CAREFUL + "…" and at.reask == []
    assert [action for _, action in at.done] == ["replaced"]
    # beside an item that must go back to the model, the marked one stays and is not re-asked
    other = checks.Finding("empty_claim", ("executive_summary", 1), "state the point itself",
                           data["executive_summary"][1])
    both = repair(data, [*found, other], {"executive_summary": 2}, last_attempt=False)
    assert both.data["executive_summary"][0] == CAREFUL + "…" and both.reask == [other]


def long_assumption() -> str:
    long = ("Side pro: owners who sell their cars save money on insurance and parking and repairs every single "
            "month and the money they keep pays for rent and week")
    assert len(long) == 150  # the wire's cap for an assumption, reached mid-word
    return long


def test_a_capped_item_above_its_floor_is_dropped_and_recorded():
    provider = ScriptedProvider()
    pro = side_reply("pro")
    pro["assumptions"][1] = long_assumption()
    scripted_debate(provider, pro=pro)
    document = Engine(provider, embeddings=checks.LEXICAL_ONLY, retries=2).run(DebateRun.from_input(QUESTION)).dump()
    assert document["pro"]["assumptions"] == [side_reply("pro")["assumptions"][0]]
    items = [(i["check"], i["path"], i["action"]) for i in document["quality"]["agents"]["pro"]["items"]]
    assert ("cut_sentence", "assumptions/1", "dropped") in items, items
    assert document["quality"]["agents"]["pro"]["reasks"] == 0


def test_of_two_capped_items_at_a_floor_of_one_the_first_ships_marked_and_the_second_goes():
    provider = ScriptedProvider()
    pro = side_reply("pro")
    second = ("Side pro: commuters who switch to trains lose the freedom to leave whenever they like and then pay "
              "more for long trips across the county in the winter")
    assert len(second) == 150
    pro["uncertainties"] = [long_assumption(), second]
    scripted_debate(provider, pro=pro)
    document = Engine(provider, embeddings=checks.LEXICAL_ONLY, retries=2).run(DebateRun.from_input(QUESTION)).dump()
    assert document["pro"]["uncertainties"] == [long_assumption() + "…"]
    items = [(i["check"], i["path"], i["action"]) for i in document["quality"]["agents"]["pro"]["items"]]
    assert ("cut_sentence", "uncertainties/0", "replaced") in items and (
        "cut_sentence", "uncertainties/1", "dropped") in items, items
    assert document["quality"]["agents"]["pro"]["reasks"] == 0
