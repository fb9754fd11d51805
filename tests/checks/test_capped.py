"""A string the decoder's length cap ended, with no whole clause to end it at, is marked as cut where it stops, so
a reader never takes the fragment for a sentence (bench/reader on checks 1.3.2 showed 26 such strings as if whole,
"... is a complex one that requires careful" among them); one that stops on a word needing more is still left to
the garbage checks, and a question is never touched."""

from __future__ import annotations

from helpers import QUESTION, scripted_debate, side_reply

from clearside import checks
from clearside.checks.base import capped
from clearside.providers.scripted import ScriptedProvider
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

CAREFUL = "The case for selling your car and getting around by bike-sharing is a complex one that requires careful"


def test_a_capped_string_with_no_whole_clause_is_marked_where_it_stops():
    found = capped(("executive_summary", 0), CAREFUL)
    assert (found.check, found.repair, found.replacement) == ("cut_sentence", "replace", CAREFUL + "…")
    assert capped(("executive_summary", 0), "Taxes on the idle land of the city fall hardest on the owners of") is None
    assert capped(("decision_hinges", 0), "Whether the city can keep buses running while the lanes are built and?") \
        is None


def test_the_marked_string_ships_marked_and_is_recorded_as_ended_early():
    provider = ScriptedProvider()
    pro = side_reply("pro")
    long = ("Side pro: owners who sell their cars save money on insurance and parking and repairs every single "
            "month and the money they keep pays for rent and week")
    assert len(long) == 150  # the wire's cap for an assumption, reached mid-word
    pro["assumptions"][1] = long
    scripted_debate(provider, pro=pro)
    document = Engine(provider, embeddings=checks.LEXICAL_ONLY, retries=2).run(DebateRun.from_input(QUESTION)).dump()
    assert document["pro"]["assumptions"][1] == long + "…"
    items = [(i["check"], i["path"], i["action"]) for i in document["quality"]["agents"]["pro"]["items"]]
    assert ("cut_sentence", "assumptions/1", "replaced") in items, items
