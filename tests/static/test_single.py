"""The single-pass control (``--strategy single``): after the orchestrator, one call writes both cases and the
synthesis with the three calls' token budget, through the same contract and checks; a failing reply is asked for
again whole; personas and sources are refused before anything is saved."""

from __future__ import annotations

import json

import pytest
from helpers import QUESTION, orchestrator_reply, run_cli, script_file, side_reply, single_reply

from clearside import agents
from clearside.errors import InputError
from clearside.providers.scripted import ScriptedProvider
from clearside.schema import Persona
from clearside.static import single
from clearside.static.engine import Engine
from clearside.static.job import new_job
from clearside.static.run import DebateRun


def scripted(*replies: dict) -> ScriptedProvider:
    provider = ScriptedProvider()
    provider.enqueue(orchestrator_reply(), agent="orchestrator")
    provider.enqueue(*replies, agent="single")
    return provider


def test_one_call_writes_both_cases_and_the_synthesis_with_the_three_calls_budget():
    provider = scripted(single_reply())
    events = []
    document = Engine(provider, strategy="single", on_event=events.append).run(DebateRun.from_input(QUESTION))
    [request] = provider.requests_for("single")
    assert not provider.requests_for("pro") and not provider.requests_for("moderator")
    assert request.max_tokens == agents.PRO.max_tokens + agents.CON.max_tokens + agents.MODERATOR.max_tokens == 2700
    assert list(request.schema["properties"])[:2] == ["pro_executive_summary", "pro_arguments"]
    conflict = request.schema["properties"]["assumption_conflicts"]["items"]["properties"]
    assert conflict["pro_assumption"]["enum"] == ["P1", "P2", "P3"]  # picked by place in the reply's own lists
    prompt = request.messages[-1]["content"]
    assert "case FOR" in prompt and "case AGAINST" in prompt and "decision_hinges" in prompt
    assert document.pro.dump() == side_reply("pro") and document.con.dump() == side_reply("con")
    [picked] = document.moderator.assumption_conflicts
    assert (picked.pro_assumption, picked.con_assumption) == (side_reply("pro")["assumptions"][0],
                                                              side_reply("con")["assumptions"][1])
    assert document.quality.strategy == "single" and set(document.quality.agents) == {"orchestrator", "single"}
    assert "single 1.0.0" in document.meta.notes and "advocate" not in document.meta.notes
    # every view of progress follows the three sections the one call writes
    done = [e.agent for e in events if e.kind == "done"]
    assert done == ["orchestrator", "pro", "con", "moderator"]
    streamed = {name: [e.text for e in events if e.kind == "delta" and e.agent == name] for name in single.WRITES}
    assert "".join(streamed["pro"]).startswith("{") and streamed["con"] == streamed["moderator"] == [""]


def test_a_reply_that_fails_its_checks_is_asked_again_whole_never_mended_in_parts():
    """The case FOR repeats one claim (the checks drop the copy), leaving it under its floor of two arguments: the
    whole reply goes back, once, and the second reply is the document."""
    thin = side_reply("pro", arguments=2)
    thin["arguments"][1]["claim"] = thin["arguments"][0]["claim"].upper() + "!"
    provider = scripted(single_reply(pro=thin), single_reply())
    document = Engine(provider, strategy="single").run(DebateRun.from_input(QUESTION))
    first, second = provider.requests_for("single")
    assert second.schema == first.schema and second.max_tokens == first.max_tokens  # the whole reply again
    assert "In the case FOR" in second.messages[-1]["content"]  # told what to fix, and in which section
    assert len(document.pro.arguments) == 3
    record = document.quality.agents["single"]
    assert record.attempts == 2 and record.reasks == 1


def test_a_reply_with_a_copied_argument_above_the_floor_keeps_the_rest_in_one_call():
    con = side_reply("con", arguments=4)
    con["arguments"][3]["claim"] = con["arguments"][0]["claim"]
    provider = scripted(single_reply(con=con))
    document = Engine(provider, strategy="single").run(DebateRun.from_input(QUESTION))
    assert len(provider.requests_for("single")) == 1 and len(document.con.arguments) == 3
    dropped = [i for i in document.quality.agents["single"].items if i.action == "dropped"]
    assert dropped and all(i.path.startswith("con_arguments/") for i in dropped)


def test_personas_and_sources_are_refused_before_anything_is_saved(tmp_path):
    from clearside.sources import read_source
    from clearside.store import open_store

    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    panel = [Persona(name="economist", lens="costs and incentives", builtin=True),
             Persona(name="ethicist", lens="rights", builtin=True)]
    with_personas = DebateRun.from_input(QUESTION, personas=panel)
    with_sources = DebateRun.from_input(QUESTION, sources=[read_source("notes.md", b"# Notes\n\nA fact.")])
    for run in (with_personas, with_sources):
        with pytest.raises(InputError, match="single-pass strategy .* no personas and no sources"):
            new_job(store, run, ScriptedProvider(), temperature=0.4, strategy="single")
        with pytest.raises(InputError, match="whole or focused strategy"):
            Engine(ScriptedProvider(), strategy="single").run(run)
    assert store.list().total == 0


def test_the_command_line_writes_a_single_pass_debate(tmp_path, capsys):
    spec = script_file(tmp_path, orchestrator=[orchestrator_reply()], single=[single_reply()])
    code, out, err = run_cli(capsys, "debate", QUESTION, "--provider", spec, "--strategy", "single")
    assert code == 0, err
    document = json.loads(out)
    assert document["quality"]["strategy"] == "single" and document["pro"] == side_reply("pro")
    assert all(f"[{agent}] done in" in err for agent in ("pro", "con", "moderator")), err
    code, _, err = run_cli(capsys, "debate", QUESTION, "--provider", spec, "--strategy", "single",
                           "--personas", "economist,ethicist")
    assert code == 2 and "no personas and no sources" in err


def test_the_reply_schema_holds_each_side_and_the_synthesis_with_their_limits():
    wire, decode = single.wires()
    for side in ("pro", "con"):
        for field, schema in agents.SIDE_WIRE["properties"].items():
            assert wire["properties"][f"{side}_{field}"] == schema
    assert decode["properties"]["decision_hinges"]["items"]["pattern"].endswith(r"\?$")
    assert set(wire["required"]) == set(wire["properties"]) and wire["additionalProperties"] is False
