"""AppTest for the Timeline page: open a saved live debate by address, replay it by phase and turn, export it."""

from __future__ import annotations

import json
import time

import app_kit as kit
import pytest
from app_kit import TIMELINE, AppTest, plain
from helpers import NORMALIZED, LiveResponder, download, stored

from clearside.live import LiveConfig, LiveDebate
from clearside.live.export import to_markdown
from clearside.live.transcript import Transcript
from clearside.providers.scripted import ScriptedProvider
from clearside.store import open_store

FLAGGED = {"position": "My opponent ignores the cost of service boundaries entirely"}
INTERVENTIONS = {2: ("direct_question", "What would change your mind about boundaries?", "con"),
                 4: ("inject_evidence", "A 2023 survey of 40 firms found most merged services back.", None),
                 8: ("clarification", "Define a service boundary, please.", "moderator")}


def run_debate(question: str = "Should we adopt microservices?", *, turns: int | None = None) -> Transcript:
    """A saved live debate on the scripted provider: a kept guardrail flag on turn 1, truncated question turns
    (40 words/min gives a 30-second question 20 words; every speech has 30) and three interventions."""
    responder = LiveResponder(speech_words=30, overrides={("pro", 1): FLAGGED, ("pro", 2): FLAGGED})
    debate = LiveDebate.create(question, ScriptedProvider(fallback=responder),
                               config=LiveConfig(words_per_minute=40), store=open_store())
    if turns is not None:
        for _ in range(turns):
            debate.advance()
        return debate.snapshot()
    queue = dict(INTERVENTIONS)

    def before_turn(d: LiveDebate) -> None:
        done = d.transcript.turns[-1].turn if d.transcript.turns else 0
        if done in queue:
            d.submit(*queue.pop(done))

    debate.run(before_turn=before_turn)
    return debate.snapshot()


@pytest.fixture
def saved() -> Transcript:
    transcript = run_debate()
    assert transcript.state == "done" and len(transcript.interventions) == 3
    return transcript


def open_timeline(live: str | None = None, provider=None, param: str = "debate") -> AppTest:
    """The Timeline page opened at ``?debate=<live>`` (the share link; ``param="live"``: the older address)."""
    return kit.open_page(TIMELINE, provider or ScriptedProvider(), query={param: live} if live is not None else None)


def shown_turns(at: AppTest) -> list[int]:
    """Turn numbers whose header caption ("Turn n · Speaker · …") is on the page."""
    return [int(c.value.split(" · ")[0].split()[1]) for c in at.caption
            if c.value.startswith("Turn ") and " · " in c.value and " of " not in c.value.split(" · ")[0]]


def test_the_address_opens_the_saved_debate_and_exports_it(saved, downloads):
    newer = run_debate("Should we rewrite it in Rust?", turns=2)
    at = open_timeline()
    assert at.selectbox(key="timeline_pick").value == newer.id, "without an address: the newest"
    at = open_timeline(live=saved.id)
    pick = at.selectbox(key="timeline_pick")
    assert pick.value == saved.id
    labels = {o for o in pick.options}
    assert any("Should we adopt microservices?" in o and o.endswith("· finished") for o in labels), labels
    assert any("Should we rewrite it in Rust?" in o and o.endswith("· unfinished") for o in labels), labels
    page = plain(at)
    assert NORMALIZED in page and at.get("progress")[0].proto.text == "All 22 turns done (with 1 clarification turn)"
    assert [b.proto.label for b in at.get("download_button")] == ["Markdown", "JSON"]
    assert download(at, downloads, "Markdown") == to_markdown(stored(saved.id))
    assert Transcript.model_validate(json.loads(download(at, downloads, "JSON"))) == stored(saved.id)

    pick.set_value(newer.id).run()
    assert at.query_params["debate"] in (newer.id, [newer.id]), "the choice goes into the address"
    assert "live" not in at.query_params
    assert "the timeline shows the turns saved so far" in plain(at)
    assert shown_turns(at) == [1]


def test_phase_navigation_and_the_scrubber_select_the_right_turn(saved):
    at = open_timeline(live=saved.id)
    assert shown_turns(at) == [1] and at.segmented_control(key="timeline_phase").value == "opening"
    assert at.segmented_control(key="timeline_phase").options == [
        "Opening statements", "Constructive rounds", "Cross-examination", "Rebuttals", "Closing statements",
        "Moderator synthesis"]

    rebuttal = next(t for t in saved.turns if t.phase == "rebuttal")
    at.segmented_control(key="timeline_phase").set_value("rebuttal").run()
    assert shown_turns(at) == [rebuttal.turn] and at.select_slider(key="timeline_turn").value == rebuttal.turn
    assert "Con rebuts Pro" in plain(at) and "Pro rebuts Con" not in plain(at)

    synthesis = saved.turns[-1]
    at.select_slider(key="timeline_turn").set_value(synthesis.turn).run()
    assert shown_turns(at) == [synthesis.turn] and at.segmented_control(key="timeline_phase").value == "synthesis"
    assert "Moderator synthesis" in plain(at) and "Moderator decision hinges 1" in plain(at)

    at.button(key="timeline_prev").click().run()
    assert shown_turns(at) == [synthesis.turn - 1]
    assert at.segmented_control(key="timeline_phase").value == "closing"
    at.button(key="timeline_next").click().run()
    assert shown_turns(at) == [synthesis.turn] and at.button(key="timeline_next").proto.disabled


def test_flags_truncation_and_interventions_are_shown_with_their_turn(saved):
    at = open_timeline(live=saved.id)
    flagged = saved.turn(1)
    assert flagged.flags and flagged.flags[0]["rule"] == "references_other_side"
    [warning] = at.warning
    assert "references_other_side" in warning.value.replace("\\", "") and "My opponent" in warning.value

    at.select_slider(key="timeline_turn").set_value(2).run()
    page = plain(at)
    direct = saved.interventions[0]
    assert direct.text in page and f"Con answered:** {direct.response}" in page

    question = next(t for t in saved.turns if t.kind == "question")
    assert question.truncated and question.budget_tokens == 26
    at.select_slider(key="timeline_turn").set_value(question.turn).run()
    page = plain(at)
    assert f"{question.used_tokens} of 26 tokens used" in page and "truncated at the hard limit" in page
    assert "Speech cut at" in page, "the truncation note is shown"

    clarification = next(i for i in saved.interventions if i.type == "clarification")
    at.select_slider(key="timeline_turn").set_value(clarification.answered_in_turn).run()
    page = plain(at)
    assert "Moderator clarifies for the user" in page and clarification.response in page
    assert "The user asked:* Define a service boundary, please." in page


def test_the_whole_transcript_shows_every_turn_and_intervention_in_order(saved):
    at = open_timeline(live=saved.id)
    at.toggle(key="timeline_whole").set_value(True).run()
    assert shown_turns(at) == [t.turn for t in saved.turns]
    page = plain(at)
    for item in saved.interventions:
        assert item.text in page
    evidence = next(i for i in saved.interventions if i.type == "inject_evidence")
    for number in evidence.delivered_to:  # who received it, in which turn, and whether it acknowledged it
        side = {"pro": "Pro", "con": "Con", "moderator": "Moderator"}[saved.turn(number).speaker]
        said = "acknowledged it" if saved.turn(number).fields.get("evidence_response") else "did not acknowledge it"
        assert f"Received by **{side}** in turn {number}: {said}." in page, page
    headings = [m.value for m in at.markdown if m.value.startswith("### ")]
    assert headings == ["### Opening statements", "### Constructive rounds", "### Cross-examination",
                        "### Rebuttals", "### Closing statements", "### Moderator synthesis"]


@pytest.mark.parametrize(("live", "message"), [("0123456789abcdef0123456789abcdef", "No saved live debate has the id"),
                                               ("not-an-id!", "is not a live debate id")])
def test_an_unknown_or_malformed_id_gives_a_clear_message(saved, live, message):
    at = open_timeline(live=live)
    assert any(message in e.value.replace("\\", "") for e in at.error)
    assert at.selectbox(key="timeline_pick").value == saved.id, "the saved debates are still offered"


def test_the_older_live_address_still_opens_the_debate(saved):
    at = open_timeline(live=saved.id, param="live")
    assert at.selectbox(key="timeline_pick").value == saved.id and not at.error


def test_with_nothing_saved_the_page_says_where_to_start():
    at = open_timeline()
    assert any("No saved live debates yet" in i.value for i in at.info)
    assert at.get("page_link")[0].proto.label == "Go to Live debate"


def test_the_timeline_is_read_only(saved):
    before = open_store().get(saved.id)
    provider = ScriptedProvider()
    at = open_timeline(live=saved.id, provider=provider)
    at.segmented_control(key="timeline_phase").set_value("closing").run()
    at.button(key="timeline_next").click().run()
    at.toggle(key="timeline_whole").set_value(True).run()
    time.sleep(0.1)
    assert provider.requests == [], "no model call"
    assert open_store().get(saved.id) == before, "the transcript is never rewritten"
