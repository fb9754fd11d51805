"""A live debate's state, as every part of it shares it: the transcript, the provider and pace, where it is saved.

:class:`Session` is what the coordinator (:class:`~clearside.live.debate.LiveDebate`, a session itself) hands
to the calls it makes (:class:`~clearside.live.turn.TurnRunner`, :mod:`clearside.live.replies`): they change the
transcript under :attr:`Session.lock`, save it, and tell what happens through :attr:`Session.on_event`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..providers import Provider
from ..runtime.events import Event, OnEvent
from ..store import LiveWriter
from .protocol import LiveConfig
from .transcript import Transcript, now


class Session:
    """One live debate's state: ``transcript`` (changed under ``lock``), ``provider``, ``config`` (the pace and
    limits; by default the transcript's own), ``writer`` (where it is saved; None: kept in memory only),
    ``on_event`` (where its live events go) and ``violations`` (the schema re-asks so far, as in the static
    engine)."""

    def __init__(self, transcript: Transcript, provider: Provider, *, config: LiveConfig | None = None,
                 writer: LiveWriter | None = None, on_event: OnEvent | None = None) -> None:
        self.transcript = transcript
        self.provider = provider
        self.config = config or (LiveConfig(**transcript.config) if transcript.config else LiveConfig())
        self.writer = writer
        self.on_event = on_event or (lambda event: None)
        self.lock = threading.RLock()
        self.violations: list[dict[str, Any]] = []

    def save(self) -> None:
        """Write what changed to the store (one transaction), after every turn, intervention and pause."""
        if self.writer is not None:
            with self.lock:
                self.transcript.updated_at = now()
                self.writer.save(self.transcript)

    def retrying(self, agent: str) -> Callable[[dict[str, Any]], None]:
        """A provider retry of a call outside the turns (the proposition, an answer), told as a live event."""
        return lambda data: self.on_event(Event("retrying", agent, data=dict(data)))
