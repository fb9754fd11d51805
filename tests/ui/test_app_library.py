"""AppTest for the Library page: list, search and filter saved debates; open, rename, delete, duplicate, re-run, resume.

Each test gets a fresh SQLite store (CLEARSIDE_DATA is a new tmp folder) seeded straight through the store API.
Actions that switch page are followed by AppTest within the same run, so a click ends on the target page (its
title and query parameters are checked); the next ``run()`` goes back to the Library, which ``switch_page``
made sticky. Background jobs are waited on by rerunning the Library until the store says they are done.
"""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime

import app_kit
import pytest
from app_kit import LIBRARY, AppTest, has, plain, run
from helpers import LiveResponder, fixture_dict, moderator_reply, orchestrator_reply, scripted_debate, side_reply

from clearside.errors import StoreError
from clearside.live import LiveConfig, LiveDebate
from clearside.live.exchange import load_live
from clearside.providers.scripted import ScriptedProvider
from clearside.schema import Proposition, Side
from clearside.static.recorder import StaticRecorder, start_static
from clearside.static.run import DebateRun
from clearside.store import NewDebate, Store
from clearside_ui import jobs

QUESTION = "Should we adopt microservices architecture?"


def finished(store, question: str = QUESTION, *, provider: str = "openai", model: str = "gpt-4") -> str:
    debate_id = start_static(store, DebateRun.from_input(question, geography="Global"), provider=provider, model=model)
    store.finish_static(debate_id, fixture_dict())
    return debate_id


def killed(store, question: str = QUESTION) -> str:
    """A static debate whose process died after the orchestrator and the FOR side finished: saved as running, with
    no job the runtime could finish it with."""
    run = DebateRun.from_input(question, geography="Global", domain="Software")
    debate_id = start_static(store, run, provider="scripted", model="script")
    proposition = Proposition.model_validate({**orchestrator_reply(), "raw_input": run.raw_input})
    store.save_section(debate_id, "proposition", proposition.dump())
    store.save_section(debate_id, "pro", Side.model_validate(side_reply("pro")).dump())
    return debate_id


def live(store, question: str = "Should cities ban private cars?") -> str:
    debate = LiveDebate.create(question, ScriptedProvider(), config=LiveConfig(words_per_minute=40),
                               context_fields={"geography": "Europe"}, store=store)
    return debate.transcript.id


def library(provider=None) -> AppTest:
    """The Library on ``provider`` (the sidebar's model), in this test's own store (``store``, conftest.py)."""
    return app_kit.open_page(LIBRARY, provider or ScriptedProvider())


def titles(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["Title"]) if at.dataframe else []


def ids(at: AppTest) -> list[str]:
    """The debate ids in the table, from its share links."""
    return [link.split("debate=")[1] for link in at.dataframe[0].value["Link"]] if at.dataframe else []


def pick(at: AppTest, debate_id: str) -> AppTest:
    return run(at.selectbox(key="lib_pick").set_value(debate_id))


def wait_done(at: AppTest, store, debate_id: str) -> None:
    app_kit.settle(at, lambda a: store.get(debate_id).status in ("done", "failed"), timeout=60)
    assert store.get(debate_id).status == "done", store.get(debate_id).data
    run(at)


def test_lists_newest_first_and_search_narrows_by_question_title_or_claims(store):
    first = finished(store, "Should we rewrite the billing service in Rust?")
    second = finished(store, "Should the city build a new tram line?")
    store.rename(second, "Tram plans")
    third = live(store)
    at = library()
    assert titles(at) == ["Should cities ban private cars?", "Tram plans", "Should we rewrite the billing service "
                          "in Rust?"]
    table = at.dataframe[0].value
    assert list(table.columns) == ["Title", "Link", "Kind", "Status", "Provider", "Model", "Created"]
    assert list(table["Link"]) == [f"timeline?debate={third}", f"./?debate={second}", f"./?debate={first}"]
    assert "3 saved debates match" in plain(at)
    for search, expected in (("rust billing", [first]), ("TRAM", [second]), ("tram line", [second]),
                             ("scalability", [second, first]), ("rust tram", [])):
        run(at.text_input(key="lib_search").set_value(search))
        assert ids(at) == expected, search
    assert "No saved debate matches these filters" in plain(at)
    run(at.button(key="lib_clear").click())
    assert len(titles(at)) == 3 and at.text_input(key="lib_search").value == ""
    assert at.button(key="lib_clear").disabled, "nothing left to clear"
    run(at.selectbox(key="lib_kind").set_value("static"))  # the cleared search does not come back
    assert at.text_input(key="lib_search").value == "" and ids(at) == [second, first]
    run(at.text_input(key="lib_search").set_value("tram"))
    assert not at.button(key="lib_clear").disabled and ids(at) == [second], "Clear is offered beside results too"
    run(at.button(key="lib_clear").click())
    assert at.selectbox(key="lib_kind").value == "" and at.text_input(key="lib_search").value == ""
    assert len(titles(at)) == 3


def test_each_filter_narrows_the_list(store):
    old = store.create(NewDebate("static", "Was the 2024 plan sound?", provider="ollama", model="llama3.2",
                                 status="done", created_at=datetime(2024, 1, 5, 12, tzinfo=UTC)))
    march = store.create(NewDebate("static", "Was the March plan sound?", provider="openai", model="gpt-4",
                                   status="failed", created_at=datetime(2024, 3, 10, 9, tzinfo=UTC)))
    static = finished(store, provider="openai", model="gpt-4o")
    talk = live(store)
    at = library()
    assert len(titles(at)) == 4
    assert at.selectbox(key="lib_provider").options == ["Any provider", "ollama", "openai", "scripted"]
    cases = [("lib_kind", "live", [talk]), ("lib_provider", "ollama", [old]), ("lib_model", "gpt-4", [march]),
             ("lib_status", "failed", [march]), ("lib_status", "running", [talk])]
    for key, value, expected in cases:
        run(at.selectbox(key=key).set_value(value))
        assert ids(at) == expected, (key, value)
        run(at.selectbox(key=key).set_value(""))
    run(at.date_input(key="lib_dates").set_value((date(2024, 1, 1), date(2024, 1, 31))))
    assert ids(at) == [old]
    run(at.date_input(key="lib_dates").set_value((date(2024, 1, 1), date(2024, 3, 10))))
    assert ids(at) == [march, old], "the last day is included"
    run(at.date_input(key="lib_dates").set_value((datetime.now(UTC).date(),)))
    assert set(ids(at)) == {static, talk}, "a single day: from that day on"


def test_debates_made_by_comparisons_and_regression_runs_are_kept_apart(store):
    mine = finished(store)
    compared = finished(store, "Should we compare models on this?")
    store.add_run("compare", provider="openai", model="gpt-4", debate_id=compared, status="done")
    at = library()
    assert ids(at) == [mine], "the runs' debates do not mix with the user's own"
    assert at.selectbox(key="lib_origin").value == "own"
    run(at.selectbox(key="lib_origin").set_value("runs"))
    assert ids(at) == [compared]
    run(at.selectbox(key="lib_origin").set_value(""))
    assert ids(at) == [compared, mine]
    run(at.button(key="lib_clear").click())
    assert ids(at) == [mine] and at.selectbox(key="lib_origin").value == "own", "Clear filters: back to the default"

    store.delete(mine)
    at = library()
    assert "Made by → Anyone" in plain(at)


def test_pagination_pages_through_the_results_and_a_new_filter_starts_at_page_one(store):
    for n in range(30):
        store.create(NewDebate("static", f"Question number {n:02d}?", provider="openai", model="gpt-4", status="done",
                               created_at=datetime(2025, 1, 1 + n, tzinfo=UTC)))
    at = library()
    assert len(titles(at)) == 25 and titles(at)[0] == "Question number 29?"
    assert "30 saved debates match · showing 1–25" in plain(at) and "Page 1 of 2" in plain(at)
    assert at.button(key="lib_prev").proto.disabled
    run(at.button(key="lib_next").click())
    assert titles(at) == [f"Question number {n:02d}?" for n in range(4, -1, -1)]
    assert "showing 26–30" in plain(at) and at.button(key="lib_next").proto.disabled
    assert len(at.selectbox(key="lib_pick").options) == 5, "the picker offers this page's debates"
    run(at.button(key="lib_prev").click())
    assert titles(at)[0] == "Question number 29?"
    run(at.button(key="lib_next").click())
    run(at.text_input(key="lib_search").set_value("number"))
    assert len(titles(at)) == 25 and titles(at)[0] == "Question number 29?"


def test_rename_persists_and_an_error_keeps_what_was_typed(store):
    debate_id = finished(store)
    at = library()
    assert at.text_input(key="lib_title").value == QUESTION, "prefilled with the current title"
    run(at.text_input(key="lib_title").set_value("Microservices, revisited"))
    run(at.button(key="lib_rename").click())
    assert store.get(debate_id).title == "Microservices, revisited"
    assert titles(at) == ["Microservices, revisited"] and "Renamed." in plain(at)
    run(at.text_input(key="lib_title").set_value("   "))
    run(at.button(key="lib_rename").click())
    assert "title cannot be empty" in plain(at) and store.get(debate_id).title == "Microservices, revisited"
    assert at.text_input(key="lib_title").value == "   ", "what was typed stays"
    run(at.text_input(key="lib_title").set_value("Deleted elsewhere"))
    store.delete(debate_id)  # by another session, after this page was drawn
    run(at.button(key="lib_rename").click())
    assert "No saved debate has the id" in plain(at)


def test_delete_asks_for_confirmation_and_cancel_keeps_the_debate(store):
    keep = finished(store, "Should we keep the monolith?")
    doomed = finished(store, "Should we delete everything?")
    at = library()
    assert at.selectbox(key="lib_pick").value == doomed
    run(at.button(key="lib_delete").click())
    assert store.exists(doomed)
    assert [w.value for w in at.warning] == ["Delete “Should we delete everything?”? This cannot be undone."]
    run(at.button(key="lib_delete_cancel").click())
    assert store.exists(doomed) and not at.warning and has(at, "lib_delete")
    run(at.button(key="lib_delete").click())
    run(at.button(key="lib_delete_confirm").click())
    assert not store.exists(doomed) and store.exists(keep)
    assert titles(at) == ["Should we keep the monolith?"] and "Deleted “Should we delete everything?”" in plain(at)
    run(at.button(key="lib_delete").click())
    run(at.button(key="lib_delete_confirm").click())
    assert any("No saved debates yet" in i.value for i in at.info), "deleting the last one leaves an empty library"


def test_duplicate_creates_a_copy_and_selects_it(store):
    original = finished(store)
    at = library()
    run(at.button(key="lib_duplicate").click())
    page = store.list()
    assert page.total == 2
    [copy] = [i for i in page.items if i.id != original]
    assert copy.parent_id == original and copy.title == f"Copy of {QUESTION}" and copy.status == "done"
    assert store.get(copy.id).document == store.get(original).document
    assert at.selectbox(key="lib_pick").value == copy.id and at.text_input(key="lib_title").value == copy.title
    assert f"Duplicated “{QUESTION}”" in plain(at)


def test_open_goes_to_the_debate_page_for_static_and_the_timeline_for_live(store):
    static, talk = finished(store), live(store)
    at = library()
    pick(at, static).button(key="lib_open").click().run()
    assert at.query_params == {"debate": static} and at.title[0].value == "ClearSide"
    run(at)
    assert at.title[0].value == "Library"
    pick(at, talk).button(key="lib_open").click().run()
    assert at.query_params == {"debate": talk} and at.title[0].value == "Timeline"


def test_rerun_with_another_model_saves_a_new_debate_linked_to_the_original(store):
    original = finished(store)
    provider = ScriptedProvider()
    provider.model = "other-model"  # the model argument names a script file
    scripted_debate(provider)
    at = library(provider)
    assert "Re-runs the question as a new static debate with **scripted:other-model**" in plain(at)
    at.button(key="lib_rerun").click().run()
    new_id = at.query_params.get("debate")
    assert new_id and new_id != original and at.title[0].value == "ClearSide"
    record = store.get(new_id)
    assert record.parent_id == original and record.question == QUESTION and record.model == "other-model"
    assert record.data["context"] == store.get(original).data["context"] == {"geography": "Global"}
    wait_done(at, store, new_id)
    assert store.get(original).model == "gpt-4", "the original is untouched"
    assert [len(provider.requests_for(a)) for a in ("orchestrator", "pro", "con", "moderator")] == [1, 1, 1, 1]


def test_rerun_of_a_live_debate_starts_a_new_live_debate_on_the_live_page(store):
    original = live(store)
    provider = ScriptedProvider(fallback=LiveResponder(speech_words=20))
    provider.model = "live-model"
    at = library(provider)
    at.button(key="lib_rerun").click().run()
    new_id = at.query_params.get("live")
    assert new_id and new_id != original and at.title[0].value == "Live debate"
    record = store.get(new_id)
    assert record.kind == "live" and record.parent_id == original and record.model == "live-model"
    wait_done(at, store, new_id)
    transcript = load_live(store, new_id)
    assert transcript.context == {"geography": "Europe"} and transcript.config["words_per_minute"] == 40
    assert len(transcript.turns) >= 21


def test_a_debate_another_host_is_generating_is_not_offered_for_resume(store):
    """The runtime says a saved debate is running (here started by the runtime beside the page, as another host
    would: the page holds no job for it), so the Library offers no Resume; once it is over it says so."""
    from clearside import runtime
    from clearside.static import workflow

    gate, asked = threading.Event(), threading.Event()
    provider = ScriptedProvider()
    provider.enqueue(lambda request: (asked.set(), gate.wait(60), orchestrator_reply())[2], agent="orchestrator")
    for agent, reply in (("pro", side_reply("pro")), ("con", side_reply("con")), ("moderator", moderator_reply())):
        provider.enqueue(reply, agent=agent)
    at = library()  # the dashboard hosts the runtime from its first page view
    debate_id = StaticRecorder(store, DebateRun.from_input(QUESTION), provider).id
    job_id = workflow.enqueue_static(debate_id, provider, store=store, here=True)
    try:
        assert asked.wait(60), "the debate never started"
        at = library()
        assert at.dataframe[0].value["Status"][0] == "running"
        pick(at, debate_id)
        assert not [b for b in at.button if b.key == "lib_resume"], "a second host would write the same debate"
        assert "Running on another host" in plain(at)
    finally:
        gate.set()
    assert runtime.wait(job_id, 60, store.url).status == "done"
    at = library()
    assert at.dataframe[0].value["Status"][0] == "done"


def test_an_interrupted_static_debate_is_announced_and_resume_generates_only_the_missing_sections(store):
    finished(store, "Should we keep the monolith?")
    debate_id = killed(store)
    provider = ScriptedProvider()
    provider.enqueue(side_reply("con"), agent="con")
    provider.enqueue(moderator_reply(), agent="moderator")
    at = library(provider)
    assert "Unfinished debates: 1** (1 interrupted)" in plain(at)
    assert at.dataframe[0].value["Status"][0] == "interrupted"
    pick(at, debate_id).button(key="lib_resume").click().run()
    assert at.query_params == {"debate": debate_id} and at.title[0].value == "ClearSide"
    wait_done(at, store, debate_id)
    assert not provider.requests_for("orchestrator") and not provider.requests_for("pro")
    assert len(provider.requests_for("con")) == 1 and len(provider.requests_for("moderator")) == 1
    document = store.get(debate_id).document
    assert document["pro"]["executive_summary"] == side_reply("pro")["executive_summary"], "the saved FOR is kept"
    assert document["con"]["executive_summary"] == side_reply("con")["executive_summary"]
    assert "Unfinished debates" not in plain(at) and not has(at, "lib_resume")


def test_another_browsers_interrupted_debate_is_read_only_and_rerun_is_still_offered(store):
    debate_id = killed(store)
    store.update(debate_id, data={"owner": "f" * 32})  # started in another browser
    at = pick(library(), debate_id)
    assert not has(at, "lib_resume") and "only that browser can resume it" in plain(at)
    assert has(at, "lib_rerun"), "a re-run makes the user's own debate"


def test_a_debate_running_on_this_server_offers_no_resume_and_no_delete(store):
    gate, asked = threading.Event(), threading.Event()
    provider = ScriptedProvider()
    provider.enqueue(lambda request: (asked.set(), gate.wait(30), orchestrator_reply())[2], agent="orchestrator")
    for agent, reply in (("pro", side_reply("pro")), ("con", side_reply("con")), ("moderator", moderator_reply())):
        provider.enqueue(reply, agent=agent)
    job = jobs.start_static(DebateRun.from_input(QUESTION), provider, temperature=0.4)
    assert asked.wait(30), "the runtime never started the debate"
    try:
        at = library(provider)
        assert at.dataframe[0].value["Status"][0] == "running" and "(1 running)" in plain(at)
        banner = app_kit.of_kind(at, "info") + app_kit.of_kind(at, "warning")
        assert "still being generated" in banner and "Resume" not in banner, "nothing to resume: it is running"
        stopped = killed(store, "Should we keep the monolith?")  # beside it, one that stopped: Resume is for it
        banner = app_kit.of_kind(library(provider), "warning")
        assert "(1 interrupted, 1 running)" in banner and "press **Resume**" in banner
        assert "Those running or queued are still being generated" in banner
        assert not has(at, "lib_resume") and at.button(key="lib_delete").proto.disabled
    finally:
        gate.set()
    store.delete(stopped)
    wait_done(at, store, job.id)
    assert at.dataframe[0].value["Status"][0] == "done" and "Unfinished debates" not in plain(at)


def test_a_live_debate_is_resumed_on_the_live_page(store):
    talk = live(store)
    at = library()
    at.button(key="lib_resume").click().run()
    assert at.query_params == {"live": talk} and at.title[0].value == "Live debate"


def test_user_and_model_text_is_escaped(store):
    question = "Is <script>alert(1)</script> **bold** [x](javascript:alert(1)) safe?"
    debate_id = finished(store, question)
    at = library()
    [shown] = [m.value for m in at.markdown if m.value.startswith("**Question:**")]
    assert "<script>" not in shown and "\\<script\\>" in shown and "\\*\\*bold\\*\\*" in shown
    assert at.dataframe[0].value["Title"][0] == question, "the table shows it literally"
    run(at.button(key="lib_delete").click())
    [warning] = at.warning
    assert "<script>" not in warning.value and "\\[x\\]\\(javascript" in warning.value
    run(at.button(key="lib_delete_cancel").click())
    run(at.button(key="lib_duplicate").click())
    assert all("<script>" not in s.value for s in at.success) and store.exists(debate_id)


def test_a_store_failure_is_shown_escaped_and_keeps_what_was_typed(store, monkeypatch):
    finished(store)
    at = library()
    at.text_input(key="lib_search").set_value("microservices")
    run(at.text_input(key="lib_title").set_value("A *better* title"))
    working = Store.list

    def down(*args, **kwargs):
        raise StoreError("Could not read the debate store (sqlite:///<db>): disk I/O error.")

    monkeypatch.setattr(Store, "list", down)
    run(at)
    [error] = at.error
    assert "Could not read the debate store" in error.value and "\\<db\\>" in error.value and not at.dataframe
    monkeypatch.setattr(Store, "list", working)
    run(at)
    assert at.text_input(key="lib_search").value == "microservices" and len(titles(at)) == 1
    assert at.text_input(key="lib_title").value == "A *better* title"


def test_an_empty_library_points_to_the_debate_and_live_pages(store):
    at = library()
    assert any("No saved debates yet" in i.value for i in at.info)
    assert [link.proto.label for link in at.get("page_link")] == ["Go to Debate", "Go to Live debate"]
    assert not at.dataframe and not any(t.key == "lib_search" for t in at.text_input)


def test_a_queued_debate_shows_as_queued_and_is_not_offered_for_resume(store):
    from clearside import runtime
    from clearside.static import workflow as workflows

    provider = ScriptedProvider()
    debate_id = StaticRecorder(store, DebateRun.from_input(QUESTION), provider).id
    try:
        workflows.enqueue_static(debate_id, provider, lend=False)  # no host here: it stays queued
        at = library()
        assert at.dataframe[0].value["Status"][0] == "queued"
        pick(at, debate_id)
        assert not [b for b in at.button if b.key == "lib_resume"], "a worker will generate it"
        assert "Queued for a worker" in plain(at)
    finally:
        runtime.reset()


def test_a_debate_with_versions_shows_how_many_re_maps_it_has_counted_in_one_query(store, monkeypatch):
    question = "Is <b>two</b> *re-maps* enough?"
    plain_id = finished(store, "Should the city build a new tram line?")
    remapped = finished(store, question)
    body = {"weights": {"economic": 3}, "stances": [], "document": fixture_dict()}
    for label in ("economic 3", "<i>social</i> 2"):
        store.add_version(remapped, "remap", body, label=label, provider="scripted", model="script")
    counted = []
    counts = Store.version_counts

    def version_counts(self, debate_ids):
        counted.append(list(debate_ids))
        return counts(self, counted[-1])

    monkeypatch.setattr(Store, "version_counts", version_counts)
    monkeypatch.setattr(Store, "versions", lambda *a, **k: pytest.fail("the Library reads no version one by one"))
    at = library()
    table = at.dataframe[0].value
    assert list(table.columns) == ["Title", "Link", "Kind", "Status", "Versions", "Provider", "Model", "Created"]
    assert dict(zip(ids(at), table["Versions"], strict=True)) == {remapped: "2 re-maps", plain_id: ""}
    assert counted == [[remapped, plain_id]], "one count for the whole page"
    [caption] = [c.value.replace("\\", "") for c in at.caption if "created" in c.value]  # escaped: re\-maps
    assert caption.endswith("· 2 re-maps"), caption
    [option] = [o for o in at.selectbox(key="lib_pick").options if "re-map" in o]
    assert "· 2 re-maps ·" in option and option.startswith(question), "a plain-text label, the title as typed"
    [shown] = [m.value for m in at.markdown if m.value.startswith("**Question:**")]
    assert "<b>" not in shown and "\\<b\\>" in shown and "\\*re\\-maps\\*" in shown
    pick(at, plain_id)
    assert not [c.value for c in at.caption if "re-map" in c.value.replace("\\", "")]
    assert len(counted) == 2 and all(len(batch) == 2 for batch in counted), "still one count per run"


@pytest.mark.parametrize(("selection", "picked"), [
    ({"rows": [], "cells": [[1, "Title"]]}, "b" * 32),  # a click on the second debate's title (a cell)
    ({"rows": [2], "cells": []}, "c" * 32),  # its box ticked
    ({"rows": [], "cells": []}, None),  # a click that cleared the selection picks nothing
    ({"rows": [], "cells": [[7, "Title"]]}, None),  # a row the page no longer has
])
def test_a_click_on_a_title_cell_or_a_rows_box_picks_that_debate(monkeypatch, selection, picked):
    from clearside_ui import library_actions
    from clearside_ui.state import Library

    state = {Library.TABLE: {"selection": selection}, Library.CONFIRM: "a" * 32}
    monkeypatch.setattr(library_actions.st, "session_state", state)
    library_actions.row_picked(["a" * 32, "b" * 32, "c" * 32])
    assert state.get(Library.PICK) == picked
    assert (Library.CONFIRM in state) == (picked is None), "a new pick drops a pending delete's question"
