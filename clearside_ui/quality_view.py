"""The compact "Quality checks" expander under a finished debate: what the substance checks caught,
what ClearSide repaired or dropped, and how often each agent was re-asked (the document's ``quality``).

Model text is only ever shown inside dataframes (never rendered as Markdown or HTML); the rest goes through ``esc``.
"""

from __future__ import annotations

import streamlit as st

from clearside.agents import AGENT_NAMES
from clearside.schema import AgentQuality, Document, Quality
from clearside_ui.format import esc, plural

ACTIONS = {"dropped": "dropped", "replaced": "replaced", "reasked": "re-asked", "flagged": "flagged"}
REPAIRED = ("dropped", "replaced")


def summary(quality: Quality) -> str:
    """``Quality checks: 3 caught, 2 repaired, 1 re-ask`` or ``Quality checks: nothing caught``."""
    items = [item for agent in quality.agents.values() for item in agent.items]
    reasks = sum(agent.reasks for agent in quality.agents.values())
    if not items and not reasks:
        return "Quality checks: nothing caught"
    repaired = sum(item.action in REPAIRED for item in items)
    return f"Quality checks: {len(items)} caught, {repaired} repaired, {plural(reasks, 're-ask')}"


def _agent(name: str) -> str:
    return AGENT_NAMES.get(name, name)


def _in_order(quality: Quality) -> list[tuple[str, AgentQuality]]:
    """The agents in debate order (a JSON store need not keep the keys' order)."""
    order = list(AGENT_NAMES)
    return sorted(quality.agents.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0]))


def quality_view(document: Document) -> None:
    """Nothing for a document without a ``quality`` record (older debates, imports)."""
    quality = document.quality
    if quality is None:
        return
    with st.expander(summary(quality)):
        st.caption(f"Checks version {esc(quality.checks_version)} · re-ask strategy: {quality.strategy}")
        if not quality.semantic:
            st.caption("The embedding (semantic) checks did not run: only the lexical checks did.")
        if quality.agents:
            st.dataframe([{"Agent": _agent(name), "Attempts": agent.attempts, "Re-asks": agent.reasks,
                           "Caught": len(agent.items)} for name, agent in _in_order(quality)],
                         hide_index=True)
        rows = [{"Agent": _agent(name), "Check": item.check, "Action": ACTIONS[item.action], "Where": item.path,
                 "Text": item.text or "", "Message": item.message}
                for name, agent in _in_order(quality) for item in agent.items]
        if rows:
            st.dataframe(rows, hide_index=True)
        if quality.inferred:
            st.caption("Context the model inferred (not given with the question): " + ", ".join(quality.inferred))
