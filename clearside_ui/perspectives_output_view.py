"""What the models of a perspectives session wrote (docs/design/perspectives.md), as the page shows it: perspective A's
and B's outputs, the synthesis, the step streaming now and the rounds; and where a session is, in words.

Every output is model text: it goes through ``esc`` (a partial reply, still streaming, too).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside.enforce import partial_object
from clearside.perspectives import Session
from clearside_ui.format import esc
from clearside_ui.state import Perspectives
from clearside_ui.view import poll_cached

AGENT_NAMES = {"A": "expansion", "B": "compression"}
WHERE = {"situation": "in the situation", "other_perspective": "in the other perspective's reasoning"}
CHECKLIST = (("boundary", "Boundary"), ("insecurity", "Insecurity"), ("values_mismatch", "Values mismatch"))


def step_name(state: str) -> str:
    """``ROUND_2_B`` → ``round 2 · perspective B``; ``SYNTHESIS`` → ``the synthesis``."""
    if state.startswith("ROUND_"):
        _, number, agent = state.split("_")
        return f"round {number} · perspective {agent}"
    return {"SYNTHESIS": "the synthesis", "INIT": "the clarifying questions"}.get(state, state.lower())


def in_flight(session: Session) -> tuple[str, int | None, str | None]:
    """The step a running session is on: (what the model writes, round, agent); agent is None for the others."""
    state = session.state
    if state == "INIT":
        return "clarifier", None, None
    if state == "CLARIFICATION_COMPLETE":
        return "A", 1, "A"
    if state == "SYNTHESIS" or state == "COMPLETE":
        return "synthesis", None, None
    if state.startswith("ROUND_"):
        number, agent = session.current_round, session.current_system_prompt
        if session.output(number, agent) is None:
            return agent, number, agent
        if agent == "A":  # done, about to enter B
            return "B", number, "B"
        if number < session.max_rounds:
            return "A", number + 1, "A"
        return "synthesis", None, None
    return "", None, None


def streaming_label(session: Session) -> str:
    what, number, agent = in_flight(session)
    if what == "clarifier":
        return "Preparing the clarifying questions…"
    if what == "synthesis":
        return "Synthesis…"
    return f"Round {number} · perspective {agent}…" if agent else "Working…"


def progress_text(session: Session) -> str:
    what, number, agent = in_flight(session)
    if what == "synthesis":
        return f"All {session.max_rounds} rounds done · writing the synthesis…"
    if agent:
        return f"Round {number} of {session.max_rounds} · perspective {agent} ({AGENT_NAMES[agent]})…"
    return "Starting…"


def steps_done(session: Session) -> tuple[int, int]:
    total = 2 * session.max_rounds + 1
    return len(session.round_outputs) + (1 if session.synthesis is not None else 0), total


def state_label(session: Session, *, running: bool = False) -> str:
    """Where the session is, in words: ``ROUND_1_A`` → "Round 1 of 3 · perspective A"."""
    return step_label(session.state, session.max_rounds, running=running)


def step_label(state: str, rounds: int, *, running: bool = False) -> str:
    if state.startswith("ROUND_"):
        _, number, agent = state.split("_")
        return f"Round {number} of {rounds} · perspective {agent}"
    return {
        "INIT": "Asking the clarifying questions" if running else "Clarifying questions not asked yet",
        "CLARIFICATION_PENDING": "Waiting for your answers",
        "CLARIFICATION_COMPLETE": "Questions answered · starting round 1",
        "SYNTHESIS": "Writing the synthesis",
        "COMPLETE": "Complete",
    }.get(state, state.replace("_", " ").capitalize())


def _has(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _strings(items: Any) -> list[str]:
    return [item for item in items if _has(item)] if isinstance(items, list) else []


def _block(title: str, text: Any) -> str:
    return f"**{title}**  \n{esc(text)}" if _has(text) else ""


def _bullets(title: str, items: Any, *, numbered: bool = False) -> str:
    found = _strings(items)
    if not found:
        return ""
    lines = [f"{n}\\. {esc(item)}" if numbered else f"- {esc(item)}" for n, item in enumerate(found, 1)]
    return f"**{title}**\n\n" + ("  \n" if numbered else "\n").join(lines)


def _scripts(output: dict[str, Any]) -> str:
    lines = [f"*{label}:* {esc(output[key])}" for key, label in (("script_brief", "Brief"),
                                                                  ("script_extended", "Extended"))
             if _has(output.get(key))]
    return "**What you could say**  \n" + "  \n".join(lines) if lines else ""


def flag_line(flag: dict[str, Any]) -> str:
    """``pattern · where: evidence``, about words and actions, never a label for a person."""
    pattern = str(flag.get("pattern", "")).replace("_", " ")
    where = WHERE.get(str(flag.get("where", "")), str(flag.get("where", "")).replace("_", " "))
    return f"{esc(pattern)} · {esc(where)}: {esc(flag.get('evidence', ''))}"


def _flags(flags: Any) -> str:
    found = [f for f in flags if isinstance(f, dict) and _has(f.get("evidence"))] if isinstance(flags, list) else []
    if not found:
        return ""
    return ("**Patterns noticed** (in words and actions, not labels for anyone)\n\n"
            + "\n".join(f"- {flag_line(f)}" for f in found))


def _show(parts: list[str]) -> None:
    text = "\n\n".join(p for p in parts if p)
    if text:
        st.markdown(text)


def expansion_view(output: dict[str, Any]) -> None:
    """Perspective A: emotional reality, interpretations, actions (gentle → firm), scripts, boundary, flags."""
    _show([_block("Emotional reality", output.get("emotional_reality")),
           _bullets("Possible interpretations", output.get("interpretations")),
           _bullets("Possible actions (gentle → firm)", output.get("actions"), numbered=True),
           _scripts(output), _block("Boundary", output.get("boundary")), _flags(output.get("flags"))])


def compression_view(output: dict[str, Any]) -> None:
    """Perspective B: best-supported reading, facts vs assumptions, checklist, boundary, scripts, if/then, flags."""
    checklist = output.get("checklist") if isinstance(output.get("checklist"), dict) else {}
    checks = [f"*{label}:* {esc(checklist[key])}" for key, label in CHECKLIST if _has(checklist.get(key))]
    steps = [s for s in output.get("next_steps") or [] if isinstance(s, dict) and _has(s.get("if"))]
    _show([_block("Best-supported interpretation", output.get("best_interpretation")),
           _bullets("Known facts", output.get("known_facts")),
           _bullets("Assumptions (not yet known)", output.get("assumptions")),
           "**Checklist**  \n" + "  \n".join(checks) if checks else "",
           _block("Boundary", output.get("boundary")), _scripts(output),
           ("**Next steps**\n\n" + "\n".join(f"- *If* {esc(s['if'])} → *then* {esc(s.get('then', ''))}"
                                              for s in steps)) if steps else "",
           _flags(output.get("flags"))])


def synthesis_body(output: dict[str, Any]) -> None:
    _show([_block("How the perspectives evolved", output.get("debate_evolution")),
           _bullets("Conclusions", output.get("conclusions")),
           _bullets("Options", output.get("next_steps")),
           _bullets("Open questions", output.get("open_questions"))])
    if _has(output.get("framing")):
        st.info(esc(output["framing"]), icon=":material/favorite:")


def synthesis_view(session: Session) -> None:
    with st.container(border=True, key=Perspectives.SYNTHESIS):
        st.markdown("### Synthesis")
        st.caption("The perspectives brought together: options and open questions, not orders. "
                   "What to do stays your decision.")
        synthesis_body(session.synthesis or {})


def streaming_view(session: Session, streaming: str) -> None:
    """The step in flight and what its model has written so far."""
    what = in_flight(session)[0]
    with st.container(border=True, key=Perspectives.STREAMING):
        st.markdown(f":blue-badge[:material/edit: {esc(streaming_label(session))}]")
        data = poll_cached("perspectives_streaming", (len(streaming), streaming[:64]),
                           lambda: partial_object(streaming))
        if "summary" in data:
            st.caption("Condensing earlier output to fit the model's context…")
        elif what == "clarifier" and _strings(data.get("questions")):
            st.markdown("\n".join(f"- {esc(q)}" for q in _strings(data["questions"])))
        elif what == "A" and data:
            expansion_view(data)
        elif what == "B" and data:
            compression_view(data)
        elif what == "synthesis" and data:
            synthesis_body(data)
        else:
            st.caption("Thinking…")


def round_output(session: Session, number: int, agent: str) -> None:
    found = session.output(number, agent)
    if found is not None:
        (expansion_view if agent == "A" else compression_view)(found.output)


def rounds_view(session: Session, streaming: str | None = None) -> None:
    """Every finished round as Round n: A then B; with ``streaming`` the step in flight is shown in its place."""
    what, live_round, live_agent = in_flight(session) if streaming is not None else ("", None, None)
    last = max([o.round for o in session.round_outputs] + [live_round or 0])
    for number in range(1, last + 1):
        st.markdown(f"#### Round {number}")
        for column, agent in zip(st.columns(2, gap="medium"), "AB", strict=True):
            with column:
                if session.output(number, agent) is not None:
                    with st.container(border=True, key=Perspectives.round_output(number, agent)):
                        colour = "violet" if agent == "A" else "blue"
                        st.markdown(f":{colour}-badge[Perspective {agent} · {AGENT_NAMES[agent]}]")
                        round_output(session, number, agent)
                elif (live_round, live_agent) == (number, agent) and streaming is not None:
                    streaming_view(session, streaming)
    if streaming is not None and what == "synthesis":
        streaming_view(session, streaming)
