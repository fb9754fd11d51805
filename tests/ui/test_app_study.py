"""AppTest for study mode: the Study page creates a study from its form (refusals named under it, nothing typed
lost), makes its documents on the runtime this dashboard hosts, shows the participant link and the results; the
Participate page takes a participant from the join link through before, reading, after and the re-test, resuming
from their own link; another browser opening the study is refused; participant text is escaped everywhere."""

from __future__ import annotations

import hashlib

import app_kit as kit
import study_kit
from app_kit import open_page, plain
from helpers import QUESTION, orchestrator_reply, scripted_debate, single_reply

from clearside.providers.scripted import ScriptedProvider
from clearside.quality import study
from clearside_ui import jobs
from clearside_ui import study_actions as actions

PAGE = "clearside_ui/app_pages/study.py"
JOIN = "clearside_ui/app_pages/participate.py"
HOSTILE = "<img src=x onerror=alert(1)> **bold** [link](http://evil.example)"
SAVE = {stage: actions.PREFIX + f"save_{stage}" for stage in ("before", "after", "retest")}


def owner_token(at) -> str:
    return hashlib.sha256(f"clearside-owner:{at.session_state['app_owner_key']}".encode()).hexdigest()[:32]


def test_the_form_refuses_what_it_cannot_make_and_keeps_what_was_typed():
    at = open_page(PAGE, ScriptedProvider())
    at.text_input(key=actions.TITLE).set_value("Microservices")
    at.text_area(key=actions.QUESTIONS).set_value(QUESTION)
    at.checkbox(key=actions.arm_key("single")).uncheck()
    at.button(key=actions.PREFIX + "create").click().run()
    assert "choose at least two" in kit.of_kind(at, "error")
    at.checkbox(key=actions.arm_key("sources")).check().run()
    at.button(key=actions.PREFIX + "create").click().run()
    assert "question 1 has none" in kit.of_kind(at, "error")
    assert at.text_area(key=actions.QUESTIONS).value == QUESTION and at.text_input(key=actions.TITLE).value
    assert jobs.store().studies() == []


def test_create_generate_take_part_and_read_the_results():
    provider = ScriptedProvider()
    scripted_debate(provider)
    provider.enqueue(orchestrator_reply(), agent="orchestrator")
    provider.enqueue(single_reply(), agent="single")
    at = open_page(PAGE, provider)
    at.text_input(key=actions.TITLE).set_value("Microservices <b>now</b>")
    at.text_area(key=actions.QUESTIONS).set_value(QUESTION)
    at.button(key=actions.PREFIX + "create").click().run()
    assert not kit.of_kind(at, "error"), kit.of_kind(at, "error")
    study_id = at.query_params["study"]
    kit.settle(at, lambda a: "Participant link" in plain(a), timeout=60)
    assert "Microservices \\<b\\>now\\</b\\>" in "".join(m.value for m in at.markdown)
    made = jobs.store().study(study_id)
    assert made.owner == owner_token(at) and f"join={made.join_key}" in at.code[0].value

    participant = open_page(JOIN, query={"study": study_id, "join": made.join_key})
    participant.button(key=actions.PREFIX + "join").click().run()
    token = participant.query_params["p"]
    assert "join" not in participant.query_params and f"p={token}" in participant.code[0].value
    participant.query_params.pop("p")
    participant.query_params["join"] = made.join_key  # the join link again, in the session that joined
    participant = kit.run(participant)
    assert participant.query_params["p"] == token and len(jobs.store().participants(study_id)) == 1
    participant.text_area(key=actions.key("before", "for")).set_value("x" * 301)
    participant.button(key=SAVE["before"]).click().run()
    assert "Reason 1 for is 301 characters long" in kit.of_kind(participant, "error")
    assert participant.text_area(key=actions.key("before", "for")).value == "x" * 301, "nothing typed is lost"
    participant.text_area(key=actions.key("before", "for")).set_value(HOSTILE)
    participant.button(key=SAVE["before"]).click().run()
    assert "Read this" in plain(participant), "the arm's document is shown"

    again = open_page(JOIN, query={"study": study_id, "p": token})  # the tab closed, the link opened again
    assert "Read this" in plain(again) and not again.text_area(key=actions.key("after", "for")).value
    again.text_area(key=actions.key("after", "for")).set_value("Independent deployment of services")
    again.button(key=SAVE["after"]).click().run()
    assert "Come back in a few days" in plain(again) and "Read this" not in plain(again)
    again.select_slider(key=actions.key("retest", "lean")).set_value(1)
    again.button(key=SAVE["retest"]).click().run()
    assert "you have finished this study" in plain(again)
    assert HOSTILE not in "".join(m.value for m in again.markdown)

    at = kit.run(at)
    found = study.results(jobs.store(), study_id)
    arm = found["arms"][jobs.store().participants(study_id)[0].arm]
    assert arm["answered"] == {"before": 1, "after": 1, "retest": 1}
    assert "1 participant joined" in plain(at) and len(at.dataframe) == 4
    assert any(n == 1 for n in at.dataframe[1].value["n"])
    at.checkbox(key=actions.DELETE + "_sure").check().run()
    at.button(key=actions.DELETE).click().run()
    assert "The study was deleted." in kit.of_kind(at, "success") and jobs.store().studies() == []
    assert "study" not in at.query_params


def test_another_browser_is_refused_the_study_and_a_bad_link_is_named():
    made = study_kit.ready(jobs.store(), owner="e" * 32)
    at = open_page(PAGE, query={"study": made.id})
    assert "visible only to the browser that created it" in kit.of_kind(at, "error")
    assert made.join_key not in "".join(c.value for c in at.code) and "Results" not in plain(at)
    at = open_page(JOIN, query={"study": made.id, "join": "0" * 32})
    at.button(key=actions.PREFIX + "join").click().run()
    assert "participant link is not valid" in kit.of_kind(at, "error")
    at = open_page(JOIN, query={"study": made.id, "p": "f" * 32})
    assert "not valid for this study" in kit.of_kind(at, "error")
    assert "Open the participant link" in plain(open_page(JOIN))


def test_creating_a_study_counts_as_a_start_and_the_limit_keeps_the_form(monkeypatch):
    monkeypatch.setenv("CLEARSIDE_DEBATE_STARTS_PER_MINUTE", "1")
    at = open_page(PAGE, ScriptedProvider())
    for attempt in range(2):
        at.query_params.pop("study", None)
        at = kit.run(at)
        at.text_input(key=actions.TITLE).set_value(f"Study {attempt}")
        at.text_area(key=actions.QUESTIONS).set_value(QUESTION)
        at.button(key=actions.PREFIX + "create").click().run()
    assert "Try again in" in kit.of_kind(at, "error") and len(jobs.store().studies()) == 1
    assert at.text_input(key=actions.TITLE).value == "Study 1", "nothing typed is lost"
