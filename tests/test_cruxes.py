"""Cruxes: what rests on each decision hinge, its load on each side, if yes / if no; the
``cruxes`` command, the Markdown report, the Quick View and the dashboard's hinges by load."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers import fixture_dict, run_cli, side_reply

from clearside import checks, cruxes, neutrality
from clearside.contract import jsonschema_errors
from clearside.errors import InputError
from clearside.quality import references
from clearside.render import render
from clearside.schema import Document

HINGES = ["Does the team have distributed systems experience?", "Will traffic keep growing?",
          "Is the budget set by the board?"]


def _unit(v: list[float]) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def _document() -> dict:
    data = fixture_dict()
    data["pro"], data["con"] = side_reply("pro", arguments=3), side_reply("con", arguments=4)
    data["moderator"]["decision_hinges"] = list(HINGES)
    return data


# Hinge 0, 1 and 2 point along axes 0, 1 and 2; axis 3 is off every hinge.
AXES = {"h0": [1, 0, 0, 0], "h1": [0, 1, 0, 0], "h2": [0, 0, 1, 0], "off": [0, 0, 0, 1]}
PLAN = {  # (side, kind, index) -> vector
    ("pro", "arguments", 0): AXES["h0"],
    ("pro", "arguments", 1): [1, 1, 0, 0],  # cosine 0.71 to hinges 0 and 1: rests on both
    ("pro", "arguments", 2): AXES["off"],
    ("con", "arguments", 0): AXES["h1"],
    ("con", "arguments", 1): [0.29, 0, 0, math.sqrt(1 - 0.29 ** 2)],  # closest hinge at 0.29: under the floor
    ("con", "arguments", 2): [0.9, 0.44, 0, 0],  # 0.90 to hinge 0, 0.44 to hinge 1: outside the margin
    ("con", "arguments", 3): AXES["off"],
    ("pro", "assumptions", 0): AXES["h1"],
    ("pro", "assumptions", 1): AXES["off"],
    ("con", "assumptions", 0): AXES["h0"],
    ("con", "assumptions", 1): AXES["off"],
}


class Planned(checks.Embeddings):
    """Embeddings whose vectors are set by hand, so which item rests on which hinge is known in advance."""

    def __init__(self, data: dict) -> None:
        super().__init__(enabled=True)
        self.table = {hinge: AXES[f"h{i}"] for i, hinge in enumerate(data["moderator"]["decision_hinges"])}
        for (side, kind, i), vector in PLAN.items():
            item = data[side][kind][i]
            self.table[cruxes.argument_text(item) if kind == "arguments" else item] = vector

    def vectors(self, texts):
        return np.stack([_unit(self.table[t]) for t in texts])


@pytest.fixture
def attached() -> Document:
    data = _document()
    return cruxes.attach(data, Planned(data))


def test_dependants_and_loads_on_a_hand_made_document(attached):
    found = {c.hinge: c for c in attached.moderator.cruxes}
    assert sorted(found) == [0, 1, 2]
    assert (found[0].pro_arguments, found[0].con_arguments, found[0].pro_assumptions, found[0].con_assumptions) == \
        ([0, 1], [2], [], [0])
    assert (found[1].pro_arguments, found[1].con_arguments, found[1].pro_assumptions, found[1].con_assumptions) == \
        ([1], [0], [0], [])
    assert (found[0].load.pro, found[0].load.con) == (round(2 / 3, 3), 0.25)
    assert (found[1].load.pro, found[1].load.con) == (round(1 / 3, 3), 0.25)
    # every index lies within its list, and the document is a valid 1.1.0 document
    for crux in attached.moderator.cruxes:
        assert crux.hinge < len(attached.moderator.decision_hinges)
        for side in ("pro", "con"):
            case = getattr(attached, side)
            assert all(i < len(case.arguments) for i in getattr(crux, f"{side}_arguments"))
            assert all(i < len(case.assumptions) for i in getattr(crux, f"{side}_assumptions"))
    assert attached.meta.schema_version == "1.1.0" and jsonschema_errors(attached.dump()) == []
    assert [crux.hinge for _, crux in cruxes.sorted_by_load(attached)] == [0, 1, 2]
    assert [text for text, _ in cruxes.sorted_by_load(attached)] == [HINGES[0], HINGES[1], HINGES[2]]


@pytest.mark.parametrize(("column", "expected"), [
    ([0.60, 0.56], [True, True]),  # within the margin of the closest: rests on both
    ([0.60, 0.54], [True, False]),  # outside it: only the closest
    ([0.29, 0.10], [False, False]),  # the closest under the floor: on none
    ([0.30, 0.30], [True, True]),  # at the floor, a tie
])
def test_the_floor_and_the_margin(column, expected):
    assert cruxes.depends(np.array([[v] for v in column]), semantic=True)[:, 0].tolist() == expected


def test_a_hinge_with_no_dependants_says_so_honestly(attached):
    none = attached.moderator.cruxes[2]
    assert (none.pro_arguments, none.con_arguments, none.pro_assumptions, none.con_assumptions) == ([], [], [], [])
    assert (none.load.pro, none.load.con) == (0, 0)
    assert none.if_yes == none.if_no == cruxes.NO_DEPENDANTS == "No argument of either side rests on this hinge."


def test_the_counterfactuals_name_both_sides_items_and_pick_no_side(attached):
    first, second = attached.moderator.cruxes[:2]
    assert first.if_yes.startswith("If yes, the answer tests FOR's arguments 1 and 2 (“Pro: ")
    assert "AGAINST's argument 3 (“Con: " in first.if_yes
    assert "AGAINST's assumption 1 (“Con assumption A" in first.if_yes
    assert first.if_no.startswith("If no, FOR's arguments 1 and 2, AGAINST's argument 3 and AGAINST's assumption 1 "
                                  "hold if they assumed no")
    assert "FOR's assumption 1" in second.if_yes and "AGAINST's argument 1" in second.if_yes
    for crux in attached.moderator.cruxes:
        for text in (crux.if_yes, crux.if_no):
            assert neutrality.scan(text) == [], text
            assert "win" not in text.lower() and "stronger" not in text.lower()


def test_a_side_with_no_dependent_argument_is_named_and_claims_are_quoted_not_judged():
    data = _document()
    data["pro"]["arguments"][0]["claim"] = "Governments should ban monoliths; FOR has the stronger case"
    data["moderator"]["decision_hinges"] = HINGES[:1]
    crux = cruxes.attach(data, Planned(data)).moderator.cruxes[0]
    assert "No argument of" not in crux.if_yes  # both sides have arguments on hinge 0
    assert "“Governments should ban monoliths; FOR has the stronger case”" in crux.if_yes
    assert neutrality.violations(crux.if_yes) == []  # the side's words are quoted inside a conditional
    data["con"]["arguments"][2]["explanation"] = "Con moved off the hinge."
    plan = Planned(data)
    plan.table[cruxes.argument_text(data["con"]["arguments"][2])] = AXES["off"]
    alone = cruxes.attach(data, plan).moderator.cruxes[0]
    assert alone.con_arguments == [] and alone.load.con == 0
    assert alone.if_yes.endswith("No argument of AGAINST rests on it.")


def test_lexical_fallback_when_semantic_checks_are_off(monkeypatch):
    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")
    data = _document()
    data["moderator"]["decision_hinges"] = ["Does the organization have DevOps maturity?",
                                            "Will traffic keep growing each year?"]
    found, semantic = cruxes.cruxes(data)  # the default embeddings follow the environment: off
    assert semantic is False
    # both sides' assumption A names DevOps maturity, assumption B yearly traffic growth
    assert (found[0].pro_assumptions, found[0].con_assumptions) == ([0], [0])
    assert (found[1].pro_assumptions, found[1].con_assumptions) == ([1], [1])


def test_attach_refuses_what_is_not_a_document():
    with pytest.raises(InputError, match="Cruxes need a ClearSide v1 document"):
        cruxes.attach(["not", "a", "document"], checks.LEXICAL_ONLY)
    with pytest.raises(InputError, match="Not a valid ClearSide v1 document"):
        cruxes.attach({"moderator": {}}, checks.LEXICAL_ONLY)


def test_markdown_and_quick_view_show_hinges_by_load_and_documents_without_cruxes_render_as_before(attached):
    data = attached.dump()
    data["moderator"]["cruxes"] = [data["moderator"]["cruxes"][i] for i in (2, 0, 1)]  # stored order is not load order
    doc = Document.model_validate(data)
    report, quick = render(doc, "md"), render(doc, "quick")
    for text in (report, quick):
        positions = [text.index(h) for h in HINGES]
        assert positions == sorted(positions), "hinges by load: 0, 1, then the one with no dependants"
        assert "FOR 2 of 3 arguments (67%) · AGAINST 1 of 4 (25%)" in text
        assert cruxes.NO_DEPENDANTS in text and first_if_yes(doc) in text
    assert "   - FOR argument 2: Pro: " in report and "   - AGAINST assumption 1: Con assumption A" in report
    plain = Document.model_validate(_document())
    assert "1. " + HINGES[0] in render(plain, "md") and "Load:" not in render(plain, "md") + render(plain, "quick")


def first_if_yes(doc: Document) -> str:
    return next(c.if_yes for c in doc.moderator.cruxes if c.hinge == 0)


def test_cli_prints_hinges_by_load_as_text_json_and_document(tmp_path, capsys):
    path = tmp_path / "debate.json"
    path.write_text(json.dumps(references.load("flagship").document), encoding="utf-8")
    code, out, _ = run_cli(capsys, "cruxes", str(path), "--no-embeddings")
    assert code == 0 and out.startswith("Decision hinges of: Should the United States")
    assert "word overlap" in out and "1. " in out and "Load: FOR " in out
    code, out, _ = run_cli(capsys, "cruxes", str(path), "--no-embeddings", "--json")
    report = json.loads(out)
    assert code == 0 and report["semantic"] is False and len(report["hinges"]) == 4
    loads = [h["load"]["pro"] + h["load"]["con"] for h in report["hinges"]]
    assert loads == sorted(loads, reverse=True)
    doc_path = tmp_path / "with-cruxes.json"
    code, _, _ = run_cli(capsys, "cruxes", str(path), "--no-embeddings", "--document", "--out", str(doc_path))
    document = json.loads(doc_path.read_text(encoding="utf-8"))
    assert code == 0 and jsonschema_errors(document) == [] and document["meta"]["schema_version"] == "1.1.0"
    assert [c["hinge"] for c in document["moderator"]["cruxes"]] == [0, 1, 2, 3]
    code, out, _ = run_cli(capsys, "import", str(doc_path))
    code, out, _ = run_cli(capsys, "cruxes", out.strip(), "--no-embeddings")  # a saved debate by its id
    assert code == 0 and "Decision hinges of: Should the United States" in out


def test_cli_bad_input_gets_a_clear_message(tmp_path, capsys):
    code, _, err = run_cli(capsys, "cruxes", str(tmp_path / "missing.json"))
    assert code == 2 and "No debate file" in err and "python -m clearside list" in err
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]", encoding="utf-8")
    code, _, err = run_cli(capsys, "cruxes", str(listing))
    assert code == 2 and "is not a debate: expected a ClearSide v1 document" in err
    other = tmp_path / "other.json"
    other.write_text('{"question": "x"}', encoding="utf-8")
    code, _, err = run_cli(capsys, "cruxes", str(other))
    assert code == 2 and "is not a debate to find cruxes in" in err and "'proposition' is a required property" in err
    code, _, err = run_cli(capsys, "cruxes", "0" * 32)
    assert code == 2 and "0" * 32 in err


def _page(path: str) -> None:
    import json as _json
    from pathlib import Path as _Path

    from clearside.schema import Document as _Document
    from clearside_ui.view import document_view

    document_view(_Document.model_validate(_json.loads(_Path(path).read_text(encoding="utf-8"))))


def test_the_debate_view_draws_hinges_by_load_escaped(attached, tmp_path):
    from streamlit.testing.v1 import AppTest

    data = attached.dump()
    data["moderator"]["cruxes"] = list(reversed(data["moderator"]["cruxes"]))
    data["moderator"]["decision_hinges"][1] = "Will **traffic** <b>keep</b> growing?"
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    at = AppTest.from_function(_page, args=(str(path),), default_timeout=30).run()
    assert not at.exception
    hinges = [m.value for m in at.markdown if m.value[:1].isdigit() and "\\." in m.value[:4]]
    assert [h.split(" ", 1)[1] for h in hinges] == [
        "Does the team have distributed systems experience?",
        r"Will \*\*traffic\*\* \<b\>keep\</b\> growing?", "Is the budget set by the board?"]
    captions = [c.value for c in at.caption]
    assert "Load: FOR 2 of 3 arguments \\(67\\%\\) · AGAINST 1 of 4 \\(25\\%\\)" in captions
    labels = [e.label for e in at.expander]
    assert labels[:3] == [f"Hinge {n}: what rests on it, if yes, if no" for n in (1, 2, 3)]
    body = "\n".join(m.value for m in at.expander[0].markdown)
    assert "FOR argument 1" in body and "If yes, the answer tests FOR" in body
    plain = Document.model_validate(_document()).dump()
    path.write_text(json.dumps(plain), encoding="utf-8")
    at = AppTest.from_function(_page, args=(str(path),), default_timeout=30).run()
    assert not at.exception and not at.expander and "1\\. " + HINGES[0] in [m.value for m in at.markdown]


def test_on_the_flagship_with_minilm_the_obvious_dependants_are_found():
    embeddings = checks.Embeddings(enabled=True)
    document = cruxes.attach(references.load("flagship").document, embeddings)
    if not embeddings.enabled:
        pytest.skip("the MiniLM model is not installed")
    found = {c.hinge: c for c in document.moderator.cruxes}
    assert 2 in found[1].pro_assumptions  # "Some AI harms are non-linear and visible only after deployment."
    assert 1 in found[2].con_assumptions  # "Other nations will not adopt similar pauses."
    assert 7 in found[3].pro_arguments  # "AI data centers demand massive electricity and water ..."
    assert jsonschema_errors(document.dump()) == []


def _valid_indices(document: Document) -> None:
    mod = document.moderator
    assert mod.cruxes is not None and [c.hinge for c in mod.cruxes] == list(range(len(mod.decision_hinges)))
    for crux in mod.cruxes:
        for side in ("pro", "con"):
            case = getattr(document, side)
            assert all(i < len(case.arguments) for i in getattr(crux, f"{side}_arguments"))
            assert all(i < len(case.assumptions) for i in getattr(crux, f"{side}_assumptions"))
            assert getattr(crux.load, side) == round(len(getattr(crux, f"{side}_arguments")) / len(case.arguments), 3)


def test_every_generated_debate_and_every_remap_carries_cruxes(monkeypatch):
    """The engine attaches cruxes when it assembles a debate, and a re-map computes them for its new hinges."""
    from helpers import moderator_reply, scripted_debate

    from clearside.providers.scripted import ScriptedProvider
    from clearside.static import remap
    from clearside.static.engine import Engine
    from clearside.static.run import DebateRun
    monkeypatch.setenv("CLEARSIDE_SEMANTIC_CHECKS", "0")  # the lexical path: no MiniLM needed here
    provider = ScriptedProvider()
    scripted_debate(provider)
    engine = Engine(provider)
    document = engine.run(DebateRun.from_input("Should we adopt microservices architecture?"))
    _valid_indices(document)
    assert jsonschema_errors(document.dump()) == [] and document.meta.schema_version == "1.1.0"
    reply = moderator_reply()
    reply["decision_hinges"] = ["Whether the team can run many services", *reply["decision_hinges"]]
    provider.enqueue(*({name: reply[name]} for name in remap.REMAPPED), agent="moderator")  # one call a section
    remapped = remap.remap(document, engine, weights=remap.parse_weights("economic=3"))
    _valid_indices(remapped)
    assert len(remapped.moderator.cruxes) == len(document.moderator.cruxes) + 1
    assert remapped.remap.original.cruxes == document.moderator.cruxes, "the original keeps its own cruxes"
