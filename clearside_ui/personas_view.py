"""Persona debates on the Debate page (issue 16 item 2): the picker in the input area, one column per persona
in the finished debate with where the lenses diverge, and the personas' progress while they write.

Every name, lens and argument is user or model text: all of it goes through :func:`esc`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside import personas
from clearside.jobs import Snapshot
from clearside.schema import Document, Persona
from clearside_ui import view
from clearside_ui.view import STATUS_ICONS, STATUS_WORDS, esc

PICKED, CUSTOM = "personas", "custom_personas"


def _clear(error_key: str | None) -> None:
    if error_key:
        st.session_state[error_key] = ""


def picker(*, error_key: str | None = None) -> None:
    """Built-in personas to pick and a box for the user's own (one ``Name: lens`` per line)."""
    with st.expander("Personas (optional)"):
        st.caption(f"Pick {personas.MIN_PERSONAS} to {personas.MAX_PERSONAS} personas in all to have the debate "
                   "written by disciplines instead of one advocate per side: each writes its own case, blind to "
                   "the others, and the moderator maps where their lenses diverge.")
        st.multiselect("Built-in personas", list(personas.BUILTINS), key=PICKED,
                       max_selections=personas.MAX_PERSONAS, on_change=_clear, args=(error_key,),
                       help="\n".join(f"- **{name}**: {lens}" for name, lens in personas.BUILTINS.items()))
        st.text_area("Your own personas", key=CUSTOM, height=68, on_change=_clear, args=(error_key,),
                     placeholder="One per line, a name and a one-line lens, e.g.\nFarmer: crop yields, water "
                                 "and the cost of land",
                     help=f"One per line as Name: lens. Names at most {personas.MAX_NAME} characters, lenses at "
                          f"most {personas.MAX_LENS}.")


def chosen() -> list[Persona] | None:
    """The personas picked (``None``: a regular pro and con debate); an InputError names the fix."""
    custom = [line for line in str(st.session_state.get(CUSTOM) or "").splitlines() if line.strip()]
    return personas.choose(list(st.session_state.get(PICKED) or []), custom)


def _arguments(title: str, arguments: list) -> None:
    if not arguments:
        return
    st.markdown(f"**{title}**")
    for argument in arguments:
        st.markdown(f"- **{esc(argument.claim)}** {esc(argument.explanation)}  \n"
                    f"  :gray-badge[{argument.category}] :blue-badge[{argument.evidence_type.replace('_', ' ')}] "
                    f":gray-badge[confidence: {argument.confidence}]")


def _case_columns(panel: personas.Panel) -> None:
    cases = panel.ordered()
    for column, (case, leans) in zip(st.columns(len(cases), gap="small"), cases, strict=True):
        with column.container(border=True):
            st.markdown(f"#### {esc(personas.title(case.persona.name))}")
            origin = "built-in" if case.persona.builtin else "your own"
            st.caption(f"Lens ({origin}): {esc(case.persona.lens)}")
            st.markdown(f":gray-badge[stance: {case.stance}]")
            pairs = list(zip(case.arguments, leans, strict=True))
            _arguments("For", [a for a, lean in pairs if lean == "for"])
            _arguments("Against", [a for a, lean in pairs if lean == "against"])
            st.markdown("**Assumptions**\n\n" + "\n".join(f"- {esc(a)}" for a in case.assumptions))
            st.markdown("**Uncertainties**\n\n" + "\n".join(f"- {esc(u)}" for u in case.uncertainties))


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


def progress(snap: Snapshot) -> None:
    """The personas' own lines under the progress of a persona debate being generated."""
    for agent, state in snap.agents.items():
        if agent.startswith("persona-"):
            extra = f" (attempt {state.attempts})" if state.attempts > 1 else ""
            done = f" — {state.seconds:.1f} s" if state.status == "done" else ""
            words = STATUS_WORDS.get(state.status, state.status)
            st.markdown(f"{STATUS_ICONS[state.status]} Persona {agent.split('-')[1]} writing its case: "
                        f"{words}{extra}{done}")
