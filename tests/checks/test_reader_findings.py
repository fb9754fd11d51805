"""What bench/reader still counted on checks 1.3.3, on the embedded model's own wording: a disagreement titled with
codes ("D5 B6 CABS 102983", or the assumption ids "P3, C4"), a moderator sentence opening with an assumption's id
("C2- This case argues ..."), and an uncertainty that repeats an assumption word for word ("There are no other
options available")."""

from __future__ import annotations

from helpers import QUESTION, moderator_reply, scripted_debate, side_reply

from clearside import checks
from clearside.checks import moderator, sides
from clearside.checks import substance as s
from clearside.checks.base import repair
from clearside.providers.scripted import ScriptedProvider
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

ABROAD = "C2- This case argues that there are significant risks associated with taking jobs abroad. We have evidence to support this."  # noqa: E501


def test_a_label_of_codes_alone_is_code_soup_and_a_label_with_a_word_is_not():
    for soup in ("D5 B6 CABS 102983", "P3, C4"):
        assert s.code_soup(soup), soup
    for label in ("5G vs 4G", "COVID-19 and H1N1", "GDP Q3 2024", "H1 2025 vs H2 2024", "B2B SaaS"):
        assert s.code_soup(label) is None, label


def test_a_disagreement_titled_with_codes_is_found_and_goes():
    reply = moderator_reply()
    reply["core_disagreements"] = [reply["core_disagreements"][0],
                                   {**reply["core_disagreements"][0], "topic": "P3, C4"},
                                   {**reply["core_disagreements"][0], "topic": "D5 B6 CABS 102983",
                                    "description": "Moderator: they disagree on what the fees pay for"}]
    found = moderator.check(reply, pro=side_reply("pro"), con=side_reply("con"), question=QUESTION)
    assert [(f.check, f.path) for f in found if f.check == "code_soup"] == [
        ("code_soup", ("core_disagreements", 1, "topic")), ("code_soup", ("core_disagreements", 2, "topic"))]
    kept = repair(reply, found, moderator.FLOORS, last_attempt=False)
    assert [d["topic"] for d in kept.data["core_disagreements"]] == ["Complexity management"]


def test_an_assumption_id_opening_a_moderator_sentence_is_taken_off():
    reply = moderator_reply()
    reply["areas_of_agreement"][1] = ABROAD
    found = moderator.check(reply, pro=side_reply("pro"), con=side_reply("con"), question=QUESTION)
    [prefix] = [f for f in found if f.path == ("areas_of_agreement", 1)]
    assert prefix.check == "id_prefix" and prefix.repair == "replace"
    assert prefix.replacement == ABROAD.removeprefix("C2- ")
    # an id that is the whole string is not a sentence to keep: the codes check takes it
    reply["core_disagreements"][0]["topic"] = "P3, C4"
    found = moderator.check(reply, pro=side_reply("pro"), con=side_reply("con"), question=QUESTION)
    assert [f.check for f in found if f.path == ("core_disagreements", 0, "topic")] == ["code_soup"]


def test_the_synthesis_ships_without_the_id_and_records_it():
    provider = ScriptedProvider()
    mod = moderator_reply()
    mod["evidence_gaps"][0] = "P1: Moderator: current system performance benchmarks"
    scripted_debate(provider, moderator=mod)
    document = Engine(provider, embeddings=checks.LEXICAL_ONLY, retries=2).run(DebateRun.from_input(QUESTION)).dump()
    assert document["moderator"]["evidence_gaps"][0] == "Moderator: current system performance benchmarks"
    items = [(i["check"], i["path"], i["action"]) for i in document["quality"]["agents"]["moderator"]["items"]]
    assert ("id_prefix", "evidence_gaps/0", "replaced") in items, items


def test_an_uncertainty_that_repeats_an_assumption_goes():
    side = side_reply("pro")
    side["assumptions"][0] = "There are no other options available."
    side["uncertainties"][1] = "There are no other options available"
    found = sides.check(side, question=QUESTION, raw_input=QUESTION)
    assert [(f.check, f.path) for f in found] == [("uncertainty_repeats_assumption", ("uncertainties", 1))]
    kept = repair(side, found, sides.FLOORS, last_attempt=False)
    assert kept.data["uncertainties"] == [side["uncertainties"][0]] and kept.data["assumptions"] == side["assumptions"]
