"""The argument map's exports (Argdown, AIF, Kialo) and the AIF import: the real Argdown command line parses every
export; AIF round trips are exact; foreign maps are kept read-only; bad files are refused and nothing is stored."""

from __future__ import annotations

import base64
import copy
import json
import re
import subprocess
import zlib
from functools import cache
from pathlib import Path

import pytest
from helpers import moderator_reply, run_cli, scripted_debate, side_reply

from clearside import checks
from clearside.modes import export_data, import_data
from clearside.providers.scripted import ScriptedProvider
from clearside.render import render
from clearside.render.aif import aif_data
from clearside.render.argdown import escaped
from clearside.render.argmap import argument_map
from clearside.schema import Document
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

ROOT = Path(__file__).resolve().parents[2]
ARGDOWN = ROOT / ".tools" / "argdown" / "node_modules" / ".bin" / "argdown"
FLAGSHIP = ROOT / "clearside" / "quality" / "references" / "flagship.json"
HOSTILE = "<b>x</b> // [t] <A> #tag {a: 1} 50%"


def _generated(arguments: int, tag: str, hostile: bool = False) -> dict:
    provider = ScriptedProvider()
    pro, con, moderator = side_reply("pro", arguments=arguments), side_reply("con", arguments=arguments), \
        moderator_reply()
    if hostile:
        pro["arguments"][0]["claim"] = f"Pro: {HOSTILE}"
        con["assumptions"][1] = f"Con assumption B: {HOSTILE}"
        moderator["decision_hinges"][1] = f"Moderator: {HOSTILE}?"
    pro["assumptions"][0] += f" ({tag})"
    moderator["assumption_conflicts"][0]["pro_assumption"] = pro["assumptions"][0]
    scripted_debate(provider, pro=pro, con=con, moderator=moderator)
    document = Engine(provider, embeddings=checks.Embeddings(enabled=False)).run(
        DebateRun.from_input(f"Should we adopt microservices ({tag})?"))
    return document.dump()


@cache
def debates() -> dict[str, dict]:
    """The flagship reference debate and three debates made with the scripted provider (one with hostile text)."""
    return {"flagship": json.loads(FLAGSHIP.read_text(encoding="utf-8"))["document"],
            "three": _generated(3, "three"), "four": _generated(4, "four"),
            "hostile": _generated(3, "hostile", hostile=True)}


def _texts(document: dict) -> list[str]:
    graph = argument_map(Document.model_validate(document))
    return [node.text for node in graph.nodes]


def test_generated_debates_have_cruxes_so_hinges_are_linked():
    for name in ("three", "four", "hostile"):
        graph = argument_map(Document.model_validate(debates()[name]))
        assert [link for link in graph.links if link.kind == "rests_on"], name


def test_the_argdown_command_line_parses_every_export_keeps_every_element_and_its_json_imports_back(tmp_path,
                                                                                                      store):
    if not ARGDOWN.exists():
        pytest.skip("the Argdown command line is not installed: run scripts/test.sh (it installs @argdown/cli "
                    "into .tools/argdown)")
    for name, document in debates().items():
        (tmp_path / f"{name}.argdown").write_text(render(Document.model_validate(document), "argdown"),
                                                  encoding="utf-8")
    three = (tmp_path / "three.argdown").read_text(encoding="utf-8")
    assumption = debates()["three"]["pro"]["assumptions"][1]
    edited = three.replace(escaped(assumption), "Reworded in the Argdown editor\\.", 1)
    assert edited != three
    (tmp_path / "edited.argdown").write_text(edited, encoding="utf-8")
    out = tmp_path / "json"
    run = subprocess.run([str(ARGDOWN), "json", str(tmp_path / "*.argdown"), str(out)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and "error" not in (run.stdout + run.stderr).lower(), run.stdout + run.stderr
    for name, document in debates().items():
        exported = json.loads((out / f"{name}.json").read_text(encoding="utf-8"))
        parsed = {member.get("text", "") for group in ("statements", "arguments") for item in exported[group].values()
                  for member in item["members"]}
        graph = argument_map(Document.model_validate(document))
        missing = [node.label for node in graph.nodes if " ".join(node.text.split()) not in parsed]
        assert not missing, (name, missing)
        titles = set(exported["statements"]) | set(exported["arguments"])
        assert {node.label for node in graph.nodes} <= titles
        relations = {(r["from"], r["to"], r["relationType"]) for r in exported["relations"]}
        assert ("FOR 1", "Proposition", "support") in relations and ("AGAINST 1", "Proposition", "attack") in relations
        assert any(kind == "contradictory" for _, _, kind in relations), name
        imported = import_data(store, exported, f"{name}.json")
        assert export_data(store, imported.id) == document, name
    back = export_data(store, import_data(store, json.loads((out / "edited.json").read_text()), "edited.json").id)
    expected = copy.deepcopy(debates()["three"])
    expected["pro"]["assumptions"][1] = "Reworded in the Argdown editor."
    assert back == expected, "only the text edited in Argdown changed"


def test_argdown_json_not_made_here_or_damaged_is_refused(tmp_path, capsys, store):
    foreign = {"statements": {"Proposition": {"members": [{"text": "Ban cars?"}]}}, "arguments": {}, "relations": []}
    code, _, err = run_cli(capsys, "import", _write(tmp_path, foreign))
    assert code == 2 and "not made from ClearSide's Argdown" in err
    foreign["statements"]["Proposition"]["data"] = {"clearside": "bm90IHpsaWI="}
    code, _, err = run_cli(capsys, "import", _write(tmp_path, foreign))
    assert code == 2 and "damaged or over 20 MB unpacked" in err and "Nothing was stored" in err
    bomb = base64.urlsafe_b64encode(zlib.compress(b" " * (21 * 1024 * 1024), 9)).decode()
    foreign["statements"]["Proposition"]["data"] = {"clearside": bomb}
    code, _, err = run_cli(capsys, "import", _write(tmp_path, foreign))
    assert code == 2 and "over 20 MB unpacked" in err
    assert store.list("").total == 0


def test_aif_has_i_ra_and_ca_nodes_under_clearside_ids():
    data = aif_data(Document.model_validate(debates()["flagship"]))
    types = {node["nodeID"]: node["type"] for node in data["nodes"]}
    assert types["pro.arguments.0"] == types["con.assumptions.7"] == types["moderator.decision_hinges.3"] == "I"
    assert types["ra:pro.arguments.0"] == "RA" and types["ca:con.arguments.0"] == "CA"
    assert types["ca:moderator.assumption_conflicts.0"] == "CA"
    ids = set(types)
    assert all(edge["fromID"] in ids and edge["toID"] in ids for edge in data["edges"])


@pytest.mark.parametrize("name", ["flagship", "three", "four", "hostile"])
def test_an_aif_export_imports_back_as_the_same_document(name, store):
    document = debates()[name]
    imported = import_data(store, json.loads(render(Document.model_validate(document), "aif")), "map.json")
    assert export_data(store, imported.id) == document
    assert "made by ClearSide" in imported.notes[0]


def test_a_text_edited_in_another_tool_comes_back_edited(store):
    data = aif_data(Document.model_validate(debates()["three"]))
    node = next(node for node in data["nodes"] if node["nodeID"] == "pro.assumptions.0")
    node["text"] = "An assumption reworded in OVA."
    data["nodes"].append({"nodeID": "added", "text": "A claim added in OVA", "type": "I"})
    imported = import_data(store, data, "map.json")
    back = export_data(store, imported.id)
    assert back["pro"]["assumptions"][0] == "An assumption reworded in OVA."
    assert back["moderator"]["assumption_conflicts"][0]["pro_assumption"] == "An assumption reworded in OVA."
    assert any("Could not place 1 I-node" in note and "added" in note for note in imported.notes)


FOREIGN = {"nodes": [{"nodeID": 1, "text": "Cities should ban cars", "type": "I"},
                     {"nodeID": 2, "text": "Cars pollute <b>a lot</b>", "type": "I"},
                     {"nodeID": 3, "text": "Deliveries need vans", "type": "I"},
                     {"nodeID": 4, "text": "Default Inference", "type": "RA"},
                     {"nodeID": 5, "text": "Default Conflict", "type": "CA"},
                     {"nodeID": 6, "text": "Bob: cars pollute", "type": "L"}],
           "edges": [{"edgeID": 1, "fromID": 2, "toID": 4}, {"edgeID": 2, "fromID": 4, "toID": 1},
                     {"edgeID": 3, "fromID": 3, "toID": 5}, {"edgeID": 4, "fromID": 5, "toID": 1},
                     {"edgeID": 5, "fromID": 6, "toID": 99}], "locutions": []}


def _write(tmp_path: Path, data) -> str:
    path = tmp_path / "map.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_a_foreign_map_is_kept_read_only_and_its_outline_shown_listed_and_deleted(tmp_path, capsys, store):
    code, out, err = run_cli(capsys, "import", _write(tmp_path, FOREIGN))
    assert code == 0
    map_id = out.strip()
    assert re.fullmatch(r"[0-9a-f]{32}", map_id), out
    assert "A read-only map" in err and "Placed 3 claim(s) and 2 support or attack link(s)" in err
    assert "1 locutions (L-nodes)" in err and "names no node" in err and f"maps show {map_id}" in err
    assert store.list("").total == 0, "a foreign map is no debate"
    assert [(row.id, row.title, row.data) for row in store.maps()] == [(map_id, "Cities should ban cars", FOREIGN)]

    code, out, _ = run_cli(capsys, "maps")
    assert code == 0 and map_id in out and "Cities should ban cars" in out
    code, out, err = run_cli(capsys, "maps", "show", map_id)
    assert code == 0
    assert out == ("1. Cities should ban cars\n  1.1. Pro: Cars pollute <b>a lot</b>\n"
                   "  1.2. Con: Deliveries need vans\n")
    assert "Read-only map from" in err and "names no node" in err
    code, out, _ = run_cli(capsys, "maps", "show", map_id, "--format", "json")
    assert code == 0 and json.loads(out) == FOREIGN

    code, _, err = run_cli(capsys, "maps", "delete", map_id)
    assert code == 2 and "add --yes" in err and len(store.maps()) == 1
    code, _, err = run_cli(capsys, "maps", "delete", map_id, "--yes")
    assert code == 0 and store.maps() == []
    code, _, err = run_cli(capsys, "maps", "show", map_id)
    assert code == 2 and "No imported map has the id" in err
    code, _, err = run_cli(capsys, "maps", "show")
    assert code == 2 and "needs a map's id" in err


def _cyclic() -> dict:
    data = copy.deepcopy(FOREIGN)
    data["edges"].append({"edgeID": 6, "fromID": 1, "toID": 5})
    data["edges"].append({"edgeID": 7, "fromID": 5, "toID": 3})
    return data


def _own_with_cycle() -> dict:
    data = aif_data(Document.model_validate(debates()["three"]))
    data["edges"].append({"edgeID": "x", "fromID": "proposition", "toID": "ra:pro.arguments.0"})
    return data


def _own_missing_node() -> dict:
    data = aif_data(Document.model_validate(debates()["three"]))
    data["nodes"] = [node for node in data["nodes"] if node["nodeID"] != "con.arguments.1"]
    return data


@pytest.mark.parametrize(("data", "problem"), [
    ({"nodes": [{"nodeID": 1, "text": "x", "type": "Q"}], "edges": []}, "has the type Q, not one of"),
    ({"nodes": [{"text": "x", "type": "I"}], "edges": []}, "has no nodeID"),
    ({"nodes": [{"nodeID": 1, "text": "x", "type": "I"}] * 2, "edges": []}, "used twice"),
    ({"nodes": [{"nodeID": 1, "text": "x", "type": "I"}], "edges": [{"fromID": 1, "toID": 1}]}, "to itself"),
    ({"nodes": [{"nodeID": 1, "text": "x" * 20001, "type": "I"}], "edges": []}, "at most 20000 characters"),
    ({"nodes": [{"nodeID": i, "text": "x", "type": "I"} for i in range(5001)], "edges": []}, "over the limit"),
    ({"nodes": [{"nodeID": 1, "text": "x", "type": "RA"}], "edges": []}, "no I-node"),
    ("cyclic", "in a loop with no starting point"),
    ("own-cycle", "cycle through the node"),
    ("own-missing", "missing or not I-nodes"),
])
def test_bad_maps_are_refused_with_exit_2_and_nothing_stored(data, problem, tmp_path, capsys, store):
    data = {"cyclic": _cyclic, "own-cycle": _own_with_cycle, "own-missing": _own_missing_node}.get(
        data, lambda: data)() if isinstance(data, str) else data
    code, out, err = run_cli(capsys, "import", _write(tmp_path, data))
    assert code == 2 and problem in err and "Nothing was stored" in err, err
    assert store.list("").total == 0 and store.maps() == []


def test_kialo_outline_is_numbered_pro_and_con():
    text = render(Document.model_validate(debates()["four"]), "kialo")
    lines = text.splitlines()
    assert lines[0].startswith("Discussion Title: Should") and lines[2].startswith("1. Should")
    assert "1.1. Pro: Pro: " in text and "1.5. Con: Con: " in text
    assert all(line.split(" ", 1)[1].startswith(("Pro: ", "Con: ")) for line in lines[3:])
    for node_text in _texts(debates()["four"]):
        assert node_text in text


def test_render_command_writes_each_map_format(tmp_path, capsys):
    path = tmp_path / "debate.json"
    path.write_text(json.dumps(debates()["three"]), encoding="utf-8")
    for fmt, start in (("argdown", "// ClearSide argument map"), ("kialo", "Discussion Title:"), ("aif", "{")):
        code, out, _ = run_cli(capsys, "render", str(path), "--format", fmt)
        assert code == 0 and out.startswith(start)


def test_the_drawing_escapes_every_text_and_its_list_holds_every_node():
    from xml.etree import ElementTree

    from clearside.render.mapsvg import map_svg, outline

    graph = argument_map(Document.model_validate(debates()["hostile"]))
    for narrow in (False, True):
        svg = map_svg(graph, narrow=narrow)
        tree = ElementTree.fromstring(svg)  # well-formed: every text escaped
        shown = " ".join(" ".join(element.itertext()) for element in tree)
        assert "<b>x</b>" in shown and not tree.findall(".//{http://www.w3.org/2000/svg}b")
    listed = "\n".join(text for _, text in outline(graph))
    assert all(f"{node.label}: {node.text}" in listed for node in graph.nodes if node.kind != "proposition")
    assert "rests on Hinge" in listed and "conflicts with" in listed


def test_a_reports_flipped_debates_carry_their_map_as_a_nested_list():
    from types import SimpleNamespace

    from clearside.quality import reports
    from clearside.quality.reports.html import nested_list

    hostile = debates()["hostile"]
    store = {"d1": SimpleNamespace(document=hostile, question="q"), "d2": SimpleNamespace(document={}, question="q")}
    report = {"a": {}, "b": {}, "pairs": [], "metrics": [],
              "flips": [{"a": {"debate_id": "d1"}, "b": {"debate_id": "d2"}}]}
    flip = reports.attach_debates(report, SimpleNamespace(get=store.__getitem__))["flips"][0]
    assert flip["b"]["map"] is None, "a record that is not a whole document has no map"
    html = nested_list(flip["a"]["map"])
    assert html.count("<ul>") == html.count("</ul>") and "&lt;b&gt;x&lt;/b&gt;" in html and "<b>" not in html
    assert "<li>FOR<ul><li>Arguments<ul><li>FOR 1: Pro: " in html


def test_cruxes_naming_items_past_the_lists_link_nothing():
    document = copy.deepcopy(debates()["three"])
    document["moderator"]["cruxes"][0]["pro_arguments"].append(99)
    document["moderator"]["cruxes"].append({**document["moderator"]["cruxes"][0], "hinge": 42})
    graph = argument_map(Document.model_validate(document))
    ids = {node.id for node in graph.nodes}
    assert all(link.source in ids and link.target in ids for link in graph.links)
    for fmt in ("argdown", "aif", "kialo"):
        assert render(Document.model_validate(document), fmt)
    from clearside.render.mapsvg import map_svg

    assert map_svg(graph).startswith("<svg")
