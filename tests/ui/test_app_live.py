"""AppTest for the Live debate page on the scripted provider: start, stream, step, pause, intervene, resume."""

from __future__ import annotations

import re
import time

import app_kit as kit
import pytest
from app_kit import LIVE, AppTest, texts
from helpers import NORMALIZED, LiveResponder, fixture_dict, stored

from clearside.live import LiveDebate, Origin
from clearside.live.protocol import PLAN
from clearside.live.transcript import Transcript
from clearside.providers.scripted import ScriptedProvider
from clearside.schema import Document
from clearside.store import open_store

QUESTION = "Should we adopt microservices?"


class PacedProvider(ScriptedProvider):
    """Streams like a slow model: ``delay`` seconds before every chunk (0 to finish fast)."""

    def __init__(self, *, delay: float = 0.02, **kwargs) -> None:
        super().__init__(**kwargs)
        self.delay = delay

    def _complete(self, request, on_delta):
        def paced(text: str) -> None:
            if self.delay:
                time.sleep(self.delay)
            on_delta(text)

        return super()._complete(request, paced if on_delta else None)


def fast() -> ScriptedProvider:
    return ScriptedProvider(fallback=LiveResponder(speech_words=40))


def paced(delay: float = 0.02) -> PacedProvider:
    return PacedProvider(delay=delay, chunk_size=4, fallback=LiveResponder(speech_words=80))


def open_live(provider, *, live: str | None = None, document: Document | None = None,
              key: str | None = None) -> AppTest:
    """The Live page in a new session; ``key``: the browser's ownership cookie (the same browser after a reload),
    else a browser of its own."""
    state = {"app_owner_key": key} if key else {}
    if document is not None:
        state["document"] = document
    return kit.open_page(LIVE, provider, query={"live": live} if live is not None else None, state=state)


def plain(at: AppTest) -> str:
    """The page's text with Markdown escapes and code marks removed (what a reader sees: a bare address is
    shown as code, so that it is never a link)."""
    return kit.plain(at).replace("`", "")


def settle(at: AppTest, until, timeout: float = 30) -> AppTest:
    return kit.settle(at, until, describe=plain, timeout=timeout)


def transcript(at: AppTest) -> Transcript:
    return stored(at.session_state["live_job"])


def planned(t: Transcript) -> int:
    return sum(1 for turn in t.turns if turn.step is not None)


def status(at: AppTest, word: str) -> bool:
    return any("-badge[" in m.value and word in m.value for m in at.markdown)


def finished(at: AppTest) -> bool:
    return any("finished" in s.value for s in at.success)


def start(at: AppTest, question: str = QUESTION, *, wpm: int | None = None, step_mode: bool = False) -> None:
    at.text_area(key="live_question").set_value(question)
    if wpm is not None:
        at.number_input(key="live_wpm").set_value(wpm)
    if step_mode:
        at.toggle(key="live_step_start").set_value(True)
    at.button(key="live_start").click().run()
    assert not at.exception, at.exception


def intervene(at: AppTest, kind: str, text: str, to: str | None = None) -> None:
    at.text_area(key=f"live_iv_{kind}").set_value(text)
    if to is not None:
        at.radio(key=f"live_iv_{kind}_to").set_value(to)
    at.button(key=f"live_do_{kind}").click().run()
    assert not at.exception, at.exception


def test_a_live_debate_streams_to_the_end_then_offers_timeline_and_downloads():
    at = open_live(fast())
    assert at.number_input(key="live_wpm").value == 150
    start(at, wpm=60)
    job_id = at.session_state["live_job"]
    assert at.query_params["live"] == [job_id] or at.query_params["live"] == job_id
    settle(at, finished)

    t = transcript(at)
    assert t.state == "done" and planned(t) == len(PLAN) == 21 and t.document is not None
    assert t.config["words_per_minute"] == 60
    page = plain(at)
    for heading in ("Opening statements", "Constructive rounds", "Cross-examination", "Rebuttals",
                    "Closing statements", "Moderator synthesis"):
        assert f"### {heading}" in page
    for step in PLAN:
        assert step.label in page, step.label
    assert "Pro position in call 1 about service boundaries" in page, "key structured fields are shown"
    assert "Moderator decision hinges 1 in call 1" in page
    assert at.get("progress")[0].proto.text == "All 21 turns done"
    [link] = at.get("page_link")
    assert link.proto.label == "Open in Timeline" and link.proto.query_string == f"debate={job_id}"
    assert [b.proto.label for b in at.get("download_button")] == ["Markdown", "JSON"]


def test_phase_progress_and_the_streaming_speech_while_a_turn_is_spoken():
    provider = paced()
    at = open_live(provider)
    start(at)
    settle(at, lambda a: any(m.value.endswith("▌") and "speech" in m.value for m in a.markdown))
    now = next(m.value for m in at.markdown if m.value.endswith("▌"))
    assert now.startswith("Pro speech 1") and "Speaking now" in plain(at), "the speech so far, as it streams"
    [bar] = at.get("progress")
    assert re.search(r"Phase 1 of 6: Opening statements · turn \d+ of 21", bar.proto.text)
    assert status(at, "Running")
    assert at.button(key="live_pause").proto.disabled is False
    assert at.button(key="live_resume").proto.disabled is True
    provider.delay = 0
    settle(at, finished)
    assert at.get("progress")[0].proto.value == 100


def test_step_mode_runs_exactly_one_turn_per_click():
    at = open_live(fast())
    start(at, step_mode=True)
    settle(at, lambda a: status(a, "waiting"))
    assert planned(transcript(at)) == 0, "step mode waits before the first turn"
    for expected in (1, 2, 3):
        at.button(key="live_next").click().run()
        settle(at, lambda a, n=expected: status(a, "waiting") and planned(transcript(a)) == n)
        time.sleep(0.2)
        assert planned(transcript(at)) == expected, "one click, one turn"
    assert "Round 1 (economic and technical arguments): Pro" in plain(at)
    at.toggle(key=f"live_step_{at.session_state['live_job']}").set_value(False).run()
    settle(at, finished)
    assert planned(transcript(at)) == 21


def test_step_mode_to_the_last_turn_ends_the_debate():
    at = open_live(fast())
    start(at, step_mode=True)
    settle(at, lambda a: status(a, "waiting"))
    for expected in range(1, 22):
        at.button(key="live_next").click().run()
        settle(at, lambda a, n=expected: planned(transcript(a)) == n and (status(a, "waiting") or finished(a)))
    settle(at, finished)
    assert transcript(at).state == "done" and at.get("page_link")[0].proto.label == "Open in Timeline"


def test_pause_halts_mid_turn_and_resume_continues_from_there():
    provider = paced()
    at = open_live(provider)
    start(at)
    settle(at, lambda a: any(m.value.endswith("▌") and len(m.value) > 40 for m in a.markdown))
    at.button(key="live_pause").click().run()
    settle(at, lambda a: status(a, "Paused"))
    held = transcript(at)
    assert held.state == "paused" and held.partial is not None and held.partial.speech
    time.sleep(0.5)
    at.run()
    assert len(transcript(at).turns) == len(held.turns), "nothing runs while paused"
    assert "Paused mid-turn" in plain(at) and at.button(key="live_resume").proto.disabled is False
    provider.delay = 0
    at.button(key="live_resume").click().run()
    settle(at, finished)
    done = transcript(at)
    resumed = done.turns[len(held.turns)]
    assert resumed.step == held.partial.step and resumed.text.startswith(held.partial.speech.rstrip())
    assert any("Paused mid-speech" in note for note in resumed.notes)
    assert "Paused mid-speech" in plain(at), "the note is shown with the turn"


def test_the_four_interventions_are_recorded_with_their_outcomes_inline():
    at = open_live(fast())
    start(at, step_mode=True)
    settle(at, lambda a: status(a, "waiting"))
    at.button(key="live_next").click().run()
    settle(at, lambda a: status(a, "waiting") and planned(transcript(a)) == 1)

    intervene(at, "clarification", "What do you mean by service boundaries?")
    intervene(at, "inject_evidence", "A 2024 survey found 40 percent of teams merged services back.")
    intervene(at, "direct_question", "Which point is most contested so far?", to="moderator")
    settle(at, lambda a: "Moderator answered:" in plain(a))
    intervene(at, "pause_question", "Con, what will your opening stress?", to="con")
    settle(at, lambda a: status(a, "Paused") and "Con answered:" in plain(a))
    page = plain(at)
    assert "Waiting for its point in the debate" in page, "queued clarification and evidence say so"
    assert "Not yet received by Pro or Con: each takes it at its next turn" in page, "who the evidence still awaits"
    assert at.text_area(key="live_iv_pause_question").value == "", "a sent intervention clears its box"

    at.toggle(key=f"live_step_{at.session_state['live_job']}").set_value(False).run()
    at.button(key="live_resume").click().run()
    settle(at, finished)
    t = transcript(at)
    items = {i.type: i for i in t.interventions}
    assert set(items) == {"clarification", "inject_evidence", "direct_question", "pause_question"}
    assert all(i.after_turn == 1 for i in items.values())
    assert items["direct_question"].status == "answered" and items["direct_question"].answered_by == "moderator"
    assert items["pause_question"].status == "answered" and items["pause_question"].answered_by == "con"
    clarification = items["clarification"]
    assert clarification.status == "answered" and t.turn(clarification.answered_in_turn).phase == "clarification"
    assert clarification.answered_in_turn == 3, "answered at the first phase break, after both openings"
    assert clarification.answered_by == t.turn(1).speaker, "no recipient: whoever had just spoken answers"
    evidence = items["inject_evidence"]
    assert evidence.status == "delivered" and len(evidence.delivered_to) == 2
    assert {t.turn(n).speaker for n in evidence.delivered_to} == {"pro", "con"}

    page = plain(at)
    for item in items.values():
        assert item.text in page
    assert f"Clarified inline in turn {clarification.answered_in_turn}." in page
    for number in evidence.delivered_to:  # who received it, in which turn, and whether it said so
        side = {"pro": "Pro", "con": "Con"}[t.turn(number).speaker]
        said = "acknowledged it" if t.turn(number).fields.get("evidence_response") else "did not acknowledge it"
        assert f"Received by **{side}** in turn {number}: {said}." in page, page
    assert "Not yet received by" not in page
    # the page counts turns as the turn cards and the Timeline do: the clarification is one of them
    assert len(t.turns) == 22 and f"all {len(t.turns)} turns" in page
    bar = [p for p in at.get("progress")][0]
    assert bar.proto.text.startswith("All 22 turns done") and "(with 1 clarification turn)" in bar.proto.text
    assert items["pause_question"].response in page and items["direct_question"].response in page
    order = texts(at)
    first = next(i for i, v in enumerate(order) if "Pro opening statement" in v)
    asked = next(i for i, v in enumerate(order) if "Which point is most contested" in v.replace("\\", ""))
    second = next(i for i, v in enumerate(order) if "Con opening statement" in v)
    assert first < asked < second, "interventions sit after the turn they followed"


def test_a_provider_failure_shows_the_message_and_retry_continues_from_the_failed_turn():
    provider = fast()
    provider.enqueue({"__error__": "provider", "message": "Backend overloaded: try again"}, agent="con")
    at = open_live(provider)
    start(at)
    settle(at, lambda a: any("Backend overloaded" in e.value for e in a.error))
    failed = transcript(at)
    assert failed.state == "failed" and planned(failed) == 1 and status(at, "Failed")
    assert not [b for b in at.button if b.key.startswith("live_do_")], "only Retry restarts a failed debate"
    at.button(key="live_retry").click().run()
    assert not any("Backend overloaded" in e.value for e in at.error), "Retry clears the failure at once"
    settle(at, finished)
    assert planned(transcript(at)) == 21 and transcript(at).turns[0].text == failed.turns[0].text


def test_bad_input_shows_the_message_and_keeps_what_was_typed():
    at = open_live(fast())
    start(at, "   ")
    assert any("empty" in e.value for e in at.error)
    long = "Should we adopt microservices? " * 20
    start(at, long)
    assert any("the limit is 500" in e.value for e in at.error)
    assert at.text_area(key="live_question").value == long, "the question is kept"
    assert "live_job" not in at.session_state and open_store().list(kind="live").total == 0, "nothing was started"

    start(at, step_mode=True)
    settle(at, lambda a: status(a, "waiting"))
    intervene(at, "pause_question", "  ")
    assert any("empty" in e.value for e in at.error) and status(at, "waiting"), "a refused pause does not pause"
    intervene(at, "direct_question", "Who bears the migration cost?")
    assert any("needs a recipient" in e.value for e in at.error)
    assert at.text_area(key="live_iv_direct_question").value == "Who bears the migration cost?"
    intervene(at, "clarification", "x" * 501)
    assert any("the limit is 500" in e.value for e in at.error)
    assert at.text_area(key="live_iv_clarification").value == "x" * 501
    assert transcript(at).interventions == [], "refused interventions are not recorded"

    at.text_area(key="live_iv_inject_evidence").set_value("Late evidence: a new benchmark.")  # typed, not sent
    at.toggle(key=f"live_step_{at.session_state['live_job']}").set_value(False).run()
    settle(at, finished)
    assert at.text_area(key="live_iv_inject_evidence").value == "Late evidence: a new benchmark.", "still in view"
    at.button(key="live_do_inject_evidence").click().run()
    assert any("debate has finished" in e.value for e in at.error)
    assert at.text_area(key="live_iv_inject_evidence").value == "Late evidence: a new benchmark."
    assert [b.key for b in at.button if b.key == "live_do_pause_question"] == [], "no pausing a finished debate"
    at.text_area(key="live_iv_inject_evidence").set_value("").run()
    offered = [b.key for b in at.button if b.key.startswith("live_do_")]
    assert offered == ["live_do_clarification", "live_do_direct_question"], "only what still applies is offered"


def test_hostile_text_is_shown_literally():
    hostile = "<script>alert(1)</script> Is **bold** [click](http://evil) _safe_? <img src=x onerror=alert(2)>"
    at = open_live(fast())
    start(at, hostile, step_mode=True)
    settle(at, lambda a: status(a, "waiting"))
    intervene(at, "direct_question", "And <b>this</b> **too**?", to="pro")
    at.toggle(key=f"live_step_{at.session_state['live_job']}").set_value(False).run()
    settle(at, finished)
    assert transcript(at).question == hostile
    page = plain(at)
    assert hostile in page and "And <b>this</b> **too**?" in page
    for value in texts(at):
        assert not re.search(r"(?<!\\)<", value), f"unescaped '<' in {value!r}"
        assert "**bold**" not in value and "**too**" not in value, f"live Markdown in {value!r}"
        # (the page's own jump links to its anchors are the only links)
        assert not re.search(r"(?<!\\)\]\((?!#cs-[a-z0-9-]+\))", value), f"live Markdown link in {value!r}"
    assert not any(m.proto.allow_html for m in at.markdown)


def test_resume_a_saved_unfinished_debate_from_the_list():
    debate = LiveDebate.create(QUESTION, fast(), store=open_store())
    for _ in range(3):
        debate.advance()
    before = debate.snapshot()
    at = open_live(fast())
    assert "Unfinished live debates" in plain(at)
    at.button(key=f"live_resume_{before.id}").click().run()
    assert at.query_params["live"] in (before.id, [before.id])
    settle(at, finished)
    t = transcript(at)
    assert t.id == before.id and planned(t) == 21
    assert [turn.text for turn in t.turns[:3]] == [turn.text for turn in before.turns], "finished turns are kept"


def test_the_address_reattaches_a_running_job_and_reopens_a_saved_one():
    first = open_live(fast())
    start(first, step_mode=True)
    settle(first, lambda a: status(a, "waiting"))
    job_id = first.session_state["live_job"]

    reloaded = open_live(fast(), live=job_id, key=first.session_state["app_owner_key"])  # a reload: same cookie
    assert status(reloaded, "waiting") and reloaded.session_state["live_job"] == job_id
    reloaded.button(key="live_next").click().run()
    settle(reloaded, lambda a: planned(transcript(a)) == 1 and status(a, "waiting"))

    # saved by another server process, not running here
    debate = LiveDebate.create(QUESTION, fast(), store=open_store())
    debate.advance()
    debate.advance()
    saved = open_live(fast(), live=debate.transcript.id)
    page = plain(saved)
    assert "not running on this server" in page and "Pro opening statement" in page and "Con opening statement" in page
    saved.button(key="live_resume_saved").click().run()
    settle(saved, finished)
    assert planned(transcript(saved)) == 21


def test_a_live_debate_is_steered_only_from_the_browser_that_started_it():
    first = open_live(fast())
    start(first, step_mode=True)
    settle(first, lambda a: status(a, "waiting"))
    job_id = first.session_state["live_job"]
    assert stored_row(job_id).data.get("owner"), "the starting browser's token is saved with the debate"

    other = open_live(fast(), live=job_id)  # the link opened in another browser: it follows, it does not steer
    assert status(other, "waiting") and "Read-only: this live debate was started in another browser" in plain(other)
    for key in ("live_pause", "live_resume", "live_next", "live_do_direct_question", "live_retry"):
        assert not [b for b in other.button if b.key == key], f"{key} is not offered to another browser"
    assert "Unfinished live debates" not in plain(open_live(fast())), "another browser's debate is not offered"

    first.button(key="live_next").click().run()  # the starting browser still steers it
    settle(first, lambda a: planned(transcript(a)) == 1 and status(a, "waiting"))
    assert stored_row(job_id).data.get("owner") == token_of(first), "later saves keep the owner"

    # another browser's, not running on this server
    saved = LiveDebate.create(QUESTION, fast(), origin=Origin(owner="f" * 32), store=open_store())
    page = open_live(fast(), live=saved.transcript.id)
    assert "Read-only" in plain(page) and not [b for b in page.button if b.key == "live_resume_saved"]
    # made by the command line: nobody's, so anyone may resume it
    legacy = LiveDebate.create(QUESTION, fast(), store=open_store())
    assert [b for b in open_live(fast(), live=legacy.transcript.id).button if b.key == "live_resume_saved"]


def stored_row(debate_id: str):
    from clearside.store import open_store

    return open_store().get(debate_id)


def token_of(at: AppTest) -> str:
    import hashlib

    return hashlib.sha256(f"clearside-owner:{at.session_state['app_owner_key']}".encode()).hexdigest()[:32]


@pytest.mark.parametrize(("live", "message"), [("0123456789abcdef0123456789abcdef", "No saved live debate"),
                                               ("../../etc/passwd", "is not a live debate id")])
def test_an_unknown_or_malformed_id_in_the_address_says_so(live, message):
    at = open_live(fast(), live=live)
    assert any(message in e.value.replace("\\", "") for e in at.error)
    assert at.text_area(key="live_question") is not None, "the start form is still offered"


def test_run_live_on_the_debate_pages_document():
    data = fixture_dict()
    data["proposition"]["normalized_question"] = "Should the team split its monolith into microservices by 2027?"
    document = Document.model_validate(data)
    provider = fast()
    at = open_live(provider, document=document)
    assert "split its monolith" in plain(at), "the Debate page's question is offered"
    at.button(key="live_from_document").click().run()
    settle(at, finished)
    t = transcript(at)
    assert t.proposition["normalized_question"] == document.proposition.normalized_question != NORMALIZED
    assert t.question == document.proposition.raw_input
    assert provider.requests_for("orchestrator") == [], "the debate's proposition is reused"


def test_points_being_prepared_are_shown_before_the_speech_starts():
    from clearside_ui.live_view import preparing

    raw = '{"arguments": [{"category": "economic", "claim": "Grid upgrades cost billions", "evidence_type": "fa'
    assert preparing(raw) == ["Grid upgrades cost billions"]
    assert preparing('{"questions": ["Why now?"], "speech": "I ask') == ["Why now?"]
    assert preparing("not json") == []
