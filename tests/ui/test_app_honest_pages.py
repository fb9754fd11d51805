"""AppTest: pages that show generated text say when it came from the tiny demonstration model (decided from the
record shown, not the sidebar), never show a confidence or a PASS the checks contradict, and title a disagreement
whose topic is an id with words."""

from __future__ import annotations

import app_kit as kit
from app_kit import COMPARE, LIVE, REGRESSION, TIMELINE, of_kind, plain
from helpers import fixture_dict

from clearside.live.exchange import import_live
from clearside.live.protocol import PLAN
from clearside.live.transcript import Transcript, Turn
from clearside.providers.embedded import DEFAULT_GGUF
from clearside.providers.scripted import ScriptedProvider
from clearside.schema import Document
from clearside.store import NewRun, open_store
from clearside_ui.state import Timeline

DEMO = {"provider": "embedded", "model": DEFAULT_GGUF}
REAL = {"provider": "ollama", "model": "llama3.2"}
# what the embedded model wrote: a gibberish line, an id for a topic
GIBBERISH = "Ethica-eine und Bemerkungen anfältig,"
ID_TOPIC = "C1-D2A4B3E05"


def demo_notice(at) -> bool:
    """The notice, whole (an info box) or on one line (a caption: the Live page, whose controls stay in a phone's
    first screen)."""
    return any("tiny demonstration model" in e.value for e in [*at.info, *at.caption])


def saved_debate(model: dict, **moderator) -> str:
    document = fixture_dict()
    document["meta"]["model_info"] = model
    document["moderator"].update(moderator)
    Document.model_validate(document)
    return open_store().import_static(document, imported={"file": "test"})


def test_a_saved_debate_says_demo_by_its_own_model_not_the_sidebars():
    demo = saved_debate(DEMO)
    at = kit.open_page(provider=ScriptedProvider(), query={"debate": demo})  # the sidebar: not the demo model
    assert demo_notice(at), "made by the demo model: the notice, whatever the sidebar holds"
    real = saved_debate(REAL)
    at = kit.open_page(query={"debate": real})  # the sidebar: the embedded default
    assert not demo_notice(at), "made by a real model: no notice, though the sidebar is the demo model"
    at = kit.open_page(query={"example": "flagship"})
    assert not demo_notice(at), "the hand-written flagship is no model's"
    assert demo_notice(kit.open_page()), "nothing open: the sidebar's model decides, as before"


def test_a_disagreement_titled_with_an_id_is_titled_by_its_description():
    disagreements = [{"topic": ID_TOPIC, "description": "Whether the team can hire engineers who know the new "
                                                        "language within a year", "root_cause": "C1 C2 D3 E4"},
                     {"topic": "Cost of compliance", "description": "How much the rule costs small firms."}]
    at = kit.open_page(query={"debate": saved_debate(REAL, core_disagreements=disagreements)})
    shown = plain(at)
    assert "**Whether the team can hire engineers…**: Whether the team" in shown
    assert ID_TOPIC not in shown
    assert "**Cost of compliance**: How much" in shown, "a topic of words is kept"


def live_transcript(model: dict) -> str:
    """A saved, paused live debate: both openings and FOR's first constructive turn, whose one argument is
    gibberish that the model rated ``high``."""
    opening = [Turn(turn=n + 1, step=n, phase="opening", kind="opening", speaker=PLAN[n].speaker,
                    label=PLAN[n].label, text="Costs fall when teams own their services.") for n in (0, 1)]
    argument = {"category": "economic", "claim": GIBBERISH, "explanation": "Xjqwz blorf snarglewick frumpt.",
                "evidence_type": "fact", "confidence": "high", "assumptions": ["Teams stay the same size."]}
    sound = {**argument, "claim": "Independent deploys cut release costs for each team.",
             "explanation": "Each team ships without waiting for the others.", "confidence": "medium"}
    constructive = Turn(turn=3, step=2, phase="constructive", kind="constructive", speaker="pro",
                        label=PLAN[2].label, text="Two reasons.", fields={"arguments": [argument, sound]})
    transcript = Transcript(id="b" * 32, created_at="2026-11-28T00:00:00Z", updated_at="2026-11-28T00:00:00Z",
                            question="Should we adopt microservices?", state="paused", cursor=3,
                            turns=[*opening, constructive], **model)
    return import_live(open_store(), transcript.model_dump(), "test").id


def test_a_gibberish_live_argument_carries_no_high_confidence_and_the_demo_notice():
    debate = live_transcript(DEMO)
    for page, query in ((TIMELINE, {"debate": debate}), (LIVE, {"live": debate})):
        at = kit.open_page(page, ScriptedProvider(), query=query)
        assert demo_notice(at), page
        if page == TIMELINE:  # one turn at a time: show them all
            at = kit.run(at.toggle(key=Timeline.WHOLE).set_value(True))
        shown = plain(at)
        line = next(line for line in shown.splitlines() if "Bemerkungen" in line)
        assert ":gray-badge[high]" not in line and "confidence withheld" in line, line
        assert "gibberish" in line
        assert ":gray-badge[medium]" in shown, "a sound argument keeps its confidence"


def test_a_real_models_live_debate_has_no_demo_notice():
    at = kit.open_page(TIMELINE, query={"debate": live_transcript(REAL)})  # the sidebar: the demo model
    assert not demo_notice(at)


def seed_batch(suite: str, model: dict, statuses: list[str], metrics: dict | None = None, **data) -> str:
    store = open_store()
    first = None
    for index, status in enumerate(statuses):
        run = store.add_run(NewRun(suite, model["provider"], model["model"], status=status, metrics=metrics,
                                   data={"batch": first or "", "item": "flagship", "index": index,
                                         "planned": len(statuses), **data}))
        if first is None:
            first = run
            store.update_run(run, data={"batch": run, "item": "flagship", "index": 0, "planned": len(statuses),
                                        **data})
    return first


def test_a_regression_batch_covering_no_key_point_is_not_a_pass_and_says_demo():
    metrics = {"schema_valid": 1.0, "neutrality_violations": 0.0, "garbage_left": 0.0, "coverage": 0.0}
    batch = seed_batch("flagship", DEMO, ["done", "done"], metrics)
    at = kit.open_page(REGRESSION, ScriptedProvider(), query={"batch": batch}, timeout=90)
    assert "PASS" not in of_kind(at, "success")
    assert "coverage" in of_kind(at, "error") and "must be above 0" in of_kind(at, "error")
    assert demo_notice(at)


def test_a_comparison_says_demo_when_one_of_its_models_is_the_demo_one():
    batch = seed_batch("compare", REAL, ["cancelled"], label="ollama:llama3.2", question="Should we?")
    at = kit.open_page(COMPARE, query={"compare": batch})
    assert not demo_notice(at), "a comparison of real models: none, though the sidebar is the demo model"
    open_store().add_run(NewRun("compare", DEMO["provider"], DEMO["model"], status="cancelled",
                                data={"batch": batch, "label": "embedded", "question": "Should we?"}))
    at = kit.open_page(COMPARE, ScriptedProvider(), query={"compare": batch})
    assert demo_notice(at)
