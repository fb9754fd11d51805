"""The argument map on the dashboard: under a debate (drawing, text alternative, a chosen node and its challenges),
its exports, and the Library's import of a ClearSide map or a foreign AIF map (kept read-only under Imported maps)."""

from __future__ import annotations

import base64
import json
import re

import app_kit as kit
from app_kit import generate, settle
from helpers import LiveResponder, challenge_reply, scripted_debate, side_reply

from clearside.render import render
from clearside.schema import Document

FOREIGN = {"nodes": [{"nodeID": "a", "text": "Cities should ban cars", "type": "I"},
                     {"nodeID": "b", "text": "<img src=x onerror=alert(1)> pollution", "type": "I"},
                     {"nodeID": "s", "text": "Default Inference", "type": "RA"},
                     {"nodeID": "l", "text": "Ann: ban them", "type": "L"}],
           "edges": [{"fromID": "b", "toID": "s"}, {"fromID": "s", "toID": "a"}]}


def _html(at) -> str:
    return "\n".join(element.proto.body for element in at.get("html") if "cs-map" in element.proto.body)


def test_the_example_shows_its_map_read_only_with_a_text_alternative():
    at = kit.open_page(query={"example": "flagship"})
    block = _html(at)
    images = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', block)
    assert len(images) == 2 and "cs-map-narrow" in block and "<script" not in block
    drawn = [base64.b64decode(image).decode("utf-8") for image in images]
    assert all("FOR assumption 8" in svg and "Hinge 4" in svg and "<script" not in svg for svg in drawn)
    listed = "\n".join(m.value for m in at.markdown).replace("\\", "")
    assert "- Proposition: Should the United States" in listed and "        - FOR 1: AI capabilities" in listed
    at.selectbox(key="argmap_example_node").set_value("pro.assumptions.3")
    kit.run(at)
    assert "Precaution is justified under high uncertainty." in kit.plain(at)
    assert "conflicts with AGAINST assumption 2" in "\n".join(c.value for c in at.caption)
    assert not [b for b in at.button if b.key.startswith("argmap_")], "read-only: no challenge here"


def test_a_node_chosen_on_the_map_is_challenged_and_the_exports_hold_the_map():
    at, provider = kit.debate_app()
    scripted_debate(provider, pro=side_reply("pro"), con=side_reply("con"))
    generate(at, "Should we adopt microservices?")
    settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown))
    labels = {b.key for b in at.get("download_button")}
    assert {"debate_export_argdown", "debate_export_aif", "debate_export_kialo"} <= labels
    at.selectbox(key="argmap_debate_node").set_value("pro.assumptions.0")
    kit.run(at)
    provider.enqueue(challenge_reply(), agent="challenge")
    at.button(key="argmap_debate_question_assumption").click()
    kit.run(at)
    settle(at, lambda a: any("Challenge: the organization" in m.value.replace("\\", "") for m in a.markdown))


def test_a_finished_live_debate_shows_its_map_on_the_timeline():
    from clearside.live import LiveDebate
    from clearside.providers.scripted import ScriptedProvider
    from clearside.store import open_store

    debate = LiveDebate.create("Should we adopt microservices?", ScriptedProvider(fallback=LiveResponder()),
                               store=open_store())
    debate.run()
    transcript = debate.snapshot()
    assert transcript.state == "done" and transcript.document is not None
    at = kit.open_page(kit.TIMELINE, query={"debate": transcript.id})
    assert len(re.findall(r'src="data:image/svg\+xml;base64,', _html(at))) == 2
    at.selectbox(key="argmap_timeline_node").set_value("con.arguments.0")
    kit.run(at)
    claim = transcript.document["con"]["arguments"][0]["claim"]
    assert claim.replace(" ", "") in kit.plain(at).replace(" ", "")
    assert not [b for b in at.button if b.key.startswith("argmap_")], "a replay is read-only"


def test_the_library_imports_a_clearside_map_and_keeps_a_foreign_one_read_only(store):
    at = kit.open_page(kit.LIBRARY)
    document = json.loads((kit.helpers.FIXTURE).read_text(encoding="utf-8"))
    own = render(Document.model_validate(document), "aif").encode()
    at.file_uploader(key="argmap_upload").set_value(("map.json", own, "application/json"))
    kit.run(at)
    assert "Imported map.json as a static debate" in kit.of_kind(at, "success")
    assert store.list("").total == 1
    kit.run(at)
    assert store.list("").total == 1, "a rerun does not import it again"

    at.file_uploader(key="argmap_upload").set_value(("other.json", json.dumps(FOREIGN).encode(), "application/json"))
    kit.run(at)
    assert "Imported other.json as a read-only map" in kit.of_kind(at, "success")
    info = kit.of_kind(at, "info")
    assert "Read-only map from other.json" in info and "Placed 2 claim(s) and 1 support or attack link(s)" in info
    assert "1 locutions (L-nodes)" in kit.of_kind(at, "warning")
    assert "Pro: <img src=x onerror=alert(1)> pollution" in kit.plain(at).replace("&lt;", "<")
    assert store.list("").total == 1 and len(store.maps()) == 1
    kit.run(at)
    assert len(store.maps()) == 1, "a rerun does not import it again"
    assert at.selectbox(key="maps_chosen").value == store.maps()[0].id, "listed under Imported maps"

    at.file_uploader(key="argmap_upload").set_value(("bad.json", b'{"nodes": [1], "edges": []}', "application/json"))
    kit.run(at)
    assert "nodes[0] is not an object" in kit.of_kind(at, "error") and store.list("").total == 1
    assert len(store.maps()) == 1


def test_an_imported_map_is_deleted_from_the_library_only_once_confirmed(store):
    map_id = store.save_map(FOREIGN, title="Cities should ban cars", source="cars.json")
    at = kit.open_page(kit.LIBRARY)
    assert "Imported maps (1)" in [e.label for e in at.expander]
    assert "Read-only map from cars.json" in kit.of_kind(at, "info")
    at.button(key=f"maps_delete_{map_id}").click()
    kit.run(at)
    at.button(key=f"maps_keep_{map_id}").click()
    kit.run(at)
    assert len(store.maps()) == 1
    at.button(key=f"maps_delete_{map_id}").click()
    kit.run(at)
    at.button(key=f"maps_yes_{map_id}").click()
    kit.run(at)
    assert store.maps() == []
    assert not [e for e in at.expander if e.label.startswith("Imported maps")]
