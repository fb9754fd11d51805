"""Prefill ahead: while one agent writes its turn, the agents who speak later start reading what they will see.

Each live agent keeps one growing conversation (context.conversation), and its next message opens with what
it has not seen yet (``${header}${visible}`` in live.toml). Those opening lines are known before the agent's
turn comes: the turns it may see that are finished already. So after every turn each agent's next planned step
is looked up, and the conversation so far plus that known opening is handed to ``provider.prefill``: the
embedded model evaluates it alongside the running call, and at the agent's turn only the rest (the last turns,
the task) is evaluated while the user waits. The moderator's synthesis, which reads the whole debate, has read
all but the last turns by then.

The visibility rules hold by construction: the opening is built by the same functions, from the same turns, as
the message the step will send (:func:`clearside.live.conversation.outlook`, restarted by the same rule), so an
agent's context never holds a turn its step may not see. Providers with nothing to warm ignore the call.
"""

from __future__ import annotations

import os

from ..providers import Provider
from . import context
from .conversation import outlook, proposition_now, visible_to
from .protocol import PLAN, Step
from .transcript import Transcript


def opening(transcript: Transcript, step: Step, context_chars: int) -> list[dict[str, str]] | None:
    """The messages ``step`` will send, as far as they are known now: its conversation, and the start of its
    new message (the header on an agent's first turn, then the finished turns it may see and has not seen).
    ``context_chars``: the conversation's length past which the step restarts it from digests."""
    proposition = transcript.proposition and proposition_now(transcript)
    if proposition is None:
        return None
    view = outlook(transcript, step.speaker, visible_to(transcript, step))
    known = context.header(step.speaker, proposition, view.first) + context.visible_block(view.unseen)
    if view.overflows(len(known), context_chars):  # the step will restart from digests, as it does
        view = view.restarted()
        known = context.header(step.speaker, proposition, view.first) + context.visible_block(view.unseen)
    if not known:
        return None
    return [*view.history, {"role": "user", "content": known}]


def warm(transcript: Transcript, provider: Provider, context_chars: int) -> list[tuple[str, list[dict[str, str]]]]:
    """Hand each agent's next step's known messages to the provider; the next speaker last (its call comes at
    once unless the debate is paused). Returns what was handed over, per agent. ``CLEARSIDE_PREFILL=0`` turns
    it off (bench/live_embedded.py measures both)."""
    if os.environ.get("CLEARSIDE_PREFILL", "1") == "0":
        return []
    cursor = transcript.cursor
    nexts: dict[str, Step] = {}
    for step in PLAN[cursor:]:
        nexts.setdefault(step.speaker, step)
    order = sorted(nexts.values(), key=lambda s: s.index == cursor)
    handed = []
    for step in order:
        messages = opening(transcript, step, context_chars)
        if messages is not None:
            provider.prefill(messages, agent=step.speaker)
            handed.append((step.speaker, messages))
    return handed
