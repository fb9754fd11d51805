"""AppTest for the Perspectives page (docs/design/perspectives.md) on the scripted provider, and its place in the
Library.

The gate (questions answered before anything runs), the rounds shown or hidden by observability, the synthesis,
a failure and Retry, saved sessions reopened from ``?perspectives=<id>`` (complete, pending, failed, unknown),
the Library's listing, links and actions, and escaping. Sessions made outside the page are run straight through
``PerspectivesRun`` on the test's private store, so no job for them is in the dashboard's registry.
"""

from __future__ import annotations

import json
import re
import threading

import app_kit
import perspectives_kit as kit
import pytest
from app_kit import LIBRARY, AppTest, has, plain, run, settle
from app_kit import PERSPECTIVES as PAGE
from helpers import download

from clearside.errors import ProviderError
from clearside.perspectives import PerspectivesRun, load
from clearside.perspectives.session import Summary
from clearside.providers.scripted import ScriptedProvider
from clearside.store import NewDebate, open_store

ANSWERS = ["Three times this month.", "Two years.", "Trust, not a fight."]
UNESCAPED = re.compile(r"(?<!\\)<(script|img|b)|(?<!\\)\*\*(md|really|twice)|(?<!\\):red")
HISTORY_2 = ["INIT", "CLARIFICATION_PENDING", "CLARIFICATION_COMPLETE", "ROUND_1_A", "ROUND_1_B", "ROUND_2_A",
             "ROUND_2_B", "SYNTHESIS", "COMPLETE"]


class HeldProvider(ScriptedProvider):
    """Streams part of ``agent``'s reply, then holds the rest until ``release`` is set (a model mid-reply)."""

    def __init__(self, agent: str, *, after: int = 300, **kwargs) -> None:
        super().__init__(chunk_size=20, **kwargs)
        self.agent, self.after, self.release = agent, after, threading.Event()

    def _complete(self, request, on_delta):
        if request.agent != self.agent or on_delta is None:
            return super()._complete(request, on_delta)
        sent = [0]

        def held(text: str) -> None:
            sent[0] += len(text)
            if sent[0] > self.after:
                self.release.wait(30)
            on_delta(text)

        return super()._complete(request, held)


def scripted(rounds: int = 2, **kwargs) -> ScriptedProvider:
    return ScriptedProvider(script=kit.script(rounds), **kwargs)


def open_page(provider, *, session: str | None = None) -> AppTest:
    return app_kit.open_page(PAGE, provider, query={"perspectives": session} if session is not None else None)


def progress_texts(at: AppTest) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


def ask(at: AppTest, question: str = kit.QUESTION, *, rounds: int = 2, observe: bool = True) -> str:
    """Fill in the start form, press Ask, wait for the questions; returns the session id from the share link."""
    at.text_area(key="persp_question").input(question)
    at.number_input(key="persp_rounds").set_value(rounds)
    at.toggle(key="persp_observe").set_value(observe)
    run(at.button(key="persp_start").click())
    session_id = at.query_params.get("perspectives")
    assert session_id, plain(at)
    settle(at, lambda a: has(a, "persp_continue"))
    return session_id


def answer(at: AppTest, session_id: str, answers: list[str] = ANSWERS) -> AppTest:
    for number, text in enumerate(answers, 1):
        at.text_area(key=f"persp_ans_{session_id}_{number}").input(text)
    return run(at.button(key="persp_continue").click())


def complete(at: AppTest) -> AppTest:
    return settle(at, lambda a: any("Complete: every round ran" in s.value for s in a.success))


def saved(rounds: int = 1, *, answered: bool = True, finish: bool = True, provider=None,
          question: str = kit.QUESTION, owner: str | None = None) -> str:
    """A session made and saved outside the dashboard (no job for it in the registry); ``owner``: the token of
    the browser that started it (none: made on the command line)."""
    run_ = PerspectivesRun.create(question, provider or scripted(rounds), rounds=rounds, store=open_store(),
                                  owner=owner)
    run_.clarify()
    if answered:
        run_.answer(kit.ANSWERS)
    if finish:
        run_.run()
    return run_.session.session_id


def stored(session_id: str):
    return load(open_store(), session_id)


# -- the page ------------------------------------------------------------------------------------------------------


def test_full_flow_questions_then_rounds_then_synthesis_saved_complete():
    provider = scripted(2)
    at = open_page(provider)
    assert at.title[0].value == "Perspectives"
    assert at.toggle(key="persp_observe").value is True and at.number_input(key="persp_rounds").value == 4
    session_id = ask(at)
    assert at.query_params["perspectives"] == session_id
    shown = plain(at)
    for question in kit.clarifier_reply()["questions"]:
        assert question in shown
    assert len(provider.requests_for("perspectives-clarifier")) == 1 and not provider.requests_for("perspectives-A")
    assert stored(session_id).state == "CLARIFICATION_PENDING"
    answer(at, session_id)
    complete(at)
    text = plain(at)
    for expected in ("### Synthesis", "How the perspectives evolved", "A widened the readings", "Conclusions",
                     "Privacy was crossed repeatedly", "Options", "Agree on asking first", "Open questions",
                     "What does the partner say when asked?", "#### Round 1", "#### Round 2",
                     "Perspective A · expansion", "Perspective B · compression",
                     "A1: feeling watched can hurt", "A2 reading two: a habit that seems harmless to them",
                     "Possible actions (gentle → firm)", "1. A1 gentle: mention it calmly",
                     "3. A1 firm: set a clear rule about privacy", "*Brief:* A1: I noticed my phone was read",
                     "control · in the situation: A1: reading messages without asking",
                     "Best-supported interpretation", "B2: a privacy boundary was crossed several times.",
                     "Known facts", "B1: messages were read three times this month", "Assumptions (not yet known)",
                     "*Insecurity:* B1: possibly on their side", "*Values mismatch:* B2: unclear so far",
                     "*If* B1: they agree → *then* check in after two weeks"):
        assert expected in text, expected
    framing = kit.synthesis_reply()["framing"]
    assert any(framing in i.value.replace("\\", "") for i in at.info)
    assert "1. Three times this month." in text, "the merged prompt (expander) holds the answers"
    assert ("Started → Waiting for your answers → Questions answered · starting round 1 → Round 1 of 2 · "
            "perspective A → Round 1 of 2 · perspective B → Round 2 of 2 · perspective A → Round 2 of 2 · "
            "perspective B → Writing the synthesis → Complete") in text, "the state history, in words"
    session = stored(session_id)
    record = open_store().get(session_id)
    assert record.kind == "perspectives" and record.status == "done"
    assert session.state == "COMPLETE" and session.state_history == HISTORY_2
    assert session.clarification_answers == "\n".join(f"{n}. {a}" for n, a in enumerate(ANSWERS, 1))
    assert [len(provider.requests_for(f"perspectives-{a}")) for a in ("A", "B", "synthesis")] == [2, 2, 1]
    [download] = at.get("download_button")
    assert download.proto.label == "Download session (JSON)"
    assert at.query_params["perspectives"] == session_id
    run(at.button(key="persp_new").click())
    assert "perspectives" not in at.query_params and has(at, "persp_start")


def test_the_gate_refuses_empty_answers_and_nothing_runs():
    provider = scripted(2)
    at = open_page(provider)
    session_id = ask(at)
    run(at.button(key="persp_continue").click())
    *blank, error = at.error  # each empty box is marked, then the gate says why nothing runs
    assert [e.value for e in blank] == [f"Question {n} needs an answer (“not sure” is an answer too)."
                                        for n in (1, 2, 3)]
    assert "Answer the clarification questions first" in error.value.replace("\\", "")
    assert "gate cannot be skipped" in error.value.replace("\\", "")
    answer(at, session_id, ["   ", "", " \n "])
    assert len(at.error) == 4 and "Answer the clarification questions first" in plain(at)
    assert at.text_area(key=f"persp_ans_{session_id}_1").value == "   ", "what was typed stays"
    assert provider.requests_for("perspectives-A") == [] and provider.requests_for("perspectives-B") == []
    session = stored(session_id)
    assert session.state == "CLARIFICATION_PENDING" and session.merged_user_prompt == ""
    assert session.state_history == ["INIT", "CLARIFICATION_PENDING"]
    assert has(at, "persp_continue") and not at.get("progress"), "still at the gate: no rounds, no progress"
    assert kit.QUESTION in plain(at), "the question is kept"
    answer(at, session_id, ["Three times.", "  ", ""])  # a blank answer would be dropped: refused, and shown where
    text = plain(at)
    assert "Questions 2, 3 have no answer" in text and "none is dropped from the merged prompt" in text
    assert [e.value for e in at.error][:2] == ["Question 2 needs an answer (“not sure” is an answer too).",
                                              "Question 3 needs an answer (“not sure” is an answer too)."]
    assert stored(session_id).state == "CLARIFICATION_PENDING" and provider.requests_for("perspectives-A") == []
    answer(at, session_id, ["Three times.", "Not sure.", "I have not asked yet."])
    complete(at)
    assert stored(session_id).clarification_answers == "1. Three times.\n2. Not sure.\n3. I have not asked yet."


def test_the_header_names_the_step_in_words_not_state_names():
    at = open_page(scripted(2))
    session_id = ask(at)
    assert "Status: Waiting for your answers" in plain(at) and "CLARIFICATION_PENDING" not in plain(at)
    answer(at, session_id)
    complete(at)
    assert "Status: Complete" in plain(at) and "ROUND_" not in plain(at)


def test_while_the_clarifier_runs_the_page_says_so_and_offers_no_way_on():
    provider = HeldProvider("perspectives-clarifier", after=60, script=kit.script(1))
    at = open_page(provider)
    at.text_area(key="persp_question").input(kit.QUESTION)
    run(at.button(key="persp_start").click())
    session_id = at.query_params["perspectives"]
    try:
        settle(at, lambda a: "How often has this happened so far?" in plain(a))
        assert "Preparing the clarifying questions…" in plain(at), "the first question streams under a status line"
        assert not has(at, "persp_continue") and not has(at, "persp_start") and not at.text_area
        assert stored(session_id).state == "INIT"
    finally:
        provider.release.set()
    settle(at, lambda a: has(a, "persp_continue"))
    assert len(at.text_area) == 3 and not provider.requests_for("perspectives-A")


def test_summaries_are_explained_with_what_they_cover_and_why():
    session_id = saved(1)
    session = stored(session_id)
    session.summaries.append(Summary(step="SYNTHESIS", covers=["A1", "B1"], text="Condensed: a crossed boundary.",
                                     reason="the synthesis prompt would need about 9000 tokens of a 8192-token "
                                            "context"))
    open_store().update(session_id, data={"session": session.model_dump(mode="json")})
    at = open_page(scripted(0), session=session_id)
    [info] = [i.value.replace("\\", "") for i in at.info if "summarized" in i.value]
    assert info.startswith("Earlier rounds were summarized to fit the model's context: A1, B1 for the synthesis "
                           "(the synthesis prompt would need about 9000 tokens of a 8192-token context)")
    assert "Condensed: a crossed boundary." in plain(at)


def test_start_errors_are_shown_and_the_question_is_kept():
    provider = scripted(1)
    at = open_page(provider)
    at.text_area(key="persp_question").input("   ")
    run(at.button(key="persp_start").click())
    assert "Situation is empty" in plain(at) and not at.query_params.get("perspectives")
    long = "Why? " * 420
    at.text_area(key="persp_question").input(long)
    run(at.button(key="persp_start").click())
    assert "the limit is 2000" in plain(at) and at.text_area(key="persp_question").value == long
    assert provider.requests == [] and open_store().list().total == 0


def test_streaming_step_is_labelled_and_shown_with_observability_on():
    provider = HeldProvider("perspectives-B", script=kit.script(2))
    at = open_page(provider)
    session_id = ask(at)
    answer(at, session_id)
    try:
        settle(at, lambda a: "Round 1 · perspective B…" in plain(a) and "B1: a privacy boundary" in plain(a))
        text = plain(at)
        assert "A1: feeling watched can hurt" in text, "A1 is shown while B1 streams"
        assert progress_texts(at) == ["Round 1 of 2 · perspective B (compression)…"]
        assert not has(at, "persp_retry") and not at.error
    finally:
        provider.release.set()
    complete(at)
    assert stored(session_id).state == "COMPLETE"


def test_observability_off_shows_progress_then_only_the_synthesis():
    provider = HeldProvider("perspectives-B", script=kit.script(2))
    at = open_page(provider)
    session_id = ask(at, observe=False)
    answer(at, session_id)
    try:
        settle(at, lambda a: progress_texts(a) == ["Round 1 of 2 · perspective B (compression)…"])
        text = plain(at)
        assert "Observability is off" in text
        assert "A1: feeling watched" not in text and "B1: a privacy" not in text and "Round 1 ·" not in text
    finally:
        provider.release.set()
    complete(at)
    text = plain(at)
    assert "### Synthesis" in text and "Privacy was crossed repeatedly" in text
    assert "#### Round 1" not in text and "A1: feeling watched" not in text and "B2:" not in text
    assert stored(session_id).observability is False
    run(at.toggle(key=f"persp_show_rounds_{session_id}").set_value(True))
    text = plain(at)
    assert "#### Round 2" in text and "A1: feeling watched can hurt" in text and "B2: a privacy boundary" in text


def test_a_failed_step_shows_the_error_and_retry_completes_from_the_saved_state():
    script = kit.script(2)
    script["perspectives-B"] = [kit.compression_reply("B1"), {"__error__": "provider", "message": "boom"}]
    provider = ScriptedProvider(script=script)
    at = open_page(provider)
    session_id = ask(at)
    answer(at, session_id)
    settle(at, lambda a: has(a, "persp_retry"))
    assert any("boom" in e.value for e in at.error)
    record = open_store().get(session_id)
    assert record.status == "failed" and stored(session_id).state == "ROUND_2_B"
    assert "A2: feeling watched" in plain(at), "what finished is shown with the error"
    provider.enqueue(kit.compression_reply("B2"), agent="perspectives-B")
    run(at.button(key="persp_retry").click())
    complete(at)
    session = stored(session_id)
    assert session.state == "COMPLETE" and session.state_history == HISTORY_2 and session.error == ""
    assert [o.output["best_interpretation"][:2] for o in session.round_outputs if o.agent == "B"] == ["B1", "B2"]
    assert len(provider.requests_for("perspectives-A")) == 2, "a finished step is never repeated"
    assert not at.error and "B2: a privacy boundary" in plain(at)


def test_a_failed_clarifier_is_asked_again_by_retry():
    script = kit.script(1)
    script["perspectives-clarifier"] = [{"__error__": "unreachable", "message": "model is down"}]
    provider = ScriptedProvider(script=script)
    at = open_page(provider)
    at.text_area(key="persp_question").input(kit.QUESTION)
    run(at.button(key="persp_start").click())
    settle(at, lambda a: has(a, "persp_retry"))
    assert "model is down" in plain(at) and not has(at, "persp_continue")
    provider.enqueue(kit.clarifier_reply(), agent="perspectives-clarifier")
    run(at.button(key="persp_retry").click())
    settle(at, lambda a: has(a, "persp_continue"))
    assert not at.error and stored(at.query_params["perspectives"]).state == "CLARIFICATION_PENDING"


def test_export_is_the_session_file(downloads):
    from clearside.modes import export_data

    session_id = saved(1)
    at = open_page(scripted(0), session=session_id)
    [button] = at.get("download_button")
    assert button.proto.label == "Download session (JSON)"
    data = json.loads(download(at, downloads, "Download session (JSON)"))  # the bytes the button serves
    assert data == stored(session_id).file() and data["session_id"] == session_id
    assert data["state"] == "COMPLETE" and data["synthesis"] == kit.synthesis_reply()
    assert data == export_data(open_store(), session_id), "the file `python -m clearside export ID` writes"


# -- saved sessions from the address bar ---------------------------------------------------------------------------


def test_a_saved_complete_session_reopens_with_its_synthesis():
    session_id = saved(1)
    provider = scripted(0)
    at = open_page(provider, session=session_id)
    text = plain(at)
    assert "This saved session is complete." in text and "### Synthesis" in text
    assert "Privacy was crossed repeatedly" in text and "A1: feeling watched can hurt" in text
    assert at.query_params["perspectives"] == session_id and provider.requests == []
    assert not has(at, "persp_resume") and not has(at, "persp_continue")


def test_a_pending_session_reopens_with_its_questions_and_answering_runs_it():
    session_id = saved(1, answered=False, finish=False)
    provider = ScriptedProvider(script={k: v for k, v in kit.script(1).items() if k != "perspectives-clarifier"})
    at = open_page(provider, session=session_id)
    for question in kit.clarifier_reply()["questions"]:
        assert question in plain(at)
    run(at.button(key="persp_continue").click())
    assert "Answer the clarification questions first" in plain(at) and provider.requests == []
    answer(at, session_id)
    complete(at)
    session = stored(session_id)
    assert session.state == "COMPLETE" and session.state_history[0] == "INIT"
    assert provider.requests_for("perspectives-clarifier") == [], "the saved questions are used"


def test_a_failed_saved_session_shows_what_it_has_and_resume_continues_it():
    script = kit.script(2)
    script["perspectives-B"] = [kit.compression_reply("B1"), {"__error__": "provider", "message": "B went away"}]
    with pytest.raises(ProviderError, match="B went away"):
        saved(2, provider=ScriptedProvider(script=script))
    [item] = open_store().list(kind="perspectives").items
    provider = ScriptedProvider(script={"perspectives-B": [kit.compression_reply("B2")],
                                        "perspectives-synthesis": [kit.synthesis_reply()]})
    at = open_page(provider, session=item.id)
    text = plain(at)
    assert "B went away" in text and "not running on this server" in text and "A2: feeling watched" in text
    run(at.button(key="persp_resume").click())
    complete(at)
    session = stored(item.id)
    assert session.state == "COMPLETE" and provider.requests_for("perspectives-A") == []
    assert session.provider == "scripted:script"


def test_a_session_is_answered_and_steered_only_from_the_browser_that_started_it():
    first = open_page(scripted(1))
    session_id = ask(first, rounds=1)
    assert open_store().get(session_id).data.get("owner"), "the starting browser's token is saved"
    other = open_page(scripted(1), session=session_id)  # the link in another browser
    text = plain(other)
    assert "Read-only: this session was started in another browser" in text
    assert kit.clarifier_reply()["questions"][0] in text, "the questions are shown"
    assert not has(other, "persp_continue") and not [t for t in other.text_area if t.key.startswith("persp_ans_")]
    same = open_page(scripted(1), session=session_id)  # the same browser after a reload: its cookie
    same.session_state["app_owner_key"] = first.session_state["app_owner_key"]
    run(same)
    assert has(same, "persp_continue") and "Read-only" not in plain(same)

    theirs = saved(1, finish=False, owner="f" * 32)  # answered elsewhere, stopped before its rounds
    page = open_page(scripted(1), session=theirs)
    assert "Read-only" in plain(page) and not has(page, "persp_resume")
    mine = saved(1, finish=False)  # made on the command line: nobody's, so this browser may resume it
    assert has(open_page(scripted(1), session=mine), "persp_resume")


def test_unknown_or_wrong_ids_are_clear_errors():
    at = open_page(scripted(0), session="0" * 32)
    assert "No saved perspectives session has the id" in plain(at) and has(at, "persp_start")
    at = open_page(scripted(0), session="not-an-id")
    assert "is not a perspectives session id" in plain(at)
    store = open_store()
    static = store.create(NewDebate("static", "Is this a debate?", provider="openai", model="gpt-4", status="done"))
    at = open_page(scripted(0), session=static)
    assert "is a static debate, not a perspectives session" in plain(at)


def test_user_and_model_text_is_escaped():
    question = "Is <script>alert(1)</script> **md** [x](javascript:alert(1)) fine?"
    script = kit.script(1)
    script["perspectives-clarifier"] = [{"questions": ["Did <img src=x onerror=alert(1)> happen?",
                                                       "Was it **really** :red[twice]?"]}]
    at = open_page(ScriptedProvider(script=script))
    session_id = ask(at, question, rounds=1)
    shown = [m.value for m in at.markdown]
    assert not [m for m in shown if UNESCAPED.search(m)], "no live HTML or Markdown from the user or the model"
    assert any("\\<script\\>" in m and "\\*\\*md\\*\\*" in m for m in shown)
    assert any("\\<img src\\=x" in m for m in shown) and any(":red\\[twice\\]" in m for m in shown)
    answer(at, session_id, ["<b>yes</b> **twice**", "[link](javascript:x)"])
    complete(at)
    merged = [m for m in (e.value for e in at.markdown) if "Answers" in m]
    assert merged and all(not UNESCAPED.search(m) and "\\<b\\>yes" in m for m in merged)


# -- the Library ---------------------------------------------------------------------------------------------------


def library(provider=None) -> AppTest:
    return app_kit.open_page(LIBRARY, provider or ScriptedProvider())


def test_the_library_lists_a_session_and_opens_it_on_the_perspectives_page():
    done = saved(1)
    pending = saved(1, answered=False, finish=False, question="Should I tell my friend the truth about the trip?")
    static = open_store().create(NewDebate("static", "Should we adopt microservices?", provider="openai",
                                           model="gpt-4", status="done"))
    at = library()
    assert at.selectbox(key="lib_kind").options == ["Any kind", "Static", "Live", "Perspectives"]
    run(at.selectbox(key="lib_kind").set_value("perspectives"))
    table = at.dataframe[0].value
    assert list(table["Link"]) == [f"perspectives?perspectives={pending}", f"perspectives?perspectives={done}"]
    assert list(table["Kind"]) == ["perspectives", "perspectives"] and list(table["Status"]) == ["paused", "done"]
    assert static not in "".join(table["Link"])
    run(at.selectbox(key="lib_pick").set_value(done))
    assert "Perspectives session · done" in plain(at) and not has(at, "lib_resume")
    at.button(key="lib_open").click().run()
    assert at.title[0].value == "Perspectives" and at.query_params == {"perspectives": done}
    assert "Privacy was crossed repeatedly" in plain(at)
    run(at)
    run(at.selectbox(key="lib_pick").set_value(pending))
    at.button(key="lib_resume").click().run()
    assert at.title[0].value == "Perspectives" and at.query_params == {"perspectives": pending}
    assert "How often has this happened so far?" in plain(at) and has(at, "persp_continue")


def test_a_duplicated_session_is_answered_into_the_copy_and_the_original_is_kept():
    original = saved(1, answered=False, finish=False)
    provider = ScriptedProvider(script={k: v for k, v in kit.script(1).items() if k != "perspectives-clarifier"})
    at = library(provider)
    run(at.button(key="lib_duplicate").click())
    copy_id = at.selectbox(key="lib_pick").value
    assert copy_id != original and open_store().get(copy_id).kind == "perspectives"
    at.button(key="lib_open").click().run()
    assert at.query_params == {"perspectives": copy_id}
    at.switch_page(PAGE)  # stay there: the next run would go back to the Library
    answer(at, copy_id)
    complete(at)
    assert stored(copy_id).state == "COMPLETE" and open_store().get(copy_id).status == "done"
    assert stored(original).state == "CLARIFICATION_PENDING" and open_store().get(original).status == "paused"


def test_rerun_in_the_library_starts_a_new_session_that_asks_its_own_questions():
    original = saved(1)
    provider = scripted(1)
    provider.model = "other-model"
    at = library(provider)
    assert "new perspectives session with **scripted:other-model**" in plain(at)
    at.button(key="lib_rerun").click().run()
    new_id = at.query_params.get("perspectives")
    assert new_id and new_id != original and at.title[0].value == "Perspectives"
    record = open_store().get(new_id)
    assert record.kind == "perspectives" and record.parent_id == original and record.model == "other-model"
    at.switch_page(PAGE)
    settle(at, lambda a: has(a, "persp_continue"))
    assert stored(new_id).max_rounds == 1 and stored(original).state == "COMPLETE"
