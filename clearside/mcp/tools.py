"""The MCP tools: map both sides of a question, challenge an element, fetch a saved debate, list its cruxes, list
and search saved debates.

Each tool runs :mod:`clearside.mcp.work` on a worker thread and answers with text an agent reads (the summary, a
rendering) and the same as structured data. A refusal or a failure is a tool error (``isError``) whose text is the
command line's ``error: ...`` line, with the error's class and exit code as data. A running debate or challenge
reports each agent's progress as MCP progress notifications (when the client sent a progress token); a client
that cancels the call cancels the job, as Ctrl+C does on the command line (what finished stays saved).
"""

import functools
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.fastmcp import Context, FastMCP
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ..errors import ClearSideError
from ..inputs import MAX_CONTEXT_FIELD, MAX_QUESTION, MAX_TARGET
from . import summary, work
from .auth import caller_of

DebateId = Annotated[str, Field(description="A saved debate's id (32 hex characters), as map_question or "
                                            "list_debates gives it.")]
Action = Literal["question_assumption", "stronger_counterargument", "evidence_that_changes_outcome",
                 "question_source"]
Format = Literal["summary", "json", "md", "quick", "script", "argdown", "aif", "kialo"]
ContextField = Annotated[str | None, Field(description=f"Optional, at most {MAX_CONTEXT_FIELD} characters.")]


def result(text: str, data: dict[str, Any], *more: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=part) for part in (text, *more)],
                          structuredContent=data)


def failure(exc: ClearSideError) -> CallToolResult:
    """The error as the command line says it (``error: ...``), its class and exit code as data."""
    return CallToolResult(content=[TextContent(type="text", text=f"error: {exc}")], isError=True,
                          structuredContent={"error": type(exc).__name__, "message": str(exc),
                                             "exit_code": exc.exit_code})


def refusals(tool: Callable[..., Awaitable[CallToolResult]]) -> Callable[..., Awaitable[CallToolResult]]:
    """A tool whose ClearSide errors come back as tool errors with the command line's message."""

    @functools.wraps(tool)
    async def guarded(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            return await tool(*args, **kwargs)
        except ClearSideError as exc:
            return failure(exc)

    return guarded


class Reporter:
    """Progress notifications for one call: each line a notification, its progress the count of lines so far
    (the protocol wants it to grow; how many lines a job writes is not known ahead)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx, self.count = ctx, 0

    async def say(self, line: str) -> None:
        self.count += 1
        await self.ctx.report_progress(self.count, None, line)

    def from_thread(self, line: str) -> None:
        anyio.from_thread.run(self.say, line)


async def followed(job_id: str, store_url: str, reporter: Reporter, cancel: Callable[[], None]) -> Any:
    """Follow a job on a worker thread, its progress reported; the final state. A cancelled call cancels the job."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(work.follow, job_id, store_url, reporter.from_thread, stop,
                                              abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        stop.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(cancel)
        raise


class Tools:
    """The tools, running with the server's ``settings`` (its store, provider and temperature)."""

    def __init__(self, settings: work.Settings) -> None:
        self.settings = settings
        self.store = settings.store

    @refusals
    async def map_question(
            self,
            question: Annotated[str, Field(description=f"The decision or claim to examine, in plain words (at most "
                                                       f"{MAX_QUESTION} characters), e.g. 'Should our team move "
                                                       "the billing service to Kubernetes this year?'")],
            ctx: Context, geography: ContextField = None, timeframe: ContextField = None,
            domain: ContextField = None,
            full_document: Annotated[bool, Field(description="Also return the whole schema-v1 JSON document "
                                                             "(long); the summary is enough to act on.")] = False,
    ) -> CallToolResult:
        """Map both sides of a question before deciding: blind FOR and AGAINST advocates each build their
        strongest case and a neutral moderator maps where they disagree and what the decision hinges on (no
        verdict). Takes a few minutes on the default local model; progress is reported as it runs. The debate is
        saved: the answer gives its debate_id, and ids for every argument, assumption and hinge to pass to
        challenge_element."""
        reporter = Reporter(ctx)
        context = {"geography": geography, "timeframe": timeframe, "domain": domain}
        job = await anyio.to_thread.run_sync(work.start_map, self.settings, question, context, caller_of(ctx))
        await reporter.say(f"Debate {job.id} saved and queued; get_debate fetches it later if this call ends.")
        state = await followed(job.job_id or job.id, self.store.url, reporter, lambda: work.cancel_map(job))
        document = await anyio.to_thread.run_sync(work.mapped, job, state)
        data = summary.summary(job.id, document)
        text = summary.summary_text(data)
        if not full_document:
            return result(text, data)
        return result(text, {**data, "document": document.dump()}, json.dumps(document.dump(), ensure_ascii=False))

    @refusals
    async def challenge_element(
            self, debate_id: DebateId, action: Annotated[Action, Field(description=(
                "question_assumption: is this assumption sound? stronger_counterargument: the strongest reply to "
                "it. evidence_that_changes_outcome: what evidence would change the conclusion. question_source: "
                "is a cited source reliable for its claim (a citation's passage id as the target)."))],
            target: Annotated[str, Field(description=f"An element's id from the summary (pro.arguments.0, "
                                                     f"con.assumptions.1, moderator.decision_hinges.0), its "
                                                     f"text, or your own words (at most {MAX_TARGET} "
                                                     "characters).")],
            ctx: Context,
    ) -> CallToolResult:
        """Challenge one element of a saved debate: a model answers the challenge (analysis, historical context,
        and whether the disagreement is empirical, values-dependent or both) and the answer is saved with the
        debate. Progress is reported as it runs."""
        job = await anyio.to_thread.run_sync(work.start_challenge, self.settings, debate_id, action, target,
                                             caller_of(ctx))
        state = await followed(job.id, self.store.url, Reporter(ctx), job.cancel)
        data = await anyio.to_thread.run_sync(work.answered, job, state)
        return result(summary.answer_text(data), data)

    @refusals
    async def get_debate(self, debate_id: DebateId, format: Annotated[Format, Field(description=(
            "summary: the compact summary with element ids (default); json: the whole schema-v1 document; md: "
            "the Markdown report; quick: short bullets; script: the debate as a script; argdown, aif, kialo: "
            "the argument map."))] = "summary", *, ctx: Context) -> CallToolResult:
        """Fetch a saved, finished debate: its summary, its whole document, or a rendering."""
        text, data = await anyio.to_thread.run_sync(work.fetch, self.store, debate_id, format, caller_of(ctx))
        return result(text, data)

    @refusals
    async def list_cruxes(self, debate_id: DebateId, ctx: Context) -> CallToolResult:
        """The decision hinges of a saved debate, most load-bearing first: how much of each side's case rests on
        each, which arguments and assumptions, and what a yes or a no would test (found by text similarity, no
        model call)."""
        text, data = await anyio.to_thread.run_sync(work.cruxes, self.store, debate_id, caller_of(ctx))
        return result(text, data)

    @refusals
    async def list_debates(
            self,
            search: Annotated[str, Field(description="Words to find in questions, titles, claims and hinges; "
                                                     "empty lists every debate.")] = "",
            limit: Annotated[int, Field(description=f"At most this many, newest first (1 to "
                                                    f"{work.MAX_LISTED}).")] = 20,
            *, ctx: Context,
    ) -> CallToolResult:
        """List or search saved debates, newest first: id, status, kind, date and title of each."""
        text, data = await anyio.to_thread.run_sync(work.listing, self.store, search, limit, caller_of(ctx))
        return result(text, data)


CHANGES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)
READS = ToolAnnotations(readOnlyHint=True, openWorldHint=False)


def register(server: FastMCP, settings: work.Settings) -> None:
    """The tools on ``server``, running with ``settings``."""
    tools = Tools(settings)
    for tool, annotations in ((tools.map_question, CHANGES), (tools.challenge_element, CHANGES),
                              (tools.get_debate, READS), (tools.list_cruxes, READS), (tools.list_debates, READS)):
        server.add_tool(tool, annotations=annotations)
