"""One debate through the HTTP API on the real default, the embedded model (SmolLM2-135M, in the ``serve``
process's own runtime host): created, followed as server-sent events to its end, its document read. Structure,
never wording: the tiny model's debate is clean, or fails typed with every finished section kept (as the command
line's e2e test allows)."""

from __future__ import annotations

import json

import api_kit
import pytest

from clearside.contract import jsonschema_errors
from clearside.schema import Document

pytestmark = [pytest.mark.model, pytest.mark.timeout(1800)]  # 2-3 min on a quiet 2-core machine; far more under load
QUESTION = ("Should the United States impose a temporary moratorium on new large-scale AI data centers to allow "
            "democratic institutions to catch up?")


def test_a_debate_through_the_api_on_the_embedded_model(tmp_path):
    api = api_kit.serve(f"sqlite:///{tmp_path / 'store.db'}", tmp_path, None,
                        env={"CLEARSIDE_THREADS": "2", "CLEARSIDE_SEED": "20", "CLEARSIDE_SEMANTIC_CHECKS": "1"})
    try:
        token = api.token("model")
        made = api.request("POST", "/v1/debates", {"question": QUESTION}, token=token)
        assert made.status == 202, made.text
        events = api.events(made.json()["links"]["events"], token, timeout=900)
        end = json.loads(events[-1]["data"])
        assert events[-1]["event"] == "end" and end["status"] in ("done", "failed"), (end, api.said())
        started = {json.loads(e["data"])["agent"] for e in events if e["event"] == "progress"
                   and json.loads(e["data"])["kind"] == "start"}
        assert {"orchestrator", "pro", "con"} <= started
        if end["status"] == "failed":
            assert "substance checks" in end["error"] or "broke the ClearSide schema" in end["error"], end
            assert "proposition" in end["sections"]
            assert api.request("GET", made.json()["links"]["document"], token=token).status == 409
            return
        document = api.request("GET", made.json()["links"]["document"], token=token).json()
        assert jsonschema_errors(document) == []
        doc = Document.model_validate(document)
        assert doc.proposition.raw_input == QUESTION and doc.meta.model_info.provider == "embedded"
        assert doc.pro.arguments and doc.con.arguments and doc.moderator.decision_hinges
    finally:
        api_kit.stop(api)
