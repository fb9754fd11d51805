"""What running work reports as it goes: one :class:`Event` type every mode emits, and the :class:`View` a mode folds
its events into -- the same fold for a job run in this process (:class:`clearside.runtime.steps.Sink`) and for one
followed from its progress rows on any other (:class:`clearside.runtime.progress.Follower`).

Each mode has its kinds of event and its view:

- a static debate (the engine): ``start``, ``delta``, ``retry``, ``part``, ``done``, ``error``, per agent, folded into
  :class:`Agents` (each agent's :class:`AgentProgress`); ``part``: the agent starts another call of its section (a
  part of the focused strategy, or a mended field), whose deltas replace what streamed before;
- a live debate: ``proposition``, ``turn_start``, ``delta`` (the raw reply), ``speech`` (its speech part; never
  written to the rows, a follower derives it from the raw reply), ``retry``, ``retrying``, ``guardrail``,
  ``turn_done``, ``intervention``, ``answered``, ``paused``, ``done``, ``error``, by speaker, folded into
  :class:`clearside.live.control.LiveView`;
- a perspectives session: ``state``, ``clarification_questions``, ``delta``, ``agent_output``, ``synthesis``,
  ``retrying``, ``error`` (``data["round"]`` where there is one), folded into
  :class:`clearside.perspectives.workflow.StreamView`.

``retrying`` (and a static debate's ``retry`` with a ``cause``) is a provider retry: ``data`` has attempt, attempts,
cause and wait, and what streamed of the call is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..providers.retry import retrying_text


@dataclass(frozen=True)
class Event:
    """One thing that happened in a job: ``kind`` (its mode's, above), ``agent`` (an agent of a debate, a live
    debate's speaker, a perspective; "" for the job as a whole), ``text`` (a streamed delta, a message, an output)
    and ``data`` (the rest)."""

    kind: str
    agent: str = ""
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Event:
        """An event as a job's progress rows keep it (:mod:`clearside.runtime.progress`)."""
        return cls(entry["kind"], entry.get("agent") or "", entry.get("text") or "", entry.get("data") or {})

    def entry(self) -> dict[str, Any]:
        """The event as a job's progress rows keep it."""
        return {"kind": self.kind, "agent": self.agent, "text": self.text, "data": self.data}


OnEvent = Callable[[Event], None]


class View(Protocol):
    """A job's progress as a page shows it, folded from its events one at a time (each mode has its own)."""

    def fold(self, event: Event) -> None: ...


@dataclass
class AgentProgress:
    status: str = "pending"  # pending, waiting (started, no token yet), running, retrying, done, failed
    text: str = ""
    attempts: int = 0
    seconds: float = 0.0
    tokens: int = 0
    parts: int = 0  # calls that rewrote part of the reply (a mend): ``text`` is the latest one's stream
    limit: int = 0  # a provider retry: how many attempts it makes in all (0: a re-ask, or not retrying)
    cause: str = ""  # a provider retry: what failed, as the provider said it


def apply_event(agents: dict[str, AgentProgress], event: Event) -> None:
    """Fold one engine event into the agents' progress (a job here, or a job followed from its progress rows)."""
    progress = agents.setdefault(event.agent, AgentProgress())
    if event.kind == "start":  # "running" from its first token: a serial model may first serve the other
        progress.status, progress.text, progress.attempts, progress.parts = "waiting", "", 1, 0
        progress.limit, progress.cause = 0, ""
    elif event.kind == "delta":
        progress.text += event.text
        if progress.status == "waiting":
            progress.status = "running"
    elif event.kind == "part":  # another call of the same section: its stream starts afresh
        progress.text = ""
        progress.parts += 1
    elif event.kind == "retry":  # a re-ask after a failed check, or a provider retry (its attempts and cause)
        progress.status, progress.text = "retrying", ""
        progress.attempts = event.data.get("attempt", progress.attempts + 1)
        progress.limit, progress.cause = int(event.data.get("attempts") or 0), str(event.data.get("cause") or "")
    elif event.kind == "done":
        progress.status = "done"
        progress.seconds, progress.tokens = event.data.get("seconds", 0.0), event.data.get("tokens", 0)
    elif event.kind == "error":
        progress.status = "failed"


def agent_line(event: Event, activities: Mapping[str, str]) -> str | None:
    """An agent's event in one line (``activities``: what each agent does while it writes, ``"writing the case
    FOR"``), as ``debate`` prints it and the MCP server reports it; None for a delta and any event that says nothing
    on its own."""
    if event.kind == "start":
        return f"[{event.agent}] {activities.get(event.agent, 'working')}…"
    if event.kind == "done":
        return f"[{event.agent}] done in {event.data['seconds']:.1f} s, {event.data['tokens']} tokens"
    if event.kind == "retry" and "cause" in event.data:  # a provider fault, asked again
        return f"[{event.agent}] {retrying_text(event.data)}"
    if event.kind == "retry":
        first = event.data["errors"][0] if event.data["errors"] else "invalid output"
        return f"[{event.agent}] output rejected ({first}); re-asking, attempt {event.data['attempt']}"
    if event.kind == "error":
        return f"[{event.agent}] failed"
    return None


class Agents(dict[str, AgentProgress]):
    """A static debate's view: each agent's progress, by agent, folded by :func:`apply_event`."""

    def fold(self, event: Event) -> None:
        apply_event(self, event)
