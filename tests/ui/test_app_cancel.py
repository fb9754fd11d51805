"""AppTest: Cancel while a challenge or a perspectives step runs (a Cancel for every running job).

Each run waits at a gated reply inside the scripted provider, so Cancel is pressed while the job is certainly
running; the reply's first token then meets the cancel.
"""

from __future__ import annotations

import threading

import app_kit
import perspectives_kit as kit
from app_kit import PERSPECTIVES, AppTest, has, open_page, plain, run
from helpers import challenge_reply, scripted_debate

from clearside.perspectives import load
from clearside.providers.scripted import ScriptedProvider
from clearside.store import open_store

ANSWERS = ["Three times this month.", "Two years.", "Trust, not a fight."]
TYPED = "Whether the team could run twenty services at all"


def gated(reply, asked: threading.Event, release: threading.Event):
    """A queued reply that says it was asked, then waits for ``release`` before streaming ``reply``."""
    return lambda request: (asked.set(), release.wait(30), reply)[2]


def settle(at: AppTest, until) -> AppTest:
    return app_kit.settle(at, until, timeout=60)


def press_cancel(at: AppTest, key: str, asked: threading.Event, release: threading.Event) -> None:
    """Wait until the gated call is in flight and Cancel is on the page, press it, then let the reply stream."""
    try:
        settle(at, lambda a: asked.is_set() and has(a, key))
        run(at.button(key=key).click())
    finally:
        release.set()


def test_a_running_challenge_is_cancelled_adding_nothing_and_keeping_what_was_typed():
    provider = ScriptedProvider()
    at = open_page(provider=provider)
    scripted_debate(provider)
    at.text_area(key="question").set_value("Should we adopt microservices?")
    run(at.button(key="generate").click())
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    debate_id = at.session_state["debate_id"]

    asked, release = threading.Event(), threading.Event()
    provider.enqueue(gated(challenge_reply(), asked, release), agent="challenge")
    run(at.selectbox(key="challenge_choice").set_value("__other__"))
    run(at.text_input(key="challenge_typed").input(TYPED))
    run(at.button(key="challenge_question_assumption").click())
    press_cancel(at, "challenge_cancel", asked, release)
    settle(at, lambda a: "Challenge cancelled" in plain(a))

    assert ("Challenge cancelled (“Question an assumption”): nothing was added to the debate. The element you chose "
            "is still selected; press a button above to ask the challenge again.") in plain(at)
    assert not has(at, "challenge_cancel") and not at.button(key="challenge_question_assumption").proto.disabled
    assert at.selectbox(key="challenge_choice").value == "__other__" and at.text_input(key="challenge_typed").value \
        == TYPED, "what the user chose and typed is kept"
    assert at.session_state["document"].challenges.responses == [] and open_store().challenges(debate_id) == []
    assert not [e for e in at.expander if e.label.startswith("Challenge ·")] and not at.error

    provider.enqueue(challenge_reply(about=TYPED), agent="challenge")
    run(at.button(key="challenge_question_assumption").click())
    settle(at, lambda a: any(e.label.startswith("Challenge ·") for e in a.expander))
    assert [r.target for r in at.session_state["document"].challenges.responses] == [TYPED]
    assert "Challenge cancelled" not in plain(at) and len(open_store().challenges(debate_id)) == 1


def open_perspectives(provider) -> AppTest:
    at = open_page(PERSPECTIVES, provider)
    at.text_area(key="persp_question").input(kit.QUESTION)
    at.number_input(key="persp_rounds").set_value(2)
    return at


def test_a_running_perspectives_round_is_cancelled_keeping_the_answers_and_continue_finishes_it():
    queues = kit.script(2)
    asked, release = threading.Event(), threading.Event()
    queues["perspectives-B"][0] = gated(kit.compression_reply("B1"), asked, release)
    provider = ScriptedProvider(script=queues)
    at = open_perspectives(provider)
    run(at.button(key="persp_start").click())
    session_id = at.query_params["perspectives"]
    settle(at, lambda a: has(a, "persp_continue"))
    for number, text in enumerate(ANSWERS, 1):
        at.text_area(key=f"persp_ans_{session_id}_{number}").input(text)
    run(at.button(key="persp_continue").click())
    press_cancel(at, "persp_cancel", asked, release)
    settle(at, lambda a: has(a, "persp_retry"))

    text = plain(at)
    assert ("Cancelled during round 1 · perspective B. Every finished step is kept (saved), and so are your answers; "
            "Continue runs the rest from where it stopped.") in text
    assert "A1: feeling watched can hurt" in text, "the finished round is shown"
    assert all(answer in text for answer in ANSWERS), "the answers are shown in the merged prompt"
    assert at.button(key="persp_retry").label == "Continue" and not has(at, "persp_cancel") and not at.error
    session = load(open_store(), session_id)
    assert session.cancelled and session.state == "ROUND_1_B" and session.error == ""
    assert [(o.round, o.agent) for o in session.round_outputs] == [(1, "A")]
    assert session.clarification_answers == "\n".join(f"{n}. {a}" for n, a in enumerate(ANSWERS, 1))
    assert open_store().get(session_id).status == "paused"

    provider.enqueue(kit.compression_reply("B1"), agent="perspectives-B")
    run(at.button(key="persp_retry").click())
    settle(at, lambda a: any("Complete: every round ran" in s.value for s in a.success))
    session = load(open_store(), session_id)
    assert session.state == "COMPLETE" and not session.cancelled and len(session.round_outputs) == 4
    assert len(provider.requests_for("perspectives-A")) == 2, "the finished A1 is not asked again"


def test_cancelling_the_clarifying_questions_keeps_the_question_and_ask_again_brings_them():
    queues = kit.script(1)
    asked, release = threading.Event(), threading.Event()
    queues["perspectives-clarifier"][0] = gated(kit.clarifier_reply(), asked, release)
    provider = ScriptedProvider(script=queues)
    at = open_perspectives(provider)
    run(at.button(key="persp_start").click())
    session_id = at.query_params["perspectives"]
    press_cancel(at, "persp_cancel", asked, release)
    settle(at, lambda a: has(a, "persp_retry"))

    assert ("Cancelled while the clarifying questions were being prepared. Your question is saved; Ask again "
            "requests the questions.") in plain(at)
    assert kit.QUESTION in plain(at) and at.button(key="persp_retry").label == "Ask again" and not at.error
    assert load(open_store(), session_id).cancelled and open_store().get(session_id).status == "paused"
    provider.enqueue(kit.clarifier_reply(), agent="perspectives-clarifier")
    run(at.button(key="persp_retry").click())
    settle(at, lambda a: has(a, "persp_continue"))
    assert "How often has this happened so far?" in plain(at) and not load(open_store(), session_id).cancelled
