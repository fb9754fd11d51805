"""Persona debates on the Debate page (docs/design/agents.md#personas): the picker in the input area, one column per
persona in the finished debate with where the lenses diverge, and the personas' progress while they write: one column
each, its arguments for and against as the model writes them, then its case once it landed.

Every name, lens and argument is user or model text: all of it goes through :func:`esc`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside.errors import ClearSideError
from clearside.runtime.events import AgentProgress
from clearside.schema import Document, Persona, PersonaCase
from clearside.static import personas
from clearside.static.job import Snapshot
from clearside_ui import jobs, view
from clearside_ui.state import Personas
from clearside_ui.view import STATUS_ICONS, STATUS_WORDS, esc


def _clear(error_key: str | None) -> None:
    if error_key:
        st.session_state[error_key] = ""


def picker(*, error_key: str | None = None) -> None:
    """Built-in personas to pick and a box for the user's own (one ``Name: lens`` per line)."""
    with st.expander("Personas (optional)"):
        st.caption(f"Pick {personas.MIN_PERSONAS} to {personas.MAX_PERSONAS} personas in all to have the debate "
                   "written by disciplines instead of one advocate per side: each writes its own case, blind to "
                   "the others, and the moderator maps where their lenses diverge.")
        st.multiselect("Built-in personas", list(personas.BUILTINS), key=Personas.PICKED,
                       max_selections=personas.MAX_PERSONAS, on_change=_clear, args=(error_key,),
                       help="\n".join(f"- **{name}**: {lens}" for name, lens in personas.BUILTINS.items()))
        st.text_area("Your own personas", key=Personas.CUSTOM, height=68, on_change=_clear, args=(error_key,),
                     placeholder="One per line, a name and a one-line lens, e.g.\nFarmer: crop yields, water "
                                 "and the cost of land",
                     help=f"One per line as Name: lens. Names at most {personas.MAX_NAME} characters, lenses at "
                          f"most {personas.MAX_LENS}.")


def chosen() -> list[Persona] | None:
    """The personas picked (``None``: a regular pro and con debate); an InputError names the fix."""
    custom = [line for line in str(st.session_state.get(Personas.CUSTOM) or "").splitlines() if line.strip()]
    return personas.choose(list(st.session_state.get(Personas.PICKED) or []), custom)


def _arguments(title: str, arguments: list) -> None:
    if not arguments:
        return
    st.markdown(f"**{title}**")
    for argument in arguments:
        st.markdown(f"- **{esc(argument.claim)}** {esc(argument.explanation)}  \n"
                    f"  :gray-badge[{argument.category}] :blue-badge[{argument.evidence_type.replace('_', ' ')}] "
                    f":gray-badge[confidence: {argument.confidence}]")


def _heading(persona: Persona) -> None:
    st.markdown(f"#### {esc(personas.title(persona.name))}")
    origin = "built-in" if persona.builtin else "your own"
    st.caption(f"Lens ({origin}): {esc(persona.lens)}")


def _case(case: PersonaCase, leans: list[str]) -> None:
    st.markdown(f":gray-badge[stance: {case.stance}]")
    pairs = list(zip(case.arguments, leans, strict=True))
    _arguments("For", [a for a, lean in pairs if lean == "for"])
    _arguments("Against", [a for a, lean in pairs if lean == "against"])
    st.markdown("**Assumptions**\n\n" + "\n".join(f"- {esc(a)}" for a in case.assumptions))
    st.markdown("**Uncertainties**\n\n" + "\n".join(f"- {esc(u)}" for u in case.uncertainties))


def _case_columns(panel: personas.Panel) -> None:
    cases = panel.ordered()
    for column, (case, leans) in zip(st.columns(len(cases), gap="small"), cases, strict=True):
        with column.container(border=True):
            _heading(case.persona)
            _case(case, leans)


def columns(document: Document) -> None:
    """One column per persona (its lens, stance and case), then where the lenses diverge; nothing for a
    regular debate."""
    if not document.personas:
        return
    st.markdown("### Personas")
    st.caption("Each persona wrote its case from its own lens, blind to the others. The cases FOR and AGAINST "
               "above gather their arguments, each labelled with its persona.")
    _case_columns(personas.Panel.from_document(document.personas, document.pro))
    if document.moderator.lens_divergence:
        st.markdown("**Where the lenses diverge**\n\n"
                    + "\n".join(f"- {esc(item)}" for item in document.moderator.lens_divergence))


def sections_view(sections: dict[str, Any]) -> None:
    """An unfinished debate's finished sections (:func:`view.sections_view`) and, for a persona debate, the
    cases that landed and the personas still to write."""
    view.sections_view(sections)
    if "personas" not in sections:
        return
    panel = personas.Panel.load(sections["personas"])
    if panel.cases:
        st.markdown("### Personas")
        _case_columns(panel)
    waiting = [personas.title(panel.personas[i].name) for i in panel.missing()]
    if waiting:
        st.caption("Personas still to write their case: " + esc(", ".join(waiting)) + ".")


def _landed(debate_id: str, done: set[int]) -> personas.Panel | None:
    """The debate's personas and the cases saved so far, read from the store again only when a persona that
    finished is not in what was read (its case is saved just after its "done" event); None if unreadable."""
    kept = st.session_state.get(Personas.PANEL)
    if isinstance(kept, tuple) and kept[0] == debate_id and done <= set(kept[1].cases):
        return kept[1]
    try:
        body = jobs.store().sections(debate_id).get("personas")
    except ClearSideError:
        return None  # the columns still stream; the next run reads again
    if body is None:
        return None
    panel = personas.Panel.load(body)
    st.session_state[Personas.PANEL] = (debate_id, panel)
    return panel


def _streaming(agent: str, state: AgentProgress | None) -> None:
    """A persona's arguments for and against as its reply streams, parsed as the advocates' points are."""
    if state is None:
        st.caption("Not started yet.")
        return
    if state.parts:  # a mend's call streams only the field it writes again: the earlier stream is gone
        st.caption("Writing again the part of its case that failed its checks.")
    points = view.streamed_points(agent, state.text, view.PERSONA_POINTS)
    for key, title in zip(view.PERSONA_POINTS, ("For", "Against"), strict=True):
        if points[key]:
            st.markdown(f"**{title} (streaming)**\n\n" + "\n".join(f"- {esc(p)}" for p in points[key]))
    if not any(points.values()) and not state.parts:
        words = STATUS_WORDS.get(state.status, state.status)
        st.caption(f"{words[:1].upper()}{words[1:]}: no argument yet.")


def progress(snap: Snapshot, debate_id: str | None = None) -> None:
    """The personas' own lines under the progress of a persona debate being generated, then one column per
    persona: its arguments for and against as the model writes them, its whole case once it landed (the
    cases landed are read from the saved debate ``debate_id``, which also names the personas)."""
    writing = {agent: state for agent, state in snap.agents.items() if agent.startswith("persona-")}
    for agent, state in writing.items():
        extra = f" (attempt {state.attempts})" if state.attempts > 1 else ""
        done = f" — {state.seconds:.1f} s" if state.status == "done" else ""
        words = STATUS_WORDS.get(state.status, state.status)
        st.markdown(f"{STATUS_ICONS[state.status]} Persona {agent.split('-')[1]} writing its case: "
                    f"{words}{extra}{done}")
    if not writing:
        return
    finished = {int(agent.split("-")[1]) - 1 for agent, state in writing.items() if state.status == "done"}
    panel = _landed(debate_id, finished) if debate_id else None
    count = len(panel.personas) if panel is not None else max(int(agent.split("-")[1]) for agent in writing)
    for index, column in enumerate(st.columns(count, gap="small")):
        agent = personas.spec(index).name
        with column.container(border=True):
            if panel is not None:
                _heading(panel.personas[index])
            else:
                st.markdown(f"#### Persona {index + 1}")
            if panel is not None and index in panel.cases:
                _case(panel.cases[index], panel.leans[index])
            else:
                _streaming(agent, writing.get(agent))
