"""A string the decoder's length cap ended, with no whole clause to end it at, never reaches a reader as if it were
a sentence (bench/reader on checks 1.3.2 showed 26 such strings as if whole, "... is a complex one that requires
careful" among them): a list's item goes while the list keeps its floor, else it stays marked as cut where it stops;
it is never re-asked. One that stops on a word needing more is still left to the garbage checks, and a question is
never touched."""

from __future__ import annotations

import pytest
from helpers import QUESTION, scripted_debate, side_reply

from clearside import checks
from clearside.checks import cuts
from clearside.checks.base import capped, repair
from clearside.providers.scripted import ScriptedProvider
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

CAREFUL = "The case for selling your car and getting around by bike-sharing is a complex one that requires careful"
# no whole clause, and no word to end it after: a gerund subject, no verb before "involves several key"
NO_END = "Charging drivers at rush hour in the centre of the city during the working week involves several key"


def test_a_capped_string_with_no_whole_clause_is_ended_after_a_word_where_it_reads_whole():
    found = capped(("executive_summary", 0), CAREFUL)
    assert (found.check, found.repair, found.replacement) == (
        "cut_sentence", "replace", "The case for selling your car and getting around by bike-sharing is a complex one.")
    ended = capped(("executive_summary", 0), "Taxes on the idle land of the city fall hardest on the owners of")
    assert ended.replacement == "Taxes on the idle land of the city fall hardest on the owners."
    assert cuts.ended_at_word("The city must take a step towards protecting the environment of the people who are "
                           "most") == "The city must take a step towards protecting the environment of the people."
    # never a subordinate clause without its verb ("... possible if you."), never a bare "It is not just about."
    assert cuts.ended_at_word("If you want to be taken seriously in your field of study or career, it is only possible "
                           "if you can do") is None
    assert cuts.ended_at_word("It is not just about saving a") is None


def test_a_capped_string_with_no_whole_clause_and_no_word_to_end_at_is_dropped_or_else_marked_where_it_stops():
    found = capped(("executive_summary", 0), NO_END)
    assert (found.check, found.repair, found.replacement) == ("cut_sentence", "drop", NO_END + "…")
    assert capped(("normalized_question",), NO_END).repair == "replace"  # no list
    assert capped(("decision_hinges", 0), "Whether the city can keep buses running while the lanes are built and?") \
        is None


def test_the_item_goes_above_its_floor_and_stays_marked_at_it_never_reasked():
    data = {"executive_summary": [NO_END, "Selling the car saves about two thousand euros a year."]}
    found = [capped(("executive_summary", 0), NO_END)]
    above = repair(data, found, {"executive_summary": 1}, last_attempt=False)
    assert above.data["executive_summary"] == ["Selling the car saves about two thousand euros a year."]
    assert [action for _, action in above.done] == ["dropped"] and above.reask == []
    at = repair(data, found, {"executive_summary": 2}, last_attempt=False)
    assert at.data["executive_summary"][0] == NO_END + "…" and at.reask == []
    assert [action for _, action in at.done] == ["replaced"]
    # beside an item that must go back to the model, the marked one stays and is not re-asked
    other = checks.Finding("empty_claim", ("executive_summary", 1), "state the point itself",
                           data["executive_summary"][1])
    both = repair(data, [*found, other], {"executive_summary": 2}, last_attempt=False)
    assert both.data["executive_summary"][0] == NO_END + "…" and both.reask == [other]


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


@pytest.mark.parametrize(("capped_text", "ended"), [
    ("This is the most important argument that has been made in recent years by many people who have no idea",
     "This is the most important argument that has been made in recent years by many people who have no idea."),
    ("This could potentially lead to increased costs for the company as they need to choose between two options "
     "that do", "This could potentially lead to increased costs for the company as they need to choose between two "
     "options."),
    ("The claim that your proposal will be successful depends on you making changes in the way we do business and "
     "there's no need '", "The claim that your proposal will be successful depends on you making changes in the way "
     "we do business."),
])
def test_strings_the_embedded_model_ran_to_their_cap_end_after_their_last_whole_word(capped_text, ended):
    """Argument claims and an assumption that bench/reader.py's debates showed marked as cut ("... no idea…"):
    each ends where it still reads whole, and the quality record says it was ended early."""
    found = capped(("arguments", 0, "claim"), capped_text)
    assert (found.repair, found.replacement) == ("replace", ended)
    assert not cuts.cut_problem(ended)


def test_a_preposition_after_a_which_clause_with_no_subject_of_its_own_is_a_cut():
    """"which we rely on" keeps its object; "which can't just happen without some form of" has none (an executive
    summary item the checks showed as whole)."""
    assert cuts.cut_problem("To solve these problems we need to have more transparency which can't just happen without "
                         "some form of") == "stops mid-phrase, at 'of'"
    assert cuts.cut_problem("These are the tools which we rely on") is None
    assert cuts.cut_problem("Ask them what they were looking for") is None


def test_a_passive_that_stops_before_its_agent_is_a_cut_and_ends_at_its_last_whole_clause():
    """An executive summary item bench/reader.py's debate on a congestion fee showed whole: "... as it will be
    influenced by."; a phrasal "by" ("Days passed by.") stays."""
    item = ("This decision has far-reaching implications for the future of urban planning, as it will be "
            "influenced by.")
    assert cuts.cut_problem(item) == "stops mid-phrase, at 'by'"
    assert cuts.cut_problem("Days passed by.") is None
    found = checks.base.garbage(("executive_summary", 1), "executive_summary item 2", item)
    assert (found.check, found.repair, found.replacement) == (
        "cut_sentence", "replace", "This decision has far-reaching implications for the future of urban planning.")


def test_a_sentence_ending_on_to_with_no_infinitive_understood_is_a_cut_and_ends_at_its_last_whole_sentence():
    """Three items bench/reader.py's debates shipped whole under checks 1.4.4 ("... no other choice but to.");
    "to" still ends a sentence where an infinitive is understood ("we have to.") or a clause keeps it ("the
    standard we aspire to.")."""
    shipped = {
        "It goes far and it's not just about making decisions based on what makes sense to.":
        "It goes far and it's not just about making decisions based on what makes sense.",
        ("The startup should move servers from its own hardware. The company has a strong social responsibility to "
         "ensure the safety of their clients, and they have no other choice but to."):
        ("The startup should move servers from its own hardware. The company has a strong social responsibility to "
         "ensure the safety of their clients."),
        ("This is an argument against the proposition that goes beyond economic considerations. This includes, but "
         "is not limited to."): "This is an argument against the proposition that goes beyond economic considerations.",
    }
    for text, ended in shipped.items():
        assert cuts.cut_problem(text) == "stops mid-phrase, at 'to'", text
        found = checks.base.garbage(("arguments", 0, "explanation"), "argument 1's explanation", text)
        assert found.check == "cut_sentence"
        assert (found.repair, found.replacement) == ("replace", ended), text
    for whole in ("We should act now because we have to.", "They were not able to.", "This is the standard we "
                  "aspire to.", "Decide what we want to.", "Cities set goals that people can hold them to."):
        assert cuts.cut_problem(whole) is None, whole
