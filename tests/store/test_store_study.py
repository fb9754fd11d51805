"""Studies in the store, on SQLite and PostgreSQL: saved and read back, participants drawn one at a time (twenty
joining at once stay balanced), one answer per stage in order, secrets scrubbed, everything deleted with its study;
and the command line's `study` group, its documents made on the runtime against bench/latency_server.py."""

from __future__ import annotations

import csv
import json
import threading

import pytest
import study_kit
from helpers import run_cli as run

from clearside.errors import InputError, NotFound
from clearside.quality import study
from clearside.quality.references import flagship
from clearside.quality.study.assign import key_of, new_token

SECRET = "sk-test-study-0123456789abcdef"


def test_a_study_round_trips_with_its_items_and_sources(db):
    made = study_kit.ready(db, ("debate", "single", "sources"), owner="c" * 32, questions=2)
    again = db.study(made.id)
    assert again == made and again.spec["arms"] == ["debate", "single", "sources"]
    items = db.study_items(made.id)
    assert [(i.question, i.arm) for i in items] == [(q, a) for q in (1, 2) for a in ("debate", "single", "sources")]
    sources = [i for i in items if i.arm == "sources"]
    assert all(i.debate_id is None and i.sources[0]["text"] == study_kit.NOTES.decode() for i in sources)
    assert all(i.debate_id and i.sources is None for i in items if i.arm != "sources")
    assert [s.id for s in db.studies(owner="c" * 32)] == [made.id] and db.studies(owner="d" * 32) == []
    with pytest.raises(NotFound, match="No study has the id"):
        db.study("0" * 32)


def test_twenty_participants_joining_at_once_stay_balanced(db):
    made = study_kit.ready(db, ("debate", "single"))
    tokens, errors = [], []
    start = threading.Barrier(20)

    def join():
        try:
            start.wait()
            tokens.append(study.join(db, made.id, made.join_key))
        except Exception as exc:  # noqa: BLE001 - every failure is reported below
            errors.append(exc)

    threads = [threading.Thread(target=join) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    joined = db.participants(made.id)
    assert sorted(p.number for p in joined) == list(range(1, 21))
    assert sorted(p.arm for p in joined).count("debate") == 10
    assert {p.key for p in joined} == {key_of(token) for token, _ in tokens}


def test_answers_once_per_stage_in_order_scrubbed_and_deleted_with_the_study(db, monkeypatch):
    monkeypatch.setenv("CLEARSIDE_TEST_API_KEY", SECRET)
    made = study_kit.ready(db)
    token = new_token()
    db.join_study(made.id, made.join_key, key_of(token), lambda counts: (1, "debate"))
    with pytest.raises(InputError, match="comes after 'before'"):
        db.add_study_answer(key_of(token), "after", {"reasons_for": ["x"]})
    db.add_study_answer(key_of(token), "before", {"reasons_for": [f"my key {SECRET}"]})
    with pytest.raises(InputError, match="already answered"):
        db.add_study_answer(key_of(token), "before", {"reasons_for": ["y"]})
    db.add_study_answer(key_of(token), "after", {"reasons_for": ["x"]})
    rows = db.study_answers(made.id)
    assert [(r.number, r.stage, r.arm) for r in rows] == [(1, "before", "debate"), (1, "after", "debate")]
    assert rows[0].body == {"reasons_for": ["my key [redacted]"]}
    db.set_study_answer_match(key_of(token), "after", {"for": [], "version": "1"})
    assert db.study_answers(made.id)[1].match == {"for": [], "version": "1"}
    db.delete_study(made.id)
    with pytest.raises(NotFound):
        db.participant(made.id, key_of(token))
    assert db.study_answers(made.id) == [] and db.study_items(made.id) == []


def test_the_command_line_runs_a_study_from_creation_to_csv(db, capsys, tmp_path, monkeypatch):
    from bench.latency_server import MODEL, start

    (tmp_path / "notes.txt").write_bytes(study_kit.NOTES)
    with start(0, ttft=0.01, tps=2000) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        code, out, err = run(capsys, "study", "create", "--title", "Pausing AI", "--question", flagship().proposition,
                             "--arm", "debate", "--arm", "sources", "--source", f"1={tmp_path / 'notes.txt'}",
                             "--provider", f"openai:{MODEL}", "--retries", "1")
    assert code == 0, err
    study_id = out.strip()
    assert "ready, 0 participant(s)" in err and "question 1, full debate: ready" in err
    code, out, _ = run(capsys, "study", "link", study_id, "--url", "http://example.org:8501/")
    key = out.strip().split("&join=")[1]
    assert out.startswith(f"http://example.org:8501/participate?study={study_id}&join=")
    tokens = [run(capsys, "study", "join", study_id, key)[1].strip() for _ in range(2)]
    for token in tokens:
        assert run(capsys, "study", "answer", study_id, token, "--stage", "before", "--lean", "0")[0] == 0
        code, out, _ = run(capsys, "study", "answer", study_id, token, "--stage", "after",
                           "--for", "Laws cannot keep up with how fast AI is moving", "--against", "=1+1")
        assert out.strip().endswith("next: retest.")
    code, _, err = run(capsys, "study", "answer", study_id, tokens[0], "--stage", "retest", "--for", "x" * 301)
    assert code == 2 and "Reason 1 for is 301 characters long" in err
    code, out, _ = run(capsys, "study", "results", study_id, "--format", "json", "--csv", str(tmp_path / "s.csv"))
    found = json.loads(out)
    assert {arm: data["answered"]["after"] for arm, data in found["arms"].items()} == {"debate": 1, "sources": 1}
    rows = list(csv.DictReader((tmp_path / "s.csv").open(encoding="utf-8")))
    assert len(rows) == 4 and {r["reasons_against"] for r in rows} == {"", "'=1+1"}
    code, out, _ = run(capsys, "study", "sample-size", "0.8")
    assert "26 participants per arm" in out and "25 by the normal approximation" in out
    assert run(capsys, "study", "sample-size", "0")[0] == 2
    code, _, err = run(capsys, "study", "create", "--title", "T", "--question", "Is it so?", "--arm", "debate",
                       "--arm", "sources")
    assert code == 2 and "question 1 has none" in err


def test_the_command_line_lists_shows_and_deletes_a_study(db, capsys):
    made = study_kit.ready(db, ("debate", "single"))
    code, out, _ = run(capsys, "study", "list", "--format", "json")
    assert code == 0 and [s["id"] for s in json.loads(out)] == [made.id] and "join_key" not in out
    code, out, _ = run(capsys, "study", "status", made.id, "--format", "json")
    assert json.loads(out)["ready"] is True and [i["status"] for i in json.loads(out)["items"]] == ["ready"] * 2
    code, _, err = run(capsys, "study", "status", "not-a-study")
    assert code == 2 and "is not a study id" in err
    assert run(capsys, "study", "delete", made.id)[0] == 0
    assert db.studies() == []
    code, _, err = run(capsys, "study", "results", made.id)
    assert code == 2 and "No study has the id" in err
