"""What the embedded model wrote into live turns and a reader must not get: text that is not language (written
again) and sentences left unfinished (ended at their last whole sentence, or marked as cut). The wording is the
embedded model's own, from live debates on the flagship question."""

from __future__ import annotations

from helpers import QUESTION, LiveResponder, request_text

from clearside.live import LiveConfig, LiveDebate
from clearside.live.export import to_markdown
from clearside.live.guardrails import end_cuts, garbled
from clearside.providers.scripted import ScriptedProvider
from clearside.store import open_store

GIBBERISH = ("C3-DESCRIPCIONEZ ELIMICO AUTORES NOBREZILLA, ADEMARIA LA CONSTITUENCIELLE NEGLIGIBALY EN ARAMAÇA "
             "20548916 (PERSECUMLO DE DIFFERENTI")
CODES = "P1 C2 D3 E4 F5 G6 H7 I8 J9 KI"
CUT = ("We are going to make it clear that we will be making the right decision, and you can join us in doing "
       "so,")
ENDED = "We are going to make it clear that we will be making the right decision."
NO_WHOLE_PART = "The city must take a step towards protecting the"


def debate(overrides):
    provider = ScriptedProvider(fallback=LiveResponder(overrides=overrides))
    return LiveDebate.create(QUESTION, provider, config=LiveConfig(words_per_minute=40), store=open_store()), provider


def test_codes_number_runs_and_gibberish_are_found_and_ids_and_plain_sentences_are_not():
    found = garbled({"speech": GIBBERISH, "position": CODES,
                     "assumptions": ["SELF-CLAIMING - 2019/3/7/48.56:43.37.2019-3,15.45; SEPTEMBER 2019"]})
    assert [v["text"] for v in found] == [GIBBERISH, CODES, found[2]["text"]] and {v["rule"] for v in found} == {
        "garbled"}
    assert garbled({"pro_assumption": "P1", "category": "economic",
                    "speech": "Data centers used about 4% of US electricity in 2023."}) == []


def test_a_turn_of_gibberish_is_written_again_without_being_shown_it():
    live, provider = debate({("pro", 1): {"speech": GIBBERISH}})
    transcript = live.run()
    opening = transcript.turns[0]
    assert opening.regenerated == 1 and opening.flags == [] and opening.text != GIBBERISH
    retry = [r for r in provider.requests if r.agent == "pro"][1]
    assert "not language" in request_text(retry) and "DESCRIPCIONEZ" not in retry.messages[-1]["content"]


def test_a_synthesis_still_garbled_after_its_retry_keeps_the_flag_the_pages_show():
    codes = {"speech": f"Both sides agree on costs. {CODES}."}
    live, _ = debate({("moderator", 1): codes, ("moderator", 2): codes})
    synthesis = live.run().turns[-1]
    assert synthesis.regenerated == 1 and {flag["rule"] for flag in synthesis.flags} == {"garbled"}
    assert "Guardrail (garbled)" in to_markdown(live.snapshot())


def test_sentences_left_unfinished_are_ended_at_the_last_whole_one_or_marked_as_cut():
    live, _ = debate({("pro", 1): {"speech": CUT, "previews": [NO_WHOLE_PART, "Pro preview two about service "
                                                                              "boundaries"]}})
    opening = live.run().turns[0]
    assert opening.text == ENDED
    assert opening.fields["previews"][0] == f"{NO_WHOLE_PART}…"
    assert any("2 sentences the model left unfinished" in note for note in opening.notes), opening.notes
    assert opening.reply and CUT in opening.reply  # the reply as the model wrote it stays on record


def test_short_ids_and_whole_sentences_are_left_as_they_are():
    fields, ended = end_cuts({"pro_assumption": "P1", "evidence": ["A4", "C2"], "speech": ENDED})
    assert ended == 0 and fields == {"pro_assumption": "P1", "evidence": ["A4", "C2"], "speech": ENDED}


def test_the_command_line_says_what_was_kept_when_it_is_not_what_streamed():
    import io

    from clearside.cli.live import Printer
    from clearside.runtime.events import Event

    out = io.StringIO()
    printer = Printer(out)
    resumed = "the rest of a resumed speech."
    for speech, kept in ((CUT, ENDED), (ENDED, ENDED), (resumed, f"Paused here, {resumed}")):
        printer(Event("turn_start", "pro", data={"label": "Pro opening statement", "step": 0}))
        printer(Event("speech", "pro", speech))
        printer(Event("turn_done", "pro", kept, data={"flags": [], "truncated": False}))
    printer(Event("turn_start", "con", data={"label": "Con opening statement", "step": 1}))
    printer(Event("speech", "con", GIBBERISH))
    printer(Event("guardrail", "con", data={"violations": [{"detail": "Write plain sentences."}]}))
    printer(Event("speech", "con", ENDED))
    printer(Event("turn_done", "con", ENDED, data={"flags": [], "truncated": False}))
    printed = out.getvalue()
    assert printed.count("[kept as: ") == 1 and f"[kept as: {ENDED}]" in printed, printed
