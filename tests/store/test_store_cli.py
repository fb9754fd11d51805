"""Saved debates from the command line, on SQLite and PostgreSQL: --save, list, export, import, delete,
refused imports that change nothing, and a debate process killed mid-way whose finished sections survive."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import fixture_dict, full_script, moderator_reply, script_file, side_reply
from helpers import run_cli as run

from clearside.contract import jsonschema_errors
from clearside.schema import SCHEMA_VERSION
from clearside.store import Store

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Should we adopt microservices architecture?"




def listed(capsys) -> list[dict]:
    code, out, _ = run(capsys, "list", "--format", "json")
    assert code == 0
    return json.loads(out)


def test_debate_save_list_export_import_delete(db, tmp_path, capsys):
    code, out, err = run(capsys, "debate", QUESTION, "--save", "--provider", full_script(tmp_path))
    assert code == 0 and "Saved debate" in err
    printed = json.loads(out)  # --save also prints the document as before
    [item] = listed(capsys)
    assert {"id", "question", "created_at", "provider", "model"} <= set(item)
    assert item["question"] == QUESTION and item["provider"] == "scripted" and item["status"] == "done"
    code, table, _ = run(capsys, "list")
    assert code == 0 and item["id"] in table and "scripted" in table

    out_file = tmp_path / "export.json"
    assert run(capsys, "export", item["id"], "--out", str(out_file))[0] == 0
    exported = json.loads(out_file.read_text(encoding="utf-8"))
    assert jsonschema_errors(exported) == []
    assert {k: v for k, v in exported.items() if k != "meta"} == {k: v for k, v in printed.items() if k != "meta"}

    code, out, _ = run(capsys, "import", str(out_file))
    copy_id = out.strip()
    assert code == 0 and copy_id != item["id"] and len(listed(capsys)) == 2
    assert db.get(copy_id).document == db.get(item["id"]).document

    code, _, err = run(capsys, "delete", item["id"])
    assert code == 2 and "--yes" in err and len(listed(capsys)) == 2  # not without confirmation
    assert run(capsys, "delete", item["id"], "--yes")[0] == 0
    assert [i["id"] for i in listed(capsys)] == [copy_id]


def test_list_filters_by_each_kind_the_store_keeps(db, capsys):
    from clearside.store import NewDebate
    from clearside.store.records import KINDS

    ids = {kind: db.create(NewDebate(kind, f"A {kind} question?", provider="scripted", model="m")) for kind in KINDS}
    for kind in KINDS:
        code, out, err = run(capsys, "list", "--format", "json", "--kind", kind)
        assert code == 0, err
        assert [item["id"] for item in json.loads(out)] == [ids[kind]]


def test_rename_and_duplicate_succeed_from_the_command_line(db, tmp_path, capsys):
    code, _, _ = run(capsys, "debate", QUESTION, "--save", "--provider", full_script(tmp_path))
    assert code == 0
    [item] = listed(capsys)
    code, out, err = run(capsys, "rename", item["id"], "Microservices, for the board")
    assert (code, out, err.strip()) == (0, "", f"Renamed {item['id']}")
    [renamed] = listed(capsys)
    assert renamed["title"] == "Microservices, for the board" and renamed["question"] == QUESTION
    assert [i["id"] for i in json.loads(run(capsys, "list", "--format", "json", "--search", "board")[1])] == [
        item["id"]], "the new title is searchable"

    code, out, err = run(capsys, "duplicate", item["id"], "--title", "Microservices, my edit")
    copy_id = out.strip()
    assert code == 0 and err.strip() == f"Copied {item['id']} to {copy_id}" and copy_id != item["id"]
    code, out, _ = run(capsys, "duplicate", item["id"])
    untitled = out.strip()
    assert code == 0 and untitled not in (item["id"], copy_id)
    by_id = {i["id"]: i for i in listed(capsys)}
    assert set(by_id) == {item["id"], copy_id, untitled}
    assert by_id[copy_id]["title"] == "Microservices, my edit"
    assert by_id[untitled]["title"] == "Copy of Microservices, for the board"
    assert by_id[copy_id]["parent_id"] == by_id[untitled]["parent_id"] == item["id"]
    assert db.get(copy_id).document == db.get(item["id"]).document, "a full copy"
    code, exported, _ = run(capsys, "export", copy_id)
    assert code == 0 and json.loads(exported) == db.get(item["id"]).document


@pytest.mark.parametrize("command", [["export", "0123456789abcdef0123456789abcdef"],
                                     ["delete", "0123456789abcdef0123456789abcdef", "--yes"],
                                     ["export", "nope"], ["rename", "nope", "x"]])
def test_unknown_ids_exit_2_with_a_message(db, capsys, command):
    code, _, err = run(capsys, *command)
    assert code == 2 and ("No saved debate has the id" in err or "not a debate id" in err)


def _refused(capsys, tmp_path, content: str, message: str) -> None:
    before = listed(capsys)
    path = tmp_path / "in.json"
    path.write_text(content, encoding="utf-8")
    code, out, err = run(capsys, "import", str(path))
    assert code == 2 and message in err and out == ""
    assert listed(capsys) == before, "a refused import changes nothing"


def test_refused_imports_leave_the_store_unchanged(db, tmp_path, capsys):
    db.import_static(fixture_dict(), imported={})
    document = fixture_dict()
    _refused(capsys, tmp_path, "{not json", "is not JSON")
    _refused(capsys, tmp_path, "[1, 2]", "not a ClearSide debate")
    _refused(capsys, tmp_path, json.dumps({"hello": "world"}), "neither a ClearSide debate document")
    major = copy.deepcopy(document)
    major["meta"]["schema_version"] = "2.0.0"
    _refused(capsys, tmp_path, json.dumps(major), "major version 2")
    odd = copy.deepcopy(document)
    odd["meta"]["schema_version"] = "1.0"
    _refused(capsys, tmp_path, json.dumps(odd), "not a version like")
    broken = copy.deepcopy(document)
    del broken["pro"]
    _refused(capsys, tmp_path, json.dumps(broken), "Not a valid ClearSide v1 document")
    wrong_type = copy.deepcopy(document)
    wrong_type["pro"]["arguments"] = "many"
    _refused(capsys, tmp_path, json.dumps(wrong_type), "Not imported")


def test_a_newer_minor_version_is_migrated_and_nothing_is_lost(db, tmp_path, capsys):
    document = fixture_dict()
    document["meta"]["schema_version"] = "1.3.0"
    document["meta"]["stakeholders"] = ["residents", "utilities"]  # optional fields a 1.3 writer added
    document["pro"]["arguments"][0]["footnotes"] = ["https://example.org/report"]
    path = tmp_path / "newer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, out, err = run(capsys, "import", str(path))
    assert code == 0 and "Migrated from version 1.3.0" in err and "meta/stakeholders" in err
    record = db.get(out.strip())
    # what is left uses no 1.1 addition, so it is stamped 1.0.0: a 1.0 reader takes it as it is
    assert "Migrated from version 1.3.0 to 1.0.0." in err
    assert record.document["meta"]["schema_version"] == "1.0.0" and jsonschema_errors(record.document) == []
    assert "stakeholders" not in record.document["meta"]
    assert record.data["imported"]["dropped"] == {"meta/stakeholders": ["residents", "utilities"],
                                                  "pro/arguments/0/footnotes": ["https://example.org/report"]}
    assert record.data["imported"]["from_version"] == "1.3.0"


def test_a_1_0_document_imports_unchanged_and_stays_1_0(db, tmp_path, capsys):
    document = fixture_dict()
    document["meta"]["schema_version"] = "1.0.0"  # uses no 1.1 addition: nothing to drop, nothing to migrate
    path = tmp_path / "same.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, out, err = run(capsys, "import", str(path))
    assert code == 0 and "Migrated" not in err and "Set aside" not in err
    record = db.get(out.strip())
    assert record.document == document


def test_a_1_1_document_keeps_its_additions_and_version(db, tmp_path, capsys):
    document = fixture_dict()
    document["meta"]["schema_version"] = "1.0.0"  # wrongly stamped: it uses a 1.1 addition
    document["pro"]["arguments"][0]["persona"] = "Economist"
    path = tmp_path / "persona.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, out, err = run(capsys, "import", str(path))
    assert code == 0 and f"to {SCHEMA_VERSION}" in err and "Set aside" not in err
    record = db.get(out.strip())
    assert record.document["pro"]["arguments"][0]["persona"] == "Economist"
    assert record.document["meta"]["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize(("version", "persona", "stamped"), [("1.0.3", None, "1.0.0"), ("1.1.4", "Economist", "1.1.0")])
def test_another_patch_version_imports_migrated_to_this_ones(db, tmp_path, capsys, version, persona, stamped):
    """A patch version this ClearSide never wrote (of 1.0, or of its own 1.1) imports whole, stamped with the
    version its content needs here: 1.0.0 without a 1.1 addition, the current one with."""
    assert stamped in ("1.0.0", SCHEMA_VERSION) and version != stamped
    document = fixture_dict()
    document["meta"]["schema_version"] = version
    if persona:
        document["pro"]["arguments"][0]["persona"] = persona
    path = tmp_path / "patch.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, out, err = run(capsys, "import", str(path))
    assert code == 0 and f"Migrated from version {version} to {stamped}." in err and "Set aside" not in err, err
    record = db.get(out.strip())
    assert record.document == {**document, "meta": {**document["meta"], "schema_version": stamped}}
    assert record.data["imported"]["from_version"] == version and record.data["imported"]["dropped"] == {}


def test_a_live_transcript_exports_and_imports(db, tmp_path, capsys):
    from helpers import LiveResponder

    from clearside.live import LiveConfig, LiveDebate
    from clearside.providers.scripted import ScriptedProvider

    debate = LiveDebate.create(QUESTION, ScriptedProvider(fallback=LiveResponder()), store=db,
                               config=LiveConfig(words_per_minute=40))
    for _ in range(3):
        debate.advance()
    debate.submit("direct_question", "What would change your mind?", "con")
    out_file = tmp_path / "live.json"
    assert run(capsys, "export", debate.transcript.id, "--out", str(out_file))[0] == 0
    exported = json.loads(out_file.read_text(encoding="utf-8"))
    assert len(exported["turns"]) == 3 and exported["interventions"][0]["text"] == "What would change your mind?"
    db.delete(debate.transcript.id)
    code, out, _ = run(capsys, "import", str(out_file))
    assert code == 0 and out.strip() == debate.transcript.id  # a free id is kept, so old links still work
    code, out, _ = run(capsys, "import", str(out_file))
    assert code == 0 and out.strip() != debate.transcript.id  # a taken one is not overwritten
    from clearside.live.exchange import load_live

    assert load_live(db, out.strip()).turns == debate.snapshot().turns


def test_an_older_transcript_version_migrates_when_loaded_and_a_newer_minor_sets_its_additions_aside(
        db, tmp_path, capsys, monkeypatch):
    """A 1.0.0 transcript file (before evidence could carry a source file) is loaded by ``live --resume FILE``:
    stamped the current version, its turns kept, the debate continued to the end; a newer minor version's unknown
    fields are set aside in the import record by ``import``."""
    from helpers import LiveResponder

    from clearside.cli import live as live_cli
    from clearside.live import LiveConfig, LiveDebate
    from clearside.live.exchange import load_live
    from clearside.live.transcript import TRANSCRIPT_VERSION
    from clearside.modes import export_data
    from clearside.providers.scripted import ScriptedProvider

    assert TRANSCRIPT_VERSION.split(".")[:2] != ["1", "0"], "1.0.0 must be an older version than this one"
    debate = LiveDebate.create(QUESTION, ScriptedProvider(fallback=LiveResponder()), store=db,
                               config=LiveConfig(words_per_minute=40))
    for _ in range(3):
        debate.advance()
    exported = export_data(db, debate.transcript.id)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**exported, "version": "1.0.0"}), encoding="utf-8")
    monkeypatch.setattr(live_cli, "get_provider",
                        lambda spec, **options: ScriptedProvider(fallback=LiveResponder(), **options))
    code, _, err = run(capsys, "live", "--resume", str(old))
    assert code == 0, err
    resumed = err.split(f"Imported {old} as live debate ", 1)[1].split()[0]
    transcript = load_live(db, resumed)
    assert transcript.version == TRANSCRIPT_VERSION and transcript.state == "done"
    assert [t.text for t in transcript.turns[:3]] == [t["text"] for t in exported["turns"]], "the saved turns kept"
    assert len([t for t in transcript.turns if t.step is not None]) == 21, "and the debate continued to its end"
    assert db.get(resumed).data["imported"]["from_version"] == "1.0.0"

    newer = tmp_path / "newer.json"
    turns = [{**turn, "gesture": "nods"} for turn in exported["turns"]]  # a field a 1.4 writer might add
    newer.write_text(json.dumps({**exported, "version": "1.4.0", "audience": "students", "turns": turns}),
                     encoding="utf-8")
    code, out, err = run(capsys, "import", str(newer))
    assert code == 0 and f"Migrated from version 1.4.0 to {TRANSCRIPT_VERSION}." in err, err
    assert "Set aside 4 field(s)" in err and "audience" in err and "turns/0/gesture" in err
    record = db.get(out.strip())
    assert record.data["imported"]["from_version"] == "1.4.0"
    assert record.data["imported"]["dropped"] == {"audience": "students", "turns/0/gesture": "nods",
                                                  "turns/1/gesture": "nods", "turns/2/gesture": "nods"}
    assert load_live(db, out.strip()).turns == load_live(db, debate.transcript.id).turns


def test_exports_never_carry_an_api_key(db, tmp_path, capsys, monkeypatch):
    secret = "sk-live-abcdef0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    pro = side_reply("pro")
    pro["arguments"][0]["explanation"] += f" The key {secret} was in my prompt."
    code, out, _ = run(capsys, "debate", QUESTION, "--save", "--provider", full_script(tmp_path, pro=[pro]))
    assert code == 0
    [item] = listed(capsys)
    code, exported, _ = run(capsys, "export", item["id"])
    assert code == 0 and secret not in exported and "[redacted]" in exported


def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_a_debate_killed_mid_way_keeps_its_finished_sections_and_resumes(db, tmp_path, capsys):
    slow = full_script(tmp_path, moderator=[{"__delay__": 300, "reply": moderator_reply()}])
    process = subprocess.Popen([sys.executable, "-m", "clearside", "debate", QUESTION, "--save", "--provider", slow],
                               cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    try:
        def three_sections() -> bool:
            page = db.list()
            # the three agents' sections, and the quality record saved beside each
            return bool(page.items) and set(db.sections(page.items[0].id)) == {"proposition", "pro", "con", "quality"}

        _wait_for(three_sections)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    after_restart = Store(db.url)  # a new process's view: a fresh engine on the same database
    [item] = after_restart.list().items
    assert item.status == "running"  # nobody marked it: the process died
    sections = after_restart.sections(item.id)
    assert sections["pro"]["arguments"][0]["claim"] == side_reply("pro")["arguments"][0]["claim"]
    after_restart.close()

    only_moderator = script_file(tmp_path, "rest.json", moderator=[moderator_reply()])  # any other request would fail
    code, out, err = run(capsys, "debate", "--resume", item.id, "--provider", only_moderator)
    assert code == 0, err
    record = db.get(item.id)
    assert record.status == "done" and jsonschema_errors(record.document) == []
    assert record.document["pro"] == json.loads(out)["pro"]


def test_ctrl_c_stops_a_saved_debate_keeps_its_finished_sections_and_resume_finishes_it(db, capsys):
    """Ctrl+C on ``debate --save``: the step in flight stops at its next token, the command says how to resume and
    exits 130, the finished sections stay saved; ``--resume`` finishes the debate."""
    from bench.latency_server import MODEL, start
    from clearside.quality.references import flagship

    # the server answers with the flagship debate: asked about it, every argument is on topic and no side is thinned
    question = flagship().document["proposition"]["raw_input"]
    with start(0, ttft=0.2, tps=40) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "not-needed"}
        process = subprocess.Popen([sys.executable, "-m", "clearside", "debate", question, "--save", "--provider",
                                    f"openai:{MODEL}", "--retries", "1"], cwd=ROOT, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait_for(lambda: bool(server.stats()["agents"].get("pro")))
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=90)
        finally:
            process.kill()
        assert process.returncode == 130 and "interrupted" in err and out == "", err
        assert "Resume with: python -m clearside debate --resume" in err
        assert "moderator" not in server.stats()["agents"], "nothing after the step in flight was asked"
        [item] = Store(db.url).list().items
        assert item.status == "paused" and "proposition" in db.sections(item.id)

        os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="not-needed")
        try:
            code, out, err = run(capsys, "debate", "--resume", item.id, "--provider", f"openai:{MODEL}")
        finally:
            for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
                os.environ.pop(name, None)
    assert code == 0, err
    assert db.get(item.id).status == "done" and json.loads(out)["con"] == db.get(item.id).document["con"]


def test_debate_needs_a_question_or_resume(db, capsys):
    assert run(capsys, "debate")[0] == 2
    code, _, err = run(capsys, "debate", "Q?", "--resume", "0123456789abcdef0123456789abcdef")
    assert code == 2 and "not both" in err


LIVE_WORKER = """
import sys, time
sys.path.insert(0, {tests!r})
from helpers import LiveResponder
from clearside.live import LiveConfig, LiveDebate
from clearside.providers.scripted import ScriptedProvider
from clearside.store import Store

responder = LiveResponder()
def reply(request):
    if len(debate.transcript.turns) >= 4:  # the fifth turn never finishes: the process is killed here
        time.sleep(600)
    return responder(request)

debate = LiveDebate.create({question!r}, ScriptedProvider(fallback=reply), store=Store({url!r}),
                           config=LiveConfig(words_per_minute=40))
print(debate.transcript.id, flush=True)
debate.run()
"""


def test_a_live_debate_killed_mid_way_keeps_its_turns_and_resumes(db, capsys):
    from helpers import LiveResponder

    from clearside.live import LiveDebate
    from clearside.live.exchange import load_live
    from clearside.providers.scripted import ScriptedProvider

    code = LIVE_WORKER.format(tests=str(ROOT / "tests"), question=QUESTION, url=db.url)
    process = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        debate_id = process.stdout.readline().strip()
        _wait_for(lambda: len(load_live(db, debate_id).turns) == 4)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert db.get(debate_id).status == "running"  # killed: nobody could mark it
    assert [i["id"] for i in listed(capsys)] == [debate_id]
    kept = load_live(db, debate_id).turns
    resumed = LiveDebate.resume(debate_id, ScriptedProvider(fallback=LiveResponder()), store=db)
    final = resumed.run()
    assert final.state == "done" and len(final.turns) == 21 and final.turns[:4] == kept
    assert load_live(db, debate_id) == final
