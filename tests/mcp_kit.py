"""The MCP server under test, reached with the official SDK's own clients: ``python -m clearside mcp`` spawned by
``mcp.client.stdio.stdio_client``, or started with ``--http`` on a free port and reached with
``mcp.client.streamable_http``. Each scenario is an async function run with ``anyio.run`` on one client session."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
from helpers import NORMALIZED, challenge_reply, free_port, orchestrator_reply, script_file, side_reply
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]
CALL_TIMEOUT = timedelta(seconds=120)
COMMAND = ["-m", "clearside", "mcp"]
TOOLS = {"map_question", "challenge_element", "get_debate", "list_cruxes", "list_debates"}


def moderator_with_ids() -> dict[str, Any]:
    """A moderator reply whose conflict quotes each side's first assumption word for word."""
    from helpers import moderator_reply

    reply = moderator_reply()
    reply["assumption_conflicts"][0] |= {"pro_assumption": side_reply("pro")["assumptions"][0],
                                         "con_assumption": side_reply("con")["assumptions"][0]}
    return reply


def script(tmp_path: Path, debates: int = 1, challenges: int = 1, **overrides: Any) -> str:
    """A ``scripted:FILE`` provider answering ``debates`` debates and ``challenges`` challenges."""
    queues = {"orchestrator": [orchestrator_reply()] * debates, "pro": [side_reply("pro")] * debates,
              "con": [side_reply("con")] * debates, "moderator": [moderator_with_ids()] * debates,
              "challenge": [challenge_reply()] * challenges, **overrides}
    return script_file(tmp_path, "mcp-script.json", **queues)


def server_env(database_url: str | None = None) -> dict[str, str]:
    """The server's environment: this test's data folder (and store), lexical checks (no MiniLM: the server's logic
    is under test, not the checks')."""
    env = {**os.environ, "CLEARSIDE_SEMANTIC_CHECKS": "0", "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


class Progress:
    """The progress notifications one call received."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))

    @property
    def messages(self) -> list[str]:
        return [message or "" for _, _, message in self.seen]


async def call(session: ClientSession, tool: str, progress: Progress | None = None, **arguments: Any) -> Any:
    return await session.call_tool(tool, arguments, read_timeout_seconds=CALL_TIMEOUT, progress_callback=progress)


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


@asynccontextmanager
async def stdio_session(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    """A session with ``python -m clearside mcp ARGS`` spawned by the SDK's stdio client (its stderr in a file)."""
    params = StdioServerParameters(command=sys.executable, args=[*COMMAND, *args],
                                   env=env or server_env(), cwd=str(ROOT))
    with open(tmp_path / "mcp-stderr.txt", "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


@contextmanager
def http_server(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """``python -m clearside mcp --http`` on a free port, once it accepts connections; its URL. Stopped (SIGTERM)
    at the end."""
    port = free_port()
    log = tmp_path / "mcp-http-stderr.txt"
    with open(log, "w", encoding="utf-8") as errlog:
        process = subprocess.Popen([sys.executable, *COMMAND, "--http", "--port", str(port), *args],
                                   cwd=ROOT, env=env or server_env(), stdout=subprocess.DEVNULL, stderr=errlog)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text(encoding="utf-8")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    """A session with the server at ``url`` through the SDK's streamable HTTP client (``headers`` on every
    request)."""
    client = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30, read=CALL_TIMEOUT.total_seconds()))
    async with client, streamable_http_client(url, http_client=client) as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return anyio.run(scenario)


def data(result: Any) -> dict[str, Any]:
    """A tool's structured content (its text is the same for a human)."""
    assert result.structuredContent is not None, text(result)
    return json.loads(json.dumps(result.structuredContent))


async def map_and_explore(session: ClientSession, question: str = "Should we adopt microservices architecture?") -> str:
    """Every tool on one debate, as an agent would use them: the tools listed, the question mapped (its progress
    received), the debate fetched three ways, its cruxes, a challenge of an assumption by id, the list searched.
    The debate's id."""
    listed = await session.list_tools()
    assert {tool.name for tool in listed.tools} == TOOLS
    for tool in listed.tools:
        assert len(tool.description or "") > 60 and tool.inputSchema["type"] == "object"
    progress = Progress()
    mapped = await call(session, "map_question", progress, question=question, domain="Software")
    assert not mapped.isError, text(mapped)
    summary = data(mapped)
    debate_id = summary["debate_id"]
    assert summary["question"] == NORMALIZED and "document" not in summary
    assert [a["id"] for a in summary["for"]["arguments"]] == ["pro.arguments.0", "pro.arguments.1", "pro.arguments.2"]
    assert summary["against"]["assumptions"][0]["id"] == "con.assumptions.0"
    assert summary["decision_hinges"][1]["id"] == "moderator.decision_hinges.1"
    shown = text(mapped)
    assert f"Debate {debate_id}: {NORMALIZED}" in shown
    claim = side_reply("pro")["arguments"][0]["claim"]
    assert f"- pro.arguments.0: {claim} [technical; fact; high confidence]" in shown
    assert "Complexity management: Moderator: they disagree on whether complexity is manageable" in shown
    # each agent's progress, as `debate` prints it, the protocol's progress growing call by call
    assert progress.messages[0].startswith(f"Debate {debate_id} saved and queued")
    for line in ("[orchestrator] normalizing the proposition…", "[pro] writing the case FOR…",
                 "[con] writing the case AGAINST…", "[moderator] mapping the disagreement…"):
        assert line in progress.messages, progress.messages
    assert any(m.startswith("[moderator] done in ") and m.endswith(" tokens") for m in progress.messages)
    values = [value for value, _, _ in progress.seen]
    assert values == sorted(set(values))

    document = data(await call(session, "get_debate", debate_id=debate_id, format="json"))["document"]
    assert document["proposition"]["normalized_question"] == NORMALIZED
    assert document["proposition"]["context"]["domain"] == "Software"
    report = await call(session, "get_debate", debate_id=debate_id, format="md")
    assert text(report).startswith(f"# {NORMALIZED}")
    again = await call(session, "get_debate", debate_id=debate_id)
    assert data(again) == summary

    cruxes = await call(session, "list_cruxes", debate_id=debate_id)
    assert text(cruxes).startswith(f"Decision hinges of: {NORMALIZED}")
    assert {h["text"] for h in data(cruxes)["hinges"]} == set(moderator_with_ids()["decision_hinges"])

    progress = Progress()
    answer = await call(session, "challenge_element", progress, debate_id=debate_id, action="question_assumption",
                        target="con.assumptions.0")
    assert not answer.isError, text(answer)
    assumption = side_reply("con")["assumptions"][0]
    assert data(answer)["target"] == assumption  # the id's text is what was challenged
    assert data(answer)["response"]["analysis"] == challenge_reply()["analysis"]
    assert "[challenge] answering the challenge…" in progress.messages
    saved = data(await call(session, "get_debate", debate_id=debate_id, format="json"))["document"]
    assert [r["target"] for r in saved["challenges"]["responses"]] == [assumption]

    found = data(await call(session, "list_debates", search="microservices"))
    assert [row["id"] for row in found["debates"]] == [debate_id] and found["debates"][0]["state"] == "done"
    assert data(await call(session, "list_debates", search="zebra crossings"))["debates"] == []
    return debate_id
