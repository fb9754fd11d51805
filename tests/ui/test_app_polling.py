"""Following a running job cheaply: streamed text is parsed again only when it changed, and a
followed view polls slower while nothing changes and at the page's pace again as soon as something does."""

from __future__ import annotations

import pytest

from clearside_ui import view
from clearside_ui.view import IDLE_MAX, IDLE_RUNS, Pace

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

REPLY = '{"executive_summary": ["Cities gain cleaner air", "Shops lose drive-in trade"'


def progress_script() -> None:
    """A running debate's progress as the Debate page draws it, FOR streaming what the session holds."""
    import streamlit as st

    from clearside.agents import AGENT_ORDER
    from clearside.runtime.events import AgentProgress
    from clearside.static.job import Snapshot
    from clearside_ui import view

    agents = {agent: AgentProgress() for agent in AGENT_ORDER}
    agents["orchestrator"] = AgentProgress(status="done", attempts=1, seconds=1.0)
    agents["pro"] = AgentProgress(status="running", attempts=1, text=st.session_state.get("streamed", ""))
    view.progress_view(Snapshot(id="x", status="running", agents=agents, document=None, error="", exit_code=0))


def test_unchanged_streamed_text_is_not_parsed_again_and_stays_on_the_page(monkeypatch):
    parsed: list[str] = []
    parse = view._partial_points

    def counting(text: str, *keys) -> dict[str, list[str]]:
        parsed.append(text)
        return parse(text, *keys)

    monkeypatch.setattr(view, "_partial_points", counting)
    at = AppTest.from_function(progress_script, default_timeout=30)
    at.session_state["streamed"] = REPLY[:60]
    at.run()

    def shown() -> str:
        return "\n".join(m.value for m in at.markdown)

    def pro_parses() -> int:
        return sum(text.startswith('{"executive') for text in parsed)

    assert "Cities gain cleaner air" in shown() and "Shops lose" not in shown()
    assert pro_parses() == 1
    for _ in range(3):  # the fragment's timer fires; nothing new was streamed
        at.run()
        assert pro_parses() == 1, "the same streamed text was parsed again"
        assert "Cities gain cleaner air" in shown(), "the points stay on the page"
    at.session_state["streamed"] = REPLY  # the model wrote more
    at.run()
    assert pro_parses() == 2
    assert "Shops lose drive\\-in trade" in shown() or "Shops lose drive-in trade" in shown()


def test_a_pace_slows_down_while_nothing_changes_and_catches_up_at_once():
    pace = Pace(1.0)
    assert pace.see("turn 3, 120 characters") is False  # the first run is the baseline
    intervals = []
    for _ in range(4 * IDLE_RUNS):
        if pace.see("turn 3, 120 characters"):
            intervals.append(pace.interval)
    assert intervals == [2.0, 4.0] and pace.interval == IDLE_MAX == 4.0  # doubled, then capped
    assert pace.see("turn 3, 180 characters") is True and pace.interval == 1.0  # a change: the page's pace at once
    assert pace.see("turn 3, 240 characters") is False and pace.interval == 1.0  # streaming: it stays there
    assert Pace(2.0).interval == 2.0
    slow = Pace(10.0)  # a page configured slower than the idle pace keeps its own
    assert not any(slow.see("same") for _ in range(10)) and slow.interval == 10.0


def follow_script() -> None:
    """A followed view as the pages draw one (view.follow). Each fingerprint in ``ticks`` stands for one run of
    the fragment's timer between page runs (AppTest never fires the timer), seeing what the job shows then."""
    import streamlit as st

    from clearside_ui import view

    def body() -> None:
        view.poll_changed("t", st.session_state.get("fingerprint", 0))
        st.markdown(f"shown {st.session_state.get('fingerprint', 0)}")

    st.session_state.setdefault("drawn_with", []).append(view.poll_every("t", 1.0))
    st.fragment(run_every=st.session_state["drawn_with"][-1])(body)()
    ticks = st.session_state.setdefault("ticks", [])
    while ticks:
        st.session_state["fingerprint"] = ticks.pop(0)
        view.poll_changed("t", st.session_state["fingerprint"])


def test_a_followed_view_is_drawn_again_at_a_slower_pace_then_at_the_page_pace():
    at = AppTest.from_function(follow_script, default_timeout=30)
    at.run()
    assert at.session_state["drawn_with"] == [1.0]
    at.session_state["ticks"] = [0] * IDLE_RUNS  # nothing changes for IDLE_RUNS runs of the timer
    at.run()
    assert at.session_state["drawn_with"] == [1.0, 1.0, 2.0], "the page drew the fragment again, slower"
    at.session_state["ticks"] = [0] * (2 * IDLE_RUNS) + [1, 1]  # a long silence, then something moves
    at.run()
    assert at.session_state["drawn_with"][2:] == [2.0, 1.0, 2.0, 4.0, 1.0], "slower while idle, then at once back"
    assert at.markdown[0].value == "shown 1"
    at.session_state["ticks"] = [1] * IDLE_RUNS
    at.run()
    assert at.session_state["drawn_with"][-2:] == [1.0, 2.0]
    at.run()  # a run the user causes (a click, another page): the page's own pace again
    assert at.session_state["drawn_with"][-1] == 1.0


def fingerprint_script() -> None:
    """The Debate page's fingerprint of a running debate whose agents hold what the session says."""
    import streamlit as st

    from clearside.agents import AGENT_ORDER
    from clearside.runtime.events import AgentProgress
    from clearside.static.job import Snapshot
    from clearside_ui import view

    agents = {agent: AgentProgress(status="done", attempts=1, seconds=1.0) for agent in AGENT_ORDER}
    for agent, text in st.session_state["texts"].items():
        agents[agent] = AgentProgress(status="running", attempts=1, seconds=st.session_state["seconds"], text=text)
    snap = Snapshot(id="x", status="running", agents=agents, document=None, error="", exit_code=0)
    st.session_state.setdefault("seen", []).append(view.progress_fingerprint(snap))


def test_the_fingerprint_moves_with_what_the_page_shows_and_not_with_unseen_text():
    """A moderator's growing reply and a running agent's clock show nothing new: the follower backs off while
    they run. A FOR point that grows is on the page: the fingerprint changes."""
    at = AppTest.from_function(fingerprint_script, default_timeout=30)
    at.session_state["texts"], at.session_state["seconds"] = {"moderator": '{"areas_of_agreement": ["Bo'}, 1.0
    at.run()
    at.session_state["texts"], at.session_state["seconds"] = {"moderator": '{"areas_of_agreement": ["Both sid'}, 3.0
    at.run()
    at.session_state["texts"] = {"moderator": '{"areas_of_agreement": ["Both sid', "pro": REPLY[:40]}
    at.run()
    at.session_state["texts"] = {"moderator": '{"areas_of_agreement": ["Both sid', "pro": REPLY[:60]}
    at.run()
    first, unseen, pro_starts, pro_grows = at.session_state["seen"]
    assert first == unseen, "moderator text and a running clock are not shown"
    assert pro_starts != unseen and pro_grows != pro_starts, "FOR's streamed points are shown"
