"""Counting a debate's quality record: per check, what was caught and repaired; per agent, the re-asks."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..schema import Quality


def tally(quality: Quality | dict[str, Any]) -> dict[str, Any]:
    """``caught`` items, ``repaired`` (dropped or replaced), ``reasks`` (model calls), and counts ``by_check``."""
    record = quality if isinstance(quality, Quality) else Quality.model_validate(quality)
    caught: Counter[str] = Counter()
    repaired: Counter[str] = Counter()
    for agent in record.agents.values():
        for item in agent.items:
            caught[item.check] += 1
            repaired[item.check] += item.action in ("dropped", "replaced")  # not reasked, not flagged (kept)
    return {"caught": sum(caught.values()), "repaired": sum(repaired.values()),
            "reasks": sum(a.reasks for a in record.agents.values()),
            "by_check": {name: {"caught": caught[name], "repaired": repaired[name]} for name in sorted(caught)},
            "by_agent": {name: {"attempts": a.attempts, "reasks": a.reasks} for name, a in record.agents.items()}}
