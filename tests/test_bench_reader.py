"""bench/reader.py: the reader's measures on real wording readers found (quoted in the bug report), the re-ask
usage read from the probe's events, persona outcomes, its REPORT.md section, and one command-line debate end to end
through the probe on the scripted provider (no model)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from bench import reader, reader_report, reader_runs, reader_text, run_all
from tests.helpers import QUESTION, moderator_reply, orchestrator_reply, script_file, side_reply

CUT = [  # real output: strings that ended where the decoding's length cap ended them
    "... must take a step towards protecting the.",
    "... which includes ensuring that all data,",
    "It's not just about saving a",
]
SOUP = [  # real output: a synthesis made of letter-digit codes and date soup
    "P1 C2 D3 E4 F5 G6 H7 I8 J9 KI",
    "C1 C2 D3 E4",
    "SELF-CLAIMING - 2019/3/7/48.56:43.37.2019-3,15.45; SEPTEMBER 2019 / ...",
    "C1-D2A4B3E05",
]
FLAGSHIP = Path(reader.REFERENCES[0])


@pytest.mark.parametrize("text", CUT)
def test_a_string_cut_mid_phrase_is_counted(text):
    assert reader_text.cut_mid_phrase(text)
    assert reader_text.cut_reason(text, "label") == "dangling"  # no string may end on "the", "a" or ","


def test_a_demonstrative_ending_a_sentence_is_a_pronoun_not_a_dangling_word():
    assert reader_text.cut_reason("You're not sure about what you are doing. You should know better than this.") == ""
    assert reader_text.cut_reason("The city must take a step towards protecting the.") == "dangling"


def test_have_ending_a_clause_is_a_main_verb_unless_a_modal_or_to_stands_before_it():
    said = "It's not just the price you pay for your car but also how much money you have."
    assert reader_text.cut_reason(said) == ""
    assert reader_text.cut_reason("The city will have.") == "dangling"
    assert reader_text.cut_reason("Owners would need to have.") == "dangling"


def test_a_hyphenated_compound_is_no_dangling_word():
    assert reader_text.cut_reason("The case is not a matter of personal freedom or economic well-being.") == ""
    assert reader_text.cut_reason("Care for others and for our own well being.") == "dangling"  # "being" alone


@pytest.mark.parametrize("text", SOUP)
def test_codes_and_date_soup_are_counted(text):
    assert reader_text.code_soup(text)


@pytest.mark.parametrize("text", ["Cut CO2 emissions by 40% by 2030.", "COVID-19 cost 1.2 million jobs in 2020.",
                                  "Costs rose 5% in 2021 and 7% in 2022.", "Oversight falls behind and weighs in."])
def test_sentences_with_numbers_or_a_closing_particle_are_not(text):
    assert not reader_text.code_soup(text) and not reader_text.cut_mid_phrase(text)


def test_the_reference_documents_have_nothing_a_reader_would_call_cut_or_soup():
    for path in reader.REFERENCES:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert reader_text.reader_problems(data.get("document", data)) == {"cut_mid_phrase": [], "code_soup": []}


def test_items_shown_and_the_problems_are_counted_by_item():
    document = json.loads(FLAGSHIP.read_text(encoding="utf-8"))["document"]
    clean = reader_text.items_shown(document)
    assert clean == {"proposition": 1, "pro": 25, "con": 25, "moderator": 19}  # the flagship, counted by hand
    broken = copy.deepcopy(document)
    broken["pro"]["arguments"][1]["claim"] = CUT[0]
    broken["pro"]["arguments"][1]["explanation"] = CUT[1]  # the same argument: one item
    broken["moderator"]["core_disagreements"][0]["description"] = SOUP[0]
    score = reader_runs.score(broken, [], [])
    assert (score["items_shown"], score["cut_mid_phrase"], score["cut_dangling"], score["code_soup"]) == (70, 1, 1, 1)


def call(agent: str, start: float, tokens: int, seconds: float) -> dict:
    return {"event": "call", "agent": agent, "start": start, "end": start + seconds, "seconds": seconds,
            "first_token_seconds": 0.1, "prompt_tokens": 500, "cached_prompt_tokens": 0, "completion_tokens": tokens}


def test_every_call_after_an_agents_first_is_a_reask():
    events = [call("orchestrator", 10.0, 50, 3.0), call("pro", 13.0, 300, 4.0), call("orchestrator", 11.0, 40, 1.5),
              call("pro", 18.0, 120, 1.25), call("pro", 20.0, 80, 1.0)]
    usage = reader_runs.usage_by_agent(events)
    assert usage["orchestrator"] == {"calls": 2, "first_tokens": 50, "first_seconds": 3.0, "reask_calls": 1,
                                     "reask_tokens": 40, "reask_seconds": 1.5}
    assert usage["pro"]["reask_calls"] == 2 and usage["pro"]["reask_tokens"] == 200
    assert usage["pro"]["reask_seconds"] == 2.25


def result(document=None, *, exit=0, timed_out=False, stderr="") -> dict:
    return {"document": document, "exit": exit, "timed_out": timed_out, "stderr_tail": stderr, "wall": 200.0}


def test_a_persona_debate_is_whole_partial_or_failed():
    case = {"persona": {"name": "Economist"}, "arguments": [], "assumptions": [], "uncertainties": []}
    side = {"arguments": [{"claim": "x"}]}
    whole = {"proposition": {"normalized_question": "x"}, "pro": side, "con": side, "personas": [case] * 3,
             "moderator": {"areas_of_agreement": ["x"]}, "meta": {}}
    assert reader.persona_outcome(result(whole)) == ("whole", "", 3)
    assert reader.persona_outcome(result({**whole, "personas": [case] * 2}))[:2] == ("partial",
                                                                                   "2 personas; missing: a persona")
    dropped = {**whole, "personas": [case] * 2, "quality": {"agents": {"persona-1": {"items": [
        {"check": "persona_dropped", "text": "ethicist"}]}}}}
    assert reader.persona_outcome(result(dropped))[:2] == ("partial", "2 personas; missing: persona 'ethicist'")
    no_synthesis = {k: v for k, v in whole.items() if k != "moderator"}
    assert reader.persona_outcome(result(no_synthesis))[:2] == (
        "partial", "3 personas; missing: the moderator's synthesis")
    assert reader.persona_outcome(result(None, exit=4, stderr="progress\nerror: persona-2 failed\n"))[:2] == \
        ("failed", "exit 4: error: persona-2 failed")
    assert reader.persona_outcome(result(whole, timed_out=True))[0] == "failed"


def test_the_section_replaces_its_own_label_and_survives_the_report_runner(tmp_path, monkeypatch):
    report = tmp_path / "REPORT.md"
    report.write_text("# ClearSide benchmark report\n\nold figures\n", encoding="utf-8")
    reader_report.write_section(report, "before", "### before\nfirst")
    reader_report.write_section(report, "after", "### after\nsecond")
    reader_report.write_section(report, "before", "### before\nagain")
    text = report.read_text(encoding="utf-8")
    assert "first" not in text and text.index("again") < text.index("second")
    assert text.count(reader_report.HEADING) == 1

    monkeypatch.setattr(run_all, "BENCHES", [])
    run_all.run([], report_path=report, json_path=tmp_path / "report.json")
    rewritten = report.read_text(encoding="utf-8")
    assert "old figures" not in rewritten and "## Machine" in rewritten
    assert rewritten.endswith(text[text.index(reader_report.KEEP):])


def test_a_command_line_debate_end_to_end_through_the_probe(tmp_path, monkeypatch):
    """The real command line in its own process on the scripted provider: the orchestrator's first reply is not
    JSON and is re-asked; the bench reads the wall time, each agent's calls, the re-ask's tokens, the quality
    record and the items, and writes its JSON and its REPORT.md block."""
    spec = script_file(tmp_path, orchestrator=["not json at all", orchestrator_reply()], pro=[side_reply("pro")],
                       con=[side_reply("con")], moderator=[moderator_reply()])
    monkeypatch.setattr(reader, "QUESTIONS", [("engineering", QUESTION)])
    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")  # no MiniLM in a unit test
    report = tmp_path / "REPORT.md"
    assert reader.main(["--label", "t", "--part", "static", "--provider", spec, "--no-calibrate", "--data",
                        str(tmp_path / "data"), "--results", str(tmp_path), "--report", str(report)]) == 0
    out = json.loads((tmp_path / "reader-t.json").read_text(encoding="utf-8"))
    [row] = out["static"]
    assert row["exit"] == 0 and row["wall"] > 0
    assert row["clearside"] == str(Path(reader.ROOT) / "clearside")  # this tree's, not an installed one
    assert {a: u["calls"] for a, u in row["usage"].items()} == {"orchestrator": 2, "pro": 1, "con": 1,
                                                                "moderator": 1}
    assert row["reask_tokens"] == row["usage"]["orchestrator"]["reask_tokens"] > 0
    assert row["reasks"]["orchestrator"] == 1
    assert row["score"]["items_shown"] == sum(reader_text.items_shown(row["document"]).values()) > 20
    parts = row["breakdown"]
    assert parts["until_first_call"] > 0 and parts["orchestrator_reasks"] >= 0
    assert parts["interpreter"] + parts["import_cli"] + parts["until_first_call"] < row["wall"]
    assert [r["what"] for r in row["timeline"]][-1] == "process ended"
    assert [r["what"] for r in row["timeline"]].count("call orchestrator") == 2
    assert "<!-- reader:t -->" in report.read_text(encoding="utf-8")


def test_a_long_sentence_without_an_end_is_cut_a_short_bullet_is_not():
    long = "Public transport gets faster when fewer cars crowd the centre's streets at rush hour, and buses keep"
    assert reader_text.cut_reason(long + " time") == "unpunctuated"
    assert reader_text.cut_reason(long + " time…") == "marked", "a string marked as cut is still counted as cut"
    assert reader_text.cut_reason("Teams can deploy and iterate faster") == ""  # the schema example's style


def test_raw_decoding_is_the_tokens_shown_times_the_calibrated_seconds_per_token(monkeypatch):
    document = json.loads(FLAGSHIP.read_text(encoding="utf-8"))["document"]
    words = lambda text: text.split()  # noqa: E731 - a stand-in tokenizer: one token a word
    monkeypatch.setattr(reader.reader_raw, "tokenizer", lambda provider: words)
    shown = sum(len(text.split()) for _, text, _ in reader_text.shown(document))
    badges = 3 * (len(document["pro"]["arguments"]) + len(document["con"]["arguments"]))
    rows = [{"wall": 30.0, "document": document}, {"wall": 9.0}]  # the second wrote no document
    reader.add_raw(rows, provider=None, calibration={"unconstrained": {"seconds_per_token": 0.01}})
    assert rows[0]["tokens_shown"] == shown + badges
    assert rows[0]["raw_seconds"] == pytest.approx((shown + badges) * 0.01)
    assert rows[0]["ratio"] == pytest.approx(30.0 / rows[0]["raw_seconds"], abs=1e-3)
    assert "ratio" not in rows[1]
