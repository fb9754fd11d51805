"""The quality record in words, per agent: how many items the checks dropped, ended early (a sentence cut at its
length cap ended at its last complete clause: a ``replaced`` item of the ``cut_sentence`` check), replaced or
flagged, and how often each agent was re-asked. Pure: the Quality checks panel and a document's ``meta.notes`` both
read it, so they say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..schema import AgentQuality, Quality, QualityItem

CUT_SENTENCE = "cut_sentence"  # the check that ends a sentence cut at its cap at its last complete clause
OUTCOMES = ("dropped", "ended early", "re-asked", "replaced", "flagged")  # what happened to an item, in words


def outcome(item: QualityItem) -> str:
    """What happened to ``item``, in the reader's words (one of ``OUTCOMES``)."""
    if item.action == "replaced":
        return "ended early" if item.check == CUT_SENTENCE else "replaced"
    return "re-asked" if item.action == "reasked" else item.action


@dataclass(frozen=True)
class AgentSummary:
    """One agent's part of the quality record: its items by outcome, and its re-asks (model calls asked again)."""

    agent: str
    dropped: int
    ended_early: int
    replaced: int
    flagged: int
    reasks: int
    items: tuple[QualityItem, ...]

    @property
    def quiet(self) -> bool:
        """Nothing dropped, ended early, replaced, flagged or re-asked."""
        return not (self.items or self.reasks)


def summarise(agent: str, record: AgentQuality) -> AgentSummary:
    counts = {word: 0 for word in OUTCOMES}
    for item in record.items:
        counts[outcome(item)] += 1
    return AgentSummary(agent=agent, dropped=counts["dropped"], ended_early=counts["ended early"],
                        replaced=counts["replaced"], flagged=counts["flagged"], reasks=record.reasks,
                        items=tuple(record.items))


def per_agent(quality: Quality | Mapping[str, AgentQuality], order: Iterable[str] = ()) -> list[AgentSummary]:
    """Each agent of ``quality`` (a debate's record, or its agents' records by name), those named in ``order``
    first in that order, the rest by name."""
    agents = quality.agents if isinstance(quality, Quality) else quality
    order = list(order)
    names = sorted(agents, key=lambda name: (order.index(name) if name in order else len(order), name))
    return [summarise(name, agents[name]) for name in names]


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def agent_in_words(summary: AgentSummary) -> str:
    """``2 dropped, 1 ended early, re-asked twice`` (``nothing dropped, ended early or re-asked`` when quiet)."""
    parts = [f"{count} {word}" for count, word in ((summary.dropped, "dropped"), (summary.ended_early, "ended early"),
                                                   (summary.replaced, "replaced"), (summary.flagged, "flagged"))
             if count]
    if summary.reasks:
        parts.append(f"re-asked {_times(summary.reasks)}")
    return ", ".join(parts) or "nothing dropped, ended early or re-asked"


def in_words(quality: Quality | Mapping[str, AgentQuality] | None, labels: Mapping[str, str] | None = None) -> str:
    """The whole record in one sentence for ``meta.notes``: ``Quality checks: FOR 2 dropped, re-asked once;
    Moderator 1 ended early.`` Agents with nothing to say are left out; ``labels`` names agents (e.g. ``pro`` →
    ``FOR``), in their order."""
    if quality is None:
        return ""
    labels = labels or {}
    said = [f"{labels.get(s.agent, s.agent)} {agent_in_words(s)}" for s in per_agent(quality, labels) if not s.quiet]
    if not said:
        return "Quality checks: nothing dropped, ended early or re-asked."
    return "Quality checks: " + "; ".join(said) + "."
