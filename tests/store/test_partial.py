"""Partial debates labelled wherever they are listed: the one definition
(:func:`clearside.store.records.missing_parts`), ``python -m clearside list`` and ``status``, and the Library
page."""

from __future__ import annotations

import json

from helpers import fixture_dict, full_script, orchestrator_reply, side_reply
from helpers import run_cli as run

from clearside.schema import Proposition, Side
from clearside.static.recorder import StaticRecorder, start_static
from clearside.static.run import DebateRun
from clearside.store.records import missing_parts, partial_notice, status_label

QUESTION = "Should we adopt microservices architecture?"
NO_SYNTHESIS = "Partial debate: the moderator's synthesis is missing."


def dropped(document: dict, name: str = "ethicist") -> dict:
    """``document`` with a persona dropped, as the engine records it in the persona's quality record."""
    item = {"check": "persona_dropped", "path": "persona-2", "action": "dropped", "text": name,
            "message": f"Persona '{name}' was dropped: its case failed the quality checks after 3 attempts."}
    quality = document.setdefault("quality", {"checks_version": "1", "strategy": "whole", "semantic": False})
    quality.setdefault("agents", {})["persona-2"] = {"attempts": 3, "reasks": 2, "items": [item]}
    return document


def test_what_a_debate_is_missing_in_the_readers_words():
    whole = fixture_dict()
    assert missing_parts(whole) == [] and partial_notice(missing_parts(whole)) is None
    assert missing_parts(dropped(fixture_dict())) == ["persona 'ethicist'"]
    sections = {"proposition": whole["proposition"], "pro": whole["pro"], "con": whole["con"]}
    assert partial_notice(missing_parts(sections)) == NO_SYNTHESIS
    panel = {"personas": [{"name": "economist"}, {"name": "ethicist"}], "cases": {"0": {}}}
    assert partial_notice(missing_parts({"proposition": whole["proposition"], "personas": panel})) == (
        "Partial debate: the case for, the case against, the moderator's synthesis and persona 'ethicist' are "
        "missing.")
    assert status_label("failed", ["the case for"]) == "failed (partial)"
    assert status_label("running", ["the case for"]) == "running"  # still being written
    assert status_label("done", []) == "done"


def stopped_before_the_synthesis(store) -> str:
    """A saved debate whose moderator failed: its proposition and both cases are kept."""
    run = DebateRun.from_input(QUESTION)
    run.proposition = Proposition.model_validate({**orchestrator_reply(), "raw_input": run.raw_input})
    run.pro, run.con = (Side.model_validate(side_reply(tag)) for tag in ("pro", "con"))
    debate_id = start_static(store, run, provider="scripted", model="script")
    StaticRecorder(store, run, _Named(), debate_id=debate_id).fail("The moderator agent's output broke the schema.")
    return debate_id


class _Named:
    name, model = "scripted", "script"


def test_a_failed_debate_with_sections_kept_is_listed_as_partial(db, capsys):
    debate_id = stopped_before_the_synthesis(db)
    assert db.partial([debate_id]) == {debate_id: ["the moderator's synthesis"]}
    code, out, _ = run(capsys, "list", "--format", "json")
    [item] = json.loads(out)
    assert code == 0 and item["missing"] == ["the moderator's synthesis"]
    code, table, _ = run(capsys, "list")
    assert "failed (partial)" in table
    code, out, _ = run(capsys, "status", debate_id)  # `status` says it as `list` does
    assert out.splitlines()[:2] == [f"{debate_id}: failed (partial)", NO_SYNTHESIS]
    code, out, _ = run(capsys, "status", debate_id, "--format", "json")
    assert json.loads(out)["missing"] == ["the moderator's synthesis"]


def test_a_whole_debate_is_not_labelled(db, tmp_path, capsys):
    code, _, err = run(capsys, "debate", QUESTION, "--save", "--provider", full_script(tmp_path))
    assert code == 0, err
    code, table, _ = run(capsys, "list")
    assert " done " in table and "partial" not in table
    [item] = json.loads(run(capsys, "list", "--format", "json")[1])
    assert "missing" not in item  # a whole debate lists as the previous release listed it
    code, out, _ = run(capsys, "status", item["id"])
    assert out.splitlines()[0] == f"{item['id']}: done" and "artial" not in out
    assert "missing" not in json.loads(run(capsys, "status", item["id"], "--format", "json")[1])


def test_a_debate_whose_moderator_fails_on_the_command_line_says_it_is_partial(db, tmp_path, capsys):
    script = full_script(tmp_path, moderator=["not json"] * 3)
    code, _, err = run(capsys, "debate", QUESTION, "--save", "--provider", script)
    assert code == 4
    assert NO_SYNTHESIS in err
    [item] = json.loads(run(capsys, "list", "--format", "json")[1])
    assert item["missing"] == ["the moderator's synthesis"]


def test_the_library_labels_a_partial_debate_beside_its_status(store):
    import app_kit
    from app_kit import LIBRARY

    from clearside.providers.scripted import ScriptedProvider

    partial = stopped_before_the_synthesis(store)
    whole = start_static(store, DebateRun.from_input("Should the city build a new tram line?"), provider="openai",
                         model="gpt-4")
    store.finish_static(whole, fixture_dict())
    at = app_kit.open_page(LIBRARY, ScriptedProvider())
    table = at.dataframe[0].value
    shown = dict(zip([link.split("debate=")[1] for link in table["Link"]], table["Status"], strict=True))
    assert shown == {partial: "failed (partial)", whole: "done"}


def test_an_imported_partial_debate_is_listed_as_partial(db, tmp_path, capsys):
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(dropped(fixture_dict())), encoding="utf-8")
    code, out, err = run(capsys, "import", str(path))
    assert code == 0, err
    assert db.partial([out.strip()]) == {out.strip(): ["persona 'ethicist'"]}
    assert "done (partial)" in run(capsys, "list")[1]


def test_the_debate_page_says_a_debate_is_partial_before_its_sections_and_a_whole_one_is_not(store):
    import app_kit

    from clearside.providers.scripted import ScriptedProvider

    partial = stopped_before_the_synthesis(store)
    at = app_kit.open_page(None, ScriptedProvider(), query={"debate": partial})
    assert NO_SYNTHESIS in app_kit.of_kind(at, "warning")
    dropped_persona = start_static(store, DebateRun.from_input(QUESTION), provider="openai", model="gpt-4")
    store.finish_static(dropped_persona, dropped(fixture_dict()))
    at = app_kit.open_page(None, ScriptedProvider(), query={"debate": dropped_persona})
    assert "Partial debate: persona 'ethicist' is missing." in app_kit.of_kind(at, "warning")
    whole = start_static(store, DebateRun.from_input("Should the city build a new tram line?"), provider="openai",
                         model="gpt-4")
    store.finish_static(whole, fixture_dict())
    at = app_kit.open_page(None, ScriptedProvider(), query={"debate": whole})
    assert "Partial debate" not in app_kit.plain(at)
