"""One full live debate on the real embedded model through the CLI, with every intervention type: structure only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clearside.live import PLAN
from clearside.live.transcript import Transcript
from clearside.schema import jsonschema_errors

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Should the United States impose a temporary moratorium on new large-scale AI data centers?"


def test_full_live_debate_on_the_embedded_model(tmp_path):
    plan = tmp_path / "interventions.json"
    plan.write_text(json.dumps([
        {"after_turn": 1, "type": "inject_evidence", "text": "Data centers used about 4% of US electricity in 2023."},
        {"after_turn": 3, "type": "direct_question", "to": "con", "text": "What would change your mind?"},
        {"after_turn": 4, "type": "clarification", "to": "pro", "text": "What do you mean by grid strain?"},
        {"after_turn": 12, "type": "pause_question", "to": "moderator", "text": "Where do they agree so far?"},
    ]))
    out = tmp_path / "transcript.json"
    env = {**os.environ, "CLEARSIDE_DATA": str(tmp_path / "data")}
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
