"""A reply its token limit cut off mid-JSON keeps what it completed (enforce.close_cut): the last, unfinished value
is left out and the rest is checked like any reply, instead of three re-asks that a small model cuts at the same
place (a perspectives session on the embedded model failed whole so: "Unterminated string" on all 3 attempts)."""

from __future__ import annotations

import json

from helpers import side_reply

from clearside import agents
from clearside.enforce import CallSpec, close_cut, run_structured
from clearside.providers.scripted import ScriptedProvider
from clearside.schema import Side


def test_a_cut_reply_ends_after_its_last_complete_value_with_its_lists_and_objects_closed():
    assert close_cut('{"a": ["x", "y", "unfinished str') == '{"a": ["x", "y"]}'
    assert close_cut('{"a": {"b": 1, "c": "d\\" still in it') == '{"a": {"b": 1}}'
    assert close_cut('Here it is: {"a": [{"b": "c"}, {"b": "d') == '{"a": [{"b": "c"}]}'
    for whole_or_none in ('{"a": 1}', "no JSON at all", '{"a": "only one unfinished value', "{"):
        assert close_cut(whole_or_none) is None, whole_or_none


def test_a_side_cut_in_its_last_uncertainty_keeps_the_rest_without_a_reask():
    reply = side_reply("pro")
    third = "Pro uncertainty C: whether the teams keep their pace once the number of services grows"
    whole = json.dumps({**reply, "uncertainties": [*reply["uncertainties"], third]})
    cut = whole[: whole.rindex(third) + 30]  # the decoder stopped inside the last string
    provider = ScriptedProvider()
    provider.enqueue(cut, agent="pro")
    side = run_structured(provider, CallSpec("pro", Side, agents.SIDE_WIRE, retries=2),
                          [{"role": "user", "content": "Argue for it."}])
    assert len(provider.requests) == 1, "kept, not asked again"
    assert side.uncertainties == reply["uncertainties"] and side.arguments[0].claim == reply["arguments"][0]["claim"]


def test_a_cut_reply_missing_a_required_part_is_still_asked_again():
    reply = side_reply("pro")
    whole = json.dumps(reply)
    cut = whole[: whole.index(reply["arguments"][0]["claim"]) + 5]  # nothing after the first claim's start
    provider = ScriptedProvider()
    provider.enqueue(cut, agent="pro")
    provider.enqueue(reply, agent="pro")
    side = run_structured(provider, CallSpec("pro", Side, agents.SIDE_WIRE, retries=2),
                          [{"role": "user", "content": "Argue for it."}])
    assert len(provider.requests) == 2 and side.uncertainties == reply["uncertainties"]
