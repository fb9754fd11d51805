"""The understanding check's core: answers and their rules, matching on real wording against the flagship debate,
a debate's summary, the gains across debates on synthetic answers with known figures, the CSV (formula-safe)."""

from __future__ import annotations

import csv
import io

import pytest

from clearside.errors import InputError
from clearside.quality import understanding
from clearside.quality.references import flagship
from clearside.quality.understanding import answers, report
from clearside.quality.understanding.match import match
from clearside.store import NewDebate, Store

FOR_READER = ["Data centres use huge amounts of electricity and water",
              "Laws cannot keep up with how fast AI is moving"]
AGAINST_READER = ["Pauses tend to become permanent", "Regulation can evolve alongside the technology"]


# -- answers ---------------------------------------------------------------------------------------------------

def test_reasons_are_one_a_line_with_bullets_blanks_and_repeats_dropped():
    made = understanding.answer("before", "- cheaper power\n\n* cheaper power\n2. jobs\n  • \u202emore tax  \n",
                                None, lean_value="leaning for", confidence_value="60%")
    assert made.reasons_for == ["cheaper power", "jobs", "more tax"]
    assert (made.lean, made.confidence, made.reasons_against) == (1, 60, [])


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"reasons_for": "x" * 301}, "Reason 1 for is 301 characters long; the limit is 300. Shorten it by 1 character"),
    ({"reasons_against": "\n".join(f"reason {i}" for i in range(16))}, "You wrote 16 reasons against; the limit is 15"),
    ({}, "The answer is empty"),
    ({"reasons_for": " \n - \n"}, "The answer is empty"),
    ({"lean_value": 3}, "The lean must be a whole number from -2 (strongly against) to 2"),
    ({"lean_value": "sure"}, "The lean must be"),
    ({"confidence_value": 101}, "The confidence must be a whole number from 0 to 100"),
    ({"confidence_value": True}, "The confidence must be"),
    ({"reasons_for": "x\n" * 20_001}, "the limit is 20,000"),
])
def test_bad_answers_are_refused_with_the_fix_named(kwargs, says):
    with pytest.raises(InputError, match=says.replace("(", r"\(").replace(")", r"\)")):
        understanding.answer("after", **kwargs)


def test_an_unknown_stage_is_refused():
    with pytest.raises(InputError, match="before, after, retest"):
        understanding.answer("during", "a reason")


def test_lean_words_and_numbers():
    assert [answers.lean(v) for v in ("strongly against", "against", "undecided", "for", "strongly-for", "-2", 2,
                                      None, "")] == [-2, -1, 0, 1, 2, -2, 2, None, None]


# -- matching (MiniLM, offline) -------------------------------------------------------------------------------

def test_a_readers_own_words_match_the_flagship_arguments_on_their_side():
    doc = flagship().document
    found = match(understanding.answer("after", [*FOR_READER, "I like pizza"], AGAINST_READER), doc)
    assert [m["reason"] for m in found["for"]] == FOR_READER
    assert [m["argument"] for m in found["for"]] == [doc["pro"]["arguments"][7]["claim"],
                                                      doc["pro"]["arguments"][0]["claim"]]
    assert [m["reason"] for m in found["against"]] == AGAINST_READER
    assert found["unmatched"] == ["I like pizza"]


def test_a_reason_on_the_wrong_side_is_not_counted_for_that_side():
    swapped = understanding.answer("after", AGAINST_READER[:1], FOR_READER[1:])
    found = match(swapped, flagship().document)
    assert found["for"] == [] and found["against"] == []
    assert found["unmatched"] == [*AGAINST_READER[:1], *FOR_READER[1:]]


def test_hinges_are_named_by_a_reason_close_to_them():
    found = match(understanding.answer("after", ["Once deployed, harms from AI may be irreversible"],
                                       ["Can regulation keep pace with AI without a pause?"]), flagship().document)
    assert found["hinges"] == ["Can AI governance demonstrably keep pace without pauses?",
                               "Are AI-driven harms reversible after large-scale deployment?"]
    assert match(understanding.answer("after", ["I like pizza"]), flagship().document)["hinges"] == []


# -- records, summary, gains -------------------------------------------------------------------------------------

@pytest.fixture
def store(tmp_path):
    made = Store(f"sqlite:///{tmp_path / 'u.db'}")
    yield made
    made.close()


def finished(store: Store) -> str:
    doc = flagship().document
    return store.create(NewDebate("static", doc["proposition"]["normalized_question"], provider="scripted",
                                  model="m", document=doc, status="done"))


def test_summary_counts_each_stage_in_words_never_a_grade(store):
    debate = finished(store)
    report.record(store, debate, understanding.answer("before", FOR_READER[:1], None, lean_value=1))
    report.record(store, debate, understanding.answer("after", FOR_READER, AGAINST_READER, confidence_value=70))
    summary = understanding.summary(store, debate)
    assert summary["sentence"] == ("Reasons you named for: 1 before, 2 after; against: 0 before, 2 after; "
                                   "hinges you named: 0 before, 1 after.")
    assert summary["hinges_named"] == ["Can AI governance demonstrably keep pace without pauses?"]
    assert summary["leans"] == {"before": "leaning for"}
    assert not any(word in str(summary).lower() for word in ("score", "grade", "correct", "wrong"))


def test_after_needs_a_finished_debate_and_before_does_not(store):
    running = store.create(NewDebate("static", "Should cities ban cars?", provider="scripted", model="m"))
    report.record(store, running, understanding.answer("before", "less noise"))
    assert store.answers(running)[0].match is None  # matched once the debate has its document
    with pytest.raises(InputError, match="not finished"):
        report.record(store, running, understanding.answer("after", "less noise"))


def test_a_before_answer_is_matched_once_the_debate_finishes(store):
    debate = store.create(NewDebate("static", "Q?", provider="scripted", model="m"))
    report.record(store, debate, understanding.answer("before", FOR_READER))
    store.update(debate, document=flagship().document, status="done")
    assert understanding.summary(store, debate)["stages"]["before"]["named_for"] == 2
    assert store.answers(debate)[0].match["version"] == "1"  # kept: not matched again next time


def synthetic(store: Store, before_after: list[tuple[list[str], list[str]]]) -> None:
    for before, after in before_after:
        debate = finished(store)
        report.record(store, debate, understanding.answer("before", before, None, confidence_value=50))
        report.record(store, debate, understanding.answer("after", after, None, confidence_value=80))


def test_gains_across_debates_have_the_known_mean_interval_and_n(store):
    # named for: 0 -> 2, 1 -> 2, 2 -> 2: gains 2, 1, 0, mean 1; confidence +30 every time
    synthetic(store, [(["I like pizza"], FOR_READER), (FOR_READER[:1], FOR_READER), (FOR_READER, FOR_READER)])
    result = understanding.gains(store)
    after = result["comparisons"]["after-before"]
    assert (result["debates"], result["answers"]) == (3, 6)
    assert after["named_for"]["n"] == 3 and after["named_for"]["mean"] == 1.0
    assert 0.0 <= after["named_for"]["ci_low"] < 1.0 < after["named_for"]["ci_high"] <= 2.0
    assert after["named_against"] == {"label": "reasons named against", "n": 3, "mean": 0.0, "ci_low": 0.0,
                                      "ci_high": 0.0}
    assert after["confidence"]["mean"] == 30.0 and after["confidence"]["ci_low"] == 30.0
    assert result["comparisons"]["retest-before"]["named_for"]["n"] == 0


def test_the_latest_answer_of_a_stage_counts_and_one_debate_has_no_interval(store):
    debate = finished(store)
    for stage, reasons in (("before", []), ("after", FOR_READER[:1]), ("retest", FOR_READER[:1]),
                           ("retest", FOR_READER)):
        report.record(store, debate, understanding.answer(stage, reasons, None, lean_value=0))
    retest = understanding.gains(store)["comparisons"]["retest-before"]["named_for"]
    assert (retest["n"], retest["mean"], retest["ci_low"]) == (1, 2.0, None)


def test_gains_are_one_owners_when_asked(store):
    debate = finished(store)
    mine, theirs = "a" * 32, "b" * 32
    report.record(store, debate, understanding.answer("before", [], None, lean_value=0), owner=mine)
    report.record(store, debate, understanding.answer("after", FOR_READER, None), owner=mine)
    report.record(store, debate, understanding.answer("before", FOR_READER, None), owner=theirs)
    assert understanding.gains(store, owner=mine)["comparisons"]["after-before"]["named_for"]["mean"] == 2.0
    assert understanding.gains(store, owner=theirs)["comparisons"]["after-before"]["named_for"]["n"] == 0
    assert len(understanding.csv_rows(store, owner=theirs)) == 1


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "=HYPERLINK(\"http://x\")"])
def test_csv_cells_that_a_spreadsheet_would_run_are_made_text(cell):
    assert report.safe_cell(cell) == "'" + cell
    assert report.safe_cell("a" + cell) == "a" + cell and report.safe_cell(-1) == -1


def test_csv_has_one_row_per_answer_no_owner_and_safe_cells(store):
    debate = finished(store)
    report.record(store, debate, understanding.answer("after", ["=cmd|' /C calc'!A0"], None, lean_value=-1),
                  owner="c" * 32)
    text = understanding.csv_text(understanding.csv_rows(store))
    [row] = list(csv.DictReader(io.StringIO(text)))
    assert row["reasons_for"] == "'=cmd|' /C calc'!A0" and row["lean"] == "-1" and row["stage"] == "after"
    assert "c" * 32 not in text and "owner" not in text
