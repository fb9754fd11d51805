"""AppTest for the Compare models page: 2-4 models side by side, metrics, charts and shared arguments.

Models are ``scripted:FILE`` specs (one script file per model), so every debate is deterministic and the page
builds them through the registry as a user's typed strings would be. Each test has its own SQLite store
(CLEARSIDE_DATA). Timers never fire in AppTest: a running comparison is followed by rerunning the page until the
store says every debate is over. The first metrics call loads the embedding model (about 10 s), hence the timeouts.
"""

from __future__ import annotations

import re
import threading
import time

import app_kit
import helpers
import pytest
from app_kit import COMPARE, AppTest, plain, run
from helpers import flagship_replies, flagship_script

from clearside.errors import InputError
from clearside.providers.scripted import ScriptedProvider
from clearside.quality import compare
from clearside.runtime import steps
from clearside_ui.format import when

QUESTION = "Should the U.S. impose a temporary moratorium on new AI data centers?"


def page(compare_id: str | None = None) -> AppTest:
    """The Compare page, the sidebar's model scripted:script (``store``, from conftest.py, is this test's own)."""
    query = {"compare": compare_id} if compare_id is not None else None
    return app_kit.open_page(COMPARE, ScriptedProvider(), query=query, timeout=60)


def errors(at: AppTest) -> str:
    return "\n".join(e.value for e in at.error).replace("\\", "")


def models(at: AppTest) -> list[str]:
    return [at.text_input(key=f"cmp_model_{row}").value for row in at.session_state["cmp_rows"]]


def fill(at: AppTest, question: str, specs: list[str]) -> AppTest:
    """Type the question and one spec per row (adding rows as needed), then press Compare."""
    at.text_area(key="cmp_question").set_value(question)
    while len(at.session_state["cmp_rows"]) < len(specs):
        run(at.button(key="cmp_add").click())
    for row, spec in zip(at.session_state["cmp_rows"], specs, strict=False):
        at.text_input(key=f"cmp_model_{row}").set_value(spec)
    return run(at.button(key="cmp_start").click())


def batch_of(at: AppTest) -> str:
    value = at.query_params.get("compare")
    return value[0] if isinstance(value, list) else value


def wait_done(at: AppTest, store, batch: str) -> AppTest:
    def over(a: AppTest) -> bool:
        rows = [r for r in store.runs("compare") if r["data"].get("batch") == batch]
        return bool(rows) and all(r["status"] in ("done", "failed") for r in rows) and any(
            "Arguments across models" in s.value for s in a.header) and not any(
            "Shown when every model" in i.value for i in a.info)
    return app_kit.settle(at, over, timeout=120, pause=0.2)


def frame_with(at: AppTest, column: str):
    return [d.value for d in at.dataframe if column in d.value.columns]


def table_created(store) -> str:
    return store.runs("compare")[0]["created_at"]


def other_con() -> dict:
    """An on-topic case AGAINST with three points the flagship replies do not make (its assumptions kept)."""
    from clearside.quality.references import flagship

    con = flagship_replies()["con"]
    rest = flagship().document["con"]["arguments"][4:]
    picked = [arg for i, arg in enumerate(rest) if arg["category"] not in {a["category"] for a in rest[:i]}]
    con["arguments"] = [{**arg, "explanation": arg["explanation"].split(". ")[0].rstrip(".")[:170] + "."}
                        for arg in picked[:3]]
    return con


def two_specs(tmp_path) -> tuple[str, str]:
    return (flagship_script(tmp_path, 1, name="a.json"),
            flagship_script(tmp_path, 1, name="b.json", con=other_con()))


def test_two_models_side_by_side_with_metrics_charts_and_shared_arguments(store, tmp_path):
    a, b = two_specs(tmp_path)
    at = page()
    assert models(at) == ["scripted:script", ""], "the first row is the sidebar's model"
    at = fill(at, QUESTION, [a, b])
    assert not at.error, errors(at)
    batch = batch_of(at)
    assert re.fullmatch(r"[0-9a-f]{32}", batch), at.query_params
    assert at.session_state["cmp_batch"] == batch
    wait_done(at, store, batch)
    assert batch_of(at) == batch, "the address is the share link"

    shown = plain(at)
    assert f"Question:** {QUESTION}" in shown
    la, lb = compare.short(a), compare.short(b)
    assert (la, lb) == ("scripted:a.json", "scripted:b.json"), "a path is labelled by its file name"
    assert shown.count("✓ done") == 2 and la in shown and lb in shown
    pro_claim = flagship_replies()["pro"]["arguments"][0]["claim"]
    assert f"- {pro_claim}" in shown and f"- {other_con()['arguments'][0]['claim']}" in shown
    links = [link.proto for link in at.get("page_link")]
    rows = {r["data"]["label"]: r for r in store.runs("compare")}
    assert [p.query_string for p in links if p.label == "Open the full debate"] == [
        f"debate={rows[la]['debate_id']}", f"debate={rows[lb]['debate_id']}"], "each column links its debate"

    [table] = frame_with(at, "better")
    assert list(table.columns) == ["metric", la, lb, "better", "meaning"]
    assert table.set_index("metric").loc["schema_valid", la] == 1.0
    assert table.set_index("metric").loc["count_ratio", "better"] == "higher"
    charts = at.get("plotly_chart")
    assert len(charts) == 2, "quality metrics and cost"
    [costs] = frame_with(at, "Wall time (s)")  # time and tokens per model, as a table too
    assert list(costs["Model"]) == [la, lb]
    assert all(costs["Wall time (s)"] > 0) and list(costs["Wall time (s)"]) == [
        rows[la]["data"]["wall_seconds"], rows[lb]["data"]["wall_seconds"]]
    assert list(costs["Completion tokens"]) == [
        rows[label]["metrics"]["completion_tokens"] for label in (la, lb)]

    pro, con = frame_with(at, "Appears in")
    assert list(pro.columns) == ["Point", "Appears in", "Models", la, lb]
    shared = pro[pro["Appears in"] == "2 of 2 models"]
    assert len(shared) == len(flagship_replies()["pro"]["arguments"]), "both models made the same FOR case"
    assert set(shared["Point"]) == {arg["claim"] for arg in flagship_replies()["pro"]["arguments"]}
    assert set(con["Appears in"]) == {"1 of 2 models"}, "their AGAINST cases differ"
    assert "FOR: 4 points made by both models." in plain(at)

    assert {r["status"] for r in rows.values()} == {"done"} and {r["data"]["batch"] for r in rows.values()} == {batch}
    for row in rows.values():
        assert store.get(row["debate_id"]).status == "done" and store.get(row["debate_id"]).document
    assert at.selectbox(key="cmp_full").options == [la, lb], "either debate can be read in full"
    assert {r["data"]["spec"] for r in rows.values()} == {a, b}, "the full spec is kept with each run"


def test_validation_errors_are_clear_and_keep_what_was_typed(store, tmp_path):
    a, b = two_specs(tmp_path)
    at = page()
    at = fill(at, QUESTION, [a, ""])
    assert "2 to 4" in errors(at) and "got 1" in errors(at)
    assert at.text_area(key="cmp_question").value == QUESTION and models(at) == [a, ""]

    run(at.button(key="cmp_add").click())
    run(at.text_input(key=f"cmp_model_{at.session_state['cmp_rows'][2]}").set_value("nosuch:x"))
    run(at.button(key="cmp_start").click())
    assert "Model 3: Unknown provider 'nosuch'" in errors(at), "the error names the row, blank rows counted"
    assert models(at) == [a, "", "nosuch:x"]
    run(at.button(key=f"cmp_remove_{at.session_state['cmp_rows'][1]}").click())

    at = fill(at, QUESTION, [a, a])
    assert "Model 1 (" in errors(at) and "and Model 2 (" in errors(at) and "same temperature (0.4)" in errors(at)

    long = (QUESTION + " ") * 30
    at = fill(at, long[:620], [a, b])
    assert at.text_area(key="cmp_question").value == long[:620], "a long paste is kept whole"
    assert "620 characters long; the limit is 500. Shorten it by 120" in errors(at)
    said = [e for kind in app_kit.TEXT_KINDS for e in at.get(kind) if "Shorten it by 120" in e.value]
    assert len(said) == 1 and said[0].type == "error", "said once: the note under the box is the refusal"

    at = fill(at, "   ", [a, b])
    assert "Question is empty" in errors(at)
    assert models(at) == [a, b] and at.text_area(key="cmp_question").value == "   "
    assert not store.runs("compare") and "compare" not in at.query_params, "nothing was started"

    at = fill(at, QUESTION, [a, b])
    assert not at.error and batch_of(at), "a valid form clears the error"


def test_rows_can_be_added_up_to_four_and_removed_down_to_two(store):
    at = page()
    assert at.button(key="cmp_remove_0").proto.disabled and at.button(key="cmp_remove_1").proto.disabled
    at.text_input(key="cmp_model_1").set_value("ollama:llama3.2")
    run(at.button(key="cmp_add").click())
    run(at.button(key="cmp_add").click())
    assert len(at.session_state["cmp_rows"]) == 4 and at.button(key="cmp_add").proto.disabled
    run(at.text_input(key="cmp_model_3").set_value("openai:gpt-4o-mini"))
    run(at.button(key="cmp_remove_0").click())
    assert models(at) == ["ollama:llama3.2", "", "openai:gpt-4o-mini"], "the other rows keep what was typed"
    assert not at.button(key="cmp_add").proto.disabled
    assert [t.label for t in at.text_input if t.key.startswith("cmp_model_")] == ["Model 1", "Model 2", "Model 3"]


def test_a_failing_model_shows_its_error_beside_the_other_result(store, tmp_path):
    good = flagship_script(tmp_path, 1, name="good.json")
    bad = flagship_script(tmp_path, 3, name="bad.json", pro={"__error__": "provider", "message": "boom"})
    at = fill(page(), QUESTION, [good, bad])
    batch = batch_of(at)
    wait_done(at, store, batch)
    assert [e.value for e in at.error] == ["boom"]
    assert "✓ done" in plain(at) and "✗ failed" in plain(at)
    [table] = frame_with(at, "better")
    good_label, bad_label = compare.short(good), compare.short(bad)
    assert list(table.columns) == ["metric", good_label, "better", "meaning"], "only the finished model is scored"
    assert any("Needs at least two finished debates" in i.value for i in at.info)
    rows = {r["data"]["label"]: r["status"] for r in store.runs("compare")}
    assert rows == {good_label: "done", bad_label: "failed"}


def test_shared_arguments_count_only_the_models_that_finished(store, tmp_path):
    a, b = two_specs(tmp_path)
    bad = flagship_script(tmp_path, 3, name="bad.json", pro={"__error__": "provider", "message": "boom"})
    at = fill(page(), QUESTION, [a, b, bad])
    wait_done(at, store, batch_of(at))
    assert plain(at).count("✓ done") == 2 and plain(at).count("✗ failed") == 1
    links = [link.proto.label for link in at.get("page_link") if link.proto.label.startswith("Open ")]
    assert links == ["Open the full debate", "Open the full debate", "Open what was saved"]
    pro, _con = frame_with(at, "Appears in")
    assert set(pro["Appears in"]) == {"2 of 2 models"} and compare.short(bad) not in pro.columns
    [caption] = [c.value for c in at.caption if c.value.startswith("FOR")]
    assert caption.replace("\\", "") == "FOR: 4 points made by both models. AGAINST: 6 points made by one model."


def test_a_saved_comparison_reopens_from_its_link_and_an_unknown_one_is_a_clear_error(store, tmp_path):
    a, b = two_specs(tmp_path)
    at = fill(page(), QUESTION, [a, b])
    batch = batch_of(at)
    wait_done(at, store, batch)

    other = page(batch)  # a new session: the comparison is loaded from the store
    assert not other.error and batch_of(other) == batch
    assert other.session_state["cmp_batch"] == batch
    assert f"Question:** {QUESTION}" in plain(other) and plain(other).count("✓ done") == 2
    [table] = frame_with(other, "better")
    assert list(table.columns) == ["metric", compare.short(a), compare.short(b), "better", "meaning"]
    pro, _con = frame_with(other, "Appears in")
    assert (pro["Appears in"] == "2 of 2 models").sum() == 4
    pick = other.selectbox(key="cmp_pick")
    assert pick.value == batch and pick.options == [f"{QUESTION} · 2 models · {when(table_created(store))}"]
    [earlier] = frame_with(other, "Link")
    assert list(earlier["Link"]) == [f"compare?compare={batch}"] and earlier["Question"][0] == QUESTION

    unknown = page("0" * 32)
    assert "No comparison has the id 00000000000000000000000000000000" in errors(unknown)
    assert not frame_with(unknown, "better")
    run(unknown.button(key="cmp_open").click())
    assert batch_of(unknown) == batch and not unknown.error, "reopened from the earlier comparisons"


def test_user_and_model_text_is_escaped(store, tmp_path):
    question = f"{QUESTION} <script>alert(1)</script> **bold** [x](javascript:alert(1))"
    hostile = flagship_replies()["con"]  # on topic, so the substance checks keep every claim
    # short whole sentences on the question (a claim cut mid-phrase would be ended or dropped by the checks)
    claims = ["AI is a strategic technology for national power.",
              "Slowing new data centers helps foreign competitors.",
              "University labs lose research time without computing.",
              "A moratorium favors large firms that build abroad."]
    hostile["arguments"] = [{**arg, "claim": f"<img src=x onerror=alert(1)> **claim** {n}: {claims[n]}"}  # <= 110
                            for n, arg in enumerate(hostile["arguments"])]
    a = flagship_script(tmp_path, 1, name="a.json")
    b = flagship_script(tmp_path, 1, name="b<i>.json", con=hostile)
    at = fill(page(), question, [a, b])
    wait_done(at, store, batch_of(at))
    for element in [*at.markdown, *at.caption, *at.error, *at.info]:
        assert not re.search(r"(?<!\\)[<>]", element.value), element.value  # every angle bracket is escaped
        assert "**bold**" not in element.value and "**claim**" not in element.value
        assert "](javascript" not in element.value
    [shown] = [m.value for m in at.markdown if m.value.startswith("**Question:**")]
    assert "\\<script\\>" in shown and "\\*\\*bold\\*\\*" in shown
    assert any("\\<img src\\=x onerror\\=alert\\(1\\)\\> \\*\\*claim\\*\\* 0" in m.value for m in at.markdown)
    _pro, con = frame_with(at, "Appears in")
    assert hostile["arguments"][0]["claim"] in set(con["Point"]), "tables show it literally"
    for chart in at.get("plotly_chart"):
        assert "<i>" not in chart.proto.spec and "b&lt;i&gt;.json" in chart.proto.spec


def test_compare_rows_use_injected_providers_first(store):
    first, second = ScriptedProvider(), ScriptedProvider()
    second.model = "second"
    for provider in (first, second):
        helpers.scripted_debate(provider)
    at = page()
    at.session_state["cmp_providers_override"] = {"one": first, "two": second}
    at = fill(at, "Should we adopt microservices architecture?", ["one", "two"])
    batch = batch_of(at)
    wait_done(at, store, batch)
    assert {r["data"]["label"] for r in store.runs("compare")} == {"scripted:script", "scripted:second"}
    assert len(first.requests_for("pro")) == 1 and len(second.requests_for("pro")) == 1
    report, documents = compare.load(store, batch)
    assert set(documents) == {"scripted:script", "scripted:second"} and report["state"] == "done"


def fast_done_slow_waiting(gate: threading.Event) -> tuple[AppTest, str]:
    """A comparison of two scripted models: "fast" has finished, "slow"'s moderator waits for ``gate``."""
    fast, slow = ScriptedProvider(), ScriptedProvider()
    fast.model, slow.model = "fast", "slow"
    helpers.scripted_debate(fast)
    helpers.scripted_debate(slow, moderator=lambda request: (gate.wait(60), helpers.moderator_reply())[1])
    at = page()
    at.session_state["cmp_providers_override"] = {"fast": fast, "slow": slow}
    at = fill(at, "Should we adopt microservices architecture?", ["fast", "slow"])
    batch = batch_of(at)
    # both: the fast model done, and the slow one's moderator called (its checks before that can take a while)
    app_kit.settle(at, lambda a: "✓ **scripted:fast**: done" in plain(a) and "◔ moderator" in plain(a), timeout=90)
    return at, batch


def test_while_running_each_model_shows_its_status_and_finished_debates_appear_first(store):
    gate = threading.Event()
    try:
        at, batch = fast_done_slow_waiting(gate)
        claim = helpers.side_reply('pro')['arguments'][0]['claim']
        # the fast model's row says done a rerun before its document is read (a loaded machine saw that rerun)
        app_kit.settle(at, lambda a: f"- {claim}" in plain(a), timeout=30)
        shown = plain(at)
        assert "Debating…" in shown and "◐ **scripted:slow**: running" in shown, "the slow one is still running"
        # its moderator was asked and has not written yet: waiting for the model, as the Debate page says it
        assert "✓ proposition · ✓ FOR · ✓ AGAINST · ◔ moderator (waiting for the model)" in shown, shown
        # the time it has run, and each model's usual time here (the slow one has never finished a debate)
        assert "Running for 0:" in shown and "scripted:slow: no estimate yet" in shown, shown
        assert f"- {claim}" in shown, "the finished debate is shown already"
        assert any("Shown when every model" in i.value for i in at.info)
        assert at.button(key="cmp_start").proto.disabled, "no second start while this one runs"
    finally:
        gate.set()
    wait_done(at, store, batch)
    assert "Debating…" not in plain(at) and plain(at).count("✓ done") == 2
    # every debate's row is done a moment before the comparison's own job ends: Compare comes back then
    app_kit.settle(at, lambda a: not a.button(key="cmp_start").proto.disabled, timeout=30)


def test_a_running_comparison_can_be_cancelled_keeping_what_finished(store):
    gate = threading.Event()
    try:
        at, batch = fast_done_slow_waiting(gate)
        run(at.button(key="cmp_cancel").click())
        # a running call looks for a cancel at most every CANCEL_CHECK_SECONDS; the moderator's last look was
        # at its start, just now: past that, its first token meets the cancel
        time.sleep(steps.CANCEL_CHECK_SECONDS + 0.2)
    finally:
        gate.set()
    app_kit.settle(at, lambda a: not any(b.key == "cmp_cancel" for b in a.button) and "■ cancelled" in plain(a),
                   timeout=90)
    rows = {r["data"]["label"]: r for r in store.runs("compare") if r["data"]["batch"] == batch}
    assert rows["scripted:fast"]["status"] == "done" and rows["scripted:slow"]["status"] == "cancelled"
    slow_debate = store.get(rows["scripted:slow"]["debate_id"])
    assert slow_debate.status == "paused" and set(store.sections(slow_debate.id)) >= {"proposition", "pro", "con"}
    assert "Cancelled. Whatever finished is saved" in plain(at)
    report, _documents = compare.load(store, batch)
    assert report["state"] == "done", "a cancelled comparison is over, and reopens as such"
    assert not at.button(key="cmp_start").proto.disabled


def test_earlier_comparisons_count_every_model_they_were_started_with(store):
    """A row is saved when a model's debate starts: a comparison cancelled before its second model started still
    compared 2 models; a comparison saved before the count was kept says what it saved, in the singular for one."""
    for batch, planned in (("a" * 32, 2), ("b" * 32, None)):
        data = {"batch": batch, "question": QUESTION, "label": "scripted:one", "position": 0,
                **({"planned": planned} if planned else {})}
        store.add_run("compare", provider="scripted", model="one", data=data)
    options = page().selectbox(key="cmp_pick").options
    assert [option.split(" · ")[1] for option in options] == ["1 model", "2 models"], options


def test_a_user_with_only_the_built_in_model_is_told_to_compare_two_temperatures(store):
    shown = app_kit.of_kind(app_kit.open_page(COMPARE), "info")  # the sidebar's own model: the built-in one
    assert "Only the built-in model here?" in shown and "two temperatures" in shown
    assert "Only the built-in model here?" not in plain(page()), "a user of another model is not told"


def test_two_rows_naming_the_same_model_are_refused(store):
    one, same = ScriptedProvider(), ScriptedProvider()
    at = page()
    at.session_state["cmp_providers_override"] = {"one": one, "same": same}
    at = fill(at, "Should we adopt microservices architecture?", ["one", "same"])
    assert "Model 1 (one) and Model 2 (same) name the same model at the same temperature" in errors(at)
    assert not store.runs("compare")


def test_what_was_typed_and_the_comparison_shown_survive_a_visit_to_another_page(store, tmp_path):
    a, b = two_specs(tmp_path)
    at = fill(page(), QUESTION, [a, b])
    batch = batch_of(at)
    wait_done(at, store, batch)
    at.switch_page("clearside_ui/app_pages/library.py")
    assert run(at).title[0].value == "Library"
    at.query_params.clear()
    at.switch_page(COMPARE)
    run(at)
    assert at.text_area(key="cmp_question").value == QUESTION and models(at) == [a, b]
    assert batch_of(at) == batch and "Arguments across models" in [s.value for s in at.header]
    run(at.button(key="cmp_new").click())
    assert "compare" not in at.query_params and not frame_with(at, "better")
    assert at.text_area(key="cmp_question").value == QUESTION, "a new comparison starts from the same inputs"


def test_a_rerun_carrying_the_address_from_before_new_comparison_does_not_bring_the_old_one_back(store, tmp_path):
    """A running comparison's poll may ask for a page run just as the user presses "New comparison"; that run carries
    the address the browser had before (``?compare=<old>``). It is not the user's link: the page stays new, and
    the Compare button stays usable. Opened again from another page, the same link is the user's."""
    a, b = two_specs(tmp_path)
    at = fill(page(), QUESTION, [a, b])
    batch = batch_of(at)
    wait_done(at, store, batch)
    run(at.button(key="cmp_new").click())
    assert "compare" not in at.query_params
    at.query_params["compare"] = batch  # the stale address, as the poll's rerun sends it
    run(at)
    assert at.session_state["cmp_batch"] is None and "compare" not in at.query_params, "the old one came back"
    assert not frame_with(at, "better") and not at.button(key="cmp_start").disabled
    at.switch_page("clearside_ui/app_pages/library.py")
    run(at)
    at.query_params["compare"] = batch  # a link to it, opened from another page
    at.switch_page(COMPARE)
    run(at)
    assert batch_of(at) == batch and at.session_state["cmp_batch"] == batch, "a link the user opens is shown"


def test_each_row_has_its_own_temperature_so_one_model_can_be_compared_at_two(store):
    one, same = ScriptedProvider(), ScriptedProvider()
    for provider in (one, same):
        helpers.scripted_debate(provider)
    at = page()
    first, second = at.session_state["cmp_rows"]
    assert at.number_input(key=f"cmp_temp_{first}").value == 0.4, "a row starts at the sidebar's temperature"
    at.session_state["cmp_providers_override"] = {"one": one, "same": same}
    run(at.number_input(key=f"cmp_temp_{second}").set_value(0.9))
    at = fill(at, "Should we adopt microservices architecture?", ["one", "same"])
    assert not at.error, errors(at)
    wait_done(at, store, batch_of(at))
    assert {round(r.temperature, 2) for r in one.requests_for("pro")} == {0.4}
    assert {round(r.temperature, 2) for r in same.requests_for("pro")} == {0.9}
    runs = {r["data"]["label"]: r["data"]["temperature"] for r in store.runs("compare")}
    assert runs == {"scripted:script · T 0.4": 0.4, "scripted:script · T 0.9": 0.9}, "labels tell them apart"


def test_each_row_has_its_own_strategy_so_one_model_runs_as_a_debate_and_as_the_single_pass_control(store):
    debate, control = ScriptedProvider(), ScriptedProvider()
    helpers.scripted_debate(debate)
    control.enqueue(helpers.orchestrator_reply(), agent="orchestrator")
    control.enqueue(helpers.single_reply(), agent="single")
    at = page()
    first, second = at.session_state["cmp_rows"]
    assert at.selectbox(key=f"cmp_strategy_{first}").value == "auto", "a row starts at the sidebar's strategy"
    at.session_state["cmp_providers_override"] = {"debate": debate, "control": control}
    run(at.selectbox(key=f"cmp_strategy_{second}").set_value("single"))
    at = fill(at, "Should we adopt microservices architecture?", ["debate", "control"])
    assert not at.error, errors(at)
    wait_done(at, store, batch_of(at))
    assert len(debate.requests_for("pro")) == 1 and not debate.requests_for("single")
    assert len(control.requests_for("single")) == 1 and not control.requests_for("pro")
    runs = {r["data"]["label"]: r["data"]["strategy"] for r in store.runs("compare")}
    assert runs == {"scripted:script · auto": None, "scripted:script · single": "single"}, "labels tell them apart"


def test_an_unreachable_model_is_refused_before_anything_starts(store, tmp_path):
    from helpers import free_port

    a, _b = two_specs(tmp_path)
    at = page()
    at.session_state["ollama_host"] = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    at = fill(at, "Should we adopt microservices architecture?", [a, "ollama:llama3.2"])
    message = errors(at)
    assert "Model 2 (ollama:llama3.2) cannot run, so nothing was started" in message
    assert "Ollama is not reachable" in message and "--provider" not in message, "dashboard wording"
    assert not store.runs("compare") and batch_of(at) is None, "no comparison was started"
    assert models(at) == [a, "ollama:llama3.2"], "what was typed is kept"


def test_the_same_gguf_by_name_and_by_its_path_is_one_model():
    from clearside.providers import get_provider

    by_name = get_provider("embedded")
    by_path = get_provider(f"embedded:{by_name.path}")
    assert by_name.spec != by_path.spec and by_name.identity == by_path.identity
    with pytest.raises(InputError, match="name the same model at the same temperature"):
        compare.checked([by_name, by_path], compare.Settings())
    assert compare.checked([by_name, by_path], compare.Settings(temperatures=(0.2, 0.8))).labels == [
        "embedded · T 0.2", f"embedded:{by_name.path.name} · T 0.8"]
    # one model as a debate and as the single-pass control: two configurations, labelled by strategy
    plan = compare.checked([by_name, by_name], compare.Settings(strategies=(None, "single")))
    assert plan.labels == ["embedded · auto", "embedded · single"] and plan.strategies == [None, "single"]
    with pytest.raises(InputError, match="same temperature and strategy"):
        compare.checked([by_name, by_path], compare.Settings(strategies=("single", "single")))
    with pytest.raises(InputError, match="Unknown generation strategy 'quick'"):
        compare.checked([by_name, by_path], compare.Settings(strategies=("quick", None)))


def test_labels_are_short_and_distinct():
    assert compare.short("embedded:/models/deep/dir/SmolLM2-135M-Instruct.Q4_1.gguf") == \
        "embedded:SmolLM2-135M-Instruct.Q4_1.gguf"
    assert compare.short("ollama:llama3.2") == "ollama:llama3.2"
    long = compare.short("openai:" + "m" * 80)
    assert len(long) <= compare.LABEL_CHARS and "…" in long


def test_the_same_point_in_other_words_is_grouped_across_models_and_a_different_point_is_not():
    """two claims across models are "the same point" at cosine >= 0.65 of their embeddings (the MiniLM the
    checks use), so a paraphrase sharing few words is grouped, and another point on the same topic is not."""
    water = ("Data centers use large amounts of water to cool their servers",
             "Cooling the servers in these facilities consumes huge volumes of water")
    bills = ("New data centers raise electricity bills for nearby households",
             "Households living close to data centers end up paying higher power bills")
    for a, b in (water, bills):  # paraphrases: under a quarter of their words in common
        words_a, words_b = set(a.lower().split()), set(b.lower().split())
        assert len(words_a & words_b) / len(words_a | words_b) < 0.25, (a, b)
    jobs = "A moratorium would drive AI investment and jobs overseas"
    rules = "Stopping construction for a while lets lawmakers draft regulations for AI facilities"

    def document(*claims: str) -> dict:
        return {"pro": {"arguments": [{"claim": claim} for claim in claims]}, "con": {"arguments": []}}

    points = compare.agreement({"B": document(water[1], bills[1], rules), "A": document(water[0], bills[0], jobs)})
    grouped = {row["claim"]: (row["models"], row["wording"]) for row in points}
    assert grouped == {water[0]: (["A", "B"], {"A": water[0], "B": water[1]}),
                       bills[0]: (["A", "B"], {"A": bills[0], "B": bills[1]}),
                       jobs: (["A"], {"A": jobs}), rules: (["B"], {"B": rules})}
    assert [(row["k"], row["n"]) for row in points] == [(2, 2), (2, 2), (1, 2), (1, 2)]
