"""The two generation strategies: "whole" (one call per agent) and "focused" (each agent in small calls),
through the engine on the scripted provider and from the dashboard's sidebar."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import QUESTION, focused_answers, settle

from clearside.errors import InputError
from clearside.providers import get_provider
from clearside.providers.scripted import ScriptedProvider
from clearside.static.engine import Engine
from clearside.static.run import DebateRun, default_strategy

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def calls(provider: ScriptedProvider) -> dict[str, int]:
    counts: dict[str, int] = {}
    for request in provider.requests:
        counts[request.agent] = counts.get(request.agent, 0) + 1
    return counts


def test_the_focused_strategy_writes_each_side_in_parts_and_records_it():
    provider = ScriptedProvider(fallback=focused_answers())
    document = Engine(provider, strategy="focused").run(DebateRun.from_input(QUESTION))
    # per side: the categories, three arguments one per call, then the summary fields; the synthesis field by field
    assert calls(provider) == {"orchestrator": 1, "pro": 5, "con": 5, "moderator": 5}
    assert [len(document.pro.arguments), len(document.con.arguments)] == [3, 3]
    assert len({a.category for a in document.pro.arguments}) == 3, "each argument took the next chosen category"
    # the synthesis quotes the listed assumptions (traceable), whichever strategy wrote it
    listed = set(document.pro.assumptions) | set(document.con.assumptions)
    for conflict in document.moderator.assumption_conflicts:
        assert {conflict.pro_assumption, conflict.con_assumption} <= listed
    assert document.quality is not None and document.quality.strategy == "focused"
    # each argument call shows the advocate the claims it already made
    third = [r for r in provider.requests if r.agent == "pro"][3].messages[-1]["content"]
    assert all(a.claim in third for a in document.pro.arguments[:2])


def test_an_unknown_strategy_is_refused_by_name():
    with pytest.raises(InputError, match="Unknown generation strategy 'tiny'.*whole, focused"):
        Engine(ScriptedProvider(), strategy="tiny")


def test_a_provider_declared_small_keeps_the_strategy_measured_best_for_small_models():
    assert get_provider("ollama:llama3.2", small=True).small is True
    assert get_provider("ollama:llama3.2").small is False
    assert default_strategy(get_provider("ollama:llama3.2", small=True)) == "whole"


# ---------------------------------------------------------------------------------------------- the sidebar

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402


def test_the_sidebar_strategy_reaches_the_debate_and_small_reaches_the_provider():
    provider = ScriptedProvider(fallback=focused_answers())
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["provider_override"] = provider
    at.run()
    strategy = at.sidebar.selectbox(key="strategy")
    assert strategy.value == "auto" and strategy.options == ["Automatic", "Whole: one call per agent",
                                                             "Focused: smaller calls per agent",
                                                             "Single pass: one call writes it all (a control)"]
    assert not [c for c in at.sidebar.checkbox if c.key == "small_model"], "the embedded default is always small"
    strategy.set_value("focused").run()
    at.text_area(key="question").set_value(QUESTION)
    at.button(key="generate").click().run()
    settle(at, lambda a: a.session_state["document"] is not None if "document" in a.session_state else False)
    assert at.session_state["document"].quality.strategy == "focused"
    assert calls(provider)["pro"] == 5, "the advocates wrote their sides in parts"

    # another provider: the Small model box appears
    at.session_state["provider_override"] = None
    at.sidebar.selectbox(key="provider_name").set_value("ollama").run()
    assert [c.value for c in at.sidebar.checkbox if c.key == "small_model"] == [False]


@pytest.mark.parametrize("ticked, small", [(True, True), (False, False)])
def test_the_small_model_box_declares_the_sidebar_provider_small(ticked, small):
    import streamlit as st

    from clearside_ui import settings

    st.session_state.update(provider_name="ollama", ollama_model="llama3.2", small_model=ticked,
                            provider_override=None)
    try:
        assert settings.build_provider().small is small
    finally:
        st.session_state.clear()
