"""The mode registry (clearside/modes.py): one entry per kind the store saves and per kind of batch, naming pages
that exist, and the one place that decides which mode an imported file belongs to and how a batch is exported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import fixture_dict, flagship_replies, run_regression

from clearside import modes
from clearside.errors import InputError, NotFound
from clearside.modes import (
    BATCH_MODES,
    MODES,
    batch_mode,
    batch_mode_of_workflow,
    export_data,
    import_data,
    import_file,
    mode,
)
from clearside.providers.scripted import ScriptedProvider
from clearside.quality import compare
from clearside.quality import workflow as batches
from clearside.quality.batch import SUITES
from clearside.quality.job import CompareJob
from clearside.quality.references import flagship
from clearside.store import KINDS, Store

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def store(tmp_path):
    opened = Store(f"sqlite:///{tmp_path / 'modes.db'}")
    yield opened
    opened.close()


def test_every_kind_the_store_saves_has_one_mode_whose_pages_exist():
    assert tuple(MODES) == KINDS
    for kind, entry in MODES.items():
        assert entry.kind == kind and entry.label and entry.short and entry.resume_help and entry.cancel
        for page in (entry.page, entry.watch_page):
            assert (ROOT / "clearside_ui" / page).is_file(), f"{kind}: {page} is not a page of the dashboard"
        # the share link opens the mode's page with the debate's id in the page's query parameter
        route = "./" if entry.page == "app_pages/debate.py" else Path(entry.page).stem
        link = entry.share_link("a" * 32)
        assert link == f"{route}?{entry.param}={'a' * 32}", link
        assert entry.page_title.lower() == Path(entry.page).stem, "the page's title names its file"
        assert "{use}" in entry.rerun_note


def test_an_unknown_kind_is_refused_with_the_kinds_there_are():
    with pytest.raises(InputError, match="static, live, perspectives"):
        mode("debate")


def test_each_file_goes_to_the_mode_that_recognizes_it_and_comes_back_the_same(store, tmp_path):
    document = fixture_dict()
    recognized = [kind for kind, entry in MODES.items() if entry.recognizes and entry.recognizes(document)]
    assert recognized == ["static"]
    path = tmp_path / "debate.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    imported = import_file(store, str(path))
    assert store.get(imported.id).kind == "static"
    again = export_data(store, imported.id)
    assert again["pro"] == document["pro"] and again["moderator"] == document["moderator"]
    assert [kind for kind, entry in MODES.items() if entry.recognizes and entry.recognizes(
        {"version": 1, "turns": []})] == ["live"]


@pytest.mark.parametrize("data", [{"title": "not a debate"}, [1, 2], "text"])
def test_a_file_of_no_mode_is_refused_naming_both_formats_and_nothing_is_saved(store, data):
    with pytest.raises(InputError, match="Not imported") as refused:
        import_data(store, data, "upload.json")
    assert "upload.json" in str(refused.value)
    if isinstance(data, dict):
        assert "meta.schema_version" in str(refused.value) and "version and turns" in str(refused.value)
    assert store.list().total == 0


def test_every_batch_kind_names_its_workflow_its_suites_and_a_page_that_exists():
    assert {entry.workflow for entry in BATCH_MODES.values()} == set(batches.KINDS)
    suites = [suite for entry in BATCH_MODES.values() for suite in entry.suites]
    assert sorted(suites) == sorted([*SUITES, compare.SUITE]), "every suite belongs to one batch kind"
    for kind, entry in BATCH_MODES.items():
        assert entry.kind == kind and entry.label and entry.page_title.lower() == Path(entry.page).stem
        assert (ROOT / "clearside_ui" / entry.page).is_file(), f"{kind}: {entry.page} is not a page"
        assert entry.share_link("b" * 32).startswith(f"{Path(entry.page).stem}?") and "b" * 32 in \
            entry.share_link("b" * 32)
        assert batch_mode_of_workflow(entry.workflow) is entry
    assert batch_mode_of_workflow("clearside.static") is None


def flagship_script(n: int) -> ScriptedProvider:
    replies = flagship_replies()
    return ScriptedProvider(script={agent: [replies[agent]] * n for agent in replies})


def test_a_batch_is_exported_whole_by_its_id_and_its_export_is_refused_on_import(store, tmp_path):
    regression = run_regression("flagship", flagship_script(2), store, runs=2)
    exported = export_data(store, regression["batch"])
    assert (exported["kind"], exported["suite"], exported["planned"]) == ("regression", "flagship", 2)
    assert [run["status"] for run in exported["runs"]] == ["done", "done"]
    assert set(exported["debates"]) == {run["id"] for run in exported["runs"]}
    assert all(doc["meta"]["schema_version"] for doc in exported["debates"].values())
    assert batch_mode(store, regression["batch"]) is BATCH_MODES["regression"]

    question = flagship().proposition
    modes.host(store.url, role="test", serve=False)
    job = CompareJob(question, [flagship_script(1), flagship_script(1)], store, temperatures=[0.2, 0.8])
    job.start(here=True).wait(120)
    comparison = job.report()
    exported = export_data(store, comparison["batch"])
    assert exported["kind"] == "comparison" and exported["report"]["question"] == question
    assert list(exported["debates"]) == exported["report"]["models"] and len(exported["debates"]) == 2
    path = tmp_path / "batch.json"
    path.write_text(json.dumps(exported), encoding="utf-8")
    with pytest.raises(InputError, match="is not imported whole"):
        import_file(store, str(path))
    with pytest.raises(NotFound, match="No saved debate has the id"):
        export_data(store, "f" * 32)
    with pytest.raises(NotFound, match="No debate or batch has the id"):
        batch_mode(store, "f" * 32)
