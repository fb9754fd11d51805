"""``regress`` as a user runs it against an OpenAI-compatible server (``OPENAI_BASE_URL``, ``--provider
openai:MODEL``): bench/latency_server.py on 127.0.0.1 (the OpenAI wire, a fixed pace, the flagship debate's
replies), a one-case suite file, one run. The real model behind the same wire runs in
tests/providers/test_provider_servers.py (a debate, a challenge, live turns, a comparison) and ``regress`` on the
real model in tests/static/test_e2e_embedded.py."""

from __future__ import annotations

import json

from helpers import run_cli

from bench.latency_server import MODEL, start
from clearside.contract import jsonschema_errors
from clearside.quality.batch import batches
from clearside.quality.references import flagship
from clearside.quality.versions import batch_versions


def test_regress_over_an_openai_compatible_server_saves_scores_and_pins_its_base_url(monkeypatch, capsys, store,
                                                                                     tmp_path) -> None:
    """The batch and its run saved, scored, the provider settings (the base URL among them) pinned, and the
    documented exit code: 0 when the batch passes, 1 otherwise; with no baseline yet only the absolute gates can
    fail it."""
    suite = tmp_path / "server-smoke.jsonl"
    suite.write_text(json.dumps({"id": "moratorium", "proposition": flagship().proposition}) + "\n", encoding="utf-8")
    with start(0, ttft=0.05, tps=400) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        out_file = tmp_path / "report.json"
        code, out, err = run_cli(capsys, "regress", "--suite", str(suite), "--runs", "1", "--retries", "1",
                                 "--provider", f"openai:{MODEL}", "--out", str(out_file))
        asked = server.stats()["agents"]
    report = json.loads(out_file.read_text(encoding="utf-8"))
    assert report["baseline"] is None and report["provider"] == f"openai:{MODEL}" and report["runs"] == 1
    gate_failures = [c for c in report["checks"] if c["status"] == "fail"]
    assert report["passed"] == (not gate_failures)
    assert all("gate" in reason and "baseline" not in reason for c in gate_failures for reason in c["reasons"])
    assert code == (0 if report["passed"] else 1), err  # docs: exit 0 on pass, 1 on a regression
    assert out.startswith("# Regression: server-smoke")
    [debate] = report["debates"]
    assert debate["status"] == "done", debate.get("error")
    assert {"orchestrator", "pro", "con", "moderator"} <= set(asked), asked

    [batch] = batches(store, "server-smoke")
    assert batch.id == report["batch"] and batch.spec == f"openai:{MODEL}" and not batch.baseline
    [row] = batch.rows
    assert row["status"] == "done" and row["data"]["item"] == "moratorium" and row["data"]["suite_file"]
    assert row["prompt_versions"] and {"schema_valid", "neutrality_violations", "completion_tokens"} <= set(
        row["metrics"])
    assert row["metrics"]["schema_valid"] == 1.0 and row["metrics"]["completion_tokens"] > 0
    assert report["metrics"]["schema_valid"]["mean"] == 1.0 and report["metrics"]["completion_tokens"]["n"] == 1
    pinned = batch_versions(batch)
    assert pinned["metric_suite"] and pinned["embedding_model"] and pinned["clearside"] and pinned["prompts"]
    assert pinned["provider"] == {"spec": f"openai:{MODEL}", "temperature": 0.4, "retries": 1, "concurrency": 4,
                                  "swap_check": False, "base_url": server.base_url}
    record = store.get(row["debate_id"])
    assert record.status == "done" and jsonschema_errors(record.document) == []
    usage = row["data"]["detail"]["usage"]
    assert usage["available"] and set(usage["agents"]) == {"orchestrator", "pro", "con", "moderator"}
    assert all(a["calls"] >= 1 and a["completion_tokens"] > 0 for a in usage["agents"].values()), usage["agents"]
