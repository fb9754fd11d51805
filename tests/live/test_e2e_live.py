"""One full live debate on the real embedded model through the CLI, with every intervention type: structure only;
and a source file injected as evidence, quoted verbatim by the first two turns (about 40 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clearside.contract import jsonschema_errors
from clearside.live import PLAN, LiveConfig, LiveDebate
from clearside.live.evidence import RULE as QUOTE_RULE
from clearside.live.transcript import Transcript
from clearside.providers import get_provider
from clearside.sources import read_source, split, verify
from clearside.store import open_store

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Should the United States impose a temporary moratorium on new large-scale AI data centers?"
# llama.cpp's threads, pinned (another count sums the floats in another order and samples otherwise), and the seed
# every call's sampler starts from (CLEARSIDE_SEED); the temperature is the live debate's fixed default
THREADS = 2
SEED = 20


def test_full_live_debate_on_the_embedded_model(tmp_path):
    plan = tmp_path / "interventions.json"
    plan.write_text(json.dumps([
        {"after_turn": 1, "type": "inject_evidence", "text": "Data centers used about 4% of US electricity in 2023."},
        {"after_turn": 3, "type": "direct_question", "to": "con", "text": "What would change your mind?"},
        {"after_turn": 4, "type": "clarification", "to": "pro", "text": "What do you mean by grid strain?"},
        {"after_turn": 12, "type": "pause_question", "to": "moderator", "text": "Where do they agree so far?"},
    ]))
    out = tmp_path / "transcript.json"
    env = {**os.environ, "CLEARSIDE_DATA": str(tmp_path / "data"), "CLEARSIDE_THREADS": str(THREADS),
           "CLEARSIDE_SEED": str(SEED)}
    result = subprocess.run(
        [sys.executable, "-m", "clearside", "live", QUESTION, "--words-per-minute", "30",
         "--interventions", str(plan), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=1500, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    transcript = Transcript.model_validate_json(out.read_text(encoding="utf-8"))
    assert transcript.state == "done" and transcript.provider == "embedded"
    planned = [t for t in transcript.turns if t.step is not None]
    assert [(t.phase, t.speaker) for t in planned] == [(s.phase, s.speaker) for s in PLAN]
    for turn in planned:
        assert turn.text.strip() and turn.budget_tokens > 0 and turn.first_token_seconds > 0
        assert len(turn.text.split()) <= round(turn.budget_tokens / 1.3 * 1.2) + 1  # the hard limit holds
    assert jsonschema_errors(transcript.document) == []
    evidence, direct, clarification, pause = transcript.interventions
    assert evidence.status == "delivered" and [transcript.turn(n).speaker for n in evidence.delivered_to] == [
        "con", "pro"]
    assert all(transcript.turn(n).fields.get("evidence_response") for n in evidence.delivered_to)
    assert direct.response and direct.answered_by == "con"
    assert transcript.turn(clarification.answered_in_turn).kind == "clarification"
    assert pause.response and pause.answered_by == "moderator"
    assert "== Moderator synthesis" in result.stdout  # turns were printed as they streamed


def test_a_source_file_injected_as_evidence_is_quoted_verbatim_on_the_embedded_model():
    """The tiny model decodes each quote among the offered passages' own sentences: both openings quote the file,
    and every quote stands word for word in its passage (none asked for again, none removed)."""
    report = (b"# Transit report\n\n"
              b"The 2024 city survey of 3,000 commuters found that 41% would drive less if parking cost more.\n\n"
              b"Bus ridership rose by 12% in the year after the downtown lanes opened. Cycling trips doubled on the "
              b"two protected corridors.\n\n"
              b"Shop owners on the pedestrian streets reported turnover 8% higher than the year before.")
    source = read_source("transit report.md", report)
    provider = get_provider("embedded", n_threads=THREADS, seed=SEED)
    debate = LiveDebate.create("Should cities ban private cars downtown?", provider,
                               config=LiveConfig(words_per_minute=30), store=open_store())
    debate.submit("inject_evidence", "Our city's transit report.", None, source)
    turns = [debate.advance(), debate.advance()]
    passages = {p.id: p.text for p in split(source)}
    assert [t.speaker for t in turns] == ["pro", "con"]
    for turn in turns:
        quote = turn.fields["evidence_quote"]
        assert quote["source"] == "S1" and verify(quote["quote"], passages[quote["passage"]]), quote
        # the quote was kept, never removed (the turn's other guardrail flags judge the tiny model's wording)
        assert turn.fields["evidence_response"].strip() and not [f for f in turn.flags if f["rule"] == QUOTE_RULE], \
            turn.flags
        print(f"{turn.speaker} quotes {quote['passage']}: {quote['quote']!r} ({turn.seconds:.1f} s)")
    assert debate.transcript.interventions[0].status == "delivered"
    assert [s["sha256"] for s in open_store().sources(debate.transcript.id)] == [source.id]
