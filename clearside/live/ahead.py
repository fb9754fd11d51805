"""Prefill ahead: while one agent writes its turn, the agents who speak later start reading what they will see.

Each live agent keeps one growing conversation (context.conversation), and its next message opens with what
it has not seen yet (``${header}${visible}`` in live.toml). Those opening lines are known before the agent's
turn comes: the turns it may see that are finished already. So after every turn each agent's next planned step
is looked up, and the conversation so far plus that known opening is handed to ``provider.prefill``: the
embedded model evaluates it alongside the running call, and at the agent's turn only the rest (the last turns,
the task) is evaluated while the user waits. The moderator's synthesis, which reads the whole debate, has read
all but the last turns by then.

The visibility rules hold by construction: the opening is built by the same functions, from the same turns, as
the message the step will send (``visible_to`` and ``shown_to`` of :class:`~clearside.live.debate.LiveDebate`), so
an agent's context never holds a turn its step may not see. Providers with nothing to warm ignore the call.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from . import context
from .protocol import PLAN

if TYPE_CHECKING:
    from .debate import LiveDebate
    from .protocol import Step


def opening(debate: LiveDebate, step: Step) -> list[dict[str, str]] | None:
    """The messages ``step`` will send, as far as they are known now: its conversation, and the start of its
    new message (the header on an agent's first turn, then the finished turns it may see and has not seen)."""
    proposition = debate.transcript.proposition and debate.proposition_now()
    if proposition is None:
        return None
    shown, visible = debate.shown_to(step.speaker), debate.visible_to(step)
    unseen = [t for t in visible if t.turn not in shown]
    first = not debate.has_spoken(step.speaker)
    history = context.conversation(step.speaker, debate.transcript.turns)
    known = context.header(step.speaker, proposition, first) + context.visible_block(unseen)
    if not first and context.size(history) + len(known) > debate.config.context_chars:
        # the step will restart its conversation from digests of all it has seen (as LiveDebate._run_step does)
        history = [context.system_message()]
        unseen = [t for t in debate.transcript.turns if t.turn in shown or t in visible]
        known = context.header(step.speaker, proposition, True) + context.visible_block(unseen)
    if not known:
        return None
    return [*history, {"role": "user", "content": known}]


def warm(debate: LiveDebate) -> list[tuple[str, list[dict[str, str]]]]:
    """Hand each agent's next step's known messages to the provider; the next speaker last (its call comes at
    once unless the debate is paused). Returns what was handed over, per agent. ``CLEARSIDE_PREFILL=0`` turns
    it off (bench/live_embedded.py measures both)."""
    if os.environ.get("CLEARSIDE_PREFILL", "1") == "0":
        return []
    cursor = debate.transcript.cursor
    nexts: dict[str, Step] = {}
    for step in PLAN[cursor:]:
        nexts.setdefault(step.speaker, step)
    order = sorted(nexts.values(), key=lambda s: s.index == cursor)
    handed = []
    for step in order:
        messages = opening(debate, step)
        if messages is not None:
            debate.provider.prefill(messages, agent=step.speaker)
            handed.append((step.speaker, messages))
    return handed
