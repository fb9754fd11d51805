"""What running work reports as it goes: one :class:`Event` type, and the fold of a debate's events into each agent's
progress (:class:`AgentProgress`, :func:`apply_event`), for a job run here or one followed from its progress rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    """``kind`` is one of start, delta, retry, part, done, error; ``part``: the agent starts another call of its
    section (a part of the focused strategy, or a mended field), whose deltas replace what streamed before."""

    kind: str
    agent: str
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Event:
        """An event as a job's progress rows keep it (:mod:`clearside.runtime.progress`)."""
        return cls(entry["kind"], entry.get("agent") or "", entry.get("text") or "", entry.get("data") or {})


OnEvent = Callable[[Event], None]


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
