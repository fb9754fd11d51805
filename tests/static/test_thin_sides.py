"""A side the checks thin below what the prompt asks for (3 arguments) is asked for the missing ones, one small
call each and one spare call, checked against the arguments already kept; below 2, where it would fail, with the
mending budget; it never ships with fewer than 2."""

from __future__ import annotations

import copy
import json

import pytest
from helpers import QUESTION, moderator_reply, orchestrator_reply, side_reply

from clearside.errors import DebateFailed
from clearside.providers.scripted import ScriptedProvider
from clearside.static.engine import Engine
from clearside.static.run import DebateRun


def thinned(tag: str) -> dict:
    """A reply of 3 arguments whose 2nd and 3rd restate the 1st (case and punctuation aside): the checks drop them
    as repeats and leave one argument (a reported debate shipped such a side as the whole case)."""
    reply = side_reply(tag, arguments=3)
    first = reply["arguments"][0]
    for i, shout in ((1, "{}!"), (2, "  {}.")):
        reply["arguments"][i] = {**reply["arguments"][i], "claim": shout.format(first["claim"].upper())}
    return reply


def one(tag: str, i: int) -> dict:
    """The ``i``-th argument of a valid reply, as a one-argument part."""
    return {"arguments": [side_reply(tag, arguments=4)["arguments"][i]]}


def script(pro_parts: list, *, pro: dict | None = None) -> ScriptedProvider:
    provider = ScriptedProvider()
    provider.enqueue(orchestrator_reply(), agent="orchestrator")
    provider.enqueue(pro or thinned("pro"), *pro_parts, agent="pro")
    provider.enqueue(side_reply("con"), agent="con")
    provider.enqueue(moderator_reply(), agent="moderator")
    return provider


def run_it(provider: ScriptedProvider, retries: int = 2):
    return Engine(provider, retries=retries).run(DebateRun.from_input(QUESTION))


def test_a_side_thinned_to_one_argument_is_topped_up_to_three():
    provider = script([one("pro", 1), one("pro", 2)])
    document = run_it(provider)
    claims = [a.claim for a in document.pro.arguments]
    assert claims == [a["claim"] for a in side_reply("pro", arguments=3)["arguments"]]
    asks = provider.requests_for("pro")[1:]
    assert len(asks) == 2 and all(list(r.schema["properties"]) == ["arguments"] for r in asks)
    assert side_reply("pro")["arguments"][0]["claim"] in asks[0].messages[-1]["content"]  # it sees what was kept
    topped = [i for i in document.quality.agents["pro"].items if i.check == "thin_side"]
    assert [(i.action, i.path) for i in topped] == [("reasked", "arguments/1"), ("reasked", "arguments/2")]
    assert len(document.con.arguments) == 3 and len(provider.requests_for("con")) == 1  # a whole side is untouched
    assert "holds 2 arguments" not in (document.meta.notes or "")


def test_a_top_up_that_repeats_a_kept_argument_is_asked_again():
    repeat = {"arguments": [{**one("pro", 1)["arguments"][0], "claim": side_reply("pro")["arguments"][0]["claim"]}]}
    provider = script([repeat, one("pro", 1), one("pro", 2)])
    document = run_it(provider)
    assert len({a.claim.casefold() for a in document.pro.arguments}) == 3
    assert len(provider.requests_for("pro")) == 4


def test_a_top_up_cut_at_its_token_limit_is_dropped_and_the_spare_call_is_made():
    """A top-up reply that is not whole JSON (a small model ran into the call's token limit inside a string) is one
    failed part, like one that fails its checks: the spare call is made, and the side is not lost."""
    reply = side_reply("pro", arguments=3)
    reply["arguments"][2]["claim"] = reply["arguments"][0]["claim"].upper() + "!"  # a repeat: two are kept
    cut = json.dumps(one("pro", 2))[:60]  # a reply stopped mid-string
    provider = script([cut, one("pro", 2)], pro=reply)
    document = run_it(provider, retries=1)
    assert [a.claim for a in document.pro.arguments] == [a["claim"] for a in side_reply("pro")["arguments"]]
    dropped = [i for i in document.quality.agents["pro"].items if i.check == "part_dropped"]
    assert len(dropped) == 1 and "broke the schema after 1 attempts" in dropped[0].message
    assert len(provider.requests_for("pro")) == 1 + 2


def test_top_ups_that_keep_failing_ship_two_arguments_with_a_note():
    """Two arguments passed; every top-up repeats the first one: after one call for the missing argument and one
    spare (a failing call is not re-asked on its own), the side ships with two, flagged in the quality record and
    meta.notes."""
    reply = side_reply("pro", arguments=3)
    reply["arguments"][2]["claim"] = reply["arguments"][0]["claim"].upper() + "!"
    repeat = {"arguments": [{**one("pro", 3)["arguments"][0], "claim": reply["arguments"][0]["claim"]}]}
    provider = script([copy.deepcopy(repeat) for _ in range(9)], pro=reply)
    document = run_it(provider, retries=1)
    assert len(document.pro.arguments) == 2
    assert len(provider.requests_for("pro")) == 1 + 2  # the whole reply, then the missing argument and one spare
    flagged = [i for i in document.quality.agents["pro"].items if i.check == "thin_side" and i.action == "flagged"]
    assert len(flagged) == 1
    assert "The case for holds 2 arguments, not 3" in document.meta.notes


def test_a_side_left_with_one_argument_fails_and_keeps_the_other():
    repeat = {"arguments": [{**one("pro", 1)["arguments"][0], "claim": side_reply("pro")["arguments"][0]["claim"]}]}
    provider = script([copy.deepcopy(repeat) for _ in range(9)])
    run = DebateRun.from_input(QUESTION)
    with pytest.raises(DebateFailed, match="6 calls for the missing ones; a case needs at least 2"):
        Engine(provider, retries=1).run(run)
    assert run.pro is None and run.con is not None
    # under the floor the side would fail: the argument it lacks gets the mending budget (one call and two spare,
    # each re-asked once), not the target's one call and one spare
    assert len(provider.requests_for("pro")) == 1 + 6


def test_a_side_written_with_two_arguments_and_left_whole_is_kept_as_it_is():
    """Two arguments is what the side's wire allows: only a side the checks thinned is asked for more."""
    provider = script([], pro=side_reply("pro", arguments=2))
    document = run_it(provider)
    assert len(document.pro.arguments) == 2 and len(provider.requests_for("pro")) == 1
    assert not [i for i in document.quality.agents["pro"].items if i.check == "thin_side"]
