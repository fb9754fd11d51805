"""The HTTP API over real HTTP (``python -m clearside serve`` as a subprocess, a real socket), on SQLite and on
PostgreSQL, its jobs on the latency server (bench/latency_server.py): a debate created, followed as server-sent
events to its end and read; a client that goes away mid-debate loses nothing; challenges, re-maps and every export;
list, search and delete by token; a live debate started, stepped, intervened in and paused; a perspectives session
started; hostile requests answered with the right 4xx and nothing changed; the rate limits per token; two API
processes on one PostgreSQL, one of them running no jobs. One server per database for the whole module."""

from __future__ import annotations

import json
import threading

import api_kit
import pg_kit
import pytest

from bench.latency_server import start
from clearside.quality.references import flagship
from clearside.render import FORMATS
from clearside.schema import Document
from clearside.store import NewDebate
from clearside.store.tokens import revoke_token, tokens

QUESTION = flagship().proposition  # the latency server's replies answer it
AGENTS = ("orchestrator", "pro", "con", "moderator")


@pytest.fixture(scope="module")
def model():
    with start(0, ttft=0.02, tps=4000) as server:
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def api(request, model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("api")
    url = f"sqlite:///{folder / 'store.db'}"
    admin = request.getfixturevalue("postgres_admin") if request.param == "postgresql" else None
    if admin:
        url = pg_kit.new_database(admin)
    served = api_kit.serve(url, folder, model.base_url, "--provider", "openai",
                           env={"CLEARSIDE_DEBATE_STARTS_PER_MINUTE": "3"})
    served.folder = folder
    yield served
    api_kit.stop(served)
    served.store.close()
    if admin:
        pg_kit.drop_database(admin, url)


@pytest.fixture(scope="module")
def finished(api):
    """One debate made through the API and finished: (its id, its owner's token)."""
    token = api.token("finished")
    made = api.request("POST", "/v1/debates", {"question": QUESTION, "geography": "United States"}, token=token)
    assert made.status == 202, made.text
    state = api.wait(made.json()["links"]["self"], token)
    assert state["status"] == "done", (state, api.said())
    return made.json()["id"], token


def test_a_debate_is_queued_followed_as_events_to_its_end_and_read(api):
    token = api.token("follow")
    made = api.request("POST", "/v1/debates", {"question": QUESTION}, token=token)
    assert made.status == 202 and made.json()["status"] == "queued"
    debate_id = made.json()["id"]
    assert made.headers["location"] == f"/v1/debates/{debate_id}"
    events = api.events(made.json()["links"]["events"], token)
    assert events[-1]["event"] == "end" and json.loads(events[-1]["data"])["status"] == "done"
    progress = [json.loads(e["data"]) for e in events if e["event"] == "progress"]
    assert {(p["kind"], p["agent"]) for p in progress} >= {(kind, agent) for agent in AGENTS
                                                          for kind in ("start", "done")}
    assert any(p["kind"] == "delta" for p in progress)  # the text as it streamed
    assert [json.loads(e["data"])["status"] for e in events if e["event"] == "status"][-1] == "done"
    state = api.request("GET", f"/v1/debates/{debate_id}", token=token).json()
    assert state["status"] == "done" and state["sections"] == ["proposition", "pro", "con", "moderator"]
    document = Document.model_validate(api.request("GET", f"/v1/debates/{debate_id}/document", token=token).json())
    assert document.proposition.raw_input == QUESTION
    quiet = api.events(f"/v1/debates/{debate_id}/events?deltas=false", token)  # a finished job: replayed, then end
    assert not [e for e in quiet if e["event"] == "progress" and json.loads(e["data"])["kind"] == "delta"]
    assert quiet[-1]["event"] == "end"
    last = max(int(e["id"]) for e in events if "id" in e)
    resumed = api.events(f"/v1/debates/{debate_id}/events", token, headers={"Last-Event-ID": str(last)})
    assert [e["event"] for e in resumed] in (["status", "end"], ["end"])  # nothing seen is sent again
    description = api.request("GET", "/openapi.json").json()
    assert "Document" in description["components"]["schemas"] and "/v1/debates/{debate_id}/events" in \
        description["paths"]


def test_a_client_that_goes_away_mid_debate_loses_nothing(api, model):
    token = api.token("leaves")
    made = api.request("POST", "/v1/debates", {"question": QUESTION}, token=token).json()
    seen = api.events(made["links"]["events"], token,
                      stop=lambda e: e["event"] == "progress" and json.loads(e["data"])["agent"] == "pro")
    assert seen[-1]["event"] == "progress"  # the connection closed here, mid-debate
    state = api.wait(made["links"]["self"], token)
    assert state["status"] == "done" and state["sections"] == ["proposition", "pro", "con", "moderator"]
    assert api.request("GET", made["links"]["document"], token=token).status == 200


def test_a_challenge_is_added_and_a_remap_saved_as_a_version(api, finished):
    debate_id, token = finished
    hinge = api.request("GET", f"/v1/debates/{debate_id}/document", token=token).json()["moderator"][
        "decision_hinges"][0]  # the latency server answers a challenge of this one
    asked = api.request("POST", f"/v1/debates/{debate_id}/challenges",
                        {"action": "question_assumption", "target": hinge}, token=token)
    assert asked.status == 202, asked.text
    events = api.events(asked.json()["links"]["events"], token)
    ended = json.loads(events[-1]["data"])
    assert ended["status"] == "done" and ended["challenge"] == 1, ended
    after = api.request("GET", f"/v1/debates/{debate_id}/document", token=token).json()
    assert len(after["challenges"]["responses"]) == 1
    remapped = api.request("POST", f"/v1/debates/{debate_id}/remaps", {"weights": {"economic": 3}}, token=token)
    assert remapped.status == 202, remapped.text
    job = api.wait(remapped.json()["links"]["self"], token)
    assert job["status"] == "done" and job["version"] == 1
    listed = api.request("GET", f"/v1/debates/{debate_id}/versions", token=token).json()
    assert [(v["number"], v["label"]) for v in listed] == [(1, "economic 3")]
    version = api.request("GET", f"/v1/debates/{debate_id}/versions/1", token=token)
    assert Document.model_validate(version.json()).proposition.raw_input == QUESTION
    nothing = api.request("POST", f"/v1/debates/{debate_id}/remaps", {"weights": {"economic": 1}}, token=token)
    assert nothing.status == 400 and "weight other than 1" in nothing.error["message"]


def test_every_format_render_knows_is_exported(api, finished):
    debate_id, token = finished
    for fmt in (*FORMATS, "file"):
        got = api.request("GET", f"/v1/debates/{debate_id}/export?format={fmt}", token=token)
        assert got.status == 200 and got.text.strip(), fmt
        assert "attachment" in got.headers["content-disposition"]
        if fmt in ("json", "aif", "file"):
            assert got.headers["content-type"].startswith("application/json") and json.loads(got.text)
    assert "# " in api.request("GET", f"/v1/debates/{debate_id}/export?format=md", token=token).text
    wrong = api.request("GET", f"/v1/debates/{debate_id}/export?format=pdf", token=token)
    assert wrong.status == 400 and "choose one of: json, md" in wrong.error["message"]


def test_a_token_lists_searches_and_deletes_only_its_own_debates(api, finished):
    debate_id, owner = finished
    other, admin = api.token("other"), api.token("admin", admin=True)
    mine = api.request("GET", "/v1/debates?search=moratorium", token=owner).json()
    assert [item["id"] for item in mine["items"]] == [debate_id] and mine["items"][0]["status"] == "done"
    assert api.request("GET", "/v1/debates?search=nowordlikethis", token=owner).json()["total"] == 0
    assert api.request("GET", "/v1/debates", token=other).json() == {"items": [], "total": 0, "limit": 50,
                                                                     "offset": 0}
    cli_made = api.store.create(NewDebate("static", "Should we adopt microservices?", provider="scripted", model="",
                                          status="paused"))  # the command line's: nobody's
    everyone = api.request("GET", "/v1/debates?limit=200", token=admin).json()
    assert {debate_id, cli_made} <= {item["id"] for item in everyone["items"]}
    assert cli_made not in {item["id"] for item in api.request("GET", "/v1/debates", token=owner).json()["items"]}
    assert api.request("GET", f"/v1/debates/{cli_made}", token=owner).status == 404
    assert api.request("GET", f"/v1/debates/{debate_id}", token=admin).status == 200
    copy = api.request("POST", "/v1/debates", {"question": QUESTION}, token=other).json()
    api.wait(copy["links"]["self"], other)
    before = api_kit.snapshot(api.store)
    refused = api.request("DELETE", f"/v1/debates/{copy['id']}", token=owner)
    assert refused.status == 404 and refused.error["type"] == "NotFound"
    assert api_kit.snapshot(api.store) == before
    assert api.request("DELETE", f"/v1/debates/{copy['id']}", token=other).status == 204
    assert api.request("GET", f"/v1/debates/{copy['id']}", token=other).status == 404
    assert not api.store.exists(copy["id"])


def test_a_live_debate_is_started_stepped_intervened_in_and_paused(api):
    token = api.token("live")
    made = api.request("POST", "/v1/live", {"question": QUESTION, "step_mode": True}, token=token)
    assert made.status == 202, made.text
    live = made.json()["links"]["document"]
    assert live == f"/v1/live/{made.json()['id']}"
    assert api.wait(live, token, until=("waiting",))["status"] == "waiting"
    said = api.request("POST", f"{live}/interventions", {"type": "clarification", "text": "Count small towns too."},
                       token=token)
    assert said.status == 202 and said.json()["intervention"]["status"] == "queued"
    assert api.request("POST", f"{live}/step", token=token).status == 200
    state = api.wait(live, token, until=lambda s: s["status"] == "failed" or s["transcript"]["turns"])
    assert state["status"] in ("waiting", "running") and state["transcript"]["turns"], state
    assert api.request("POST", f"{live}/pause", token=token).json()["status"] in ("pausing", "paused", "waiting")
    assert api.request("GET", f"/v1/debates/{made.json()['id']}", token=token).json()["kind"] == "live"
    stopped = api.request("POST", f"/v1/debates/{made.json()['id']}/cancel", token=token).json()
    assert stopped["status"] in ("cancelled", "paused", "failed"), stopped
    api.wait(live, token, until=("cancelled", "done", "failed"))
    assert api.request("POST", "/v1/live", {"question": ""}, token=token).status == 400


def test_a_perspectives_session_asks_its_questions(api):
    token = api.token("perspectives")
    made = api.request("POST", "/v1/perspectives", {"question": "Should I move to another city for a new job?",
                                                    "rounds": 1}, token=token)
    assert made.status == 202, made.text
    session = api.wait(f"/v1/perspectives/{made.json()['id']}", token, until=("waiting", "failed", "done"))
    assert session["status"] in ("waiting", "failed"), session  # the latency server's clarifier
    if session["status"] == "waiting":
        assert session["questions"]
        wrong = api.request("POST", f"/v1/perspectives/{made.json()['id']}/answers", {"answers": []}, token=token)
        assert wrong.status == 400 and "clarifying questions" in wrong.error["message"]


HUGE = {"question": "x" * 70_000}


def test_hostile_requests_get_the_right_4xx_and_change_nothing(api, finished):
    debate_id, owner = finished
    other = api.token("hostile")
    revoked = api.token("revoked")
    revoke_token(api.store, next(t.id for t in tokens(api.store) if t.name == "revoked"))
    before = api_kit.snapshot(api.store)
    cases = [
        ("GET", "/v1/debates", None, {}, None, 401, "No API token"),
        ("GET", "/v1/debates", None, {"Authorization": "Basic abc"}, None, 401, "must be `Bearer"),
        ("GET", "/v1/debates", None, {}, "cs_" + "x" * 43, 401, "Unknown API token"),
        ("GET", "/v1/debates", None, {}, revoked, 401, "was revoked"),
        ("POST", "/v1/debates", b"{not json", {}, owner, 400, "not valid JSON"),
        ("POST", "/v1/debates", HUGE, {}, owner, 413, "over the limit"),
        ("POST", "/v1/debates", {"question": "x" * 600}, {}, owner, 400, "500"),
        ("POST", "/v1/debates", {"question": QUESTION, "temperature": 9}, {}, owner, 422, "temperature"),
        ("POST", "/v1/debates", {"question": QUESTION, "provider": "openai:x"}, {}, owner, 422, "provider"),
        ("GET", "/v1/debates/" + "0" * 32, None, {}, owner, 404, "No saved debate"),
        ("GET", "/v1/debates/../../etc/passwd", None, {}, owner, 404, ""),
        ("GET", f"/v1/debates/{debate_id}", None, {}, other, 404, "No saved debate"),
        ("GET", f"/v1/debates/{debate_id}/document", None, {}, other, 404, "No saved debate"),
        ("GET", f"/v1/debates/{debate_id}/events", None, {}, other, 404, "No saved debate"),
        ("GET", f"/v1/debates/{debate_id}/export?format=md", None, {}, other, 404, "No saved debate"),
        ("DELETE", f"/v1/debates/{debate_id}", None, {}, other, 404, "No saved debate"),
        ("POST", f"/v1/debates/{debate_id}/challenges", {"action": "question_source", "target": "x"}, {}, other, 404,
         "No saved debate"),
        ("POST", f"/v1/debates/{debate_id}/challenges", {"action": "guess", "target": "x"}, {}, owner, 422, "action"),
        ("POST", f"/v1/debates/{debate_id}/remaps", {"weights": {"economic": 7}}, {}, owner, 422, "economic"),
        ("GET", f"/v1/debates/{debate_id}/jobs/{'0' * 32}:remap:abc", None, {}, owner, 404, "has no job"),
        ("GET", f"/v1/debates/{debate_id}/jobs/{debate_id}:remap:abc", None, {}, owner, 404, "No job"),
        ("GET", f"/v1/debates/{debate_id}/jobs/{'0' * 32}:remap:abc", None, {}, other, 404, "No saved debate"),
        ("POST", f"/v1/live/{debate_id}/pause", None, {}, owner, 400, "not a live one"),
        ("PUT", "/v1/debates", {}, {}, owner, 405, "does not take that method"),
        ("GET", "/v1/nothing", None, {}, owner, 404, "No such endpoint"),
    ]
    unknown = api.request("GET", "/v1/debates/" + "0" * 32, token=owner).error["message"]
    assert api.request("GET", f"/v1/debates/{debate_id}", token=other).error["message"] == unknown.replace(
        "0" * 32, debate_id)  # another token's debate reads exactly as an unknown one
    for method, path, body, headers, token, status, words in cases:
        raw = body if isinstance(body, bytes) else None
        got = api.request(method, path, None if raw else body, raw=raw, token=token, headers=headers)
        assert got.status == status, (method, path, got.status, got.text)
        assert words in got.error["message"], (method, path, got.text)
        assert set(got.error) == {"type", "message", "exit_code"}
    chunked = api_kit.chunked(api.port, "/v1/debates", b" " * 70_000, owner)
    assert chunked.status == 413, chunked.text
    assert api_kit.snapshot(api.store) == before


def test_the_rate_limit_holds_per_token(api):
    token, other = api.token("busy"), api.token("calm")
    made = [api.request("POST", "/v1/debates", {"question": QUESTION}, token=token) for _ in range(3)]
    assert [m.status for m in made] == [202, 202, 202]
    before = api_kit.snapshot(api.store)["debates"]
    refused = api.request("POST", "/v1/debates", {"question": QUESTION}, token=token)
    assert refused.status == 429 and int(refused.headers["retry-after"]) >= 1
    assert refused.error["message"].startswith("Debate starts are limited to 3 a minute in each API token.")
    assert [d[0] for d in api_kit.snapshot(api.store)["debates"]] == [d[0] for d in before]
    assert api.request("POST", "/v1/debates", {"question": ""}, token=other).status == 400  # its own limit
    for item in made:
        assert api.wait(item.json()["links"]["self"], token)["status"] == "done"


def test_a_second_api_process_running_no_jobs_shares_the_store(api, model):
    if not api.url.startswith("postgresql"):
        pytest.skip("several API processes share one PostgreSQL")
    front = api_kit.serve(api.url, api.folder, model.base_url, "--provider", "openai", "--workers-here", "0",
                          store=api.store)
    try:
        token = api.token("front")
        made = front.request("POST", "/v1/debates", {"question": QUESTION}, token=token).json()
        events = front.events(made["links"]["events"], token)
        assert json.loads(events[-1]["data"])["status"] == "done"  # run by the first process's host
        assert api.request("GET", made["links"]["document"], token=token).status == 200
        assert "running no jobs here" in front.said()
    finally:
        api_kit.stop(front)


def test_a_debate_deleted_while_followed_stops_and_its_stream_says_so(api):
    token = api.token("deletes")
    made = api.request("POST", "/v1/debates", {"question": QUESTION}, token=token).json()
    seen: list[dict[str, str]] = []
    reader = threading.Thread(target=lambda: seen.extend(api.events(made["links"]["events"], token)))
    reader.start()
    api.wait(made["links"]["self"], token, until=lambda s: s["sections"] or s["status"] not in ("queued",))
    assert api.request("DELETE", made["links"]["self"], token=token).status == 204
    reader.join(timeout=60)
    assert not reader.is_alive() and seen
    last = json.loads(seen[-1]["data"])
    assert (seen[-1]["event"], last.get("type")) == ("error", "NotFound") or \
        (seen[-1]["event"] == "end" and last["status"] in ("cancelled", "paused", "done")), seen[-1]
    assert not api.store.exists(made["id"])
    assert api.request("GET", made["links"]["self"], token=token).status == 404
