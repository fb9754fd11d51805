"""Re-map under value weights and assumption stances (clearside/remap.py, ``remap`` command, explore view).

The moderator runs on the scripted provider: the tests assert what its request carried (the user's weights
and stances), that a verdict is still caught on the re-mapped synthesis, that the re-map record holds the
conditions and the original synthesis, and that the diff and the view's order are right on hand-made input.
"""

from __future__ import annotations

import copy

import pytest
from helpers import fixture_dict, moderator_reply, request_text, side_reply

from clearside import checks
from clearside.contract import validate_document
from clearside.errors import ClearSideError, InputError, NotFound
from clearside.providers.scripted import ScriptedProvider
from clearside.runtime import steps
from clearside.schema import Document, Weights
from clearside.static import remap
from clearside.static.engine import Engine
from clearside.store import NewDebate

LEX = checks.Embeddings(enabled=False)


def document() -> dict:
    doc = fixture_dict()
    doc["pro"], doc["con"] = side_reply("pro", arguments=4), side_reply("con", arguments=4)
    doc["moderator"] = moderator_reply()
    doc.pop("quality", None)
    doc["meta"]["model_info"] = {"provider": "scripted", "model": "script"}
    return doc


def remapped_reply() -> dict:
    """A clean synthesis that lists the scaling hinge first and adds one about operating cost."""
    reply = moderator_reply()
    reply["decision_hinges"] = ["Moderator: what are the real scaling requirements?",
                                "Moderator: would the running cost of many services fit the operating budget?",
                                "Moderator: does the team have distributed systems experience?"]
    reply["assumption_conflicts"][0].update(pro_assumption="P1", con_assumption="C1")
    return reply


def parts(reply: dict) -> list[dict]:
    """The replies of one re-map's calls: the sections it writes afresh, one call each, from ``reply``."""
    return [{name: copy.deepcopy(reply[name])} for name in remap.REMAPPED]


def only_wanted(reply: dict):
    """Answer with ``reply``, or with the fields a mending call asks for."""

    def answer(request) -> dict:
        wanted = list((request.schema or {}).get("properties", {}))
        return {k: copy.deepcopy(reply[k]) for k in wanted if k in reply} or copy.deepcopy(reply)

    return answer


# -- conditions ------------------------------------------------------------------------------------------------

def test_weights_parse_and_bad_weights_name_the_fix():
    assert remap.parse_weights("economic=3, Ethical=0").dump() == {"economic": 3, "ethical": 0}
    for text, fix in (("economic", "CATEGORY=N"), ("money=2", "Unknown category 'money'"),
                      ("economic=4", "from 0 to 3"), ("economic=-1", "from 0 to 3"), ("economic=x", "from 0 to 3"),
                      ("economic=1,economic=2", "twice"), ("", "empty")):
        with pytest.raises(InputError, match=fix):
            remap.parse_weights(text)


def test_assumptions_match_by_id_text_prefix_or_substring_and_refuse_ambiguity():
    doc = validate_document(document())
    assert remap.match_assumption(doc, "C2")[:2] == ("con", 1)
    assert remap.match_assumption(doc, "pro assumption b")[:2] == ("pro", 1)
    assert remap.match_assumption(doc, "Con assumption A: the organization has DevOps maturity")[:2] == ("con", 0)
    with pytest.raises(InputError, match=r"matches 2 assumptions \(P1, C1\)"):
        remap.match_assumption(doc, "DevOps maturity")
    with pytest.raises(InputError, match="matches no listed assumption: use its id or text, one of: P1 "):
        remap.match_assumption(doc, "the moon is cheese")
    with pytest.raises(InputError, match="two stances"):
        remap.stances_for(doc, accept=["P1"], reject=["Pro assumption A"])


# -- the re-map ------------------------------------------------------------------------------------------------

def test_a_remap_reruns_only_the_moderator_with_the_conditions_and_keeps_the_original():
    provider = ScriptedProvider(fallback=only_wanted(remapped_reply()))
    data = document()
    before = copy.deepcopy(data)
    doc = validate_document(copy.deepcopy(data))
    stances = remap.stances_for(doc, accept=["P2"], reject=["Con assumption B"], unsure=["C1"])
    out = remap.remap(data, Engine(provider), weights=Weights(economic=3, ethical=0, social=2), stances=stances)
    assert data == before, "the document passed in is not changed"
    assert {r.agent for r in provider.requests} == {"moderator"}
    text = request_text(provider.requests_for("moderator")[0])
    assert "The user cares most about: economic (3 of 3), social (2 of 3)." in text
    assert "The user sets aside: ethical (weight 0 of 3)." in text
    assert 'The user accepts assumption P2 of the case FOR: "Pro assumption B: traffic keeps growing each year".' \
        in text
    assert "The user rejects assumption C2 of the case AGAINST" in text and "is unsure about assumption C1" in text
    assert "Never say which side wins" in text
    assert isinstance(out, Document) and out.meta.schema_version == "1.1.0"
    assert out.moderator.decision_hinges[0] == "Moderator: what are the real scaling requirements?"
    assert out.remap.original.dump() == before["moderator"]
    assert out.remap.weights.dump() == {"economic": 3, "ethical": 0, "social": 2}
    assert [(s.side, s.index, s.stance) for s in out.remap.stances] == [("pro", 1, "accept"), ("con", 1, "reject"),
                                                                      ("con", 0, "unsure")]
    assert out.pro.dump() == before["pro"] and out.con.dump() == before["con"]
    assert out.remap.remapped_at.endswith("Z")


def test_a_verdict_in_the_remapped_synthesis_is_caught_and_sent_back():
    biased = remapped_reply()
    biased["core_disagreements"][0]["description"] = "On balance, the FOR side's arguments are stronger once " \
        "cost is what matters most"
    provider = ScriptedProvider(script={"moderator": [{"core_disagreements": biased["core_disagreements"]}]},
                                fallback=only_wanted(remapped_reply()))
    engine = Engine(provider, embeddings=LEX)
    out = remap.remap(document(), engine, weights=Weights(economic=3))
    assert len(provider.requests_for("moderator")) >= 2, "the biased reply was not accepted"
    assert all("USER'S PRIORITIES" in request_text(r) for r in provider.requests_for("moderator"))
    assert "stronger" not in str(out.moderator.dump())
    assert "takes a side ('On balance')" in str(engine.last_violations), engine.last_violations


def test_a_remap_writes_only_the_disagreements_and_hinges_and_keeps_the_sections_about_the_cases():
    """The conditions change which disagreements matter and which hinges are decisive: those two sections are
    written afresh (one call each, each with the conditions), the agreements, conflicts and evidence gaps are the
    original's; ``whole`` reruns the whole synthesis in one call. The re-map's checks are its own quality record."""
    data = document()
    data["quality"] = {"checks_version": checks.CHECKS_VERSION, "strategy": "whole", "semantic": False,
                       "agents": {"moderator": {"attempts": 1, "reasks": 0}}}
    data["moderator"]["areas_of_agreement"] = ["Moderator: both sides accept that any change of architecture costs "
                                               "the team time"]
    echo = remapped_reply()
    echo["decision_hinges"] = ["Moderator: what are the real scaling requirements?"] * 2  # an exact repeat
    provider = ScriptedProvider(fallback=only_wanted(echo))
    out = remap.remap(data, Engine(provider, embeddings=LEX), weights=Weights(economic=3))
    asked = [list(r.schema["properties"]) for r in provider.requests_for("moderator")]
    assert asked == [["core_disagreements"], ["decision_hinges"]]
    assert all("USER'S PRIORITIES" in request_text(r) for r in provider.requests_for("moderator"))
    for kept in ("areas_of_agreement", "assumption_conflicts", "evidence_gaps"):
        assert out.moderator.dump()[kept] == data["moderator"][kept], kept
    assert out.moderator.decision_hinges == ["Moderator: what are the real scaling requirements?"]
    assert out.moderator.core_disagreements[0].dump() == remapped_reply()["core_disagreements"][0]
    assert [i.check for i in out.quality.agents["remap"].items] == ["exact_repeat"]
    assert (out.quality.agents["moderator"].attempts, out.quality.agents["moderator"].reasks) == (1, 0), "the original"
    assert "disagreements and decision hinges" in out.meta.notes

    whole = ScriptedProvider(fallback=only_wanted(remapped_reply()))
    out = remap.remap(data, Engine(whole, embeddings=LEX), weights=Weights(economic=3), whole=True)
    assert [list(r.schema["properties"]) for r in whole.requests_for("moderator")] == [list(remapped_reply())]
    assert out.moderator.areas_of_agreement == remapped_reply()["areas_of_agreement"]
    assert "the whole synthesis" in out.meta.notes


def test_a_moderator_that_keeps_a_verdict_fails_the_remap():
    biased = remapped_reply()
    biased["core_disagreements"][0]["description"] = "I recommend adopting microservices: the FOR side is right"
    provider = ScriptedProvider(fallback=only_wanted(biased))
    with pytest.raises(ClearSideError):
        remap.remap(document(), Engine(provider, embeddings=LEX, retries=1), weights=Weights(ethical=3))


def test_a_remap_without_conditions_is_refused():
    with pytest.raises(InputError, match="Nothing to re-map"):
        remap.remap(document(), Engine(ScriptedProvider()), weights=Weights(economic=1))


# -- the diff and the view's order ------------------------------------------------------------------------------

def test_diff_finds_added_removed_reworded_and_moved_items():
    a = moderator_reply()
    a["decision_hinges"] = ["Does the team have distributed systems experience?",
                            "What are the real scaling requirements of the product?",
                            "Will the cloud bill grow faster than the revenue?"]
    b = copy.deepcopy(a)
    b["decision_hinges"] = ["What are the real scaling requirements of the product today?",
                            "Does the team have distributed systems experience?",
                            "Is the data model easy to split across services?"]
    b["areas_of_agreement"] = list(reversed(a["areas_of_agreement"]))
    for embeddings in (None, LEX):
        d = remap.diff(a, b, embeddings)
        hinges = d["sections"]["decision_hinges"]
        assert hinges["added"] == ["Is the data model easy to split across services?"]
        assert hinges["removed"] == ["Will the cloud bill grow faster than the revenue?"]
        assert [(r["before"], r["after"]) for r in hinges["reworded"]] == [
            ("What are the real scaling requirements of the product?",
             "What are the real scaling requirements of the product today?")]
        assert {(m["from"], m["to"]) for m in hinges["moved"]} == {(1, 2), (2, 1)}
        agreements = d["sections"]["areas_of_agreement"]
        assert agreements["added"] == agreements["removed"] == [] and len(agreements["moved"]) == 2
        assert d["sections"]["core_disagreements"] == {"added": [], "removed": [], "reworded": [], "moved": [],
                                                       "kept": 1}
        assert d["changed"] and d["semantic"] is (embeddings is None and checks.Embeddings().enabled)
    assert remap.diff(a, copy.deepcopy(a), LEX)["changed"] is False


def test_weighted_order_puts_heavier_categories_first_and_weight_zero_last_never_dropped():
    side = side_reply("con", arguments=4)  # technical, environmental, ethical, economic
    order = remap.weighted_order(side, Weights(economic=3, technical=0))
    assert [e["argument"]["category"] for e in order] == ["economic", "environmental", "ethical", "technical"]
    assert [e["index"] for e in order] == [3, 1, 2, 0]
    assert [e["emphasis"] for e in order] == ["high", "normal", "normal", "set_aside"]
    assert [e["index"] for e in remap.weighted_order(side, None)] == [0, 1, 2, 3]


# -- versions --------------------------------------------------------------------------------------------------

def test_remaps_are_kept_as_numbered_versions_and_the_original_is_never_changed(store_url):
    from clearside.store import Store

    store = Store(store_url)
    try:
        data = document()
        debate_id = store.create(NewDebate("static", data["proposition"]["raw_input"], provider="scripted",
                                           model="script", document=copy.deepcopy(data), status="done"))
        provider = ScriptedProvider(fallback=only_wanted(remapped_reply()))
        doc = validate_document(copy.deepcopy(data))
        first = remap.remap(data, Engine(provider, embeddings=LEX), weights=Weights(economic=3))
        second = remap.remap(data, Engine(provider, embeddings=LEX),
                             stances=remap.stances_for(doc, reject=["C2"]))
        assert remap.save_version(store, debate_id, first, provider) == 1
        assert remap.save_version(store, debate_id, second, provider) == 2
        listed = store.versions(debate_id)
        assert [(v.number, v.kind, v.label, v.provider, v.body) for v in listed] == [
            (1, "remap", "economic 3", "scripted", None), (2, "remap", "reject C2", "scripted", None)]
        body = store.version(debate_id, 2).body
        assert body["stances"] == [{"side": "con", "index": 1, "assumption": "Con assumption B: traffic keeps "
                                    "growing each year", "stance": "reject"}]
        assert validate_document(body["document"]).remap.original.dump() == data["moderator"]
        assert store.get(debate_id).document["moderator"] == data["moderator"], "the original is kept as it was"
        with pytest.raises(NotFound, match="has no version 3"):
            store.version(debate_id, 3)
        with pytest.raises(InputError, match="Unknown version kind"):
            store.add_version(debate_id, "draft", {})
        copy_id = store.duplicate(debate_id)
        assert [v.number for v in store.versions(copy_id)] == [1, 2]
        store.delete(debate_id)
        assert not store.exists(debate_id) and len(store.versions(copy_id)) == 2
    finally:
        store.close()


# -- the command line ------------------------------------------------------------------------------------------

def test_remap_command_writes_the_remapped_document_or_the_diff(tmp_path, capsys, monkeypatch):
    import json

    from helpers import run_cli, script_file

    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")  # lexical checks and diff: the pipeline is under test
    path = tmp_path / "debate.json"
    path.write_text(json.dumps(document()), encoding="utf-8")
    spec = script_file(tmp_path, moderator=parts(remapped_reply()) * 2)
    code, out, err = run_cli(capsys, "remap", str(path), "--provider", spec, "--weights", "economic=3,ethical=0",
                             "--accept", "P2", "--reject", "con assumption b", "--format", "diff")
    assert code == 0, err
    assert "## Decision hinges" in out and "- added: Moderator: would the running cost" in out
    assert "- moved from 2 to 1: Moderator: what are the real scaling requirements?" in out
    code, _, err = run_cli(capsys, "remap", str(path), "--provider", spec, "--unsure", "Pro assumption A",
                           "--out", str(tmp_path / "out.json"))
    assert code == 0, err
    saved = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert saved["remap"]["stances"] == [{"side": "pro", "index": 0, "stance": "unsure",
                                          "assumption": "Pro assumption A: the organization has DevOps maturity"}]


def test_remapping_a_saved_debate_saves_a_version_and_lists_it(tmp_path, capsys, monkeypatch):
    from helpers import run_cli, script_file

    from clearside.store import open_store

    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    spec = script_file(tmp_path, moderator=parts(remapped_reply()))
    store = open_store()
    debate_id = store.create(NewDebate("static", "Q?", provider="scripted", model="script", document=document(),
                                     status="done"))
    code, _, err = run_cli(capsys, "remap", debate_id, "--provider", spec, "--weights", "social=2")
    assert code == 0 and f"Saved as version 1 of debate {debate_id}" in err, err
    code, out, _ = run_cli(capsys, "remap", debate_id, "--versions")
    assert code == 0 and out.startswith("1\t") and "\tremap\tsocial 2\tscripted:" in out
    assert store.get(debate_id).document["moderator"] == document()["moderator"]


@pytest.mark.parametrize("args, message", [
    (["--weights", "economic=5"], "out of range: use a whole number from 0 to 3"),
    (["--weights", "money=2"], "Unknown category 'money' in --weights: use economic, ethical"),
    (["--weights", "economic"], "is not CATEGORY=N"),
    (["--accept", "the moon is cheese"], "matches no listed assumption: use its id or text"),
    (["--reject", "DevOps"], "matches 2 assumptions (P1, C1): give more of its text, or its id"),
    ([], "Nothing to re-map with: give --weights"),
    (["--versions"], "--versions lists a saved debate's versions: give its id"),
])
def test_remap_command_refuses_bad_input_naming_the_fix(tmp_path, capsys, args, message):
    import json

    from helpers import run_cli

    path = tmp_path / "debate.json"
    path.write_text(json.dumps(document()), encoding="utf-8")
    code, out, err = run_cli(capsys, "remap", str(path), "--provider", "scripted", *args)
    assert code == 2 and message in err and out == "", err


def test_debate_with_weights_runs_the_debate_then_a_remap(tmp_path, capsys, monkeypatch):
    import json

    from helpers import full_script, run_cli

    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")
    spec = full_script(tmp_path, moderator=[moderator_reply(), *parts(remapped_reply())])
    code, out, err = run_cli(capsys, "debate", "Should we adopt microservices?", "--provider", spec,
                             "--weights", "technical=3")
    assert code == 0, err
    doc = json.loads(out)
    original = doc["remap"]["original"]
    assert doc["remap"]["weights"] == {"technical": 3} and original.pop("cruxes") and original == moderator_reply()
    assert len(doc["moderator"]["cruxes"]) == len(doc["moderator"]["decision_hinges"]), "the new hinges' cruxes"
    code, _, err = run_cli(capsys, "debate", "Q?", "--provider", spec, "--weights", "technical=1")
    assert code == 2 and "the default: raise or lower one" in err


# -- the dashboard (AppTest) -----------------------------------------------------------------------------------

def explore_script():
    import json

    import streamlit as st

    from clearside.schema import Document
    from clearside_ui import explore_view

    document = Document.model_validate(json.loads(st.session_state["doc_json"]))
    explore_view.explore(document, debate_id=st.session_state.get("debate"), store=st.session_state.get("store"),
                         editable=True)


def explore_app(provider, **state):
    import json

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(explore_script, default_timeout=30)
    at.session_state["doc_json"] = json.dumps(document())
    at.session_state["provider_override"] = provider
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def claims_in_order(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("- ") and "weight" in m.value]


def test_sliders_reorder_both_cases_at_once_with_no_model_call():
    provider = ScriptedProvider()
    at = explore_app(provider)
    assert not at.exception, at.exception
    before = claims_in_order(at)
    assert len(before) == 8 and all("weight 1" in c for c in before)
    at.slider(key="weight_economic").set_value(3)
    at.slider(key="weight_technical").set_value(0).run()
    after = [c.replace("\\", "") for c in claims_in_order(at)]
    pro, con = after[:3], after[3:]
    assert "▲▲ **Pro: small teams can release" in pro[0] and "economic · weight 3" in pro[0]
    assert "▲▲ **Con: splitting the data" in con[0] and "economic · weight 3" in con[0]
    assert not any("technical" in c for c in after), "weight 0: set aside, out of the ordered lists"
    assert [e.label for e in at.expander] == ["Set aside by weight 0 (1)"] * 2, "the same rule for both cases"
    assert provider.requests == []
    page = " ".join(m.value for m in at.markdown).lower()
    assert "score" not in page and "winner" not in page


def test_remap_button_runs_on_the_runtime_saves_a_version_and_shows_the_diff(monkeypatch):
    from helpers import settle

    from clearside.store import open_store

    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")
    store = open_store()  # the dashboard's store: the runtime this page hosts runs the re-map on it
    debate_id = store.create(NewDebate("static", "Q?", provider="scripted", model="script", document=document(),
                                     status="done"))
    provider = ScriptedProvider(fallback=only_wanted(remapped_reply()))
    at = explore_app(provider, debate=debate_id, store=store)
    at.button(key="remap_start").click().run()
    assert "Set a weight other than 1" in at.error[0].value and provider.requests == []
    at.radio(key=f"stance_{debate_id[:8]}_con_1").set_value("reject")
    at.slider(key="weight_social").set_value(2)
    at.button(key="remap_start").click().run()
    settle(at, lambda a: any("Saved as version 1" in s.value for s in a.success),
           describe=lambda a: str([m.value for m in a.markdown][-5:] + [e.value for e in a.error]))
    requests = provider.requests_for("moderator")
    assert len(requests) == len(remap.REMAPPED), "one call per section the re-map writes"
    for request in requests:
        text = request_text(request)
        assert "The user rejects assumption C2 of the case AGAINST" in text and "social (2 of 3)" in text
    page = "\n".join(m.value for m in at.markdown)
    assert ":blue-badge[added] Moderator: would the running cost" in page.replace("\\", "")
    assert "Versions of this debate" in page and at.selectbox(key="remap_version").value == 1
    assert store.get(debate_id).document["moderator"] == document()["moderator"]
    assert at.session_state["remap_job"] is None and len(store.versions(debate_id)) == 1


def test_a_running_remap_can_be_cancelled_and_saves_no_version(monkeypatch):
    import threading

    from helpers import settle

    from clearside.store import open_store

    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")
    store = open_store()
    debate_id = store.create(NewDebate("static", "Q?", provider="scripted", model="script", document=document(),
                                     status="done"))
    gate = threading.Event()
    provider = ScriptedProvider()
    provider.enqueue(lambda request: (gate.wait(60), only_wanted(remapped_reply())(request))[1], agent="moderator")
    at = explore_app(provider, debate=debate_id, store=store)
    at.slider(key="weight_social").set_value(2)
    try:
        at.button(key="remap_start").click().run()
        settle(at, lambda a: any(b.key == "remap_cancel" for b in a.button), describe=lambda a: str(a.info))
        at.button(key="remap_cancel").click().run()
    finally:
        gate.set()  # the moderator's call returns; its first token meets the cancel
    settle(at, lambda a: any("Re-map cancelled" in i.value for i in a.info),
           describe=lambda a: str([i.value for i in a.info] + [e.value for e in a.error]))
    assert not any(b.key == "remap_cancel" for b in at.button) and not at.button(key="remap_start").proto.disabled
    assert store.versions(debate_id) == [] and store.get(debate_id).document == document()


def test_the_debate_page_shows_the_explore_panel_and_the_saved_versions(tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from clearside.store import open_store

    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    store = open_store()
    debate_id = store.create(NewDebate("static", "Q?", provider="scripted", model="script", document=document(),
                                     status="done"))
    remapped = remap.remap(document(), Engine(ScriptedProvider(fallback=only_wanted(remapped_reply())),
                                              embeddings=LEX), weights=Weights(ethical=3))
    remap.save_version(store, debate_id, remapped)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=30)
    at.session_state["provider_override"] = ScriptedProvider()
    at.query_params["debate"] = debate_id
    at.run()
    assert not at.exception, at.exception
    page = "\n".join(m.value for m in at.markdown)
    assert "Explore with your priorities" in page and "Versions of this debate" in page
    assert at.selectbox(key="remap_version").options == ["Version 1 · " + store.versions(debate_id)[0].created_at
                                                         + " · ethical 3"]
    assert not [b for b in at.button if b.key == "remap_start"], "another browser's debate: read-only, no re-map"
    assert "Read-only: make an editable copy to re-map" in "\n".join(c.value for c in at.caption)


def test_a_failing_remap_says_why_and_hostile_assumption_text_stays_text(monkeypatch):
    import json

    from helpers import settle

    from clearside.store import open_store

    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")
    data = document()
    data["con"]["assumptions"][0] = "<img src=x onerror=alert(1)> **loud** [link](javascript:x)"
    provider = ScriptedProvider(script={"moderator": [{"__error__": "unreachable", "message": "the server is down"}]})
    unsaved = explore_app(provider, doc_json=json.dumps(data))  # a document that is not saved: no re-map
    assert not [b for b in unsaved.button if b.key == "remap_start"]
    assert "Re-mapping needs a saved debate" in "\n".join(c.value for c in unsaved.caption)
    store = open_store()
    debate_id = store.create(NewDebate("static", "Q?", provider="scripted", model="script", document=data,
                                     status="done"))
    at = explore_app(provider, doc_json=json.dumps(data), debate=debate_id, store=store)
    key = f"stance_{debate_id[:8]}_con_0"
    label = at.radio(key=key).label
    assert "<img" not in label.replace("\\<", "") and "\\*\\*loud\\*\\*" in label and "\\[link\\]" in label
    at.radio(key=key).set_value("accept")
    at.button(key="remap_start").click().run()
    settle(at, lambda a: any("the server is down" in e.value for e in a.error),
           describe=lambda a: str([e.value for e in a.error]))
    assert not at.success and at.button(key="remap_start").disabled is False
    assert store.versions(debate_id) == [], "a failed re-map saves no version"


# -- remap --enqueue: the re-map queued on the runtime, run by any host ----------------------------------------

def queued_remaps(debate_id: str) -> list[str]:
    from clearside import runtime

    return [w.workflow_id for w in runtime.dbos_client().list_workflows(workflow_id_prefix=f"{debate_id}:remap:",
                                                                    load_input=False, load_output=False)]


def test_remap_enqueue_queues_the_remap_a_host_saves_it_once_and_status_and_cancel_know_its_id(tmp_path, capsys,
                                                                                              monkeypatch):
    import json
    import time

    from helpers import run_cli, script_file

    from clearside import modes, runtime
    from clearside.store import open_store

    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")
    store = open_store()
    debate_id = store.create(NewDebate("static", "Q?", provider="scripted", model="script", document=document(),
                                     status="done"))
    spec = script_file(tmp_path, moderator=parts(remapped_reply()))
    args = ("remap", debate_id, "--enqueue", "--provider", spec, "--weights", "social=2", "--reject", "C2")
    code, out, err = run_cli(capsys, *args)
    job_id = out.strip()
    assert code == 0 and job_id.startswith(f"{debate_id}:remap:"), err
    assert f"python -m clearside status {job_id} --wait" in err and "worker" in err
    assert job_id not in steps.LOCAL_PROVIDERS, "the host rebuilds the provider from the job's recipe"
    code, out, _ = run_cli(capsys, "status", job_id, "--format", "json")
    assert code == 0 and json.loads(out) == {"id": job_id, "job": job_id, "status": "queued", "error": "",
                                             "sections": [], "kind": "remap"}
    code, out, _ = run_cli(capsys, *args)  # a second one, cancelled while queued: no host ever runs it
    cancelled = out.strip()
    code, _, err = run_cli(capsys, "cancel", cancelled)
    assert code == 0 and f"Cancelled {cancelled}" in err
    assert run_cli(capsys, "status", cancelled)[0] == 1
    modes.host(role="test")  # a host now starts: it takes the queued re-map
    deadline = time.monotonic() + 30
    while not runtime.state(job_id).finished and time.monotonic() < deadline:
        time.sleep(0.05)
    code, out, err = run_cli(capsys, "status", job_id)
    assert code == 0 and out.startswith(f"{job_id}: done\nsaved as version 1 of debate {debate_id}"), out + err
    (version,) = store.versions(debate_id)
    assert (version.kind, version.label, version.provider) == ("remap", "social 2; reject C2", "scripted")
    body = store.version(debate_id, 1).body
    assert body["document"]["moderator"]["decision_hinges"] == remapped_reply()["decision_hinges"]
    assert store.get(debate_id).document == document(), "the debate itself is unchanged"
    assert runtime.state(cancelled).status == "cancelled"
    code, _, err = run_cli(capsys, "cancel", job_id)
    assert code == 0 and "nothing to cancel, it is done" in err


@pytest.mark.parametrize("args, message", [
    (["--weights", "economic=5"], "out of range: use a whole number from 0 to 3"),
    (["--weights", "economic=1"], "Set a weight other than 1 or a stance on an assumption first"),
    (["--reject", "the moon is cheese"], "matches no listed assumption: use its id or text"),
    ([], "Nothing to re-map with: give --weights"),
])
def test_remap_enqueue_refuses_bad_conditions_and_queues_nothing(capsys, args, message):
    from helpers import run_cli

    from clearside.store import open_store

    store = open_store()
    debate_id = store.create(NewDebate("static", "Q?", provider="scripted", model="script", document=document(),
                                     status="done"))
    code, out, err = run_cli(capsys, "remap", debate_id, "--enqueue", "--provider", "scripted", *args)
    assert code == 2 and message in err and out == "", err
    assert queued_remaps(debate_id) == [] and store.versions(debate_id) == []


def test_remap_enqueue_refuses_a_file_naming_the_fix(tmp_path, capsys):
    import json

    from helpers import run_cli

    path = tmp_path / "debate.json"
    path.write_text(json.dumps(document()), encoding="utf-8")
    code, out, err = run_cli(capsys, "remap", str(path), "--enqueue", "--provider", "scripted", "--weights",
                             "social=2")
    assert code == 2 and out == "", err
    assert "--enqueue re-maps a saved debate" in err and f"python -m clearside import {path}" in err
    assert "drop --enqueue" in err


def test_remap_whole_rewrites_every_section_on_the_command_line_and_in_a_queued_job(tmp_path, capsys, monkeypatch):
    """``--whole``: one call for the whole synthesis, so the agreements change too; the flag travels in the job."""
    import json
    import time

    from helpers import run_cli, script_file

    from clearside import modes, runtime
    from clearside.store import open_store

    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")
    whole = remapped_reply()
    whole["areas_of_agreement"] = ["Moderator: both sides accept that the current monolith still serves customers"]
    path = tmp_path / "debate.json"
    path.write_text(json.dumps(document()), encoding="utf-8")
    code, out, err = run_cli(capsys, "remap", str(path), "--provider", script_file(tmp_path, moderator=[whole]),
                             "--weights", "economic=3", "--whole")
    assert code == 0, err
    assert json.loads(out)["moderator"]["areas_of_agreement"] == whole["areas_of_agreement"]
    store = open_store()
    debate_id = store.create(NewDebate("static", "Q?", provider="scripted", model="script", document=document(),
                                     status="done"))
    spec = script_file(tmp_path, "queued.json", moderator=[whole])
    code, out, err = run_cli(capsys, "remap", debate_id, "--enqueue", "--whole", "--provider", spec, "--weights",
                             "economic=3")
    job_id = out.strip()
    assert code == 0, err
    modes.host(role="test")
    deadline = time.monotonic() + 30
    while not runtime.state(job_id).finished and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runtime.state(job_id).status == "done"
    body = store.version(debate_id, 1).body
    assert body["document"]["moderator"]["areas_of_agreement"] == whole["areas_of_agreement"]
