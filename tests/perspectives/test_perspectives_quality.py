"""Perspectives mode's substance checks and skipped questions, on the scripted provider.

The clarifier's questions that hand the person's question back or ask nothing specific are dropped, or re-asked
when none is left (with the MiniLM and on words alone); a question the person skips is merged as skipped, and the
later agents are told so, on the API and on the command line; label-only text in the synthesis is dropped,
re-asked, or at last kept and flagged. The wording is real: what sessions on the embedded model wrote.
"""

from __future__ import annotations

import json

import pytest
from helpers import run_cli, script_file
from perspectives_kit import ANSWERS, QUESTION, clarifier_reply, compression_reply, script, synthesis_reply

from clearside.checks import LEXICAL_ONLY, Embeddings
from clearside.errors import InputError
from clearside.perspectives import InvalidTransition, PerspectivesRun, load
from clearside.perspectives.checks import echoes, generic, text_problem
from clearside.perspectives.session import SKIPPED
from clearside.providers.scripted import ScriptedProvider
from clearside.store import open_store

MORTGAGE = "Should I co-sign my sister's mortgage?"
# what the clarifier asked on the embedded model: the person's own question, and nothing specific
ECHO, VAGUE = "Should I co-sign my sister's mortgage?", "What should I do?"
SPECIFIC = ["Has your sister ever missed a loan or rent payment?",
            "How much of the payment could you cover if she stopped paying?"]
LABEL = "DISCIPLINARY DEMOCRACY 2018-2023 (S.A.)"  # a synthesis conclusion on the embedded model
SOUP = "SELF-CLAIMING - 2019/3/7/48.56:43.37.2019-3,15.45; SEPTEMBER 2019"  # a decision hinge there


def prompt_of(request) -> str:
    return "\n".join(m["content"] for m in request.messages)


def mortgage_run(questions: list[list[str]], *, semantic: bool = True, retries: int = 2, rounds: int = 1,
                 **replies: list):
    """A session on the mortgage question whose clarifier writes ``questions`` (one list per attempt);
    ``replies``: other agents' replies in place of the script's (``synthesis=[...]``, ``B=[...]``)."""
    queues = script(rounds)
    queues["perspectives-clarifier"] = [{"questions": q} for q in questions]
    queues.update({f"perspectives-{agent}": items for agent, items in replies.items()})
    provider = ScriptedProvider(script=queues)
    run = PerspectivesRun.create(MORTGAGE, provider, rounds=rounds, store=open_store(), retries=retries)
    run.embeddings = Embeddings() if semantic else LEXICAL_ONLY
    return run, provider


# --- the clarifier's questions ------------------------------------------------------------------------------------

@pytest.mark.parametrize("semantic", [True, False], ids=["minilm", "words"])
def test_a_question_handed_back_and_a_generic_one_are_dropped_and_the_rest_kept(semantic):
    run, provider = mortgage_run([[ECHO, VAGUE, *SPECIFIC]], semantic=semantic)
    assert run.clarify() == SPECIFIC
    assert len(provider.requests_for("perspectives-clarifier")) == 1, "dropped, not re-asked: two were left"
    items = run.session.quality["INIT"].items
    assert [(i.check, i.action, i.text) for i in items] == [("echoed_question", "dropped", ECHO),
                                                            ("generic_question", "dropped", VAGUE)]
    saved = load(open_store(), run.session.session_id)
    assert saved.clarification_questions == SPECIFIC and saved.quality == run.session.quality


@pytest.mark.parametrize("semantic", [True, False], ids=["minilm", "words"])
def test_with_no_question_left_the_clarifier_is_asked_again(semantic):
    run, provider = mortgage_run([[ECHO, VAGUE], SPECIFIC], semantic=semantic)
    assert run.clarify() == SPECIFIC
    first, again = provider.requests_for("perspectives-clarifier")
    assert "hands the person's own question back" in prompt_of(again)
    assert "asks nothing specific" in prompt_of(again)
    assert "hands the person" not in prompt_of(first)
    record = run.session.quality["INIT"]
    assert record.attempts == 2 and record.reasks == 1
    assert {i.check for i in record.items if i.action == "reasked"} == {"echoed_question", "generic_question"}


@pytest.mark.parametrize("question", [
    "What should I do?", "Can you tell me more?", "Could you provide more details about your situation?",
    "Is there anything else I should know?", "What do you think?", "How do you feel?"])
def test_questions_that_ask_nothing_specific_are_generic(question):
    assert generic(question)


@pytest.mark.parametrize("question", [*SPECIFIC, *clarifier_reply()["questions"], "How close are you and your sister?",
                                      "What would happen to your own credit if she defaulted?"])
def test_specific_questions_are_kept(question):
    assert not generic(question)
    for similarity in (None, 0.6):
        assert not echoes(question, MORTGAGE, similarity)
        assert not echoes(question, QUESTION, similarity)


@pytest.mark.parametrize("question", [
    "Should you co-sign your sister's mortgage?", "Do you think you should co-sign the mortgage?",
    "Is co-signing your sister's mortgage a good idea?"])
def test_the_persons_question_in_other_words_is_an_echo_on_words_alone(question):
    assert echoes(question, f"My sister asked me for help. {MORTGAGE}", None)


# --- skipping a question ------------------------------------------------------------------------------------------

def test_a_skipped_question_is_merged_as_skipped_and_every_later_agent_is_told():
    provider = ScriptedProvider(script=script(1))
    run = PerspectivesRun.create(QUESTION, provider, rounds=1, store=open_store())
    run.clarify()
    with pytest.raises(InputError, match="Question 3 has no answer"):
        run.answer(["Three times this month.", "", ""], skipped=[2])  # a blank one not skipped is still refused
    with pytest.raises(InputError, match="no question 4 to skip"):
        run.answer(["a", "b", "c"], skipped=[4])
    run.answer(["Three times this month.", "typed, then skipped", "Trust, not a fight."], skipped=[2])
    session = run.run()
    assert session.state == "COMPLETE" and session.skipped_questions == [2]
    assert session.clarification_answers.splitlines() == ["1. Three times this month.", f"2. {SKIPPED}",
                                                           "3. Trust, not a fight."]
    for agent in ("A", "B", "synthesis"):
        [request] = provider.requests_for(f"perspectives-{agent}")
        assert "2. (skipped: the person chose not to answer" in prompt_of(request)
        assert "typed, then skipped" not in prompt_of(request)
    assert load(open_store(), session.session_id).skipped_questions == [2]
    assert session.file()["skipped_questions"] == [2]


def test_every_question_skipped_goes_on_but_blank_answers_alone_never_do():
    run = PerspectivesRun.create(QUESTION, ScriptedProvider(script=script(1)), rounds=1, store=open_store())
    run.clarify()
    with pytest.raises(InvalidTransition, match="answered or skipped"):
        run.answer(["", "", ""])
    run.answer(["", "", ""], skipped=[1, 2, 3])
    assert run.run().state == "COMPLETE"
    assert run.session.clarification_answers.count(SKIPPED) == 3


def test_the_command_skips_an_empty_answer_and_a_skip_and_goes_on(tmp_path, capsys):
    spec = script_file(tmp_path, "s.json", **script(1))
    out = tmp_path / "session.json"
    code, _, err = run_cli(capsys, "perspectives", QUESTION, "--rounds", "1", "--provider", spec, "--out", str(out),
                           "--answer", "Three times this month.", "--answer", "", "--answer", "Trust.")
    assert code == 0, err
    done = json.loads(out.read_text(encoding="utf-8"))
    assert done["state"] == "COMPLETE" and done["skipped_questions"] == [2]
    assert f"2. {SKIPPED}" in done["merged_user_prompt"]

    code, _, err = run_cli(capsys, "perspectives", QUESTION, "--rounds", "1", "--provider", spec,
                           "--answer", "only one")
    assert code == 2 and "3 clarifying questions and 1 --answer" in err
    pending = open_store().list(kind="perspectives").items[0].id
    code, _, err = run_cli(capsys, "perspectives", "--session", pending, "--provider", spec, "--skip", "3")
    assert code == 2 and "Questions 1, 2 have no answer" in err
    rest = script(1)
    del rest["perspectives-clarifier"]
    spec2 = script_file(tmp_path, "rest.json", **rest)
    code, stdout, err = run_cli(capsys, "perspectives", "--session", pending, "--provider", spec2, "--skip", "3",
                                "--answers", ANSWERS, "--out", str(out))
    assert code == 0 and "== Synthesis ==" in stdout, err
    done = json.loads(out.read_text(encoding="utf-8"))
    assert done["skipped_questions"] == [3] and done["clarification_answers"].endswith(f"3. {SKIPPED}")


# --- what the perspectives and the synthesis wrote ----------------------------------------------------------------

def answered(run: PerspectivesRun):
    run.clarify()
    run.answer(ANSWERS)
    return run.run()


def test_a_label_among_the_conclusions_is_dropped():
    reply = synthesis_reply()
    reply["conclusions"] = [LABEL, *reply["conclusions"]]
    run, provider = mortgage_run([SPECIFIC], synthesis=[reply])
    session = answered(run)
    assert session.synthesis["conclusions"] == synthesis_reply()["conclusions"]
    [item] = session.quality["SYNTHESIS"].items
    assert (item.check, item.action, item.text, item.path) == ("junk", "dropped", LABEL, "conclusions/0")
    assert session.checked("flagged") == []


def test_a_label_that_stays_on_every_attempt_is_kept_and_flagged_not_failed():
    reply = synthesis_reply()
    reply["conclusions"] = [LABEL, SOUP]
    run, provider = mortgage_run([SPECIFIC], synthesis=[reply, reply], retries=1)
    session = answered(run)
    assert session.state == "COMPLETE" and session.synthesis["conclusions"] == [LABEL, SOUP]
    assert len(provider.requests_for("perspectives-synthesis")) == 2
    flagged = session.checked("flagged")
    assert [(step, item.path, item.text) for step, item in flagged] == [("SYNTHESIS", "conclusions/0", LABEL),
                                                                         ("SYNTHESIS", "conclusions/1", SOUP)]
    assert "capital letters" in flagged[0][1].message


def test_a_label_in_place_of_a_sentence_is_asked_again():
    bad = synthesis_reply()
    bad["debate_evolution"] = "Disciplinary democracy 2018-2023 (S.A.)"
    run, provider = mortgage_run([SPECIFIC], synthesis=[bad, synthesis_reply()])
    session = answered(run)
    assert session.synthesis == synthesis_reply()
    first, again = provider.requests_for("perspectives-synthesis")
    assert "debate evolution is a label, not a sentence" in prompt_of(again)
    assert [i.action for i in session.quality["SYNTHESIS"].items] == ["reasked"]


@pytest.mark.parametrize("text", ["Privacy was crossed repeatedly", "The reason is not yet known",
                                  "Trust matters most to you both"])
def test_plain_conclusions_pass(text):
    assert text_problem(text, "sentence") is None


def test_a_record_item_without_text_saves_and_loads():
    steps = compression_reply("B1")
    steps["next_steps"].append(dict(steps["next_steps"][0]))  # an exact repeat of a step: dropped, with no text
    run, _ = mortgage_run([SPECIFIC], B=[steps])
    session = answered(run)
    [item] = session.quality["ROUND_1_B"].items
    assert item.check == "exact_repeat" and item.text is None
    assert load(open_store(), session.session_id).quality == session.quality


def test_a_cut_sentence_is_ended_at_its_last_whole_clause_and_a_cut_fragment_is_dropped():
    """Cut text reaches no reader of a session either: a summary cut mid-phrase ends at its last whole sentence,
    a conclusion that is only a fragment goes, and codes in a next step go (the debates' checks, on this mode)."""
    reply = synthesis_reply()
    whole = reply["debate_evolution"].rstrip(".") + "."
    reply["debate_evolution"] = whole + " It's not just about saving a"
    reply["conclusions"] = [*reply["conclusions"], "It's not just about saving a"]
    reply["next_steps"] = [*reply["next_steps"], "P1 C2 D3 E4 F5 G6 H7 I8 J9 KI"]
    run, provider = mortgage_run([SPECIFIC], synthesis=[reply])
    session = answered(run)
    assert session.synthesis["debate_evolution"] == whole
    assert session.synthesis["conclusions"] == synthesis_reply()["conclusions"]
    assert session.synthesis["next_steps"] == synthesis_reply()["next_steps"]
    found = sorted((i.check, i.path, i.action) for i in session.quality["SYNTHESIS"].items)
    assert found == [("code_soup", f"next_steps/{len(reply['next_steps']) - 1}", "dropped"),
                     ("cut_sentence", f"conclusions/{len(reply['conclusions']) - 1}", "dropped"),
                     ("cut_sentence", "debate_evolution", "replaced")]
    assert len(provider.requests_for("perspectives-synthesis")) == 1 and session.checked("flagged") == []


def test_a_single_text_of_codes_is_asked_again():
    bad = compression_reply("B1")
    bad["best_interpretation"] = "C1 C2 D3 E4 and P1 Q2 R3"
    run, provider = mortgage_run([SPECIFIC], B=[bad, compression_reply("B1")])
    session = answered(run)
    first, again = provider.requests_for("perspectives-B")
    assert "best interpretation is a run of codes" in prompt_of(again)
    assert [(i.check, i.action) for i in session.quality["ROUND_1_B"].items] == [("code_soup", "reasked")]
