"""``python -m clearside mcp`` over stdio, spawned by the official SDK's stdio client as an MCP client would: every
tool on a debate run on the durable runtime (SQLite, then the map on PostgreSQL), progress notifications received,
refusals as tool errors carrying the command line's messages, and a cancelled call. One test maps a question on the
embedded model."""

from __future__ import annotations

import json

import anyio
import pytest
from helpers import NORMALIZED, side_reply
from mcp import types
from mcp.shared.exceptions import McpError
from mcp_kit import Progress, call, data, map_and_explore, run, script, server_env, stdio_session, text

from clearside.errors import InputError, NotFound
from clearside.inputs import MAX_QUESTION, question


def test_an_agent_maps_a_question_and_explores_the_debate_over_stdio(tmp_path):
    async def scenario():
        async with stdio_session(tmp_path, "--provider", script(tmp_path)) as session:
            await map_and_explore(session)

    run(scenario)


def _refused(result) -> str:
    assert result.isError, text(result)
    return text(result)


def test_refusals_are_tool_errors_with_the_command_lines_messages(tmp_path, store):
    unknown = "0" * 32
    with pytest.raises(NotFound) as not_found:
        store.get(unknown)
    with pytest.raises(InputError) as too_long:
        question("x" * (MAX_QUESTION + 1))

    # two debates' replies but no moderator: the first fails at its last agent, the second is cancelled while its
    # FOR advocate thinks
    thinking = {"__delay__": 3, "reply": side_reply("pro")}  # its reply, once it streams, is stopped at a token
    slow = script(tmp_path, debates=2, moderator=[], pro=[side_reply("pro"), thinking])

    async def scenario():
        async with stdio_session(tmp_path, "--provider", slow) as session:
            result = await call(session, "get_debate", debate_id=unknown)
            assert _refused(result) == f"error: {not_found.value}"
            assert data(result) == {"error": "NotFound", "message": str(not_found.value), "exit_code": 2}
            assert _refused(await call(session, "list_cruxes", debate_id=unknown)) == f"error: {not_found.value}"
            result = await call(session, "map_question", question="x" * (MAX_QUESTION + 1))
            assert _refused(result) == f"error: {too_long.value}"  # "Question is 501 characters long; ..."
            assert "Context geography is 121 characters long" in _refused(
                await call(session, "map_question", question="Open on Sundays?", geography="y" * 121))
            assert data(await call(session, "list_debates"))["debates"] == []  # nothing saved for a refusal
            assert "limit is 0: give 1 to 100." in _refused(await call(session, "list_debates", limit=0))
            bad = _refused(await call(session, "challenge_element", debate_id=unknown, action="verdict",
                                      target="pro.arguments.0"))
            assert "question_assumption" in bad  # the SDK's validation names the actions there are
            assert "kialo" in _refused(await call(session, "get_debate", debate_id=unknown, format="pdf"))

            progress = Progress()
            failed = await call(session, "map_question", progress, question="Should we adopt microservices?")
            message = _refused(failed)
            debate_id = progress.messages[0].split()[1]
            assert "no response left for the moderator agent" in message
            assert f"`python -m clearside debate --resume {debate_id}` completes it" in message
            assert "[moderator] failed" in progress.messages
            listed = data(await call(session, "list_debates"))["debates"]
            assert [(row["id"], row["state"], row.get("missing")) for row in listed] == [
                (debate_id, "failed", ["the moderator's synthesis"])]
            assert _refused(await call(session, "get_debate", debate_id=debate_id)) == (
                f"error: Debate {debate_id} has no finished document yet (status failed).")
            assert "Only a finished debate can be challenged" in _refused(await call(
                session, "challenge_element", debate_id=debate_id, action="stronger_counterargument",
                target="pro.arguments.0"))
            return await cancelled_while_it_runs(session)

    cancelled = run(scenario)
    assert {"proposition", "con"} <= set(store.sections(cancelled)) and "pro" not in store.sections(cancelled)


async def cancelled_while_it_runs(session) -> str:
    """A client that cancels map_question cancels the debate, as Ctrl+C does `debate`: what finished stays saved."""
    progress = Progress()
    request_id = session._request_id  # the id the SDK gives the next request

    async def mapping() -> None:
        with pytest.raises(McpError, match="Request cancelled"):
            await call(session, "map_question", progress, question="Should we adopt microservices?")

    async with anyio.create_task_group() as group:
        group.start_soon(mapping)
        with anyio.fail_after(60):
            while "[pro] writing the case FOR…" not in progress.messages:
                await anyio.sleep(0.05)
        await session.send_notification(types.ClientNotification(types.CancelledNotification(
            params=types.CancelledNotificationParams(requestId=request_id, reason="the user changed their mind"))))
    debate_id = progress.messages[0].split()[1]
    with anyio.fail_after(30):  # the step in flight stops at its next token and says so
        while (await listed(session, debate_id))["state"] != "paused":
            await anyio.sleep(0.1)
    assert _refused(await call(session, "get_debate", debate_id=debate_id)) == (
        f"error: Debate {debate_id} has no finished document yet (status paused).")
    return debate_id


async def listed(session, debate_id: str) -> dict:
    (row,) = [row for row in data(await call(session, "list_debates"))["debates"] if row["id"] == debate_id]
    return row


@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_the_map_tool_runs_on_postgresql(tmp_path, store_url):
    """The map on a PostgreSQL store, its whole document asked for too."""
    async def scenario():
        env = server_env(store_url)
        async with stdio_session(tmp_path, "--provider", script(tmp_path), env=env) as session:
            progress = Progress()
            mapped = await call(session, "map_question", progress, question="Should we adopt microservices?",
                                full_document=True)
            assert not mapped.isError, text(mapped)
            debate_id = data(mapped)["debate_id"]
            assert "[moderator] mapping the disagreement…" in progress.messages
            summary, document = mapped.content  # the summary, then the whole document, also as data
            assert summary.text.startswith(f"Debate {debate_id}: ")
            assert json.loads(document.text) == data(mapped)["document"]
            assert data(mapped)["document"]["proposition"]["normalized_question"] == NORMALIZED
            assert data(await call(session, "list_debates"))["debates"][0]["id"] == debate_id
            return debate_id

    debate_id = run(scenario)
    from clearside.store import open_store

    saved = open_store(store_url).get(debate_id)
    assert saved.status == "done" and saved.document["proposition"]["normalized_question"] == NORMALIZED


@pytest.mark.model
def test_the_embedded_model_maps_a_question_over_stdio(tmp_path):
    """The default provider, as a client configured with just `python -m clearside mcp` gets it: the summary, or
    (as tests/static/test_e2e_embedded.py allows the tiny model) the typed failure naming the checks, its finished
    sections kept. Either way each agent's progress arrived."""
    env = server_env()
    env.pop("CLEARSIDE_SEMANTIC_CHECKS")

    async def scenario():
        async with stdio_session(tmp_path, env=env) as session:
            progress = Progress()
            mapped = await session.call_tool("map_question", {"question": "Should a small bakery open on Sundays?"},
                                             progress_callback=progress)
            assert "[pro] writing the case FOR…" in progress.messages, progress.messages
            if mapped.isError:
                assert data(mapped)["exit_code"] == 4, text(mapped)
                assert "substance checks" in text(mapped) or "broke the ClearSide schema" in text(mapped)
                assert "keeps its finished sections" in text(mapped)
                return
            summary = data(mapped)
            assert summary["for"]["arguments"] and summary["against"]["arguments"] and summary["decision_hinges"]
            assert "[moderator] mapping the disagreement…" in progress.messages
            assert f"Debate {summary['debate_id']}:" in text(mapped)

    run(scenario)
