"""The understanding check's answers in the store, on SQLite and PostgreSQL: saved and read back in order and by
owner, secrets scrubbed, deleted with their debate and never copied with it, exported and imported with a static
debate (a malformed answer refuses the whole file), and the command line's `understanding` group."""

from __future__ import annotations

import csv
import json

import pytest
from helpers import run_cli as run

from clearside.errors import InputError
from clearside.quality.references import flagship
from clearside.store import NewDebate

SECRET = "sk-test-understanding-0123456789"


def finished(db) -> str:
    doc = flagship().document
    return db.create(NewDebate("static", doc["proposition"]["normalized_question"], provider="scripted", model="m",
                               document=doc, status="done"))


def test_answers_round_trip_by_owner_and_scrubbed(db, monkeypatch):
    monkeypatch.setenv("CLEARSIDE_TEST_API_KEY", SECRET)
    debate = finished(db)
    mine = "a" * 32
    assert db.add_answer(debate, "before", {"reasons_for": [f"my key {SECRET}"], "lean": 1}, owner=mine) == 1
    assert db.add_answer(debate, "after", {"reasons_for": ["x"]}) == 2
    db.set_answer_match(debate, 2, {"for": [], "version": "1"})
    rows = db.answers(debate)
    assert [(r.number, r.stage, r.owner) for r in rows] == [(1, "before", mine), (2, "after", None)]
    assert rows[0].body == {"reasons_for": ["my key [redacted]"], "lean": 1} and rows[1].match["version"] == "1"
    assert [r.number for r in db.answers(debate, owner=mine)] == [1]
    assert [r.number for r in db.answers(debate, owner=None)] == [2]
    assert [r.title for r in db.all_answers(owner=mine)] == [db.get(debate).title]
    with pytest.raises(InputError, match="Unknown stage"):
        db.add_answer(debate, "during", {})
    with pytest.raises(InputError, match="browser token"):
        db.add_answer(debate, "after", {}, owner="Ada Lovelace")


def test_answers_go_with_their_debate_and_are_never_copied(db):
    debate, other = finished(db), finished(db)
    db.add_answer(debate, "before", {"lean": 0})
    db.add_answer(other, "before", {"lean": 0})
    copy_id = db.duplicate(debate, owner="b" * 32)
    assert db.answers(copy_id) == []
    db.delete(debate)
    assert [r.debate_id for r in db.all_answers()] == [other]


def test_export_and_import_carry_the_answers_without_the_owner(db, tmp_path, capsys):
    debate = finished(db)
    assert run(capsys, "understanding", "answer", debate, "--stage", "before", "--lean", "-1")[0] == 0
    code, out, err = run(capsys, "understanding", "answer", debate, "--stage", "after", "--for",
                         "Laws cannot keep up with how fast AI is moving", "--confidence", "70")
    assert code == 0 and "Saved answer 2 (after)" in err
    assert "Reasons you named for: 0 before, 1 after" in out
    db.set_answer_match(debate, 1, {"for": [], "against": [], "hinges": [], "version": "1"})
    path = tmp_path / "export.json"
    assert run(capsys, "export", debate, "--out", str(path))[0] == 0
    data = json.loads(path.read_text())
    assert [a["stage"] for a in data["understanding"]] == ["before", "after"]
    assert "owner" not in json.dumps(data["understanding"])
    code, _, err = run(capsys, "import", str(path))
    assert code == 0 and "Restored 2 understanding-check answers" in err
    imported = next(s.id for s in db.list().items if s.id != debate)
    assert [(r.stage, r.body["confidence"]) for r in db.answers(imported)] == [("before", None), ("after", 70)]
    assert "understanding" not in json.dumps((db.get(imported).data or {}).get("imported", {}))

    data["understanding"][1]["lean"] = 9
    path.write_text(json.dumps(data))
    count = db.list().total
    code, _, err = run(capsys, "import", str(path))
    assert code == 2 and "understanding[2]: The lean must be" in err and "Nothing was changed" in err
    assert db.list().total == count


def test_cli_show_gains_json_and_csv(db, tmp_path, capsys):
    debate = finished(db)
    run(capsys, "understanding", "answer", debate, "--stage", "before", "--against", "@SUM(1)", "--lean", "0")
    run(capsys, "understanding", "answer", debate, "--stage", "after", "--for",
        "Data centres use huge amounts of electricity and water", "--against", "Pauses tend to become permanent")
    code, out, _ = run(capsys, "understanding", "show", debate, "--format", "json")
    shown = json.loads(out)
    assert code == 0 and shown["stages"]["after"]["named_total"] == 2 and shown["answers"] == 2
    path = tmp_path / "gains.csv"
    code, out, err = run(capsys, "understanding", "gains", "--csv", str(path))
    assert code == 0 and f"Wrote {path}" in err
    assert "reasons named, both sides: +2.00 (an interval needs 2 debates; n = 1)" in out
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert [(r["stage"], r["reasons_against"]) for r in rows] == [("before", "'@SUM(1)"),
                                                                   ("after", "Pauses tend to become permanent")]
    code, out, _ = run(capsys, "understanding", "gains", "--format", "json")
    assert json.loads(out)["comparisons"]["after-before"]["named_total"]["mean"] == 2.0


def test_cli_refuses_bad_answers_and_saves_nothing(db, capsys):
    debate = finished(db)
    code, _, err = run(capsys, "understanding", "answer", debate, "--stage", "after", "--for", "x" * 400)
    assert code == 2 and "Reason 1 for is 400 characters long" in err
    code, _, err = run(capsys, "understanding", "answer", "f" * 32, "--stage", "before", "--lean", "0")
    assert code == 2 and "f" * 32 in err
    code, _, err = run(capsys, "understanding", "answer", debate, "--stage", "after")
    assert code == 2 and "The answer is empty" in err
    assert db.answers(debate) == []
