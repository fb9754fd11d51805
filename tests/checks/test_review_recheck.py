"""A string ended early is checked again as it now reads, also in the part of a reply that is kept while the rest
is written again (the mend path). On the embedded model (bench/reader, checks 1.3.1) three of eight syntheses
shipped a verdict that way: "... our society, we" was ended at "... our society." and kept, and the verdict in
that sentence ("We believe in making the best decisions ...") was never looked at."""

from __future__ import annotations

from helpers import QUESTION, moderator_reply, scripted_debate

from clearside import checks
from clearside.providers.scripted import ScriptedProvider
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

CUT_VERDICT = ("This topic has no right of debate. We believe in making the best decisions based on what makes "
               "most sense for our society, we")


def test_a_verdict_in_a_string_ended_early_does_not_ship_when_the_rest_of_the_reply_is_written_again():
    provider = ScriptedProvider()
    first = moderator_reply()
    first["evidence_gaps"][1] = CUT_VERDICT
    first["decision_hinges"] = ["The team's experience with distributed systems.", "The real scaling needs."]
    scripted_debate(provider, moderator=first)
    hinges = ["Does the team have distributed systems experience?", "What are the real scaling requirements?"]
    provider.enqueue({"decision_hinges": hinges}, agent="moderator")  # the hinges, written again on their own
    document = Engine(provider, embeddings=checks.LEXICAL_ONLY, retries=2).run(DebateRun.from_input(QUESTION)).dump()
    synthesis = document["moderator"]
    assert synthesis["decision_hinges"] == hinges, "the mend path wrote the failing field again"
    assert synthesis["evidence_gaps"] == [first["evidence_gaps"][0]], synthesis["evidence_gaps"]
    assert not [f for _, f in checks.document_findings(document) if f.check == "verdict"]
    items = [(i["check"], i["path"], i["action"]) for i in document["quality"]["agents"]["moderator"]["items"]]
    assert ("verdict", "evidence_gaps/1", "dropped") in items, items


def test_an_item_whose_field_was_ended_early_is_dropped_from_what_is_kept_when_it_now_fails():
    """The same for a finding on a whole item (an argument off the topic, quoted by its claim), and a finding that
    no longer describes the kept reply (its item went) is not applied to what took its place."""
    from pydantic import BaseModel

    from clearside.checks import Finding, Review

    class Reply(BaseModel):
        arguments: list[dict]
        decision_hinges: list[str]

    cut = "Rents fall when supply grows, and the city should build more homes near the new lines of the"
    ended = "Rents fall when supply grows."

    def check(data):
        found = [Finding("junk", ("decision_hinges", i), "not a question", h, "reask")
                 for i, h in enumerate(data["decision_hinges"])]
        for i, argument in enumerate(data["arguments"]):
            if argument["claim"] == cut:
                found.append(Finding("cut_sentence", ("arguments", i, "claim"), "cut", cut, "replace", ended))
            elif argument["claim"] == ended:
                found.append(Finding("off_topic", ("arguments", i), "off the topic", ended))
        return found

    review = Review(check, {"arguments": 1, "decision_hinges": 1})
    reply = Reply(arguments=[{"claim": cut}, {"claim": "Caps keep tenants in their homes."}],
                  decision_hinges=["Supply."])
    assert review(reply, False)[0] is None
    assert review.kept["arguments"] == [{"claim": "Caps keep tenants in their homes."}]
    assert review.failing == {"decision_hinges": ["not a question"]}
    assert ("off_topic", "arguments/0", "dropped") in [(i.check, i.path, i.action) for i in review.record.items]
