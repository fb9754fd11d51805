"""The quality record in words, per agent (``clearside.checks.summary``: the Quality checks panel and ``meta.notes``
read it), and the regression gate that keeps a batch covering none of the reference's key points from passing."""

from __future__ import annotations

from clearside.agents import AGENT_NAMES
from clearside.checks.summary import CUT_SENTENCE, agent_in_words, in_words, outcome, per_agent
from clearside.quality.batch import THRESHOLDS, check
from clearside.quality.compare_runs import run_failures
from clearside.schema import Quality, QualityItem

# real fragments the embedded model wrote: a string its length cap cut mid-phrase
CUT = "... which includes ensuring that all data,"
CUT_ENDED = "... must take a step towards protecting the."


def record() -> Quality:
    return Quality.model_validate({
        "checks_version": "1.0.0", "strategy": "whole", "semantic": True,
        "agents": {
            "moderator": {"attempts": 1, "reasks": 0, "items": [
                {"check": CUT_SENTENCE, "path": "decision_hinges/1", "action": "replaced", "text": CUT,
                 "message": "the sentence stops mid-phrase; it was ended at its last complete clause"}]},
            "pro": {"attempts": 3, "reasks": 2, "items": [
                {"check": "duplicate_claim", "path": "arguments/2/claim", "action": "dropped",
                 "message": "argument 2 makes the same point as argument 1", "text": "It's not just about saving a"},
                {"check": CUT_SENTENCE, "path": "arguments/0/explanation", "action": "replaced", "text": CUT_ENDED,
                 "message": "ended at its last complete clause"},
                {"check": "off_topic", "path": "arguments/1/claim", "action": "reasked",
                 "message": "argument 1 is not about the proposition"}]},
            "con": {"attempts": 1, "reasks": 0, "items": []},
            "orchestrator": {"attempts": 1, "reasks": 0, "items": [
                {"check": "loaded_question", "path": "normalized_question", "action": "flagged",
                 "message": "kept, marked for the reader"}]}}})


def test_a_cut_sentence_replaced_is_ended_early_any_other_replacement_is_replaced():
    item = QualityItem(check=CUT_SENTENCE, path="a", message="m", action="replaced", text=CUT)
    assert outcome(item) == "ended early"
    assert outcome(item.model_copy(update={"check": "echoed_hinge"})) == "replaced"
    assert outcome(item.model_copy(update={"action": "reasked"})) == "re-asked"
    assert outcome(item.model_copy(update={"action": "dropped"})) == "dropped"


def test_each_agent_is_counted_in_debate_order_with_its_re_asks():
    agents = {a.agent: a for a in per_agent(record(), AGENT_NAMES)}
    assert list(agents) == ["orchestrator", "pro", "con", "moderator"]
    pro = agents["pro"]
    assert (pro.dropped, pro.ended_early, pro.replaced, pro.flagged, pro.reasks) == (1, 1, 0, 0, 2)
    assert agents["moderator"].ended_early == 1 and agents["moderator"].dropped == 0
    assert agent_in_words(pro) == "1 dropped, 1 ended early, re-asked twice"
    assert agent_in_words(agents["con"]) == "nothing dropped, ended early or re-asked" and agents["con"].quiet


def test_the_record_in_one_sentence_names_each_agent_that_had_something_and_leaves_the_quiet_ones_out():
    said = in_words(record(), AGENT_NAMES)
    assert said == ("Quality checks: Orchestrator 1 flagged; FOR 1 dropped, 1 ended early, re-asked twice; "
                    "Moderator 1 ended early.")
    assert "AGAINST" not in said
    quiet = Quality(checks_version="1", strategy="whole", semantic=False)
    assert in_words(quiet) == "Quality checks: nothing dropped, ended early or re-asked."
    assert in_words(None) == ""


def test_agents_without_labels_keep_their_keys_a_persona_included():
    quality = Quality.model_validate({"checks_version": "1", "strategy": "whole", "semantic": True, "agents": {
        "persona:ethicist": {"attempts": 4, "reasks": 3, "items": []}}})
    assert in_words(quality, AGENT_NAMES) == "Quality checks: persona:ethicist re-asked 3 times."


def headline(coverage: float, n: int = 3) -> dict:
    return {"schema_valid": {"n": n, "mean": 1.0, "stdev": 0.0}, "neutrality_violations": {"n": n, "mean": 0.0,
            "stdev": 0.0}, "garbage_left": {"n": n, "mean": 0.0, "stdev": 0.0},
            "coverage": {"n": n, "mean": coverage, "stdev": 0.0}}


def test_a_batch_covering_no_key_point_fails_with_or_without_a_baseline():
    assert "above" in THRESHOLDS["coverage"]
    for baseline in (None, headline(0.0)):  # a baseline blessed at 0 does not excuse it
        rows = {r["metric"]: r for r in check(headline(0.0), baseline)}
        assert rows["coverage"]["status"] == "fail", baseline
        assert "must be above 0" in rows["coverage"]["reasons"][0]
    rows = {r["metric"]: r for r in check(headline(0.25), None)}
    assert all(r["status"] == "pass" for r in rows.values())


def test_garbage_left_in_the_document_fails_the_batch():
    current = headline(0.5) | {"garbage_left": {"n": 3, "mean": 1 / 3, "stdev": 0.47}}
    rows = {r["metric"]: r for r in check(current, None)}
    assert rows["garbage_left"]["status"] == "fail"


def test_one_run_covering_no_key_point_fails_on_its_own():
    row = {"status": "done", "metrics": {"schema_valid": 1.0, "coverage": 0.0, "garbage_left": 0.0}}
    assert run_failures(row) == ["coverage 0 must be above 0"]
    assert run_failures({**row, "metrics": {**row["metrics"], "coverage": 0.5}}) == []
