"""``python -m clearside mcp --http``: a real server on a free port of 127.0.0.1, reached with the official SDK's
streamable HTTP client with the HTTP API's tokens: every tool on one debate with its progress, a refusal as a tool
error, a token's debates hidden from other tokens, its rate limits, missing and revoked tokens refused, and the
transport's exposure rules (another site's Host or Origin refused, what counts as this machine, --host without
--http refused)."""

from __future__ import annotations

import httpx
import pytest
from mcp_kit import call, data, http_server, http_session, map_and_explore, run, script, server_env, text

from clearside.cli import main
from clearside.mcp import server
from clearside.store.tokens import create_token, revoke_token


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_an_agent_maps_a_question_and_explores_the_debate_over_streamable_http(tmp_path, store):
    """Every tool with an API token; another token sees nothing of it, an admin token sees it; no token, an unknown
    or a revoked one is refused before the MCP layer; another site's page cannot reach it."""
    _, secret = create_token(store, "agent")
    _, other = create_token(store, "someone else")
    _, admin = create_token(store, "admin", admin=True)
    revoked, revoked_secret = create_token(store, "gone")
    revoke_token(store, revoked.id)
    limits = {"CLEARSIDE_DEBATE_STARTS_PER_MINUTE": "1", "CLEARSIDE_CHALLENGES_PER_MINUTE": "1"}  # per token
    with http_server(tmp_path, "--provider", script(tmp_path), env={**server_env(), **limits}) as url:
        async def scenario():
            async with http_session(url, bearer(secret)) as session:
                debate_id = await map_and_explore(session)
                refused = await call(session, "get_debate", debate_id="f" * 32)
                assert refused.isError and text(refused).startswith("error: No saved debate has the id ffff")
                assert data(refused)["error"] == "NotFound"
                again = await call(session, "map_question", question="Should we adopt microservices?")
                assert data(again)["error"] == "RateLimited", text(again)
                assert "Debate starts are limited to 1 a minute in each API token." in text(again)
                again = await call(session, "challenge_element", debate_id=debate_id, action="question_assumption",
                                   target="pro.assumptions.0")
                assert "Challenges are limited to 1 a minute in each API token." in text(again)
            async with http_session(url, bearer(other)) as session:  # another token's debate is an unknown one
                for tool, more in (("get_debate", {}), ("list_cruxes", {}), ("challenge_element", {
                        "action": "question_assumption", "target": "pro.assumptions.0"})):
                    hidden = await call(session, tool, debate_id=debate_id, **more)
                    assert hidden.isError and data(hidden)["error"] == "NotFound", text(hidden)
                    assert f"No saved debate has the id {debate_id}." in text(hidden)
                assert data(await call(session, "list_debates"))["debates"] == []
            async with http_session(url, bearer(admin)) as session:
                assert [row["id"] for row in data(await call(session, "list_debates"))["debates"]] == [debate_id]
                assert not (await call(session, "get_debate", debate_id=debate_id)).isError

        run(scenario)
        hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        for sent, says in (({}, "No API token"), (bearer("cs_" + "A" * 43), "Unknown API token"),
                           (bearer(revoked_secret), f"The API token {revoked.id} was revoked")):
            answer = httpx.post(url, json=hello, headers={**headers, **sent})
            assert answer.status_code == 401 and answer.headers["WWW-Authenticate"] == "Bearer"
            assert answer.json()["error"]["type"] == "Unauthorized" and says in answer.json()["error"]["message"]
        # another site's page cannot reach it through the browser (DNS rebinding): the SDK checks Host and Origin
        headers |= bearer(secret)
        assert httpx.post(url, json=hello, headers={**headers, "Host": "evil.example:80"}).status_code == 421
        assert httpx.post(url, json=hello, headers={**headers, "Origin": "http://evil.example"}).status_code == 403


@pytest.mark.parametrize(("host", "local"), [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                              ("[::1]", True), ("0.0.0.0", False), ("192.168.1.20", False),
                                              ("example.org", False)])
def test_only_loopback_addresses_count_as_this_machine(host, local):
    assert server.loopback(host) is local


def test_host_and_port_go_with_http_only(capsys):
    assert main(["mcp", "--host", "0.0.0.0"]) == 2
    assert "--host and --port go with --http" in capsys.readouterr().err
    assert main(["mcp", "--http", "--port", "70000"]) == 2
    assert "--port is 70000: give a port from 1 to 65535." in capsys.readouterr().err


def test_the_commands_defaults_are_the_servers():
    from clearside.cli import mcp as command

    assert (command.DEFAULT_HOST, command.DEFAULT_PORT) == (server.DEFAULT_HOST, server.DEFAULT_PORT)
