"""Study mode's core: a study checked (questions, arms, the sources arm's files), the balanced draw, a participant's
steps in order with the understanding check's limits, the statistics on synthetic data with known answers (gains,
the between-arm difference, d, the participants an effect needs), results and CSV for the creator only."""

from __future__ import annotations

import csv
import io
import random
from collections import Counter

import pytest
import study_kit

from clearside.errors import InputError, NotFound
from clearside.quality import study
from clearside.quality.study.assign import key_of, new_token

FOR = ["Data centres use huge amounts of electricity and water", "Laws cannot keep up with how fast AI is moving"]
AGAINST = ["Pauses tend to become permanent", "Regulation can evolve alongside the technology"]
MINE, THEIRS = "a" * 32, "b" * 32


# -- a study checked ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("arms", "says"), [
    (["debate"], "choose at least two"),
    (["debate", "debate"], "choose at least two"),
    (["debate", "chat"], "Unknown arm 'chat'"),
    ("debate single", None),
])
def test_arms_are_two_or_three_known_ones(arms, says):
    if says is None:
        assert study.spec.arms_of(arms) == ["debate", "single"]
        return
    with pytest.raises(InputError, match=says):
        study.spec.arms_of(arms)


def test_questions_are_checked_and_limited():
    with pytest.raises(InputError, match="at least one question"):
        study.plan("T", [], ["debate", "single"])
    with pytest.raises(InputError, match="at most 10 questions"):
        study.plan("T", [f"question {n}?" for n in range(11)], ["debate", "single"])
    with pytest.raises(InputError, match="Question 2 repeats"):
        study.plan("T", ["Is it so?", "is it so?"], ["debate", "single"])
    with pytest.raises(InputError, match="Question 1 is 501 characters long"):
        study.plan("T", ["x" * 501], ["debate", "single"])
    with pytest.raises(InputError, match="title is empty"):
        study.plan("  ", ["Is it so?"], ["debate", "single"])


def test_a_sources_arm_needs_files_for_every_question_and_files_need_that_arm():
    with pytest.raises(InputError, match="question 2 has none"):
        study.plan("T", ["Is it so?", "Or not?"], ["debate", "sources"], {1: [("a.txt", b"some text")]})
    with pytest.raises(InputError, match="only in the 'sources' arm"):
        study.plan("T", ["Is it so?"], ["debate", "single"], {1: [("a.txt", b"some text")]})
    with pytest.raises(InputError, match="a.exe"):
        study.plan("T", ["Is it so?"], ["debate", "sources"], {1: [("a.exe", b"MZ\x00\x00")]})
    made = study.plan("T", ["Is it so?"], ["sources", "debate"], {1: [("a.txt", b"some text")]})
    assert made.arms == ["debate", "sources"] and made.sources[1][0].text == "some text"


def test_a_study_file_is_read_strictly_with_sources_beside_it(tmp_path):
    (tmp_path / "notes.txt").write_text("Pauses tend to become permanent.", encoding="utf-8")
    path = tmp_path / "study.json"
    path.write_text('{"title": "T", "arms": ["debate", "sources"], "questions": '
                    '[{"question": "Is it so?", "sources": ["notes.txt"]}]}', encoding="utf-8")
    assert study.from_file(str(path)).sources[1][0].name == "notes.txt"
    path.write_text('{"title": "T", "questions": ["Is it so?"], "arm": ["debate"]}', encoding="utf-8")
    with pytest.raises(InputError, match="unknown key 'arm'"):
        study.from_file(str(path))


# -- the balanced draw --------------------------------------------------------------------------------------------

def test_the_draw_keeps_arms_within_one_and_questions_balanced_inside_each_arm():
    rng = random.Random(3)
    counts = {(q, arm): 0 for q in (1, 2) for arm in ("debate", "single", "sources")}
    for joined in range(1, 61):
        counts[study.pick(counts, rng)] += 1
        arms = Counter()
        for (_, arm), n in counts.items():
            arms[arm] += n
        assert max(arms.values()) - min(arms.values()) <= 1, (joined, counts)
    assert set(counts.values()) == {10}


def test_the_draw_breaks_ties_at_random():
    firsts = {study.pick({(1, "debate"): 0, (1, "single"): 0}, random.Random(seed)) for seed in range(20)}
    assert firsts == {(1, "debate"), (1, "single")}


# -- statistics with known answers ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("d", "normal", "t"), [(0.5, 63, 64), (0.8, 25, 26), (0.2, 393, 394), (-0.5, 63, 64)])
def test_participants_per_arm_match_the_known_values(d, normal, t):
    found = study.per_arm(d)
    assert (found["normal"], found["t"]) == (normal, t)


def test_stricter_alpha_or_more_power_needs_more_people_and_nonsense_is_refused():
    assert study.per_arm(0.5, alpha=0.01)["normal"] > 63 and study.per_arm(0.5, power=0.9)["normal"] > 63
    for bad in (0, float("nan")):
        with pytest.raises(ValueError, match="other than 0"):
            study.per_arm(bad)
    with pytest.raises(ValueError, match="between 0 and 1"):
        study.per_arm(0.5, power=1.5)


def test_the_between_arm_difference_its_interval_and_d():
    found = study.difference([4, 2], [1, 0])
    assert found["diff"] == -2.5 and found["d"] == pytest.approx(-2.236, abs=1e-3)
    assert found["ci_low"] == -4.0 and found["ci_high"] == -1.0
    far = study.difference([0.0] * 30 + [1.0] * 30, [2.0] * 30 + [3.0] * 30)
    assert 1.8 < far["ci_low"] < 2 < far["ci_high"] < 2.2 and far["diff"] == 2.0
    assert study.difference([1], [])["diff"] is None and study.difference([1], [2])["ci_low"] is None
    assert study.cohen_d([1, 1], [1, 1]) is None


# -- participants and results -------------------------------------------------------------------------------------

def enrol(store, made, arm: str) -> str:
    token = new_token()
    store.join_study(made.id, made.join_key, key_of(token), lambda counts: (1, arm))
    return token


def test_results_on_synthetic_answers_with_known_gains(store):
    made = study_kit.ready(store, owner=MINE)
    for arm, reasons_for, reasons_against in (("debate", FOR, AGAINST), ("debate", FOR, []),
                                              ("sources", FOR[:1], []), ("sources", [], [])):
        token = enrol(store, made, arm)
        study.answer(store, made.id, token, "before", lean=0)
        study.answer(store, made.id, token, "after", reasons_for, reasons_against, lean=1)
    found = study.results(store, made.id, owner=MINE)
    debate, sources = (found["arms"][a]["gains"]["after-before"]["named_total"] for a in ("debate", "sources"))
    assert (debate["mean"], debate["n"], sources["mean"], sources["n"]) == (3.0, 2, 0.5, 2)
    assert found["arms"]["debate"]["gains"]["after-before"]["named_for"]["mean"] == 2.0
    assert found["arms"]["debate"]["gains"]["retest-before"]["named_total"]["n"] == 0
    total = next(d for d in found["differences"] if d["measure"] == "named_total" and d["comparison"] == "after-before")
    assert (total["diff"], total["n_a"], total["n_b"]) == (-2.5, 2, 2) and total["per_arm_needed"] == 5
    assert found["participants"] == 4 and found["arms"]["sources"]["answered"] == {"before": 2, "after": 2,
                                                                                     "retest": 0}


def test_results_status_and_csv_are_refused_to_anyone_but_the_creator(store):
    made = study_kit.ready(store, owner=MINE)
    token = enrol(store, made, "debate")
    study.answer(store, made.id, token, "before", ["=HYPERLINK(\"http://x\")"])
    for other in (THEIRS, None):
        with pytest.raises(InputError, match="visible only to the browser that created it") as refused:
            study.results(store, made.id, owner=other)
        assert "HYPERLINK" not in str(refused.value)
        with pytest.raises(InputError, match="visible only"):
            study.csv_rows(store, made.id, owner=other)
    rows = list(csv.DictReader(io.StringIO(study.csv_text(study.csv_rows(store, made.id, owner=MINE)))))
    assert rows[0]["reasons_for"] == "'=HYPERLINK(\"http://x\")" and rows[0]["participant"] == "1"
    text = study.csv_text(study.csv_rows(store, made.id))  # the command line's: the whole store
    assert token not in text and key_of(token) not in text


def test_a_participant_goes_before_after_retest_in_order_once_each(store):
    made = study_kit.ready(store)
    token = enrol(store, made, "sources")
    assert study.where(store, made.id, token)["step"] == "before"
    with pytest.raises(InputError, match="'after' comes after 'before'"):
        study.answer(store, made.id, token, "after", FOR)
    study.answer(store, made.id, token, "before", FOR[:1])
    with pytest.raises(InputError, match="already answered 'before'"):
        study.answer(store, made.id, token, "before", FOR)
    assert study.where(store, made.id, token)["step"] == "after"
    assert study.material(store, made.id, 1, "sources")["sources"][0]["text"].startswith("Data centres")
    assert study.material(store, made.id, 1, "debate")["document"]["pro"]["arguments"]
    study.answer(store, made.id, token, "after", FOR)
    study.answer(store, made.id, token, "retest", FOR[:1], confidence="70")
    where = study.where(store, made.id, token)
    assert where["step"] == "done" and list(where["answered"]) == ["before", "after", "retest"]


def test_answers_keep_the_understanding_checks_limits_and_nothing_is_saved_when_refused(store):
    made = study_kit.ready(store)
    token = enrol(store, made, "debate")
    for bad, says in (({"reasons_for": "x" * 301}, "Reason 1 for is 301 characters"),
                      ({"reasons_for": "\n".join(f"r{i}" for i in range(16))}, "You wrote 16 reasons for"),
                      ({}, "The answer is empty"), ({"lean": 7}, "The lean must be")):
        with pytest.raises(InputError, match=says):
            study.answer(store, made.id, token, "before", bad.get("reasons_for"), lean=bad.get("lean"))
    assert store.participant_answers(key_of(token)) == {}


def test_links_that_do_not_fit_are_refused(store):
    made = study_kit.ready(store)
    other = study_kit.ready(store)
    token = enrol(store, made, "debate")
    with pytest.raises(NotFound, match="No participant of this study has this link"):
        study.where(store, other.id, token)
    with pytest.raises(NotFound, match="No participant of this study has this link"):
        study.where(store, made.id, "'; drop table studies; --")
    with pytest.raises(NotFound, match="participant link is not valid"):
        study.join(store, made.id, other.join_key)


def test_nobody_joins_before_the_documents_are_made(store):
    made = study.create(store, study_kit.plan(("debate", "single")), owner=MINE)
    assert [i["status"] for i in study.status(store, made.id)["items"]] == ["not started", "not started"]
    with pytest.raises(InputError, match="still being prepared"):
        study.join(store, made.id, made.join_key)
    assert store.participants(made.id) == []


def test_documents_are_made_once_on_the_runtime_and_a_failed_one_is_continued(store):
    from helpers import QUESTION, orchestrator_reply, scripted_debate, single_reply

    from clearside.cli import here
    from clearside.providers.scripted import ScriptedProvider

    made = study.create(store, study.plan("T", [QUESTION], ["debate", "single"]), owner=MINE, provider="scripted")
    provider = ScriptedProvider()
    scripted_debate(provider)  # the debate's replies, and the single pass's proposition but not its one call:
    provider.enqueue(orchestrator_reply(), agent="orchestrator")  # it fails (the two jobs run at once)
    with here.hosting(store.url):
        for job_id in study.queue(store, made.id, provider, here=True):
            here.follow(job_id, None, store_url=store.url)
        found = {i["arm"]: i["status"] for i in study.status(store, made.id)["items"]}
        assert found == {"debate": "ready", "single": "failed"}
        debate_id = store.study_items(made.id)[0].debate_id
        provider.enqueue(single_reply(), agent="single")
        for job_id in study.queue(store, made.id, provider, here=True):
            here.follow(job_id, None, store_url=store.url)
    assert study.status(store, made.id)["ready"] and store.study_items(made.id)[0].debate_id == debate_id
    assert len(store.list().items) == 2, "each document is made once: the failed one continued, not made anew"
