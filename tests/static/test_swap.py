"""The swap check (clearside/swap.py, ``metrics --swap-check``, ``regress --swap-check``) on the scripted provider.

A *neutral* moderator writes the same synthesis whatever the order of the cases; a *biased* one builds its
synthesis from whichever case is shown first as FOR (hinges, agreements and disagreements quote that case's
claims, its conflict is described by the FOR assumption). Under the swap the biased one must move and the
neutral one must not, and the swapped request must really show the AGAINST case as FOR (P1.. its assumptions).
"""

from __future__ import annotations

import copy
import json
import re

from helpers import fixture_dict, flagship_replies, flagship_script, moderator_reply, script_file, side_reply
from helpers import run_cli as run

from clearside import checks
from clearside.providers.scripted import ScriptedProvider
from clearside.static import swap
from clearside.static.engine import Engine
from clearside.store import open_store

ASSUMPTIONS = {"pro": ["Every team already runs its own deployment pipeline",
                       "Traffic on the busiest features keeps growing every year"],
               "con": ["Most requests touch data owned by several different services",
                       "The company has no distributed tracing in place today"]}


def sides() -> dict[str, dict]:
    out = {}
    for side in ("pro", "con"):
        out[side] = side_reply(side, arguments=4)
        out[side]["assumptions"] = list(ASSUMPTIONS[side])
    return out


def document(moderator: dict | None = None, *, provider: str = "scripted", model: str = "script") -> dict:
    """A valid document on the microservices question with distinct cases (and ``moderator``'s synthesis)."""
    doc = fixture_dict()
    doc.update(sides())
    doc["meta"]["model_info"] = {"provider": provider, "model": model}
    doc.pop("quality", None)
    if moderator is not None:
        doc["moderator"] = moderator
    return doc


def neutral_reply() -> dict:
    """The same synthesis whatever the order; its conflict picks the first listed assumption of each side."""
    reply = moderator_reply()
    reply["assumption_conflicts"][0].update(pro_assumption="P1", con_assumption="C1")
    return reply


def answer(reply: dict, request) -> dict:
    """``reply``, or only the fields a mending call asks for."""
    wanted = list((request.schema or {}).get("properties", {}))
    return {k: copy.deepcopy(reply[k]) for k in wanted if k in reply} or copy.deepcopy(reply)


def case(request, label: str) -> tuple[list[str], dict[str, str]]:
    """The claims (tags dropped) and the assumptions by id of the case the request shows as ``label``."""
    text = request.messages[-1]["content"]
    block = text.split(f"CASE {label} (DATA):")[1].split("CASE AGAINST (DATA):")[0]
    claims = [line.split("] ", 1)[1].split(": ", 1)[1] for line in block.splitlines() if line.startswith("- [")]
    return claims, dict(re.findall(r"- Assumption ([PC]\d+): \W*(.+?)\W*$", block, flags=re.M))


def biased(request) -> dict:
    """A synthesis written from the first-listed (FOR) case's point of view."""
    claims, assumptions = case(request, "FOR")
    reply = {
        "areas_of_agreement": [f"Both sides accept that {claims[3]}"],
        "core_disagreements": [{"topic": "Scaling and operations", "description": f"They disagree on whether "
                                f"{claims[0]}", "root_cause": f"The first case rests on the view that "
                                                                f"{assumptions['P2'].lower()}"}],
        "assumption_conflicts": [{"pro_assumption": "P1", "con_assumption": "C1",
                                  "conflict_description": f"The tension is whether {assumptions['P1'].lower()}"}],
        "evidence_gaps": ["Moderator: current system performance benchmarks",
                          "Moderator: projected growth requirements"],
        "decision_hinges": [f"Does it really hold that {claims[1]}?", f"Is it true that {claims[2]}?"],
    }
    return answer(reply, request)


def neutral(request) -> dict:
    return answer(neutral_reply(), request)


def test_the_swapped_request_shows_the_against_case_as_for_with_its_assumptions_as_p_ids():
    provider = ScriptedProvider(fallback=neutral)
    doc = document(neutral_reply() | {"assumption_conflicts": [{
        "pro_assumption": ASSUMPTIONS["pro"][0], "con_assumption": ASSUMPTIONS["con"][0],
        "conflict_description": "Moderator: contradictory readings of team readiness"}]})
    swap.swap_check(doc, Engine(provider))
    (request,) = provider.requests_for("moderator")  # the document is the engine's own: one call, the swapped one
    text = request.messages[-1]["content"]
    for_block, against_block = text.split("CASE FOR (DATA):")[1].split("CASE AGAINST (DATA):")
    assert all(a["claim"] in for_block and a["claim"] not in against_block for a in doc["con"]["arguments"])
    assert all(a["claim"] in against_block and a["claim"] not in for_block for a in doc["pro"]["arguments"])
    assert f"Assumption P1: {ASSUMPTIONS['con'][0]}" in for_block
    assert f"Assumption C1: {ASSUMPTIONS['pro'][0]}" in against_block
    conflict = request.schema["properties"]["assumption_conflicts"]["items"]["properties"]
    assert conflict["pro_assumption"]["enum"] == ["P1", "P2"] and conflict["con_assumption"]["enum"] == ["C1", "C2"]


def test_a_neutral_moderator_does_not_move():
    provider = ScriptedProvider(fallback=neutral)
    report = swap.swap_check(document(), Engine(provider), runs=2, original="rerun")
    assert len(provider.requests_for("moderator")) == 3  # the original order once, the swapped order twice
    assert report["flip_rate"] == 0.0 and report["flip_rates"] == [0.0, 0.0] and report["runs"] == 2
    for name, section in report["sections"].items():
        assert section["items"] > 0 and section["matched"] == section["items"], name
        assert section["flipped"] == section["vanished"] == section["appeared"] == 0, name
    back = report["details"][0]["swapped_moderator"]["assumption_conflicts"][0]
    assert (back["pro_assumption"], back["con_assumption"]) == (ASSUMPTIONS["pro"][0], ASSUMPTIONS["con"][0])
    assert "fresh synthesis on the original order" in report["original"]


def test_a_biased_moderator_moves():
    provider = ScriptedProvider(fallback=biased)
    report = swap.swap_check(document(), Engine(provider), original="rerun")
    original, swapped_request = provider.requests_for("moderator")
    assert case(original, "FOR")[0] != case(swapped_request, "FOR")[0]
    assert report["flip_rate"] >= 0.8, report["sections"]
    s = report["sections"]
    assert s["decision_hinges"]["flipped"] + s["decision_hinges"]["vanished"] == s["decision_hinges"]["items"] == 2
    assert s["assumption_conflicts"] == {"items": 1, "matched": 1, "flipped": 1, "vanished": 0, "appeared": 0,
                                         "flip_rate": 1.0}, "the same pair, described from the other side"
    (pair,) = [p for p in report["details"][0]["pairs"] if p["section"] == "assumption_conflicts"]
    assert pair["flipped"] == "its framing moved from FOR to AGAINST" and pair["lean"][0] > 0 > pair["lean"][1]


def test_labels_are_read_back_in_the_original_frame():
    assert swap.swap_labels("FOR assumes P2 while AGAINST assumes C1; the Pro side, con, pro-growth, FORTH") == \
        "AGAINST assumes C2 while FOR assumes P1; the Con side, pro, pro-growth, FORTH"
    mod = neutral_reply()
    mod["assumption_conflicts"][0] = {"pro_assumption": "Con text listed", "con_assumption": "Pro text listed",
                                      "conflict_description": "FOR expects growth that AGAINST doubts"}
    back = swap.original_frame(mod)
    assert back["assumption_conflicts"][0] == {"pro_assumption": "Pro text listed",
                                               "con_assumption": "Con text listed",
                                               "conflict_description": "AGAINST expects growth that FOR doubts"}
    assert swap.swapped(document())["pro"] == document()["con"]


def test_lexical_fallback_and_a_conflict_whose_assumptions_swapped_meaning():
    doc = document(neutral_reply())
    original = copy.deepcopy(doc["moderator"])
    original["assumption_conflicts"][0].update(pro_assumption=ASSUMPTIONS["pro"][0],
                                               con_assumption=ASSUMPTIONS["con"][0])
    same = swap.compare(doc, original, copy.deepcopy(original), checks.LEXICAL_ONLY)
    assert same["flip_rate"] == 0.0 and same["semantic"] is False
    moved = copy.deepcopy(original)
    moved["decision_hinges"] = ["Will the cloud bill of the data team double next winter?",
                                original["decision_hinges"][1]]
    c = moved["assumption_conflicts"][0]
    c["pro_assumption"], c["con_assumption"] = c["con_assumption"], c["pro_assumption"]
    result = swap.compare(doc, original, moved, checks.LEXICAL_ONLY)
    assert result["sections"]["decision_hinges"] | {"flip_rate": 0} == {"items": 2, "matched": 1, "flipped": 0,
                                                                        "vanished": 1, "appeared": 1, "flip_rate": 0}
    assert result["sections"]["assumption_conflicts"]["flipped"] == 1
    assert [p["flipped"] for p in result["pairs"] if p["section"] == "assumption_conflicts"] == [
        "its FOR and AGAINST assumptions swapped"]
    items = sum(s["items"] for s in result["sections"].values())
    assert result["flip_rate"] == round(2 / items, 3)


# --- the command line ---------------------------------------------------------------------------------------

def test_swap_check_command_reports_json_and_text_with_the_published_figure(tmp_path, capsys):
    path = tmp_path / "debate.json"
    path.write_text(json.dumps(document(neutral_reply(), provider="openai", model="gpt-4o-mini")), encoding="utf-8")
    spec = script_file(tmp_path, moderator=[neutral_reply()] * 3)
    code, out, err = run(capsys, "metrics", "--swap-check", str(path), "--provider", spec, "--runs", "2",
                         "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    (debate,) = report["debates"]
    assert debate["flip_rate"] == 0.0 and debate["runs"] == 2 and debate["model_calls"] == 3
    assert "written by openai:gpt-4o-mini" in debate["original"]  # another model's synthesis: rerun, not compared
    assert report["mean_flip_rate"] == 0.0 and report["published"]["flip_rate"] == 0.136
    code, saved, _ = run(capsys, "import", str(path))  # a saved debate's id works as a file does
    assert code == 0
    spec = script_file(tmp_path, "again.json", moderator=[neutral_reply()] * 2)
    code, out, _ = run(capsys, "metrics", "--swap-check", saved.strip(), "--provider", spec, "--format", "md")
    assert code == 0 and f"## {saved.strip()}:" in out and "Flip rate **0.0%**" in out
    assert "13.6%" in out and "The Coin Flip Judge" in out


def test_swap_check_command_refuses_bad_input_with_exit_2(tmp_path, capsys):
    code, _, err = run(capsys, "metrics", "--swap-check", str(tmp_path / "missing.json"))
    assert code == 2 and "Cannot read debate" in err and "No such file" in err
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    code, _, err = run(capsys, "metrics", "--swap-check", str(listed))
    assert code == 2 and "is not a debate to swap-check" in err and "JSON object" in err
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"proposition": {}, "pro": {}}), encoding="utf-8")
    code, _, err = run(capsys, "metrics", "--swap-check", str(partial))
    assert code == 2 and "is not a debate to swap-check: Not a valid ClearSide v1 document" in err
    code, _, err = run(capsys, "metrics", "--swap-check", "--reference", "nonsense")
    assert code == 2 and "Unknown reference 'nonsense' for --swap-check" in err and "argkp-dev:1..4" in err
    code, _, err = run(capsys, "metrics", "--swap-check", "--reference", "argkp-dev:9")
    assert code == 2 and "argkp-dev:1 to argkp-dev:4" in err
    code, _, err = run(capsys, "metrics", "--swap-check", "--reference", "argkp-dev:2")
    assert code == 2 and "No saved debate of argkp-dev:2" in err and "regress --suite argkp-dev" in err
    code, _, err = run(capsys, "metrics", "--swap-check")
    assert code == 2 and "--swap-check needs a debate" in err
    code, _, err = run(capsys, "metrics", str(partial), str(listed))
    assert code == 2 and "several only with --swap-check" in err


def test_a_failing_swapped_run_is_reported_and_exits_with_its_code(tmp_path, capsys):
    path = tmp_path / "debate.json"
    path.write_text(json.dumps(document(neutral_reply())), encoding="utf-8")
    spec = script_file(tmp_path, moderator=[{"__error__": "unreachable", "message": "nobody home"}])
    code, out, err = run(capsys, "metrics", "--swap-check", str(path), "--provider", spec, "--format", "json")
    assert code == 3 and "nobody home" in err
    report = json.loads(out)
    assert report["debates"] == [] and report["failed"][0]["debate"] == str(path)
    assert report["mean_flip_rate"] is None


def test_regress_swap_check_adds_the_flip_rate_to_each_run(tmp_path, capsys):
    """One more moderator reply per debate: the swapped run quotes the same pair, read from the other side."""
    replies = flagship_replies()
    swapped_mod = copy.deepcopy(replies["moderator"])
    for c in swapped_mod["assumption_conflicts"]:
        c["pro_assumption"], c["con_assumption"] = c["con_assumption"], c["pro_assumption"]
    queues = {agent: [reply] for agent, reply in replies.items()}
    queues["moderator"].append(swapped_mod)
    spec = script_file(tmp_path, **queues)
    code, out, err = run(capsys, "regress", "--suite", "flagship", "--runs", "1", "--provider", spec,
                         "--swap-check", "--format", "json")
    assert code == 0, out + err
    report = json.loads(out)
    assert report["metrics"]["flip_rate"]["values"] == [0.0]
    assert any(c["metric"] == "flip_rate" and c["status"] == "pass" for c in report["checks"])
    (row,) = open_store().runs("flagship")
    assert row["metrics"]["flip_rate"] == 0.0 and row["data"]["detail"]["swap_check"]["runs"] == 1
    code, out, _ = run(capsys, "regress", "--suite", "flagship", "--runs", "1", "--provider",
                       flagship_script(tmp_path, 1, name="plain.json"))
    assert code == 0 and "flip_rate" not in out and "Swap check" not in out, "off by default"


def test_the_regress_workflow_carries_the_swap_check_to_each_item(monkeypatch):
    """regress --enqueue: the batch's job says swap_check, and each item's scored debate is asked for it."""
    from clearside import runtime
    from clearside.quality import workflow as batches
    from clearside.quality.scored import Scored

    queued = []
    monkeypatch.setattr(runtime, "enqueue", lambda name, job, **options: queued.append(job) or job["batch"])
    asked = []
    monkeypatch.setattr(batches, "run_scored", lambda question, provider, store, options, **_: asked.append(
        options.swap_check) or Scored("d", "r", "failed", metrics={"schema_valid": 0.0}, error="not run"))
    for swap_check in (True, False):
        batches.enqueue_regress("flagship", ScriptedProvider(), batches.RegressSettings(runs=1, swap_check=swap_check),
                                lend=False)
        job = queued[-1]
        assert job["swap_check"] is swap_check
        assert batches._scored(job, job["tasks"][0], ScriptedProvider(), None)["status"] == "failed"
    assert asked == [True, False]



POOL = [["How fast can the payment ledger be migrated?", "What does the on-call rota cost?"],
        ["Do regulators accept split audit trails?", "How many engineers can be hired this year?"],
        ["What latency do customers in Asia tolerate?", "Will the vendor contract be renewed?"],
        ["How often does the schema of orders change?", "What would a data-centre outage cost?"],
        ["Can mobile clients batch their requests?", "How long does the current build take?"]]


def test_the_control_separates_the_moderators_own_variation_from_the_swap():
    """A moderator that writes a different synthesis on every run, whatever the order: the swap "moves" it, and so
    does a plain rerun; the control says so and the swap effect is about nothing."""
    import itertools
    counter = itertools.count()

    def drifting(request) -> dict:
        n = next(counter)
        reply = neutral_reply()
        reply["decision_hinges"] = POOL[n % len(POOL)]
        return answer(reply, request)

    report = swap.swap_check(document(), Engine(ScriptedProvider(fallback=drifting)), runs=2, original="rerun",
                             control=True)
    assert report["flip_rate"] > 0 and report["control_flip_rate"] == report["flip_rate"]
    assert report["swap_effect"] == 0.0 and len(report["control_flip_rates"]) == 2
    steady = swap.swap_check(document(), Engine(ScriptedProvider(fallback=biased)), original="rerun", control=True)
    assert steady["control_flip_rate"] == 0.0 and steady["swap_effect"] == steady["flip_rate"] >= 0.8
    text = swap.markdown(swap.batch([report, steady]))
    assert "Control (the original order again)" in text and "mean swap effect" in text


def test_control_without_swap_check_is_refused(tmp_path, capsys):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(document()), encoding="utf-8")
    code, _, err = run(capsys, "metrics", str(path), "--control")
    assert code == 2 and "--control goes with --swap-check" in err
