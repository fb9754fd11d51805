"""A live debate's steering and its turn in flight as plain values, folded the same way everywhere.

:class:`Control` is the durable workflow's control state, folded from the messages it received (so a replay
rebuilds it); :func:`requested_pause` reads the latest pause or resume among the control requests a turn in
flight polls; :class:`LiveView` is the turn in flight as a page shows it, folded from the live events
(:mod:`clearside.live.workflow` writes them, :mod:`clearside.live.job` reads them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..providers.retry import retrying_text
from ..runtime.events import Event
from .turn import speech_of


@dataclass
class LiveView:
    """The turn in flight as a page shows it, folded from the live events."""

    speaker: str = ""
    raw: str = ""
    activity: str = "Starting"
    label: str = ""  # the turn in flight's label, which a provider retry's notice is added to

    @property
    def speech(self) -> str:
        return speech_of(self.raw)

    def fold(self, event: Event) -> None:
        kind = event.kind
        if kind == "turn_start":
            self.speaker, self.raw = event.agent, ""
            self.activity = self.label = event.data.get("label", "")
        elif kind == "delta":
            self.raw += event.text
            self.activity = self.label or self.activity  # a retried call is streaming again
        elif kind in ("retry", "guardrail"):
            self.raw = ""
        elif kind == "retrying":  # a provider retry: what streamed is dropped, the call is made again
            self.raw = ""
            self.activity = " · ".join(filter(None, (self.label, retrying_text(event.data))))
        elif kind in ("turn_done", "answered", "paused", "proposition"):
            self.speaker, self.raw = "", ""


def requested_pause(entries: list[dict[str, Any]], current: bool = False) -> bool:
    """Whether the latest control request asks for a pause."""
    for entry in entries:
        if entry.get("text") == "pause":
            current = True
        elif entry.get("text") in ("resume", "step"):
            current = False
    return current


@dataclass
class Control:
    """The workflow's steering, folded from the messages it received (so a replay rebuilds it)."""

    paused: bool = False
    step_mode: bool = False
    credits: int = 0
    applied: list[str] = field(default_factory=list)

    def apply(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "pause":
            self.paused = True
        elif op == "resume":
            self.paused = False
        elif op == "step":
            self.paused, self.step_mode, self.credits = False, True, self.credits + 1
        elif op == "step_mode":
            self.step_mode, self.credits = bool(message.get("on")), 0

    @property
    def blocked(self) -> bool:
        return self.paused or (self.step_mode and self.credits <= 0)
