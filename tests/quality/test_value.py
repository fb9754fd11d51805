"""``value``: the same propositions as debates and as the single-pass control, two batches paired run by run, the
difference debate − single pass per metric with its interval and p, and the cost of each."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET

import pytest
from helpers import flagship_replies, run_cli, script_file, single_reply

from clearside.errors import InputError
from clearside.quality import value


def script(tmp_path, runs: int) -> str:
    """Flagship debates, and single passes whose case AGAINST keeps two of its arguments (less of the reference's
    key points): what a debate adds shows as a positive coverage difference."""
    replies = flagship_replies()
    thin = copy.deepcopy(replies["con"])
    thin["arguments"] = thin["arguments"][:2]
    one = single_reply(replies["pro"], thin, replies["moderator"], ids=False)
    return script_file(tmp_path, orchestrator=[replies["orchestrator"]] * (2 * runs),
                       **{agent: [replies[agent]] * runs for agent in ("pro", "con", "moderator")},
                       single=[one] * runs)


def test_value_pairs_the_debates_with_the_single_pass_and_says_what_each_costs(db, tmp_path, capsys):
    html, junit = tmp_path / "value.html", tmp_path / "value.xml"
    code, out, err = run_cli(capsys, "value", "--suite", "flagship", "--runs", "2", "--provider", script(tmp_path, 2),
                             "--format", "json", "--report", str(html), "--junit", str(junit))
    assert code == 0, err
    report = json.loads(out)
    assert report["title"] == value.TITLE and report["pairs"] == 2
    assert (report["a"]["role"], report["b"]["role"]) == ("single pass (the control)", "debate")
    batches = {b: db.get(row["debate_id"]).document["quality"]["strategy"]
               for b in (report["a"]["batch"], report["b"]["batch"]) for row in db.runs("flagship", batch=b)}
    assert batches == {report["a"]["batch"]: "single", report["b"]["batch"]: "whole"}
    coverage = next(m for m in report["metrics"] if m["metric"] == "coverage")
    assert coverage["diff"] > 0 and coverage["mean_b"] > coverage["mean_a"]  # debate − single pass
    assert not coverage["significant"], "two pairs can never be significant: the report must not claim it"
    assert set(report["cost"]) == {"seconds", "completion_tokens"}
    assert "The debate (B) against one pass (A)" in html.read_text(encoding="utf-8")
    assert ET.parse(junit).getroot().iter("testcase")
    assert "The single pass: flagship (1 case(s)) 2 time(s)" in err and "The debate: flagship" in err
    code, text, _ = run_cli(capsys, "value", "--suite", "flagship", "--runs", "2", "--provider", script(tmp_path, 2))
    assert code == 0 and text.startswith(f"# {value.TITLE}")
    assert "- coverage: no difference the test can tell (2 pairs, debate − single pass +" in text
    assert "## Run by run" in text and "| coverage | higher | 2 |" in text


def test_the_control_is_not_a_debate_strategy_and_a_bad_suite_is_refused_before_any_call(tmp_path, capsys):
    with pytest.raises(InputError, match="compares a debate with the single pass"):
        value.debate_strategy("single")
    assert value.debate_strategy(None) is None and value.debate_strategy("focused") == "focused"
    bad = tmp_path / "suite.yaml"
    bad.write_text("cases: [1, 2", encoding="utf-8")
    code, _, err = run_cli(capsys, "value", "--suite", str(bad), "--provider", "scripted")
    assert code == 2 and "suite.yaml" in err
