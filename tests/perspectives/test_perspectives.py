"""Perspectives mode on the scripted provider: the clarification gate, every transition, the information
flow asserted on recorded requests, summarization when the context would overflow, resume after a failure and
after a killed process, and the ``perspectives`` command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import run_cli, script_file
from perspectives_kit import ANSWERS, QUESTION, compression_reply, expansion_reply, script, synthesis_reply

from clearside.errors import ConfigError, ProviderError
from clearside.modes import export_data
from clearside.perspectives import InvalidTransition, PerspectivesRun, Session, allowed_next, load
from clearside.perspectives import agents as perspective_agents
from clearside.perspectives.runner import estimate_tokens
from clearside.providers.scripted import ScriptedProvider
from clearside.static.recorder import start_static
from clearside.static.run import DebateRun
from clearside.store import open_store

ROOT = Path(__file__).resolve().parents[2]


def session_run(rounds: int = 2, **options) -> tuple[PerspectivesRun, ScriptedProvider]:
    provider = ScriptedProvider(script=script(rounds, summaries=options.pop("summaries", 0)))
    run = PerspectivesRun.create(QUESTION, provider, rounds=rounds, store=open_store(), **options)
    return run, provider


def prompt_of(request) -> str:
    return "\n".join(m["content"] for m in request.messages)


# --- the state machine --------------------------------------------------------------------------------------

def test_a_full_run_enters_every_state_in_order_and_reports_each_step():
    events = []
    run, provider = session_run(3, on_event=events.append)
    assert run.clarify() == script(3)["perspectives-clarifier"][0]["questions"]
    assert open_store().get(run.session.session_id).status == "paused"  # waiting for the user
    run.answer(ANSWERS)
    session = run.run()
    assert session.state_history == ["INIT", "CLARIFICATION_PENDING", "CLARIFICATION_COMPLETE",
                                     "ROUND_1_A", "ROUND_1_B", "ROUND_2_A", "ROUND_2_B", "ROUND_3_A", "ROUND_3_B",
                                     "SYNTHESIS", "COMPLETE"]
    assert [(o.round, o.agent) for o in session.round_outputs] == [(1, "A"), (1, "B"), (2, "A"), (2, "B"),
                                                                  (3, "A"), (3, "B")]
    assert session.synthesis == synthesis_reply() and session.finished
    outputs = [(e.data["round"], e.agent) for e in events if e.kind == "agent_output"]
    assert outputs == [(1, "A"), (1, "B"), (2, "A"), (2, "B"), (3, "A"), (3, "B")]
    kinds = [e.kind for e in events if e.kind not in ("delta", "state")]
    assert kinds[0] == "clarification_questions" and kinds[-1] == "synthesis"
    assert events[-1].kind == "state" and events[-1].text == "COMPLETE"
    first = next(e for e in events if e.kind == "agent_output")
    assert first.text and first.data["output"] and (first.data["round"], first.agent) == (1, "A")
    saved = load(open_store(), session.session_id)
    assert saved == session and open_store().get(session.session_id).status == "done"
    assert [c["step"] for c in session.calls] == ["INIT", "ROUND_1_A", "ROUND_1_B", "ROUND_2_A", "ROUND_2_B",
                                                  "ROUND_3_A", "ROUND_3_B", "SYNTHESIS"]
    assert export_data(open_store(), session.session_id)["synthesis"] == synthesis_reply()


@pytest.mark.parametrize("max_rounds", [1, 3, 5])
def test_transition_table(max_rounds):
    assert allowed_next("INIT", max_rounds) == ["CLARIFICATION_PENDING"]
    assert allowed_next("CLARIFICATION_PENDING", max_rounds) == ["CLARIFICATION_COMPLETE"]
    assert allowed_next("CLARIFICATION_COMPLETE", max_rounds) == ["ROUND_1_A"]
    for n in range(1, max_rounds + 1):
        assert allowed_next(f"ROUND_{n}_A", max_rounds) == [f"ROUND_{n}_B"]
        expected = [f"ROUND_{n + 1}_A"] if n < max_rounds else ["SYNTHESIS"]
        assert allowed_next(f"ROUND_{n}_B", max_rounds) == expected
    assert allowed_next("SYNTHESIS", max_rounds) == ["COMPLETE"]
    assert allowed_next("COMPLETE", max_rounds) == []


def test_invalid_moves_are_refused():
    session = Session(original_user_prompt=QUESTION, max_rounds=2)
    for wrong in ("CLARIFICATION_COMPLETE", "ROUND_1_A", "SYNTHESIS", "COMPLETE"):
        with pytest.raises(InvalidTransition):
            session.enter(wrong)
    session.enter("CLARIFICATION_PENDING")
    session.clarification_questions = ["What happened?"]
    session.merge("It happened twice.")
    session.enter("ROUND_1_A")
    with pytest.raises(InvalidTransition, match="cannot move to ROUND_2_A"):
        session.enter("ROUND_2_A")
    session.enter("ROUND_1_B")
    session.enter("ROUND_2_A")
    session.enter("ROUND_2_B")
    with pytest.raises(InvalidTransition):
        session.enter("ROUND_3_A")  # only 2 rounds
    session.enter("SYNTHESIS")
    session.enter("COMPLETE")
    with pytest.raises(InvalidTransition, match="complete"):
        session.enter("INIT")
    assert session.state_history[-1] == "COMPLETE" and len(session.state_history) == 9


def test_the_clarification_gate_cannot_be_skipped():
    run, provider = session_run(2)
    run.clarify()
    with pytest.raises(InvalidTransition, match="gate cannot be skipped"):
        run.run()
    for empty in ("", "   \n ", [], ["", "  "]):
        with pytest.raises(InvalidTransition, match="Answer the clarification questions"):
            run.answer(empty)
    with pytest.raises(InvalidTransition):
        run.session.enter("CLARIFICATION_COMPLETE")  # not even directly: nothing is merged
    assert run.session.state == "CLARIFICATION_PENDING" and run.session.merged_user_prompt == ""
    assert provider.requests_for("perspectives-A") == [] and provider.requests_for("perspectives-B") == []
    assert load(open_store(), run.session.session_id).state == "CLARIFICATION_PENDING"


def test_the_merged_prompt_is_fixed_once_merged():
    run, _ = session_run(1)
    run.clarify()
    run.answer(["Three times this month.", "Two years.", "Trust, not a fight."])
    merged = run.session.merged_user_prompt
    assert QUESTION in merged and "How often has this happened so far?" in merged and "3. Trust, not a fight." in merged
    with pytest.raises(InvalidTransition, match="fixed"):
        run.answer("Something else entirely")
    run.run()
    assert run.session.merged_user_prompt == merged


def test_rounds_are_configurable_within_1_to_5():
    for bad in (0, 6):
        with pytest.raises(ValueError, match="between 1 and 5"):
            PerspectivesRun.create(QUESTION, ScriptedProvider(), rounds=bad)
    run, _ = session_run(1)
    run.clarify()
    run.answer(ANSWERS)
    assert run.run().state_history[3:] == ["ROUND_1_A", "ROUND_1_B", "SYNTHESIS", "COMPLETE"]


# --- information flow (docs/design/perspectives.md#information-flow) ------------------------------------------

def test_each_step_sees_exactly_what_section_6_2_says():
    run, provider = session_run(3)
    run.clarify()
    run.answer(ANSWERS)
    run.run()
    a = [prompt_of(r) for r in provider.requests_for("perspectives-A")]
    b = [prompt_of(r) for r in provider.requests_for("perspectives-B")]
    merged = json.dumps(run.session.merged_user_prompt, ensure_ascii=False)
    assert all(merged in p for p in a + b)  # every step gets the merged prompt, quoted
    assert "A1:" not in a[0] and "B1:" not in a[0]  # A1: the merged prompt only
    for n in range(1, 4):
        assert f"A{n}:" in b[n - 1]  # Bn sees An ...
        assert not any(f"{tag}{k}:" in b[n - 1] for tag in "AB" for k in range(1, 4) if (tag, k) != ("A", n))
    for n in range(2, 4):
        assert f"B{n - 1}:" in a[n - 1]  # ... and An+1 sees Bn, nothing else
        assert not any(f"{tag}{k}:" in a[n - 1] for tag in "AB" for k in range(1, 4) if (tag, k) != ("B", n - 1))
    [synthesis] = [prompt_of(r) for r in provider.requests_for("perspectives-synthesis")]
    assert all(f"{tag}{k}:" in synthesis for tag in "AB" for k in range(1, 4))  # the whole transcript
    assert json.dumps(ANSWERS) in synthesis and json.dumps(QUESTION) in synthesis
    [clarify] = [prompt_of(r) for r in provider.requests_for("perspectives-clarifier")]
    assert json.dumps(QUESTION) in clarify and "Ask questions only" in clarify


def test_scanner_flags_are_structured_and_labels_about_people_are_refused():
    labelled = expansion_reply("A1")
    labelled["flags"] = [{"pattern": "narcissist", "where": "situation", "evidence": "A1: reads my messages"}]
    queues = script(1)
    queues["perspectives-A"] = [labelled, expansion_reply("A1")]
    provider = ScriptedProvider(script=queues)
    run = PerspectivesRun.create(QUESTION, provider, rounds=1, store=open_store())
    run.clarify()
    run.answer(ANSWERS)
    session = run.run()
    assert len(provider.requests_for("perspectives-A")) == 2  # the label was rejected and re-asked
    assert session.output(1, "A").output["flags"] == [
        {"pattern": "control", "where": "situation", "evidence": "A1: reading messages without asking"}]
    assert "control (situation): A1: reading messages without asking" in session.output(1, "A").text


# --- context management -------------------------------------------------------------------------------------

def test_earlier_rounds_are_summarized_when_the_synthesis_would_not_fit():
    roomy, roomy_provider = session_run(3)
    roomy.clarify()
    roomy.answer(ANSWERS)
    roomy.run()
    assert roomy.session.summaries == [] and roomy_provider.requests_for("perspectives-summarizer") == []
    budget = {f"perspectives-{agent}": spec[3] for agent, spec in perspective_agents.AGENTS.items()}
    needs = {r.agent: estimate_tokens(r.messages) + budget[r.agent] for r in roomy_provider.requests}
    context = max(needs["perspectives-A"], needs["perspectives-B"]) + 20  # rounds fit, the whole transcript not
    assert needs["perspectives-synthesis"] > context

    tight, provider = session_run(3, summaries=3, context_tokens=context)
    tight.clarify()
    tight.answer(ANSWERS)
    session = tight.run()
    assert session.summaries and session.summaries[0].step == "SYNTHESIS"
    assert session.summaries[0].covers == ["A1", "B1"] and "context" in session.summaries[0].reason
    [synthesis] = provider.requests_for("perspectives-synthesis")
    assert estimate_tokens(synthesis.messages) + budget["perspectives-synthesis"] <= context
    assert "S1:" in prompt_of(synthesis) and "A1 reading one" not in prompt_of(synthesis)
    assert "A3:" in prompt_of(synthesis)  # the last round stays verbatim
    assert load(open_store(), session.session_id).summaries == session.summaries


def test_a_context_too_small_even_for_summaries_is_a_clear_error():
    run, _ = session_run(1, summaries=1, context_tokens=1200)
    run.clarify()
    run.answer(ANSWERS)
    with pytest.raises(ConfigError, match="larger context"):
        run.run()
    saved = load(open_store(), run.session.session_id)
    assert saved.state == "ROUND_1_A" and "CLEARSIDE_N_CTX" in saved.error and saved.round_outputs == []


# --- failures and resume ------------------------------------------------------------------------------------

def test_a_failed_step_is_saved_and_resume_runs_only_what_is_missing():
    queues = script(2)
    queues["perspectives-B"] = [compression_reply("B1"), {"__error__": "provider", "message": "model went away"}]
    run = PerspectivesRun.create(QUESTION, ScriptedProvider(script=queues), rounds=2, store=open_store(),
                                 retries=0)
    run.clarify()
    run.answer(ANSWERS)
    with pytest.raises(ProviderError, match="model went away"):
        run.run()
    store = open_store()
    saved = load(store, run.session.session_id)
    assert saved.state == "ROUND_2_B" and "model went away" in saved.error
    assert [(o.round, o.agent) for o in saved.round_outputs] == [(1, "A"), (1, "B"), (2, "A")]
    assert store.get(saved.session_id).status == "failed"

    rest = ScriptedProvider(script={"perspectives-B": [compression_reply("B2")],
                                    "perspectives-synthesis": [synthesis_reply()]})
    session = PerspectivesRun.resume(saved.session_id, rest, store).run()
    assert session.state == "COMPLETE" and session.error == "" and len(session.round_outputs) == 4
    assert [r.agent for r in rest.requests] == ["perspectives-B", "perspectives-synthesis"]
    assert session.state_history.count("ROUND_2_B") == 1


def test_a_killed_process_keeps_its_finished_rounds_and_resumes(tmp_path):
    queues = script(2)
    queues["perspectives-A"][1] = {"__delay__": 60, "reply": queues["perspectives-A"][1]}
    slow = script_file(tmp_path, "slow.json", **queues)
    process = subprocess.Popen([sys.executable, "-m", "clearside", "perspectives", QUESTION, "--answers", ANSWERS,
                                "--rounds", "2", "--provider", slow], cwd=ROOT, env=os.environ.copy(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    store = open_store()
    deadline = time.monotonic() + 60
    session = None
    while time.monotonic() < deadline:
        items = store.list(kind="perspectives").items
        if items and (session := load(store, items[0].id)).state == "ROUND_2_A":
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert session is not None and session.state == "ROUND_2_A", process.stderr.read()
    assert [(o.round, o.agent) for o in load(store, session.session_id).round_outputs] == [(1, "A"), (1, "B")]
    rest = script_file(tmp_path, "rest.json", **{"perspectives-A": [expansion_reply("A2")],
                                                 "perspectives-B": [compression_reply("B2")],
                                                 "perspectives-synthesis": [synthesis_reply()]})
    out = tmp_path / "done.json"
    code = subprocess.run([sys.executable, "-m", "clearside", "perspectives", "--session", session.session_id,
                           "--provider", rest, "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert code.returncode == 0, code.stderr
    done = json.loads(out.read_text(encoding="utf-8"))
    assert done["state"] == "COMPLETE" and [o["round"] for o in done["round_outputs"]] == [1, 1, 2, 2]


# --- the command --------------------------------------------------------------------------------------------

def test_command_without_answers_waits_at_the_gate_then_continues(tmp_path, capsys):
    spec = script_file(tmp_path, "s.json", **script(2))
    out = tmp_path / "session.json"
    code, stdout, err = run_cli(capsys, "perspectives", QUESTION, "--rounds", "2", "--provider", spec,
                                "--out", str(out))
    assert code == 0 and "Clarification questions:" in stdout and "How long have you been together?" in stdout
    pending = json.loads(out.read_text(encoding="utf-8"))
    assert pending["state"] == "CLARIFICATION_PENDING"
    assert pending["state_history"] == ["INIT", "CLARIFICATION_PENDING"]
    assert pending["clarification_questions"] == script(2)["perspectives-clarifier"][0]["questions"]
    assert pending["merged_user_prompt"] == "" and pending["round_outputs"] == [] and pending["synthesis"] is None

    sid = pending["session_id"]
    code, _, err = run_cli(capsys, "perspectives", "--session", sid, "--answers", "   ", "--provider", spec)
    assert code == 2 and "gate cannot be skipped" in err
    rest = script(2)
    del rest["perspectives-clarifier"]
    spec2 = script_file(tmp_path, "rest.json", **rest)
    code, stdout, err = run_cli(capsys, "perspectives", "--session", sid, "--answers", ANSWERS, "--provider", spec2,
                                "--out", str(out))
    assert code == 0, err
    assert "== Round 2, perspective B ==" in stdout and "== Synthesis ==" in stdout
    done = json.loads(out.read_text(encoding="utf-8"))
    assert done["state"] == "COMPLETE" and done["state_history"][-3:] == ["ROUND_2_B", "SYNTHESIS", "COMPLETE"]
    assert {"state", "state_history", "clarification_questions", "merged_user_prompt", "round_outputs",
            "synthesis"} <= set(done)
    assert [(o["round"], o["agent"]) for o in done["round_outputs"]] == [(1, "A"), (1, "B"), (2, "A"), (2, "B")]
    assert set(done["round_outputs"][0]) == {"round", "agent", "output", "text"}
    code, _, err = run_cli(capsys, "perspectives", "--session", sid, "--answers", "again", "--provider", spec2)
    assert code == 2 and "fixed" in err


def test_command_with_answers_runs_to_the_end_and_quiet_rounds_prints_only_the_synthesis(tmp_path, capsys):
    spec = script_file(tmp_path, "s.json", **script(1))
    code, stdout, _ = run_cli(capsys, "perspectives", QUESTION, "--answers", ANSWERS, "--rounds", "1",
                              "--quiet-rounds", "--provider", spec)
    assert code == 0 and "== Synthesis ==" in stdout and "== Round" not in stdout
    [item] = open_store().list(kind="perspectives").items
    assert item.status == "done" and item.question == QUESTION


def test_command_refuses_bad_input(tmp_path, capsys):
    spec = script_file(tmp_path, "s.json", **script(1))
    assert run_cli(capsys, "perspectives", QUESTION, "--rounds", "6", "--provider", spec)[0] == 2
    assert run_cli(capsys, "perspectives", "", "--provider", spec)[0] == 2
    assert run_cli(capsys, "perspectives", "--provider", spec)[0] == 2
    code, _, err = run_cli(capsys, "perspectives", "--session", "0" * 32, "--provider", spec)
    assert code == 2
    static = start_static(open_store(), DebateRun.from_input(QUESTION), provider="scripted", model="x")
    code, _, err = run_cli(capsys, "perspectives", "--session", static, "--provider", spec)
    assert code == 2 and "not a perspectives session" in err



def test_a_failed_clarifier_is_asked_again_and_the_session_waits_for_answers():
    queues = script(1)
    queues["perspectives-clarifier"].insert(0, {"__error__": "provider", "message": "no questions today"})
    provider = ScriptedProvider(script=queues)
    run = PerspectivesRun.create(QUESTION, provider, rounds=1, store=open_store(), retries=0)
    with pytest.raises(ProviderError, match="no questions today"):
        run.clarify()
    assert load(open_store(), run.session.session_id).state == "INIT"
    session = PerspectivesRun.resume(run.session.session_id, provider, open_store()).run()
    assert session.state == "CLARIFICATION_PENDING" and session.clarification_questions
    assert provider.requests_for("perspectives-A") == []


def test_a_duplicated_session_saves_into_itself():
    store = open_store()
    run, _ = session_run(1)
    run.clarify()
    copy_id = store.duplicate(run.session.session_id)
    copied = PerspectivesRun.resume(copy_id, ScriptedProvider(script=script(1)), store)
    assert copied.session.session_id == copy_id
    copied.answer(ANSWERS)
    copied.run()
    assert load(store, copy_id).state == "COMPLETE"
    assert load(store, run.session.session_id).state == "CLARIFICATION_PENDING"  # the original is untouched
    assert store.get(copy_id).parent_id == run.session.session_id
