"""Suites of your own (clearside/suites.py): YAML and JSONL files of cases parsed and checked, each refusal with
its line and reason, ``suite validate``, the built-ins, and one batch of a suite file run end to end on the
scripted provider and compared run by run with ``compare-runs``."""

from __future__ import annotations

import json
import textwrap

import pytest
from helpers import flagship_script
from helpers import run_cli as run

from clearside import modes, runtime
from clearside.errors import InputError
from clearside.quality import references, suites
from clearside.quality.batch import load_suite
from clearside.store import open_store

FLAGSHIP_Q = references.flagship().proposition

GOOD_YAML = """\
name: my-suite
description: two cases of our own
cases:
  - id: pause
    proposition: Should the US pause new AI data centers?
    context: {geography: US, timeframe: next five years}
    key_points:
      pro: [The grid is strained, Water use is rising]
      con: [Competitiveness would suffer]
    decision_hinges: [Whether grid upgrades keep pace]
  - id: remote
    proposition: Should our team go fully remote?
"""


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def refusal(path) -> str:
    with pytest.raises(InputError) as caught:
        suites.load(path)
    return str(caught.value)


def test_a_yaml_suite_loads_with_its_cases_context_key_points_and_hinges(tmp_path):
    suite = suites.load(write(tmp_path, "mine.yaml", GOOD_YAML))
    assert suite.name == "my-suite" and suite.description == "two cases of our own" and not suite.builtin
    pause, remote = suite.cases
    assert pause.context_fields() == {"geography": "US", "timeframe": "next five years"}
    ref = pause.scoring_reference()
    assert ref.name == "pause" and ref.key_points["con"] == ["Competitiveness would suffer"]
    assert ref.decision_hinges == ["Whether grid upgrades keep pace"]
    assert remote.scoring_reference() is None and remote.context_fields() == {}  # debated, coverage not scored
    assert suite.summary() == {"name": "my-suite", "source": str(tmp_path / "mine.yaml"), "cases": 2,
                               "ids": ["pause", "remote"], "with_key_points": 1, "with_reference": 0,
                               "with_context": 1, "with_hinges": 1, "scored_for_coverage": 1}


def test_a_jsonl_suite_and_a_reference_debate_inline_or_by_path(tmp_path):
    doc = references.flagship().document
    (tmp_path / "flagship-debate.json").write_text(json.dumps(doc), encoding="utf-8")
    lines = [json.dumps({"id": "flag", "proposition": FLAGSHIP_Q, "reference": doc}), "",
             json.dumps({"id": "second", "proposition": "Build or buy our feature-flag service?"})]
    suite = suites.load(write(tmp_path, "ours.jsonl", "\n".join(lines) + "\n"))
    assert suite.name == "ours" and [c.id for c in suite.cases] == ["flag", "second"]
    ref = suite.cases[0].scoring_reference()  # no key points: the reference debate's claims become them
    assert ref.key_points["pro"] == [a["claim"] for a in doc["pro"]["arguments"]] and ref.document == doc
    by_path = suites.load(write(tmp_path, "p.yaml", f"""\
        - id: flag
          proposition: {json.dumps(FLAGSHIP_Q)}
          reference: flagship-debate.json
        """))
    assert by_path.name == "p" and by_path.cases[0].reference == doc


def test_the_built_ins_are_suites_whose_references_are_unchanged():
    flagship = load_suite("flagship")
    assert flagship.builtin and flagship.cases[0].scoring_reference() == references.flagship()
    argkp = load_suite("argkp-dev")
    assert [c.scoring_reference() for c in argkp.cases] == list(references.argkp_dev())
    with pytest.raises(InputError, match="Unknown suite 'nope': use one of flagship, argkp-dev or a suite file"):
        load_suite("nope")


@pytest.mark.parametrize(("name", "text", "where", "reason"), [
    ("syntax.yaml", "cases:\n  - id: a\n    proposition: [unclosed\n", "line 4", "not valid YAML"),
    ("missing.yaml", "cases:\n  - id: a\n    proposition: Should we?\n  - id: b\n    title: no proposition\n",
     "line 4", "case 'b': proposition: missing: every case needs it"),
    ("unknown.yaml", "cases:\n  - id: a\n    proposition: Should we?\n    colour: blue\n", "line 4",
     "case 'a': colour: unknown field"),
    ("points.yaml", "cases:\n  - id: a\n    proposition: Should we?\n    key_points:\n      pro: []\n"
     "      con: [x]\n", "line 5", "case 'a': key_points.pro: List should have at least 1 item"),
    ("blank.yaml", "cases:\n  - id: a\n    proposition: Should we?\n    key_points:\n      pro: [x]\n"
     "      con: ['  ']\n", "line 6", "key_points.con: a key point is blank"),
    ("dup.yaml", "cases:\n  - id: a\n    proposition: Should we?\n  - id: a\n    proposition: Or not?\n",
     "line 4", "the id 'a' is already used on line 2: give each case its own id"),
    ("id.yaml", "cases:\n  - id: has space\n    proposition: Should we?\n", "line 2",
     "id: use letters, digits"),
    ("number.yaml", "cases:\n  - id: 2024\n    proposition: Should we?\n", "line 2",
     "quote a value that looks like a number"),
    ("context.yaml", "cases:\n  - id: a\n    proposition: Should we?\n    context:\n      planet: Mars\n",
     "line 5", "context.planet: unknown field"),
    ("hinges.yaml", "cases:\n  - id: a\n    proposition: Should we?\n    decision_hinges: [x]\n", "line 2",
     "decision_hinges are scored with key points"),
    ("ref.yaml", "cases:\n  - id: a\n    proposition: Should we?\n    reference:\n      proposition: nope\n",
     "line 5", "reference: Not a valid ClearSide v1 document"),
    ("reffile.yaml", "cases:\n  - id: a\n    proposition: Should we?\n    reference: gone.json\n", "line 4",
     "reference: no file"),
    ("blankq.yaml", "cases:\n  - id: a\n    proposition: '   '\n", "line 3", "The proposition is empty"),
    ("top.yaml", "name: x\ntests: []\ncases: []\n", "line 2", "unknown top-level key 'tests'"),
    ("nocases.yaml", "name: x\n", "line 1", "no `cases:`"),
    ("notlist.yaml", "cases:\n  id: a\n", "line 2", "cases must be a list"),
    ("scalar.yaml", "cases:\n  - just text\n", "line 2", "a case must be a mapping"),
    ("bad.jsonl", '{"id": "a", "proposition": "Should we?"}\n\n{"id": "b", "proposition": \n', "line 3",
     "not valid JSON"),
    ("type.jsonl", '{"id": "a", "proposition": 3}\n', "line 1", "case 'a': proposition: Input should be a valid "
                                                                "string;"),
])
def test_a_malformed_suite_is_refused_with_the_line_and_the_reason(tmp_path, name, text, where, reason):
    message = refusal(write(tmp_path, name, text))
    assert f"{tmp_path / name} {where}: " in message and reason in message, message
    assert f"check again with `python -m clearside suite validate {tmp_path / name}`" in message


def test_whole_file_refusals_name_the_fix(tmp_path):
    assert "it is empty" in refusal(write(tmp_path, "empty.yaml", ""))
    assert "it has no cases" in refusal(write(tmp_path, "none.yaml", "cases: []\n"))
    assert "No suite file" in refusal(tmp_path / "absent.yaml")
    assert "name it .yaml, .yml or .jsonl" in refusal(write(tmp_path, "cases.txt", "x"))
    assert "is a built-in suite's; give the suite a name of its own" in refusal(
        write(tmp_path, "f.yaml", "name: flagship\ncases:\n  - id: a\n    proposition: Should we?\n"))
    assert "may use only letters" in refusal(
        write(tmp_path, "g.yaml", "name: my suite!\ncases:\n  - id: a\n    proposition: Should we?\n"))


def test_suite_validate_prints_a_summary_or_the_refusal(tmp_path, capsys):
    good = write(tmp_path, "mine.yaml", GOOD_YAML)
    code, out, err = run(capsys, "suite", "validate", str(good))
    assert code == 0 and err == ""
    assert out.startswith("Suite my-suite (") and "2 case(s), valid." in out and "- pause: Should the US" in out
    assert "scored for coverage and stance: 1 of 2 (add key_points or a reference to the others)" in out
    code, out, _ = run(capsys, "suite", "validate", str(good), "--json")
    assert code == 0 and json.loads(out)["ids"] == ["pause", "remote"]
    bad = write(tmp_path, "bad.yaml", "cases:\n  - id: a\n    proposition: Should we?\n    colour: blue\n")
    code, out, err = run(capsys, "suite", "validate", str(bad))
    assert code == 2 and out == "" and f"{bad} line 4: case 'a': colour: unknown field" in err


def test_regress_refuses_a_malformed_suite_before_any_model_call_and_enqueues_a_good_one(tmp_path, capsys):
    """--enqueue takes a suite file: its cases travel in the batch's job, so a worker runs them without the file
    (here a host in this process, started once the file is gone), each with its context and its key points."""
    bad = write(tmp_path, "bad.yaml", "cases:\n  - id: a\n")
    code, _, err = run(capsys, "regress", "--suite", str(bad), "--provider", "scripted:/nonexistent.json")
    assert code == 2 and f"{bad} line 2: case 'a': proposition: missing" in err
    points = references.flagship().key_points
    good = write(tmp_path, "travel.yaml", f"""\
        name: travel
        cases:
          - id: with-context
            proposition: {json.dumps(FLAGSHIP_Q)}
            context: {{geography: United States, timeframe: Next five years}}
            key_points: {json.dumps(points)}
          - id: plain
            proposition: {json.dumps(FLAGSHIP_Q)}
        """)
    code, out, err = run(capsys, "regress", "--suite", str(good), "--runs", "1", "--enqueue", "--provider",
                         flagship_script(tmp_path, 2))
    assert code == 0, err
    batch_id = out.strip()
    assert f"Queued 2 debate(s) of {good}" in err and batch_id in err
    good.unlink()
    modes.host(role="test")  # this process serves the queues, as a worker
    state = runtime.wait(batch_id, 300)
    assert state.status == "done" and state.result["passed"], state
    report = state.result["report"]
    assert report["suite"] == "travel" and report["items"] == ["with-context", "plain"]
    assert report["metrics"]["coverage"]["n"] == 1  # only the case with key points is scored against them
    db = open_store()
    rows = {r["data"]["item"]: r for r in db.runs("travel")}
    assert set(rows) == {"with-context", "plain"} and {r["status"] for r in rows.values()} == {"done"}
    assert all(r["data"]["suite_file"] == str(good) for r in rows.values())
    assert rows["with-context"]["data"]["context"] == {"geography": "United States", "timeframe": "Next five years"}
    assert db.get(rows["with-context"]["debate_id"]).data["context"]["geography"] == "United States"
    assert "context" not in rows["plain"]["data"]


def test_a_suite_file_runs_end_to_end_and_two_of_its_batches_compare_run_by_run(tmp_path, capsys):
    """One case (the flagship's proposition with its own context and key points), two batches of two repeats on
    the scripted provider; compare-runs pairs them: same replies, so no difference and no regression. (SQLite
    only: tests/test_paired.py runs compare-runs on PostgreSQL too.)"""
    db = open_store()
    points = references.flagship().key_points
    suite = write(tmp_path, "ours.yaml", f"""\
        name: ours
        cases:
          - id: moratorium
            proposition: {json.dumps(FLAGSHIP_Q)}
            context: {{geography: United States, timeframe: Next five years}}
            key_points: {json.dumps(points)}
        """)
    ids = []
    for name in ("a.json", "b.json"):
        code, out, err = run(capsys, "regress", "--suite", str(suite), "--runs", "2", "--format", "json",
                             "--provider", flagship_script(tmp_path, 2, name=name))
        report = json.loads(out)
        assert code == 0, err
        assert report["suite"] == "ours" and report["items"] == ["moratorium"]
        assert report["metrics"]["coverage"]["n"] == 2  # scored against the case's own key points
        ids.append(report["batch"])
    rows = db.runs("ours")
    assert len(rows) == 4 and {r["data"]["item"] for r in rows} == {"moratorium"}
    assert all(db.get(r["debate_id"]).data["context"]["geography"] == "United States" for r in rows)
    assert all(r["data"]["suite_file"] == str(suite) for r in rows)
    html, xml = tmp_path / "review.html", tmp_path / "review.xml"
    code, out, err = run(capsys, "compare-runs", *ids, "--json", "--report", str(html), "--junit", str(xml))
    compared = json.loads(out)
    assert code == 0, err
    assert f"Wrote {html}" in err and f"Wrote {xml}" in err  # the reports to share, beside the table
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") and "ours" in html.read_text()
    assert "<testsuite" in xml.read_text(encoding="utf-8") and 'name="coverage"' in xml.read_text()
    assert compared["pairs"] == 2 and compared["a"]["suite"] == compared["b"]["suite"] == "ours"
    assert not compared["regression"] and compared["flips"] == []
    assert {m["metric"] for m in compared["metrics"]} >= {"coverage", "schema_valid"}
    code, _, err = run(capsys, "regress", "--suite", "flagship", "--enqueue", "--report", str(html))
    assert code == 2 and "--enqueue does not wait" in err
    code, out, _ = run(capsys, "runs", "--format", "json")
    assert {(b["batch"], b["suite"], b["kind"]) for b in json.loads(out)} == {(i, "ours", "regression") for i in ids}


def test_a_users_own_suite_maps_to_the_regression_batch_kind():
    from clearside import modes

    assert modes.batch_mode_of_suite("my-own-suite") is modes.BATCH_MODES["regression"]
    assert modes.batch_mode_of_suite("flagship") is modes.BATCH_MODES["regression"]
