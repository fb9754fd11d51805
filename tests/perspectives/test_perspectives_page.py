"""The Perspectives page's checks and Skip (AppTest, scripted provider): a question handed back or asking nothing
is not shown at the gate, a question is skipped with its Skip control and the session goes on, a session whose checks
flagged what it shows is never under a green "Complete", and the tiny-model notice shows for a session run on the
embedded demonstration model."""

from __future__ import annotations

import app_kit
import perspectives_kit as kit
from app_kit import PERSPECTIVES, has, of_kind, plain, run, settle
from test_perspectives_quality import ECHO, LABEL, MORTGAGE, SOUP, SPECIFIC, VAGUE

from clearside.perspectives import PerspectivesRun, load
from clearside.perspectives.session import SKIPPED
from clearside.providers.scripted import ScriptedProvider
from clearside.store import open_store

DEMO = "You are using the tiny demonstration model"


class EmbeddedLike(ScriptedProvider):
    """A scripted provider that names itself as the embedded default does (its session's model reads
    ``embedded:...``), so the page's rule for the demonstration model can be seen without loading a model."""

    name = "embedded"


def open_page(provider, session: str | None = None):
    return app_kit.open_page(PERSPECTIVES, provider, query={"perspectives": session} if session else None)


def ask(at, question: str) -> str:
    at.text_area(key="persp_question").input(question)
    at.number_input(key="persp_rounds").set_value(1)
    run(at.button(key="persp_start").click())
    session_id = at.query_params.get("perspectives")
    settle(at, lambda a: has(a, "persp_continue"))
    return session_id


def flagged_script() -> dict:
    queues = kit.script(1)
    garbage = kit.synthesis_reply()
    garbage["conclusions"] = [LABEL, SOUP]
    queues["perspectives-synthesis"] = [garbage] * 3  # the first attempt and both re-asks
    return queues


def test_the_gate_shows_neither_the_question_handed_back_nor_the_generic_one():
    queues = kit.script(1)
    queues["perspectives-clarifier"] = [{"questions": [ECHO, VAGUE, *SPECIFIC]}]
    at = open_page(ScriptedProvider(script=queues))
    session_id = ask(at, MORTGAGE)
    gate = "\n".join(m.value for m in at.markdown).replace("\\", "")
    assert all(question in gate for question in SPECIFIC)
    assert ECHO not in gate.replace(f"## {MORTGAGE}", "") and VAGUE not in gate
    assert [t.key for t in at.text_area if t.key.startswith("persp_ans_")] == [
        f"persp_ans_{session_id}_1", f"persp_ans_{session_id}_2"]
    assert "2 questions the model wrote were left out" in of_kind(at, "caption")
    assert "it asked your own question back" in of_kind(at, "caption")


def test_a_skipped_question_lets_the_session_go_on_and_the_perspectives_are_told():
    provider = ScriptedProvider(script=kit.script(1))
    at = open_page(provider)
    session_id = ask(at, kit.QUESTION)
    at.toggle(key=f"persp_skip_{session_id}_2").set_value(True)
    run(at)
    assert at.text_area(key=f"persp_ans_{session_id}_2").proto.disabled, "a skipped question takes no answer"
    at.text_area(key=f"persp_ans_{session_id}_1").input("Three times this month.")
    at.text_area(key=f"persp_ans_{session_id}_3").input("Trust, not a fight.")
    run(at.button(key="persp_continue").click())
    settle(at, lambda a: any("Complete: every round ran" in s.value for s in a.success))
    session = load(open_store(), session_id)
    assert session.skipped_questions == [2] and session.state == "COMPLETE"
    assert f"2. {SKIPPED}" in session.clarification_answers
    [request] = provider.requests_for("perspectives-A")
    assert "2. (skipped: the person chose not to answer" in request.messages[-1]["content"]


def test_a_session_whose_checks_flagged_its_conclusions_is_not_shown_as_complete_in_green():
    at = open_page(ScriptedProvider(script=flagged_script()))
    session_id = ask(at, kit.QUESTION)
    for number, text in enumerate(kit.ANSWERS.split(". ")[:3], 1):
        at.text_area(key=f"persp_ans_{session_id}_{number}").input(text)
    run(at.button(key="persp_continue").click())
    settle(at, lambda a: "quality checks flagged" in of_kind(a, "info"))
    assert not [s.value for s in at.success], "no green Complete over flagged conclusions"
    status = of_kind(at, "info")
    assert "flagged 2 items" in status and "the synthesis · conclusions item 1 is a heading in capital" in status
    assert load(open_store(), session_id).state == "COMPLETE"
    reopened = open_page(ScriptedProvider(), session_id)  # the saved session, opened from its link
    assert not reopened.success and "quality checks flagged 2 items" in of_kind(reopened, "info")
    assert "Status: Complete, 2 flagged" in plain(reopened)


def test_a_clean_session_is_complete_in_green():
    run_ = PerspectivesRun.create(kit.QUESTION, ScriptedProvider(script=kit.script(1)), rounds=1, store=open_store())
    run_.clarify()
    run_.answer(kit.ANSWERS)
    run_.run()
    at = open_page(ScriptedProvider(), run_.session.session_id)
    assert [s.value for s in at.success] == ["This saved session is complete."]
    assert "flagged" not in of_kind(at, "info")


def saved_on(provider) -> str:
    run_ = PerspectivesRun.create(kit.QUESTION, provider, rounds=1, store=open_store())
    run_.clarify()
    return run_.session.session_id


def test_the_tiny_model_notice_shows_for_a_session_run_on_the_embedded_model_only():
    demo = saved_on(EmbeddedLike(script=kit.script(1)))
    assert DEMO in of_kind(open_page(ScriptedProvider(), demo), "info")
    other = saved_on(ScriptedProvider(script=kit.script(1)))
    assert DEMO not in of_kind(open_page(ScriptedProvider(), other), "info")
    assert DEMO not in of_kind(open_page(ScriptedProvider()), "info"), "the sidebar's model is not the demo one"
    assert DEMO in of_kind(open_page(EmbeddedLike()), "info"), "before a session: the sidebar's model decides"


def test_the_quality_checks_say_what_was_ended_early_in_the_readers_words():
    queues = kit.script(1)
    cut = kit.synthesis_reply()
    whole = cut["debate_evolution"].rstrip(".") + "."
    cut["debate_evolution"] = whole + " It's not just about saving a"
    queues["perspectives-synthesis"] = [cut]
    run_ = PerspectivesRun.create(kit.QUESTION, ScriptedProvider(script=queues), rounds=1, store=open_store())
    run_.clarify()
    run_.answer(kit.ANSWERS)
    run_.run()
    at = open_page(ScriptedProvider(), run_.session.session_id)
    [line] = [line for line in plain(at).splitlines() if "stops mid-phrase" in line]
    assert line.startswith("- the synthesis: ended early · debate evolution stops mid-phrase, at 'a'"), line
    assert load(open_store(), run_.session.session_id).synthesis["debate_evolution"] == whole
