"""AppTest for the Debate page on the scripted provider: generate, read, challenge, export."""

from __future__ import annotations

import json
import re

import app_kit as kit
import helpers
import pytest
from app_kit import AppTest, generate, open_page, text_of
from app_kit import settle_debate as settle
from helpers import challenge_reply, scripted_debate, side_reply

from clearside.contract import jsonschema_errors
from clearside.providers.scripted import ScriptedProvider
from clearside.schema import Document
from clearside.static.recorder import load_run, start_static
from clearside_ui.debate_view import opening
from clearside_ui.format import esc
from clearside_ui.state import Challenge


@pytest.fixture
def app():
    return kit.debate_app()


def test_generate_shows_three_sections_then_challenge_then_exports(app):
    at, provider = app
    replies = scripted_debate(provider, pro=side_reply("pro"), con=side_reply("con"))
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    page = text_of(at)
    assert ":green[FOR]" in page and ":red[AGAINST]" in page and ":gray[MODERATOR SYNTHESIS]" in page
    for argument in replies["pro"]["arguments"] + replies["con"]["arguments"]:
        assert argument["claim"].replace(" ", "") in page.replace("\\", "").replace(" ", "")
    assert "Decision hinges" in page and "Root cause" in page

    target = replies["pro"]["assumptions"][0]
    provider.enqueue(challenge_reply("uncertain"), agent="challenge")
    at.selectbox(key="challenge_choice").set_value(target).run()
    at.button(key="challenge_question_assumption").click().run()
    # the scroll is asked for in the run that first shows the notice, which may come a run before the answer's
    # expander: every run's HTML is kept
    drawn: list[str] = [e.proto.body for e in at.get("html")]

    def answered(a) -> bool:
        drawn.extend(e.proto.body for e in a.get("html"))
        return (any("Challenge · Question an assumption" in e.label for e in a.expander)
                and any("Jump to the answer" in s.value for s in a.success))

    settle(at, answered)
    [expander] = [e for e in at.expander if e.label.startswith("Challenge ·")]
    assert "uncertain" in expander.label
    assert provider.requests_for("challenge"), "the challenge reached the provider"
    [notice] = [s.value for s in at.success if "Jump to the answer" in s.value]
    assert "(#cs-challenge-0)" in notice, "the notice by the buttons links to the answer beside the assumption"
    html = " ".join(e.proto.body for e in at.get("html"))
    assert 'id="cs-challenge-0"' in html, "the answer has its anchor"
    scrolls = [body for body in drawn if "scrollIntoView" in body and "'cs-challenge-0'" in body]
    assert len(scrolls) == 1, f"the page scrolls to the answer once: {len(scrolls)} times"

    document = at.session_state["document"]
    assert len(document.challenges.responses) == 1 and document.challenges.responses[0].target == target
    # the notice belongs to that debate: the next one opens without it
    scripted_debate(provider)
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: a.session_state["document"] is not None and a.session_state["document"] != document)
    assert at.button(key="challenge_question_assumption")  # the next debate's own challenge panel
    assert not [s for s in at.success if "Jump to the answer" in s.value]


def test_a_challenge_is_offered_beside_each_element_and_asked_there(app):
    """Each argument, assumption and hinge has a "Challenge: <its first words>" popover holding the panel's
    challenges for that element: one tap asks it, and the panel's picker then names the same element."""
    at, provider = app
    replies = scripted_debate(provider, pro=side_reply("pro"), con=side_reply("con"))
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    labels = {p.proto.id.rsplit("_", 1)[-1]: p.proto.popover.label for p in at.get("popover")}
    document = at.session_state["document"]
    shown = [*document.pro.assumptions, *document.con.assumptions, *document.moderator.decision_hinges,
             *(a.claim for side in (document.pro, document.con) for a in side.arguments)]
    assert len(labels) >= len(set(shown)), "a control beside every element"
    target = replies["pro"]["assumptions"][0]
    [number] = [n for n, label in labels.items() if label == f"Challenge: {esc(opening(target))}"]
    provider.enqueue(challenge_reply("uncertain"), agent="challenge")
    at.button(key=Challenge.action("stronger_counterargument", int(number))).click().run()
    settle(at, lambda a: any("Challenge · Ask for stronger counterargument" in e.label for e in a.expander))
    [response] = at.session_state["document"].challenges.responses
    assert (response.target, response.action) == (target, "stronger_counterargument")
    assert at.selectbox(key=Challenge.CHOICE).value == target, "the panel's picker names the element tapped"


def test_export_contents_match_the_renderers(app, downloads, monkeypatch):
    """Each export button serves the bytes of its renderer's output for the debate on the page, under a file name
    that names the format only where its extension does not (never ``...-md.md`` or ``...-json.json``)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    from clearside.render import render

    names: list[str] = []
    kept = MemoryMediaFileStorage.load_and_get_id

    def named(self, data, mimetype, kind, filename=None):
        names.append(filename or "")
        return kept(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", named)
    at, provider = app
    scripted_debate(provider)
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: a.session_state["document"] is not None if "document" in a.session_state else False)
    document = at.session_state["document"]
    formats = {"JSON": "json", "Markdown report": "md", "Quick View": "quick", "Debate Script": "script",
               "Argument map: Argdown": "argdown", "Argument map: AIF": "aif", "Argument map: Kialo": "kialo"}
    assert [b.proto.label for b in at.get("download_button")] == list(formats)
    served = {label: helpers.download(at, downloads, label) for label in formats}  # the bytes each button serves
    json_doc = json.loads(served["JSON"])
    assert jsonschema_errors(json_doc) == [] and Document.model_validate(json_doc) == document
    assert "## FOR the proposition" in served["Markdown report"]
    assert "AGAINST" in served["Quick View"] and "OPENING STATEMENTS" in served["Debate Script"]
    for label, fmt in formats.items():
        assert served[label] == render(document, fmt), f"the {label} download is the {fmt} renderer's output"
    claim = side_reply("pro")["arguments"][0]["claim"]
    assert all(claim in re.sub(r"\\(.)", r"\1", text) for text in served.values()), \
        "every file holds the debate's own text (Argdown's with each punctuation mark escaped)"
    endings = {re.sub(r"^clearside-debate-[a-z0-9-]*-[0-9a-f]{8}", "", name) for name in names}
    assert endings == {".json", ".md", "-quick.md", "-script.md", ".argdown", "-aif.json", "-kialo.txt"}, names


def test_export_file_names_say_which_debate_they_are():
    from clearside_ui.format import file_stem

    first = file_stem("debate", "Should cities ban cars downtown? <script>", "0123456789abcdef")
    assert first == "clearside-debate-should-cities-ban-cars-downtown-script-01234567"
    same_question = file_stem("debate", "Should cities ban cars downtown? <script>", "fedcba9876543210")
    assert same_question != first, "two debates on one question do not overwrite each other"
    question = "Sollte die Stadt Autos verbieten, überall und für immer, in jeder Straße? " * 4
    long = file_stem("live", question, "ab" * 16)
    assert long.startswith("clearside-live-sollte-die-stadt") and long.endswith("-abababab")
    assert len(long) <= 80 and long.isascii() and "/" not in long


def test_a_long_paste_is_kept_and_says_how_much_to_shorten_then_the_error_clears_once_fixed(app):
    at, provider = app
    long = ("Should a mid-sized city ban private cars from its historic center on weekdays? " * 9)[:620]
    at.text_area(key="question").set_value(long).run()
    assert at.text_area(key="question").value == long, "nothing is cut: the box keeps the whole paste"
    assert any("620 characters long; the limit is 500. Shorten it by 120 characters." in w.value for w in at.warning)
    at.button(key="generate").click().run()
    assert any("Shorten it by 120 characters" in e.value for e in at.error)
    shown = [e.value for kind in kit.TEXT_KINDS for e in at.get(kind) if "Shorten it by 120" in e.value]
    assert len(shown) == 1, f"one message, not the note and the refusal both: {shown}"
    assert provider.requests == [], "nothing was started"
    at.text_area(key="question").set_value(long[:480]).run()
    assert not at.warning and not at.error, "the note and the stale error go once the text fits"


def test_an_over_long_context_value_is_refused_with_the_same_policy(app):
    at, provider = app
    at.text_area(key="question").set_value("Should we adopt microservices?")
    at.text_input(key="debate_geography").set_value("x" * 130).run()
    assert any("Geography is 130 characters long; the limit is 120. Shorten it by 10" in w.value for w in at.warning)
    at.button(key="generate").click().run()
    assert any("Context geography is 130 characters long" in e.value for e in at.error)
    assert provider.requests == []


@pytest.mark.parametrize(("question", "message"), [("", "empty"), ("   ", "empty"), ("\x00\x07 \n", "empty")])
def test_bad_questions_get_a_clear_message_and_nothing_runs(app, question, message):
    at, provider = app
    at.session_state["question"] = question
    at.button(key="generate").click().run()
    assert any(message in e.value for e in at.error)
    assert provider.requests == []


def test_provider_failure_shows_the_message_and_retry_reruns_only_the_failed_agent(app):
    at, provider = app
    provider.enqueue({"__error__": "unreachable", "message": "Ollama is not reachable — start it"}, agent="pro")
    scripted_debate(provider)
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: any("not reachable" in e.value for e in a.error))
    assert at.text_area(key="question").value == "Should we adopt microservices?", "the question is kept"
    before = len(provider.requests_for("orchestrator"))
    at.button(key="retry").click().run()
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    assert len(provider.requests_for("orchestrator")) == before, "the orchestrator is not rerun"


def test_retry_after_switching_the_model_runs_the_new_one_and_says_so(app):
    at, failing = app
    failing.enqueue({"__error__": "unreachable", "message": "Ollama is not reachable — start it"}, agent="pro")
    scripted_debate(failing)
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: any("not reachable" in e.value for e in a.error))
    assert at.button(key="retry").label == "Retry with scripted:script"
    backup = ScriptedProvider()
    backup.model = "backup"
    replies = scripted_debate(backup)
    at.session_state["provider_override"] = backup  # the user switches the sidebar's model
    at.run()
    assert at.button(key="retry").label == "Retry with scripted:backup"
    assert ("The run that stopped used scripted:script; Retry uses the sidebar's model, scripted:backup"
            in text_of(at).replace("\\", ""))
    at.button(key="retry").click().run()
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    assert [r.agent for r in backup.requests] == ["pro", "moderator"], "only what was missing, on the new model"
    document = at.session_state["document"]
    assert document.pro.dump() == replies["pro"] and document.meta.model_info.model == "backup"


def test_a_running_debate_can_be_cancelled_and_resumed_keeping_what_finished():
    provider = ScriptedProvider(chunk_delay=0.05, chunk_size=4)
    at = open_page(provider=provider)
    replies = scripted_debate(provider)
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: "debate_id" in a.session_state and a.session_state["debate_id"]
           and run_of(a).proposition is not None)
    at.button(key="debate_cancel").click().run()
    settle(at, lambda a: any("Cancelled. Every section that finished is kept" in i.value for i in a.info))
    debate_id = at.session_state["debate_id"]
    from clearside_ui import jobs as ui_jobs

    # the page says so once the cancel is recorded; the step in flight then stops at its next event and saves
    # the debate as paused (within the runtime's check interval)
    settle(at, lambda a: ui_jobs.store().get(debate_id).status != "running", timeout=10)
    saved = ui_jobs.store().get(debate_id)
    assert saved.status == "paused" and "Cancelled" in saved.data["error"]
    assert load_run(ui_jobs.store(), debate_id).proposition is not None, "the finished section is saved"
    asked = len(provider.requests_for("orchestrator"))
    assert at.button(key="retry").label == "Resume with scripted:script"
    provider.chunk_delay = 0.0
    scripted_debate(provider, orchestrator=replies["orchestrator"])  # fresh replies for what is still missing
    at.button(key="retry").click().run()
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    assert len(provider.requests_for("orchestrator")) == asked, "the finished orchestrator is not rerun"


def run_of(at: AppTest):
    from clearside_ui import jobs as ui_jobs

    return ui_jobs.registry().get(at.session_state["debate_id"], "static").run


def test_hostile_text_is_escaped_not_rendered(app):
    at, provider = app
    hostile = "<script>alert(1)</script> and <img src=x onerror=alert(2)> [click](http://evil)"
    pro = side_reply("pro")
    pro["assumptions"][1] = f"Traffic keeps growing each year {hostile}"  # a statement: it passes the checks
    scripted_debate(provider, pro=pro)
    generate(at, "Should we adopt microservices architecture? <script>alert(1)</script>")
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    shown = [m for m in at.markdown if "alert" in m.value]
    assert shown, "the hostile assumption is shown, as text"
    for element in at.markdown:
        assert not re.search(r"(?<!\\)<", element.value), f"unescaped '<' in {element.value!r}"
        assert not re.search(r"(?<!\\)\]\(", element.value), f"live Markdown link in {element.value!r}"
        assert not element.proto.allow_html


def open_link(debate_id: str, provider=None, *, key: str | None = None) -> AppTest:
    """A new browser session opening the share link ``?debate=<id>``; ``key``: the browser's ownership cookie
    (the same browser after a reload or in a new tab), else a browser that never visited."""
    return open_page(provider=provider or ScriptedProvider(), query={"debate": debate_id},
                     state={"app_owner_key": key} if key else None)


def test_a_generated_debate_is_saved_with_its_challenges_and_its_link_opens_it(app):
    from clearside.store import open_store

    at, provider = app
    replies = scripted_debate(provider)
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    debate_id = at.session_state["debate_id"]
    assert at.query_params["debate"] in (debate_id, [debate_id]), "the address is the share link"
    provider.enqueue(challenge_reply("uncertain"), agent="challenge")
    at.selectbox(key="challenge_choice").set_value(replies["pro"]["assumptions"][0]).run()
    at.button(key="challenge_question_assumption").click().run()
    settle(at, lambda a: any(e.label.startswith("Challenge ·") for e in a.expander))
    record = open_store().get(debate_id)
    assert record.status == "done" and len(record.document["challenges"]["responses"]) == 1

    shared = open_link(debate_id)
    assert any("MODERATOR SYNTHESIS" in m.value for m in shared.markdown)
    assert any(e.label.startswith("Challenge ·") for e in shared.expander), "the saved challenge is shown"
    assert not [b for b in shared.button if b.key.startswith("challenge_")], "read-only: no challenge buttons"
    assert any("Read-only" in c.value for c in shared.caption)
    shown = in_order(shared)
    said, debate = first_at(shown, "Read-only: this debate was made"), first_at(shown, "MODERATOR SYNTHESIS")
    assert said < shown.index("Make an editable copy") < debate, "read-only is said at the top, with the way out"
    shared.button(key="debate_copy_to_edit").click().run()
    copy_id = shared.session_state["debate_id"]
    assert copy_id != debate_id and shared.query_params["debate"] in (copy_id, [copy_id])
    assert shared.button(key="challenge_question_assumption"), "the copy is editable"
    assert open_store().get(copy_id).parent_id == debate_id
    assert "You are now on your own copy, “Copy of Should we adopt microservices?”" in kit.of_kind(shared, "success")
    assert "**Title:** Copy of Should we adopt microservices?" in kit.plain(shared)
    assert "Read-only" not in kit.plain(shared)


def in_order(at: AppTest) -> list[str]:
    """The page's texts and buttons' labels in the order the page draws them."""
    return [node.value if node.type in kit.TEXT_KINDS else node.proto.label for node in at.main
            if getattr(node, "type", "") in (*kit.TEXT_KINDS, "button")]


def first_at(shown: list[str], text: str) -> int:
    return next(n for n, value in enumerate(shown) if text in value.replace("\\", ""))


def test_a_renamed_debate_shows_its_title_on_the_debate_page():
    from clearside.store import open_store

    store = open_store()
    debate_id = start_static(store, load_run_input(), provider="scripted", model="script")
    store.finish_static(debate_id, helpers.fixture_dict())
    assert "Title:" not in kit.plain(open_link(debate_id)), "a debate titled by its question shows it once"
    store.rename(debate_id, "Cars in the <b>old town</b>")
    shown = [m.value for m in open_link(debate_id).markdown]
    assert f"**Title:** {esc('Cars in the <b>old town</b>')}" in shown, "shown, and escaped"


def load_run_input():
    from clearside.static.run import DebateRun

    return DebateRun.from_input("Should cities ban cars downtown?")


def test_the_browser_that_made_a_debate_keeps_it_editable_across_reloads_and_tabs(app):
    from clearside.store import open_store

    at, provider = app
    scripted_debate(provider)
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    debate_id, key = at.session_state["debate_id"], at.session_state["app_owner_key"]
    stamp = open_store().get(debate_id).data["owner"]
    assert len(stamp) == 32 and stamp != key, "the store keeps a hash of the browser's key, not the key"

    again = open_link(debate_id, key=key)  # a reload or a new tab: the cookie brings the same key
    assert again.button(key="challenge_question_assumption"), "still editable"
    assert not any("Read-only" in c.value for c in again.caption)

    elsewhere = open_link(debate_id)  # another browser or machine: no cookie, a new key
    assert not [b for b in elsewhere.button if b.key.startswith("challenge_")]
    assert any("Read-only" in c.value for c in elsewhere.caption)
    elsewhere.button(key="debate_copy_to_edit").click().run()
    copy_id = elsewhere.session_state["debate_id"]
    assert elsewhere.button(key="challenge_question_assumption"), "the copy is the copier's"
    assert open_link(copy_id, key=elsewhere.session_state["app_owner_key"]).button(key="challenge_question_assumption")
    mine = open_link(copy_id, key=key)
    assert not [b for b in mine.button if b.key.startswith("challenge_")], "and not the original owner's"


def test_an_unfinished_saved_debate_offers_resume_which_runs_only_what_is_missing():
    from helpers import orchestrator_reply

    from clearside.schema import Proposition, Side
    from clearside.static.run import DebateRun
    from clearside.store import open_store

    store = open_store()
    run = DebateRun.from_input("Should we adopt microservices?")
    debate_id = start_static(store, run, provider="scripted", model="script")  # the app was killed after pro
    store.save_section(debate_id, "proposition", Proposition.model_validate(
        {**orchestrator_reply(), "raw_input": run.raw_input}).dump())
    store.save_section(debate_id, "pro", Side.model_validate(side_reply("pro")).dump())
    provider = ScriptedProvider()
    provider.enqueue(side_reply("con"), agent="con")
    provider.enqueue(helpers.moderator_reply(), agent="moderator")
    at = open_link(debate_id, provider)
    assert any("was not finished" in w.value for w in at.warning)
    assert ":green[FOR]" in text_of(at), "the finished sections are shown"
    at.button(key="debate_resume_saved").click().run()
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    assert [r.agent for r in provider.requests] == ["con", "moderator"]
    assert open_store().get(debate_id).status == "done"

    # another browser's unfinished debate is shown, read-only: only the browser that started it resumes it
    theirs = start_static(store, run, provider="scripted", model="script")
    store.update(theirs, data={"owner": "f" * 32})
    store.save_section(theirs, "pro", Side.model_validate(side_reply("pro")).dump())
    at = open_link(theirs, ScriptedProvider())
    assert any("only that browser can resume it" in w.value for w in at.warning)
    assert ":green[FOR]" in text_of(at) and not [b for b in at.button if b.key == "debate_resume_saved"]


def test_a_link_to_nothing_says_so():
    at = open_link("0123456789abcdef0123456789abcdef")
    assert any("does not open a saved debate" in e.value.replace("\\", "") for e in at.error)
    said = kit.of_kind(at, "error")
    assert "The Library lists the saved ones" in said and "python -m clearside" not in said, said
    assert "Open the Library" in [link.proto.label for link in at.get("page_link")]
    assert at.button(key="generate"), "the form is still there"


def test_the_debate_page_points_at_debates_that_stopped_part_way():
    from clearside.static.run import DebateRun
    from clearside.store import open_store

    at = open_page()
    assert not at.get("page_link"), "nothing to point at yet"
    start_static(open_store(), DebateRun.from_input("Leave my job for a startup?"), provider="scripted", model="m")
    at.run()
    assert any("1 earlier debate stopped part-way" in c.value for c in at.caption)
    assert at.get("page_link")[0].proto.label == "Resume from the Library"


# -- an honest first run: the demo-model banner, the example debate, the quality checks ------------------------------


def banner_shown(at: AppTest) -> bool:
    return any("tiny demonstration model" in i.value for i in at.info)


def test_the_embedded_default_carries_the_demo_model_banner_and_other_providers_do_not():
    at = open_page()
    assert banner_shown(at)
    [note] = [i.value for i in at.info if "tiny demonstration model" in i.value]
    assert "SmolLM2-135M" in note and "Ollama" in note and "OPENAI_BASE_URL" in note and "vLLM" in note
    at.selectbox(key="provider_name").set_value("ollama").run()
    assert not banner_shown(at), "a real provider: no banner"
    at.selectbox(key="provider_name").set_value("embedded").run()
    at.text_input(key="embedded_model").set_value("/models/mistral-7b.gguf").run()
    assert not banner_shown(at), "a GGUF of one's own is not the demo model"


def test_an_injected_provider_shows_the_banner_only_when_it_is_the_embedded_one(app):
    at, provider = app
    assert not banner_shown(at), "the scripted provider is not the demo model"
    provider.name = "embedded"
    at.run()
    assert banner_shown(at)


def test_the_example_debate_opens_the_flagship_read_only_and_unsaved(app):
    from clearside.quality.references import flagship
    from clearside.store import open_store

    at, provider = app
    at.button(key="debate_example").click().run()
    assert not at.exception, at.exception
    assert at.query_params["example"] in ("flagship", ["flagship"]), "the example has a link"
    assert any("Reference example" in i.value and "written by hand, not generated" in i.value for i in at.info)
    assert any(flagship().title in c.value.replace("\\", "") for c in at.caption)
    assert any("MODERATOR SYNTHESIS" in m.value for m in at.markdown), "the normal document view"
    question = flagship().document["proposition"]["normalized_question"]
    assert any(question.replace(" ", "") in m.value.replace("\\", "").replace(" ", "") for m in at.markdown)
    assert not [b for b in at.button if b.key.startswith("challenge_")], "read-only: no challenge buttons"
    assert not [b for b in at.button if b.key == "debate_copy_to_edit"], "nothing to copy: it is not saved"
    assert open_store().list().items == [] and provider.requests == [], "not saved, nothing generated"

    at.button(key="debate_example_back").click().run()
    assert "example" not in at.query_params
    assert not any("Reference example" in i.value for i in at.info)
    assert at.button(key="generate"), "back to a new debate"


def test_an_example_link_opens_it_directly():
    at = open_page(query={"example": "flagship"})
    assert any("Reference example" in i.value for i in at.info)
    assert any("MODERATOR SYNTHESIS" in m.value for m in at.markdown)


HOSTILE = "<script>alert(1)</script> [x](http://evil)"


def quality_record(**changes) -> dict:
    record = {"checks_version": "1.0.0", "strategy": "focused", "semantic": True,
              "agents": {"orchestrator": {"attempts": 1, "reasks": 0, "items": []},
                         "pro": {"attempts": 2, "reasks": 1, "items": [
                             {"check": "duplicate_claim", "path": "arguments/2/claim", "action": "dropped",
                              "message": "argument 2 makes the same point as argument 1", "text": HOSTILE},
                             {"check": "off_topic", "path": "arguments/1/claim", "action": "reasked",
                              "message": "argument 1 is not about the proposition"}]},
                         "moderator": {"attempts": 1, "reasks": 0, "items": [
                             {"check": "echoed_hinge", "path": "decision_hinges/0", "action": "replaced",
                              "message": "the hinge repeats the question", "text": "Should we?"}]}},
              "inferred": ["timeframe"]}
    return {**record, **changes}


def saved_document(quality: dict | None) -> str:
    """A finished debate in the store (as an import), with or without a ``quality`` record; its id."""
    from helpers import fixture_dict

    from clearside.store import open_store

    document = fixture_dict()
    if quality is not None:
        document["meta"]["schema_version"] = "1.1.0"
        document["quality"] = quality
    Document.model_validate(document)
    return open_store().import_static(document, imported={"file": "test"})


def quality_expanders(at: AppTest) -> list:
    return [e for e in at.expander if e.label.startswith("Quality checks")]


def test_the_quality_expander_counts_what_the_checks_caught_and_repaired():
    at = open_link(saved_document(quality_record()))
    [expander] = quality_expanders(at)
    assert expander.label == "Quality checks: 1 dropped, 1 replaced, 1 re-ask"
    agents, items = expander.dataframe
    agents, items = agents.value, items.value
    assert list(agents["Agent"]) == ["Orchestrator", "FOR", "Moderator"]
    assert list(agents["Attempts"]) == [1, 2, 1] and list(agents["Re-asks"]) == [0, 1, 0]
    assert list(items.columns) == ["Agent", "Outcome", "Check", "Where", "Text", "Message"]
    assert list(items["Outcome"]) == ["dropped", "re-asked", "replaced"]
    assert list(agents["Dropped"]) == [0, 1, 0] and list(agents["Replaced"]) == [0, 0, 1]
    assert items["Text"][0] == HOSTILE, "model text is shown in a table, as data"
    assert not any("alert" in m.value for m in at.markdown), "and never as Markdown"
    assert not any("did not run" in c.value for c in expander.caption)


def test_the_quality_expander_says_when_nothing_was_caught_or_the_embedding_checks_did_not_run():
    quiet = quality_record(semantic=False, agents={"pro": {"attempts": 1, "reasks": 0, "items": []}})
    at = open_link(saved_document(quiet))
    [expander] = quality_expanders(at)
    assert expander.label == "Quality checks: nothing dropped, ended early or re-asked"
    assert any("embedding (semantic) checks did not run" in c.value for c in expander.caption)


def test_a_debate_without_a_quality_record_shows_no_expander_and_no_inferred_marks():
    at = open_link(saved_document(None))
    assert any("MODERATOR SYNTHESIS" in m.value for m in at.markdown)
    assert not quality_expanders(at)
    assert not any("(inferred)" in c.value for c in at.caption)


def test_an_inferred_context_value_is_marked():
    at = open_link(saved_document(quality_record(inferred=["timeframe"])))
    [line] = [c.value for c in at.caption if c.value.startswith("Asked:")]
    parts = line.replace("\\", "").split(" · ")
    assert "Timeframe: 2025-2027 (inferred)" in parts
    assert "Geography: Global" in parts and "Domain: Software Architecture" in parts, "given values are not marked"
