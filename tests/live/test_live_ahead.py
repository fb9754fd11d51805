"""Prefill ahead in the live debate (clearside/live/ahead.py): what an agent is given to read early is exactly the
start of the call its next step makes, so its context never holds a turn that step may not see."""

from __future__ import annotations

import pytest
from helpers import QUESTION, LiveResponder

from clearside.live import LiveConfig, LiveDebate, ahead
from clearside.live.protocol import PLAN, visible_steps
from clearside.providers.scripted import ScriptedProvider
from clearside.store import open_store


class Recording(ScriptedProvider):
    """The scripted provider, remembering every prefill and every call in order."""

    def __init__(self) -> None:
        super().__init__(fallback=LiveResponder())
        self.events: list[tuple[str, str, list[dict[str, str]]]] = []

    def prefill(self, messages, agent=""):
        self.events.append(("prefill", agent, [dict(m) for m in messages]))

    def _complete(self, request, on_delta):
        self.events.append(("call", request.agent, [dict(m) for m in request.messages]))
        return super()._complete(request, on_delta)


@pytest.fixture(scope="module")
def warmed_debate():
    """One scripted live debate run to the end: its provider's events, its transcript, and each step warmed."""
    warmed = []
    original = ahead.opening

    def recording(transcript, step, context_chars):
        messages = original(transcript, step, context_chars)
        if messages is not None:
            warmed.append((step, messages[-1]["content"]))
        return messages

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ahead, "opening", recording)
        provider = Recording()
        debate = LiveDebate.create(QUESTION, provider, config=LiveConfig(words_per_minute=40), store=open_store())
        transcript = debate.run()
    assert transcript.state == "done"
    return provider, transcript, warmed


def test_every_prefill_is_the_start_of_that_agents_next_call_and_shows_only_turns_it_may_see(warmed_debate):
    provider, transcript, _ = warmed_debate
    prefills = [(i, agent, messages) for i, (kind, agent, messages) in enumerate(provider.events) if kind == "prefill"]
    assert {agent for _, agent, _ in prefills} == {"pro", "con", "moderator"}
    checked = 0
    for index, agent, messages in prefills:
        call = next((m for kind, who, m in provider.events[index + 1:] if kind == "call" and who == agent), None)
        if call is None:  # the debate ended first
            continue
        if len(call) < len(messages):  # the step restarted its conversation (too long): nothing it may not see
            assert any(t.fresh and t.speaker == agent for t in transcript.turns)
            continue
        checked += 1
        assert call[:len(messages) - 1] == messages[:-1], f"{agent}'s conversation changed after its prefill"
        assert call[len(messages) - 1]["role"] == "user"
        assert call[len(messages) - 1]["content"].startswith(messages[-1]["content"]), \
            f"{agent}'s prefill is not the start of its next call"
    assert checked >= 10
    # the synthesis read all but the last turns ahead of its own turn
    synthesis = max((m for _, agent, m in prefills if agent == "moderator"), key=lambda m: len(m[-1]["content"]))
    turns = [t for t in transcript.turns if t.step is not None and t.step < len(PLAN) - 1]
    assert sum(f"[Turn {t.turn}]" in synthesis[-1]["content"] for t in turns) >= len(turns) - 1


def test_each_warmed_step_holds_only_turns_that_step_may_see_and_its_sent_message_starts_with_it(warmed_debate):
    _, transcript, warmed = warmed_debate
    assert len(warmed) > 20
    shown_turns = 0
    for step, text in warmed:
        sent = transcript.planned(step.index)
        assert sent.fresh or sent.prompt.startswith(text), \
            f"step {step.index} sent a message that does not start as warmed"
        for turn in transcript.turns:
            if f"[Turn {turn.turn}]" in text:
                shown_turns += 1
                assert step.kind in ("closing", "synthesis") or turn.step in visible_steps(step), \
                    f"step {step.index} ({step.speaker}) was warmed with turn {turn.turn}, which it may not see"
    assert shown_turns > 20
