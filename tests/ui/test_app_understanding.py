"""AppTest for the understanding check: the sidebar's switch (off by default), the "before" form saved with the
debate it precedes (refused input keeps the debate waiting and the text typed), the "after" form and the summary
under the debate, the Understanding page's gains, CSV and re-test link, and user text always escaped."""

from __future__ import annotations

import csv
import hashlib
import io

import app_kit as kit
from app_kit import generate, open_page, plain
from app_kit import settle_debate as settle
from helpers import flagship_replies

from clearside.quality import understanding
from clearside.quality.references import flagship
from clearside.store import NewDebate
from clearside_ui import jobs
from clearside_ui import understanding_actions as actions

PAGE = "clearside_ui/app_pages/understanding.py"
LAWS = "Laws cannot keep up with how fast AI is moving"
HOSTILE = "<img src=x onerror=alert(1)> **bold** [link](http://evil.example)"


def enqueue_flagship(provider) -> None:
    for agent, reply in flagship_replies().items():
        provider.enqueue(reply, agent=agent)


def owner_token(at) -> str:
    """The token the store keeps for this session's browser (clearside_ui/owner.py)."""
    return hashlib.sha256(f"clearside-owner:{at.session_state['app_owner_key']}".encode()).hexdigest()[:32]


def keys(at) -> set[str]:
    return {w.key for kind in ("text_area", "select_slider", "number_input", "button") for w in at.get(kind)}


def test_the_switch_is_off_by_default_and_nothing_is_asked():
    at, _ = kit.debate_app()
    assert at.sidebar.toggle(key=actions.SWITCH).value is False
    assert actions.key("before", "for") not in keys(at)
    assert "Understanding check" not in plain(at)


def test_before_after_and_the_summary_on_the_debate_page():
    at, provider = kit.debate_app()
    at.sidebar.toggle(key=actions.SWITCH).set_value(True).run()
    assert {actions.key("before", f) for f in actions.FIELDS} <= keys(at)
    at.text_area(key=actions.key("before", "for")).set_value("x" * 301)
    generate(at, flagship().proposition)
    assert "Reason 1 for is 301 characters long" in kit.of_kind(at, "error")
    assert not at.session_state["debate_id"] if "debate_id" in at.session_state else True
    assert not jobs.store().list().total, "a refused answer keeps the debate waiting"
    assert at.text_area(key=actions.key("before", "for")).value == "x" * 301, "nothing typed is lost"

    at.text_area(key=actions.key("before", "for")).set_value("")
    at.select_slider(key=actions.key("before", "lean")).set_value(1)
    enqueue_flagship(provider)
    at.button(key="generate").click().run()
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown), timeout=60)
    debate_id = at.session_state["debate_id"]
    [saved] = jobs.store().answers(debate_id)
    assert (saved.stage, saved.body["lean"], saved.owner) == ("before", 1, owner_token(at))

    at.text_area(key=actions.key("after", "for")).set_value(f"{LAWS}\n{HOSTILE}")
    at.number_input(key=actions.key("after", "confidence")).set_value(80)
    at.button(key=actions.save_key("after")).click().run()
    page = plain(at)
    assert "Reasons you named for: 0 before, 1 after; against: 0 before, 0 after" in page
    assert actions.key("after", "for") not in keys(at), "the summary replaces the form"
    [retest] = [link.proto for link in at.get("page_link") if "Re-test later" in link.proto.label]
    assert retest.page.endswith("understanding") and f"debate={debate_id}" in retest.query_string
    assert "retest=1" in retest.query_string


def finished(store, title: str) -> str:
    doc = flagship().document
    return store.create(NewDebate("static", title, provider="scripted", model="m", document=doc, status="done"))


def test_the_understanding_page_shows_gains_csv_and_takes_a_retest():
    at = open_page(PAGE)
    assert "0 debates answered, 0 answers." in plain(at)
    token = owner_token(at)
    store = jobs.store()
    debate = finished(store, "Should the U.S. pause <b>AI</b> data centers?")
    understanding.record(store, debate, understanding.answer("before", None, None, lean_value=0), owner=token)
    understanding.record(store, debate, understanding.answer("after", LAWS, None), owner=token)
    other = finished(store, "Someone else's debate")
    understanding.record(store, other, understanding.answer("after", LAWS, None), owner="f" * 32)

    at = kit.run(at)
    assert "1 debate answered, 2 answers." in plain(at)
    [table, _] = at.dataframe
    assert list(table.value["n"]) == [1, 1, 1, 1, 0] and table.value["Mean gain"][0] == 1.0
    assert "Someone else" not in plain(at), "another browser's answers are not shown"
    assert "\\<b\\>AI\\</b\\>" in "".join(m.value for m in at.markdown)

    at.query_params["debate"] = debate
    at.query_params["retest"] = "1"
    at = kit.run(at)
    at.text_area(key=actions.key("retest", "for")).set_value(f"{LAWS}\n- Data centres use huge amounts of power")
    at.button(key=actions.save_key("retest")).click().run()
    assert "Saved. Your answers so far:" in kit.of_kind(at, "success")
    assert "Reasons you named for: 0 before, 1 after, 2 at the re-test" in plain(at)
    retest = at.dataframe[1].value
    assert list(retest["n"])[:4] == [1, 1, 1, 1] and retest["Mean gain"][0] == 2.0
    rows = list(csv.DictReader(io.StringIO(understanding.csv_text(understanding.csv_rows(store, owner=token)))))
    assert [r["stage"] for r in rows] == ["before", "after", "retest"]


def test_a_bad_retest_link_is_named():
    at = open_page(PAGE, query={"debate": "nope", "retest": "1"})
    assert "This re-test link does not open a debate" in kit.of_kind(at, "error")
