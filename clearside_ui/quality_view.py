"""The compact "Quality checks" expander under a finished debate: per agent, what the substance checks dropped,
ended early (a sentence cut at its length cap, ended at its last complete clause), replaced or flagged, and how
often the agent was re-asked (the document's ``quality``, read by ``clearside.checks.summary``: the same words as
the document's ``meta.notes``).

Model text is only ever shown inside dataframes (never rendered as Markdown or HTML); the rest goes through ``esc``.
"""

from __future__ import annotations

import streamlit as st

from clearside.agents import AGENT_NAMES
from clearside.checks.summary import AgentSummary, agent_in_words, outcome, per_agent
from clearside.schema import Document, Quality
from clearside_ui.format import MISSING, bullets, esc, plural


def _agent(name: str) -> str:
    return AGENT_NAMES.get(name, name)


def summary(quality: Quality) -> str:
    """``Quality checks: 2 dropped, 1 ended early, 1 re-ask`` or ``Quality checks: nothing dropped, ended early or
    re-asked``."""
    agents = per_agent(quality)
    totals = [(sum(a.dropped for a in agents), "dropped"), (sum(a.ended_early for a in agents), "ended early"),
              (sum(a.replaced for a in agents), "replaced"), (sum(a.flagged for a in agents), "flagged")]
    parts = [f"{count} {word}" for count, word in totals if count]
    reasks = sum(a.reasks for a in agents)
    if reasks:
        parts.append(plural(reasks, "re-ask"))
    return "Quality checks: " + (", ".join(parts) or "nothing dropped, ended early or re-asked")


def _row(agent: AgentSummary, attempts: int) -> dict[str, object]:
    return {"Agent": _agent(agent.agent), "Dropped": agent.dropped, "Ended early": agent.ended_early,
            "Re-asks": agent.reasks, "Replaced": agent.replaced, "Flagged": agent.flagged, "Attempts": attempts}


def quality_view(document: Document) -> None:
    """Nothing for a document without a ``quality`` record (older debates, imports)."""
    quality = document.quality
    if quality is None:
        return
    agents = per_agent(quality, AGENT_NAMES)
    with st.expander(summary(quality)):
        st.caption(f"Checks version {esc(quality.checks_version)} · re-ask strategy: {esc(quality.strategy)}")
        if not quality.semantic:
            st.caption("The embedding (semantic) checks did not run: only the lexical checks did.")
        if agents:
            st.markdown(bullets(f"{_agent(a.agent)}: {agent_in_words(a)}" for a in agents))
            st.dataframe([_row(a, quality.agents[a.agent].attempts) for a in agents], hide_index=True,
                         placeholder=MISSING)
        rows = [{"Agent": _agent(a.agent), "Outcome": outcome(item), "Check": item.check, "Where": item.path,
                 "Text": item.text or "", "Message": item.message}
                for a in agents for item in a.items]
        if rows:
            st.dataframe(rows, hide_index=True, placeholder=MISSING)
        if quality.inferred:
            st.caption("Context the model inferred (not given with the question): "
                       + ", ".join(esc(value) for value in quality.inferred))
