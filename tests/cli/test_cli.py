"""The command line: exact spellings, outputs and exit codes (0 ok, 2 bad input, 3 unreachable, 4 schema)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import challenge_reply, fixture_dict, free_port, full_script, script_file, side_reply

from clearside.contract import jsonschema_errors
from clearside.schema import Document

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "clearside", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_debate_json_on_stdout_progress_on_stderr(tmp_path):
    result = cli("debate", "Should we adopt microservices?", "--provider", full_script(tmp_path),
                 "--geography", "Europe")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert jsonschema_errors(document) == []
    assert document["proposition"]["context"]["geography"] == "Europe"
    for agent in ("orchestrator", "pro", "con", "moderator"):
        assert f"[{agent}]" in result.stderr
    assert "done in" in result.stderr


@pytest.mark.parametrize(("fmt", "marker"), [("md", "## FOR the proposition"), ("quick", "AGAINST"),
                                             ("script", "OPENING STATEMENTS")])
def test_debate_formats_written_to_file(tmp_path, fmt, marker):
    out = tmp_path / f"debate.{fmt}"
    result = cli("debate", "Should we adopt microservices?", "--provider", full_script(tmp_path),
                 "--format", fmt, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    text = out.read_text(encoding="utf-8")
    assert marker in text
    assert side_reply("pro")["arguments"][0]["claim"] in text


def test_challenge_appends_one_response(tmp_path):
    debate = tmp_path / "debate.json"
    debate.write_text(json.dumps(fixture_dict()), encoding="utf-8")
    out = tmp_path / "challenged.json"
    target = "The organization has sufficient DevOps maturity"
    result = cli("challenge", str(debate), "--action", "question_assumption", "--target", target,
                 "--provider", script_file(tmp_path, challenge=[challenge_reply()]), "--out", str(out))
    assert result.returncode == 0, result.stderr
    updated = json.loads(out.read_text(encoding="utf-8"))
    Document.model_validate(updated)
    responses = updated["challenges"]["responses"]
    assert len(responses) == 1
    assert responses[0]["action"] == "question_assumption"
    assert responses[0]["target"] == target
    assert updated["pro"] == fixture_dict()["pro"]


@pytest.mark.parametrize("args", [
    ("debate", ""),
    ("debate", "   \n\t "),
    ("debate", "x" * 501),
    ("debate", "Valid?", "--provider", "nosuch"),
    ("debate", "Valid?", "--format", "pdf"),
    ("debate",),
    ("challenge", "missing-file.json", "--action", "question_assumption", "--target", "x"),
])
def test_bad_input_exits_2_with_a_message(args):
    result = cli(*args)
    assert result.returncode == 2
    assert result.stderr.strip(), "a refusal must say what is wrong"
    assert result.stdout == ""


def test_oversized_question_message_names_the_count():
    result = cli("debate", "y" * 612)
    assert result.returncode == 2
    assert "612" in result.stderr and "500" in result.stderr


def test_malformed_or_invalid_debate_file_exits_2(tmp_path):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json", encoding="utf-8")
    invalid = tmp_path / "invalid.json"
    data = fixture_dict()
    del data["moderator"]
    invalid.write_text(json.dumps(data), encoding="utf-8")
    for path in (bad_json, invalid):
        result = cli("challenge", str(path), "--action", "question_assumption", "--target", "x")
        assert result.returncode == 2, result.stderr
        assert str(path.name) in result.stderr or "moderator" in result.stderr


def test_unknown_action_and_empty_target_exit_2(tmp_path):
    debate = tmp_path / "debate.json"
    debate.write_text(json.dumps(fixture_dict()), encoding="utf-8")
    assert cli("challenge", str(debate), "--action", "flip_a_coin", "--target", "x").returncode == 2
    empty = cli("challenge", str(debate), "--action", "question_assumption", "--target", "  ")
    assert empty.returncode == 2
    assert "empty" in empty.stderr.lower()


def test_unreachable_provider_exits_3(tmp_path):
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "clearside", "debate", "Valid question?", "--provider", "ollama:llama3.2"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"OLLAMA_HOST": f"127.0.0.1:{port}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 3, result.stderr
    assert "ollama serve" in result.stderr


def test_schema_failure_after_retries_exits_4_and_keeps_finished_sections(tmp_path):
    out = tmp_path / "debate.json"
    broken = {"areas_of_agreement": ["Only one key is here"]}
    result = cli("debate", "Should we adopt microservices?", "--provider",
                 full_script(tmp_path, moderator=[broken, broken, broken]), "--out", str(out))
    assert result.returncode == 4, result.stderr
    assert "moderator" in result.stderr
    assert "re-asking" in result.stderr
    assert not out.exists()
    partial = json.loads(Path(f"{out}.partial.json").read_text(encoding="utf-8"))
    assert set(partial["sections"]) == {"proposition", "pro", "con"}
    assert len(partial["violations"]) == 3


def test_the_temperature_flag_reaches_every_request(capsys, monkeypatch):
    """``--temperature`` is what each call of the debate sends the model server (the default is 0.4), as the real
    server on 127.0.0.1 received it (tests/fault_server.py)."""
    from fault_server import MODEL, FaultServer
    from helpers import run_cli

    from clearside.quality.references import flagship

    with FaultServer().start() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, out, err = run_cli(capsys, "debate", flagship().proposition, "--provider", f"openai:{MODEL}",
                                 "--temperature", "0.9")
    assert code == 0, err
    assert jsonschema_errors(json.loads(out)) == []
    assert sorted(agent for agent, _ in server.served) == ["con", "moderator", "orchestrator", "pro"]
    assert [r["body"]["temperature"] for r in server.received] == [0.9] * 4


def test_retries_flag_bounds_the_attempts(tmp_path):
    broken = "this is not JSON at all"
    log = tmp_path / "violations.jsonl"
    result = cli("debate", "Q about services?", "--provider", full_script(tmp_path, moderator=[broken] * 5),
                 "--retries", "0", "--violations-log", str(log))
    assert result.returncode == 4
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r["attempt"] for r in records] == [1]
    assert records[0]["agent"] == "moderator" and records[0]["raw"] == broken


def test_render_and_schema_commands(tmp_path):
    debate = tmp_path / "debate.json"
    debate.write_text(json.dumps(fixture_dict()), encoding="utf-8")
    rendered = cli("render", str(debate), "--format", "md")
    assert rendered.returncode == 0 and "Decision hinges" in rendered.stdout
    printed = cli("schema")
    assert printed.returncode == 0
    assert json.loads(printed.stdout)["$schema"].endswith("2020-12/schema")
