"""The live protocol on the scripted provider: order, visibility, budgets, interventions, guardrails, saving."""

from __future__ import annotations

import json

import pytest
from helpers import QUESTION, LiveResponder, request_text, stored

from clearside.contract import jsonschema_errors
from clearside.errors import InputError, ProviderUnreachable
from clearside.live import PLAN, LiveConfig, LiveDebate, Origin
from clearside.live.export import to_markdown
from clearside.live.turn import close_cut_reply, cut_words, speech_of
from clearside.providers.scripted import ScriptedProvider
from clearside.store import open_store

SLOW = LiveConfig(words_per_minute=40)  # 2 min = 80 words: short scripted speeches stay within budget


def make(tmp_path, responder=None, config=SLOW, **provider_options):
    provider = ScriptedProvider(fallback=responder or LiveResponder(), **provider_options)
    return LiveDebate.create(QUESTION, provider, config=config, store=open_store()), provider


def test_plan_follows_spec_004_turn_order():
    order = [(s.phase, s.kind, s.speaker) for s in PLAN]
    assert order[:2] == [("opening", "opening", "pro"), ("opening", "opening", "con")]
    assert [s.speaker for s in PLAN[2:8]] == ["pro", "con"] * 3 and [s.round for s in PLAN[2:8]] == [1, 1, 2, 2, 3, 3]
    assert order[8:16] == [("cross_examination", k, who) for k, who in
                           [("question", "pro"), ("answer", "con")] * 2 + [("question", "con"), ("answer", "pro")] * 2]
    assert order[16:] == [("rebuttal", "rebuttal", "con"), ("rebuttal", "rebuttal", "pro"),
                          ("closing", "closing", "con"), ("closing", "closing", "pro"),
                          ("synthesis", "synthesis", "moderator")]


def test_full_run_order_document_and_saved_file(tmp_path):
    debate, provider = make(tmp_path)
    transcript = debate.run()
    assert transcript.state == "done"
    assert [(t.phase, t.speaker) for t in transcript.turns] == [(s.phase, s.speaker) for s in PLAN]
    assert [t.turn for t in transcript.turns] == list(range(1, 22))
    # the agents were called in protocol order, after the orchestrator
    assert [r.agent for r in provider.requests] == ["orchestrator", *(s.speaker for s in PLAN)]
    assert jsonschema_errors(transcript.document) == []
    assert len(transcript.document["pro"]["arguments"]) == 3  # one per constructive round
    saved = stored(debate.transcript.id)
    assert saved.model_dump() == transcript.model_dump()


def test_visibility_parallel_construction_and_later_phases(tmp_path):
    debate, provider = make(tmp_path)
    transcript = debate.run()
    calls = [r for r in provider.requests if r.agent != "orchestrator"]
    text = {s.index: request_text(calls[s.index]) for s in PLAN}
    assert "Pro position in call 1" not in text[1]  # con's opening never sees pro's opening
    for step in PLAN[:8]:  # openings and constructive rounds: each side sees only its own case
        other = "Con" if step.speaker == "pro" else "Pro"
        assert f"{other} speech" not in text[step.index] and f"{other} position" not in text[step.index]
    assert "Pro position in call 1" in text[2]  # but its own earlier turns
    assert "Con claim in call 2" in text[8]  # pro questions con's actual case
    assert "Pro questions 1 in call 5" in text[9]  # con answers the actual questions
    assert "Pro claim in call 2" in text[16] and "Pro answers 1 in call" in text[16]  # con rebuts pro's case
    assert all(f"[Turn {n}]" in text[20] for n in range(1, 21))  # the synthesis sees the whole debate
    sees = {t.step: t.sees for t in transcript.turns}
    assert sees[0] == [] and sees[1] == [] and sees[2] == [1] and sees[3] == [2]
    assert {2, 4, 6, 8} <= set(sees[8]) and sees[20] == list(range(1, 21))


def test_each_agent_keeps_one_growing_conversation(tmp_path):
    """Every request of an agent extends its previous one verbatim: a prompt cache only evaluates the new part."""
    debate, provider = make(tmp_path, config=LiveConfig(words_per_minute=40, context_chars=100_000))
    transcript = debate.run()
    for speaker in ("pro", "con"):
        requests = [r.messages for r in provider.requests if r.agent == speaker]
        turns = [t for t in transcript.turns if t.speaker == speaker]
        assert len(requests) == len(turns) == 10
        for before, after, turn in zip(requests, requests[1:], turns, strict=False):
            assert after[: len(before)] == before
            assert after[len(before)] == {"role": "assistant", "content": turn.reply}
        assert "PROPOSITION (USER TEXT)" in requests[0][1]["content"]
        assert all("PROPOSITION (USER TEXT)" not in m[-1]["content"] for m in requests[1:])  # the header once


def test_a_conversation_too_long_for_the_context_restarts_from_digests(tmp_path):
    debate, provider = make(tmp_path, config=LiveConfig(words_per_minute=40, context_chars=6000))
    transcript = debate.run()
    fresh = [t for t in transcript.turns if t.fresh]
    assert fresh and transcript.state == "done"
    turn = fresh[0]
    request = [r for r in provider.requests if r.agent == turn.speaker][
        [t.turn for t in transcript.turns if t.speaker == turn.speaker and t.step is not None].index(turn.turn)]
    assert [m["role"] for m in request.messages] == ["system", "user"]  # the old conversation is gone
    own_earlier = [t for t in transcript.turns if t.speaker == turn.speaker and t.turn < turn.turn]
    assert all(f"[Turn {t.turn}]" in request.messages[1]["content"] for t in own_earlier)  # kept as digests
    assert "PROPOSITION (USER TEXT)" in request.messages[1]["content"]
    assert turn.sees == sorted(set(turn.sees))
    for later in [r for r in provider.requests if r.agent == turn.speaker][
            [t.turn for t in transcript.turns if t.speaker == turn.speaker and t.step is not None].index(turn.turn):]:
        assert sum(len(m["content"]) for m in later.messages) < 6000 + 4000


def test_budgets_are_told_and_overlong_speech_is_cut_with_a_note(tmp_path):
    config = LiveConfig(words_per_minute=40, hard_limit=1.2)
    debate, provider = make(tmp_path, LiveResponder(speech_words=300), config)
    transcript = debate.run()
    opening = transcript.turns[0]
    assert opening.budget_tokens == config.budget_tokens(PLAN[0]) == 104  # 2 min x 40 wpm x 1.3 tokens/word
    told = request_text(provider.requests[1])
    assert "about 80 words (104 tokens)" in told and "wrap up by 64 words" in told and "cut off at 96" in told
    assert opening.truncated and len(opening.text.split()) <= 96
    assert any("120% of its 104-token budget" in note for note in opening.notes)
    assert provider.requests[1].max_tokens >= 125  # the hard limit also caps generation itself
    assert "hard limit" in to_markdown(transcript)


def test_a_reply_cut_at_the_token_limit_keeps_its_fields_and_is_marked(tmp_path):
    responder = LiveResponder(speech_words=20)
    full = responder.build(__import__("clearside.live.wire", fromlist=["x"]).turn_schema(PLAN[0]), "pro", 1)
    raw = json.dumps(full)
    cut = raw[: raw.index('"speech": "') + 60]  # generation stopped mid-speech
    debate, _ = make(tmp_path, LiveResponder(overrides={("pro", 1): cut}))
    debate.run()
    opening = debate.snapshot().turns[0]
    assert opening.truncated and opening.fields["previews"] == full["previews"]
    assert any("token limit" in note for note in opening.notes)
    assert close_cut_reply("not json") is None


def test_speech_helpers():
    assert speech_of('{"position": "A", "speech": "We hold th') == "We hold th"
    assert speech_of('{"position": "A"') == ""
    assert cut_words("One two three. Four five six seven.", 5) == "One two three."
    assert cut_words("one two three four five six", 3) == "one two three…"


def test_pause_mid_turn_then_resume_from_the_exact_point(tmp_path):
    debate, provider = make(tmp_path, LiveResponder(speech_words=60), chunk_size=8)
    spoken = []  # speech chunks streamed in the third turn (pro, round 1)
    debate.on_event = lambda e: spoken.append(e.text) if e.kind == "speech" and e.data.get("step") == 2 else None
    debate.submit("pause_question", "What do you mean by service boundaries?", "pro")
    transcript = debate.run(should_stop=lambda: len(spoken) >= 3)  # the user clicks Pause mid-speech
    assert transcript.state == "paused" and transcript.cursor == 2 and len(transcript.turns) == 2
    kept = transcript.partial.speech
    assert kept == "".join(spoken).strip() and len(kept) > 10
    assert stored(debate.transcript.id).partial.speech == kept  # the saved point survives a crash or reload
    question = transcript.interventions[0]
    assert question.status == "answered" and question.answered_by == "pro" and question.response
    transcript = debate.run()  # resume: the same turn continues from the saved speech
    turn = transcript.turns[2]
    assert turn.step == 2 and turn.text.startswith(kept) and turn.paused_at == len(kept)
    assert any("resumed from that point" in note for note in turn.notes)
    continuation = request_text([r for r in provider.requests if r.agent == "pro"][3])
    assert "YOU WERE PAUSED" in continuation and kept in continuation
    assert transcript.state == "done" and len(transcript.turns) == 21


def test_every_intervention_type_recorded_with_its_outcome(tmp_path):
    debate, provider = make(tmp_path)
    scheduled = {2: [("inject_evidence", "A 2024 survey: 60% of teams regret an early split.", None)],
                 4: [("direct_question", "What would change your mind?", "con"),
                     ("clarification", "What counts as a service boundary?", "pro")],
                 7: [("pause_question", "Is cost the main issue?", "moderator")]}

    def before_turn(d):
        done = len(d.transcript.turns)
        for kind, text, to in scheduled.pop(done, []):
            d.submit(kind, text, to)

    transcript = debate.run(before_turn=before_turn)
    by_type = {i.type: i for i in transcript.interventions}
    evidence = by_type["inject_evidence"]
    assert evidence.after_turn == 2 and evidence.status == "delivered"
    receivers = [transcript.turn(n) for n in evidence.delivered_to]
    assert [t.speaker for t in receivers] == ["pro", "con"] and [t.turn for t in receivers] == [3, 4]
    assert all(t.fields["evidence_response"] for t in receivers)  # acknowledged in their next turns
    assert "60% of teams regret" in request_text([r for r in provider.requests if r.agent == "con"][1])
    direct = by_type["direct_question"]
    assert direct.status == "answered" and direct.answered_by == "con" and direct.response and direct.after_turn == 4
    clarification = by_type["clarification"]
    inline = transcript.turn(clarification.answered_in_turn)
    assert inline.kind == "clarification" and inline.speaker == "pro" and inline.text == clarification.response
    assert clarification.answered_in_turn == 9  # queued after turn 4, answered when the constructive phase ends
    pause = by_type["pause_question"]
    assert pause.answered_by == "moderator" and pause.response
    for item in transcript.interventions:
        assert item.at.endswith("Z") and item.type and item.text
    assert transcript.state == "done" and len([t for t in transcript.turns if t.step is not None]) == 21


def test_bad_interventions_are_refused_with_clear_messages(tmp_path):
    debate, _ = make(tmp_path)
    with pytest.raises(InputError, match="needs a recipient"):
        debate.submit("direct_question", "Why?")
    with pytest.raises(InputError, match="Unknown intervention type"):
        debate.submit("heckle", "Boo")
    with pytest.raises(InputError, match="empty"):
        debate.submit("clarification", "   ")
    with pytest.raises(InputError, match="limit is 500"):
        debate.submit("clarification", "x" * 501)
    with pytest.raises(InputError, match="both advocates"):
        debate.submit("inject_evidence", "Data", "pro")
    debate.run()
    with pytest.raises(InputError, match="finished"):
        debate.submit("inject_evidence", "Late data")
    assert debate.snapshot().interventions == []  # nothing refused was recorded


def test_guardrail_regenerates_a_turn_that_mentions_the_other_side(tmp_path):
    bad = {"position": "My opponent is wrong about microservices and I rebut that view."}
    debate, provider = make(tmp_path, LiveResponder(overrides={("pro", 1): bad}))
    transcript = debate.run()
    opening = transcript.turns[0]
    assert opening.regenerated == 1 and opening.flags == []
    retry = [r for r in provider.requests if r.agent == "pro"][1]
    assert "broke the debate rules" in request_text(retry) and "may not mention or rebut" in request_text(retry)
    next_turn = [r for r in provider.requests if r.agent == "pro"][2].messages
    assert next_turn[: len(retry.messages)] == retry.messages  # the regeneration stays in pro's conversation
    assert next_turn[len(retry.messages)] == {"role": "assistant", "content": opening.reply}


def test_a_turn_that_keeps_failing_is_accepted_with_the_violation_recorded(tmp_path):
    verdict = {"speech": "On balance, Pro makes the stronger case and I recommend a pause on new building."}
    debate, _ = make(tmp_path, LiveResponder(overrides={("moderator", 1): verdict, ("moderator", 2): verdict}))
    transcript = debate.run()
    synthesis = transcript.turns[-1]
    assert synthesis.regenerated == 1
    rules = {flag["rule"] for flag in synthesis.flags}
    assert rules == {"moderator_neutrality"} and len(synthesis.flags) >= 2
    assert "Guardrail (moderator_neutrality)" in to_markdown(transcript)


def test_the_synthesis_picks_assumption_conflicts_by_id_among_what_the_sides_listed(tmp_path):
    debate, provider = make(tmp_path)
    transcript = debate.run()
    request = [r for r in provider.requests if r.agent == "moderator"][-1]
    conflict = request.schema["properties"]["assumption_conflicts"]["items"]["properties"]
    document = transcript.document
    pro, con = document["pro"]["assumptions"], document["con"]["assumptions"]
    assert conflict["pro_assumption"]["enum"] == [f"P{i}" for i in range(1, len(pro) + 1)]
    assert conflict["con_assumption"]["enum"] == [f"C{i}" for i in range(1, len(con) + 1)]
    assert f"P1: {json.dumps(pro[0])}" in request_text(request)  # the listing it picks from
    conflicts = document["moderator"]["assumption_conflicts"]
    assert conflicts and all(c["pro_assumption"] in pro and c["con_assumption"] in con for c in conflicts)
    assert transcript.turns[-1].flags == []


def test_a_synthesis_citing_an_unlisted_assumption_is_regenerated(tmp_path):
    unlisted = {"assumption_conflicts": [{"pro_assumption": "Cloud prices will keep falling every year",
                                          "con_assumption": "C1", "conflict_description": "They read costs apart."}]}
    debate, provider = make(tmp_path, LiveResponder(overrides={("moderator", 1): unlisted}))
    transcript = debate.run()
    synthesis = transcript.turns[-1]
    assert synthesis.regenerated == 1 and synthesis.flags == []
    retry = [r for r in provider.requests if r.agent == "moderator"][1]
    assert "must cite an assumption the Pro side listed" in request_text(retry)
    document = transcript.document
    assert all(c["pro_assumption"] in document["pro"]["assumptions"]
               for c in document["moderator"]["assumption_conflicts"])


def test_missing_assumptions_and_new_arguments_are_caught(tmp_path):
    no_assumptions = {"arguments": [{"category": "economic", "claim": "Costs fall with independent scaling",
                                     "explanation": "Each service scales alone.", "evidence_type": "projection",
                                     "confidence": "medium", "assumptions": ["Not applicable."]}]}
    new_point = {"summary": ["Quantum computing will make every architecture obsolete soon",
                             "Pro claim in call 2 about service boundaries"]}
    debate, _ = make(tmp_path, LiveResponder(overrides={("pro", 2): no_assumptions, ("pro", 3): no_assumptions,
                                                        ("con", 10): new_point, ("con", 11): new_point}))
    transcript = debate.run()
    round_one = transcript.turns[2]
    assert [f["rule"] for f in round_one.flags] == ["missing_assumptions"] and round_one.regenerated == 1
    closing = next(t for t in transcript.turns if t.kind == "closing" and t.speaker == "con")
    assert [f["rule"] for f in closing.flags] == ["new_argument"]
    assert "Quantum" in closing.flags[0]["text"]


def test_crash_keeps_finished_turns_and_resume_finishes(tmp_path):
    responder = LiveResponder()
    provider = ScriptedProvider(fallback=responder)
    debate = LiveDebate.create(QUESTION, provider, config=SLOW, store=open_store())
    for _ in range(5):
        debate.advance()
    provider.enqueue({"__error__": "unreachable", "message": "backend went away"}, agent="con")
    with pytest.raises(ProviderUnreachable):
        debate.advance()
    saved = stored(debate.transcript.id)
    assert saved.state == "failed" and len(saved.turns) == 5 and saved.cursor == 5 and "went away" in saved.error
    resumed = LiveDebate.resume(debate.transcript.id, ScriptedProvider(fallback=LiveResponder()), store=open_store())
    transcript = resumed.run()
    assert transcript.state == "done" and [t.turn for t in transcript.turns] == list(range(1, 22))
    assert transcript.turns[:5] == saved.turns


def test_start_from_an_existing_debate_reuses_its_proposition(tmp_path):
    from helpers import fixture_dict

    from clearside.schema import Document

    document = Document.model_validate(fixture_dict())
    provider = ScriptedProvider(fallback=LiveResponder())
    debate = LiveDebate.create("", provider, config=SLOW, origin=Origin(document=document), store=open_store())
    debate.run()
    assert provider.requests[0].agent == "pro"  # no orchestrator call
    assert debate.transcript.proposition == document.proposition.dump()


def test_config_rejects_nonsense():
    from clearside.errors import ConfigError

    with pytest.raises(ConfigError, match="words_per_minute"):
        LiveConfig.from_env(words_per_minute=2)
    with pytest.raises(ConfigError, match="hard_limit"):
        LiveConfig(hard_limit=0.5).check()


# -- CLI -----------------------------------------------------------------------------------------

@pytest.fixture
def cli(monkeypatch, tmp_path):
    """``python -m clearside live`` in-process, on a scripted provider and a private data directory."""
    from clearside import cli as main_cli
    from clearside.cli import live as live_cli

    monkeypatch.setenv("CLEARSIDE_DATA", str(tmp_path / "data"))
    providers = []

    def provider(spec, **options):  # options: what the command line set (--concurrency)
        providers.append(ScriptedProvider(fallback=LiveResponder(), **options))
        return providers[-1]

    monkeypatch.setattr(live_cli, "get_provider", provider)
    return main_cli.main, providers


def test_cli_live_streams_turns_applies_interventions_and_writes_the_transcript(cli, tmp_path, capsys):
    main, _ = cli
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([
        {"after_turn": 2, "type": "inject_evidence", "text": "Survey: 60% of teams regret an early split."},
        {"after_turn": 4, "type": "direct_question", "to": "con", "text": "What would change your mind?"},
        {"after_turn": 5, "type": "clarification", "text": "What is a service boundary?"},
        {"after_turn": 9, "type": "pause_question", "to": "moderator", "text": "Where do they agree so far?"},
    ]))
    out = tmp_path / "transcript.json"
    assert main(["live", QUESTION, "--interventions", str(plan), "--out", str(out), "--words-per-minute", "40"]) == 0
    printed = capsys.readouterr().out
    assert printed.index("Pro opening statement") < printed.index("Con opening statement") < printed.index(
        "Moderator synthesis")
    assert "Pro speech 1 explains" in printed and "[Con answers the user]" in printed
    data = json.loads(out.read_text())
    assert {"turns", "interventions", "document"} <= set(data)
    assert jsonschema_errors(data["document"]) == []
    for turn in data["turns"]:
        assert {"phase", "speaker", "text", "fields", "flags"} <= set(turn)
    kinds = [(i["type"], i["after_turn"], i["status"]) for i in data["interventions"]]
    assert kinds == [("inject_evidence", 2, "delivered"), ("direct_question", 4, "answered"),
                     ("clarification", 5, "answered"), ("pause_question", 9, "answered")]
    assert data["interventions"][0]["delivered_to"] == [3, 4]
    assert data["interventions"][2]["answered_in_turn"] == 9
    assert all(i["at"] for i in data["interventions"]) and data["interventions"][1]["response"]


@pytest.mark.parametrize("content, message", [
    ("not json", "not JSON"),
    ('{"after_turn": 1}', "JSON list"),
    ('[{"after_turn": 1, "type": "heckle", "text": "x"}]', "type 'heckle'"),
    ('[{"after_turn": -1, "type": "clarification", "text": "x"}]', "after_turn"),
    ('[{"after_turn": 1, "type": "direct_question", "text": "x"}]', "is a direct question and needs"),
    ('[{"after_turn": 1, "type": "clarification", "text": ""}]', "non-empty text"),
])
def test_cli_live_refuses_a_bad_interventions_file_before_starting(cli, tmp_path, capsys, content, message):
    main, providers = cli
    plan = tmp_path / "plan.json"
    plan.write_text(content)
    assert main(["live", QUESTION, "--interventions", str(plan)]) == 2
    assert message in capsys.readouterr().err
    assert providers == []  # nothing was generated


def test_cli_live_failure_keeps_turns_and_resume_finishes(cli, tmp_path, capsys, monkeypatch):
    main, providers = cli
    from clearside.cli import live as live_cli

    failing = ScriptedProvider(fallback=LiveResponder())
    monkeypatch.setattr(live_cli, "get_provider", lambda spec, **options: failing)
    real_complete = failing._complete
    calls = {"n": 0}

    def flaky(request, on_delta):
        calls["n"] += 1
        if calls["n"] == 8:
            raise ProviderUnreachable("The backend went away.", provider="scripted")
        return real_complete(request, on_delta)

    failing._complete = flaky
    out = tmp_path / "t.json"
    assert main(["live", QUESTION, "--out", str(out), "--words-per-minute", "40"]) == 3
    err = capsys.readouterr().err
    assert "went away" in err and "--resume" in err
    partial = json.loads(out.read_text())
    assert partial["state"] == "failed" and len(partial["turns"]) == 6
    monkeypatch.setattr(live_cli, "get_provider",
                        lambda spec, **options: ScriptedProvider(fallback=LiveResponder(), **options))
    assert main(["live", "--resume", partial["id"], "--out", str(out)]) == 0
    final = json.loads(out.read_text())
    assert final["state"] == "done" and len(final["turns"]) == 21 and final["turns"][:6] == partial["turns"]


def test_cli_live_needs_a_question_or_resume(cli, capsys):
    main, _ = cli
    assert main(["live"]) == 2
    assert "QUESTION" in capsys.readouterr().err
    assert main(["live", "--resume", "0123abcd"]) == 2
    assert "is not a debate id" in capsys.readouterr().err
    assert main(["live", "--resume", "0123456789abcdef0123456789abcdef"]) == 2
    assert "No saved debate has the id" in capsys.readouterr().err
    assert main(["live", "--resume", "missing.json"]) == 2
    assert "Cannot read the import file missing.json" in capsys.readouterr().err


def test_clarification_goes_to_whoever_spoke_when_it_was_asked(tmp_path):
    debate, _ = make(tmp_path)
    debate.advance()  # Pro's opening
    item = debate.submit("clarification", "What do you mean by independent deployment?")
    assert item.to == "pro"  # fixed now, although Con speaks before the phase break
    transcript = debate.run()
    assert transcript.turn(item.answered_in_turn).speaker == "pro"


def test_evidence_arriving_during_the_last_turn_is_marked_not_delivered(tmp_path):
    debate, _ = make(tmp_path)

    def on_event(event):
        if event.kind == "turn_start" and event.data.get("step") == len(PLAN) - 1:
            debate.submit("inject_evidence", "A late report on grid capacity.")

    debate.on_event = on_event
    transcript = debate.run()
    [late] = transcript.interventions
    assert late.status == "failed" and "ended before" in late.error and late.delivered_to == []


def test_the_markdown_export_reads_as_text_and_keeps_markup_and_html_inert():
    from clearside.live.transcript import Intervention, Transcript, Turn

    speech = "Costs rise 3.5% by 2026 - a well-known effect (see the R&D report)."
    hostile = "# Heading? **bold** [link](http://x) <script>alert(1)</script> &lt;b&gt; | cell"
    transcript = Transcript(
        id="a" * 32, created_at="2026-11-23T00:00:00Z", updated_at="2026-11-23T00:00:00Z", question=hostile,
        provider="scripted", model="script",
        turns=[Turn(turn=1, step=0, phase="opening", kind="opening", speaker="pro", label="Opening", text=speech),
               Turn(turn=2, step=1, phase="opening", kind="opening", speaker="con", label="Opening",
                    text="1. First point - then a list marker")],
        interventions=[Intervention(id=1, type="direct_question", text="- Why?", at="2026-11-23T00:00:00Z",
                                    after_turn=1)])
    markdown = to_markdown(transcript)
    assert f"\n{speech}\n" in markdown, "full stops, hyphens and brackets stay as they are"
    assert "1\\. First point - then a list marker" in markdown, "no list from a speech"
    assert "\\# Heading? \\*\\*bold\\*\\* \\[link\\](http://x) &lt;script&gt;alert(1)&lt;/script&gt; " \
           "&amp;lt;b&amp;gt; \\| cell" in markdown
    assert "<script>" not in markdown and ": \\- Why?" in markdown


def test_a_turn_whose_conversation_outgrows_the_models_context_restarts_from_digests(tmp_path):
    """Characters under the restart threshold can still be too many tokens: the model refuses the prompt
    (context_overflow), and the turn asks again from a conversation restarted from digests, as a long one does."""
    from clearside.errors import ProviderError

    class Cramped(ScriptedProvider):
        """Refuses any prompt holding an earlier turn of the agent's own conversation (a model whose context
        holds only one exchange)."""

        refused = 0

        def _complete(self, request, on_delta):
            if sum(m["role"] == "assistant" for m in request.messages) >= 1:
                Cramped.refused += 1
                raise self.fault("Requested tokens (4142) exceed context window of 4096.", context_overflow=True)
            return super()._complete(request, on_delta)

    provider = Cramped(fallback=LiveResponder())
    debate = LiveDebate.create(QUESTION, provider, config=SLOW, store=open_store())
    turns = [debate.advance() for _ in range(4)]  # pro, con, then each side's second turn
    assert [t.speaker for t in turns] == ["pro", "con", "pro", "con"]
    assert [t.fresh for t in turns] == [False, False, True, True]
    assert Cramped.refused == 2, "each second turn was refused once, then asked again from digests"

    class Refusing(ScriptedProvider):
        def _complete(self, request, on_delta):
            raise self.fault("Requested tokens (5000) exceed context window of 4096.", context_overflow=True)

    failing = LiveDebate.create(QUESTION, Refusing(fallback=LiveResponder()), config=SLOW, store=open_store())
    with pytest.raises(ProviderError, match="exceed context window"):  # nothing to shorten: the call fails as it is
        failing.advance()


def test_a_synthesis_whose_digests_outgrow_the_models_context_asks_again_with_shorter_digests(tmp_path):
    """The moderator's first prompt already holds digests of all twenty turns, so a restart alone cannot shorten
    it: when the model refuses it for its tokens, the digests are cut shorter until the prompt fits, each turn
    still named, and the synthesis is written."""

    class Cramped(ScriptedProvider):
        """A model whose context holds fewer characters than the whole debate's digests."""

        limit, refused, sizes = 4500, 0, []

        def _complete(self, request, on_delta):
            size = sum(len(m["content"]) for m in request.messages)
            if request.agent == "moderator":
                Cramped.sizes.append(size)
                if size > Cramped.limit:
                    Cramped.refused += 1
                    raise self.fault(f"Requested tokens ({size}) exceed context window of 4096.",
                                     context_overflow=True)
            return super()._complete(request, on_delta)

    provider = Cramped(fallback=LiveResponder())
    events = []
    debate = LiveDebate.create(QUESTION, provider, config=SLOW, store=open_store(), on_event=events.append)
    while debate.advance():
        pass
    synthesis = debate.transcript.turns[-1]
    assert synthesis.kind == "synthesis" and synthesis.fresh and synthesis.fields
    assert Cramped.refused >= 1 and Cramped.sizes[-1] <= Cramped.limit < Cramped.sizes[0]
    assert Cramped.sizes == sorted(Cramped.sizes, reverse=True), "each ask is shorter than the one refused"
    final = request_text(provider.requests[-1])
    assert all(f"[Turn {t.turn}]" in final for t in debate.transcript.turns[:-1]), "every turn is still named"
    assert sum(e.kind == "retry" and "exceed context window" in str(e.data) for e in events) == Cramped.refused


def test_digests_cut_to_a_limit_keep_short_ones_whole_and_every_turn_named():
    from clearside.live.context import _caps, visible_block
    from clearside.live.transcript import Turn

    assert _caps([10, 50, 100], 1000) == [10, 50, 100]
    assert _caps([10, 50, 100], 90) == [10, 40, 40]
    assert sum(_caps([7, 300, 301, 5], 100)) <= 100
    turns = [Turn(turn=i, step=i, speaker="pro", kind="closing", phase="closing", label=f"Closing {i}", text="",
                  fields={"summary": [("word " * (5 if i == 1 else 200)).strip()]}) for i in (1, 2, 3)]
    whole, cut = visible_block(turns), visible_block(turns, 600)
    assert len(cut) < len(whole) and len(cut) <= 600 + len("DEBATE TURNS YOU HAVE NOT SEEN YET (DATA):\n") + 3
    assert whole.split("\n")[1:3] == cut.split("\n")[1:3], "the short first digest stays whole"
    assert all(f"[Turn {i}]" in cut for i in (1, 2, 3)) and cut.count("…") == 2
