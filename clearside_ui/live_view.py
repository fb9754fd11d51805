"""Views of a live debate transcript, shared by the Live debate and Timeline pages.

Every user or model string goes through :func:`clearside_ui.format.esc`; nothing here starts a model call.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from clearside.enforce import partial_object
from clearside.errors import InputError, NotFound
from clearside.inputs import shown
from clearside.live import conversation, costs
from clearside.live.exchange import load_live
from clearside.live.export import TYPE_LABELS, flag_label, quote_label, source_label, to_markdown
from clearside.live.guardrails import argument_problem, texts_of
from clearside.live.protocol import PHASE_LABELS, PHASES, PLAN, SPEAKER_LABELS
from clearside.live.transcript import Intervention, Transcript, Turn
from clearside.store import Summary, check_id, open_store
from clearside_ui import scroll, settings
from clearside_ui.format import MISSING, esc, file_stem, readable_title, short, when
from clearside_ui.state import Live
from clearside_ui.view import poll_cached

STATUS_BADGES = {"queued": ":blue-badge[:material/schedule: Queued]",
                 "running": ":blue-badge[:material/play_arrow: Running]",
                 "interrupted": ":orange-badge[:material/sync: Interrupted: the next host takes it over]",
                 "pausing": ":orange-badge[:material/pause: Pausing after this chunk]",
                 "paused": ":orange-badge[:material/pause: Paused]",
                 "waiting": ":violet-badge[:material/skip_next: Step mode: waiting for Next turn]",
                 "done": ":green-badge[:material/check: Finished]",
                 "failed": ":red-badge[:material/error: Failed]",
                 "cancelled": ":red-badge[:material/stop_circle: Cancelled]"}
STATE_LABELS = {"running": "unfinished", "paused": "paused", "failed": "failed", "done": "finished"}
SPEAKER_COLOURS = {"pro": "green", "con": "red", "moderator": "gray", "orchestrator": "gray"}
TOTAL = len(PLAN)


def speaker_label(speaker: str) -> str:
    return SPEAKER_LABELS.get(speaker, speaker.capitalize())


def speaker_badge(speaker: str) -> str:
    return f":{SPEAKER_COLOURS.get(speaker, 'gray')}-badge[{speaker_label(speaker)}]"



def proposition(transcript: Transcript) -> str:
    return (transcript.proposition or {}).get("normalized_question") or transcript.question


def load_saved(transcript_id: str) -> Transcript:
    """The saved transcript for an id from the address bar, or an InputError that says what is wrong."""
    try:
        check_id(transcript_id)
    except NotFound:
        raise InputError(f"“{shown(transcript_id)}” in the address is not a live debate id "
                         "(ids are 32 letters and digits).") from None
    try:
        return load_live(open_store(), transcript_id)
    except NotFound:
        raise InputError(f"No saved live debate has the id “{transcript_id}”: it was deleted, or the address is "
                         "wrong (ids are 32 letters and digits).") from None


def saved_summaries(limit: int = 200, *, unfinished: bool = False) -> list[Summary]:
    """Saved live debates, newest first (summaries only: a transcript is loaded when it is opened)."""
    items = open_store().list(kind="live", limit=limit).items
    return [s for s in items if s.status != "done"] if unfinished else items


def summary_label(summary: Summary, width: int = 70) -> str:
    """A plain-text label (selectbox options are not Markdown): title, date and state."""
    state = STATE_LABELS.get(summary.status, summary.status)
    return f"{short(summary.title, width)} · {when(summary.created_at)} · {state}"


def planned_done(transcript: Transcript) -> int:
    return sum(1 for t in transcript.turns if t.step is not None)


def header(transcript: Transcript) -> None:
    settings.demo_model_notice({"provider": transcript.provider, "model": transcript.model}, compact=True)
    st.markdown(f"## {esc(proposition(transcript))}")
    parts = [f"Asked: {esc(transcript.question)}",
             *(f"{esc(k.capitalize())}: {esc(v)}" for k, v in transcript.context.items() if v),
             f"Model: {esc(transcript.provider)}:{esc(transcript.model)}",
             f"Pace: {transcript.config.get('words_per_minute', 150)} words/min",
             f"Started {when(transcript.created_at)}"]
    st.caption(" · ".join(parts))


def phase_progress(transcript: Transcript, status: str | None = None) -> None:
    """The six phases (done, current, to come), a progress bar and "turn k of 21"."""
    cursor = min(transcript.cursor, TOTAL)
    finished = transcript.state == "done" or status == "done"
    current = None if finished or cursor >= TOTAL else PLAN[cursor]
    marks = []
    for number, phase in enumerate(PHASES, 1):
        steps = [s.index for s in PLAN if s.phase == phase]
        if cursor > steps[-1]:
            marks.append(f":green[✓ {PHASE_LABELS[phase]}]")
        elif current is not None and current.phase == phase:
            marks.append(f"**:blue[● {number}. {PHASE_LABELS[phase]}]**")
        else:
            marks.append(f":gray[○ {PHASE_LABELS[phase]}]")
    st.markdown(" → ".join(marks))
    # turns are numbered as the transcript, the turn cards and the Timeline number them: an inline clarification
    # is a turn of its own, so the total grows with each one
    extra = len(transcript.turns) - planned_done(transcript)
    if current is None:
        caption = f"All {len(transcript.turns)} turns done"
        if not finished:
            caption += " · the moderator's synthesis is being assembled"
    else:
        phase_no = PHASES.index(current.phase) + 1
        caption = (f"Phase {phase_no} of {len(PHASES)}: {PHASE_LABELS[current.phase]} · turn "
                   f"{len(transcript.turns) + 1} of {TOTAL + extra}: {esc(current.label)}")
    if extra:
        caption += f" (with {extra} clarification turn{'s' if extra > 1 else ''})"
    st.progress(cursor / TOTAL, text=caption)
    if status:
        st.markdown(STATUS_BADGES.get(status, esc(status)))


ENUM_WORDS = {"economic", "ethical", "technical", "social", "political", "environmental", "fact", "projection",
              "analogy", "value_judgment", "low", "medium", "high"}


def preparing(raw: str) -> list[str]:
    """The structured points already streamed in a reply whose speech has not started (they come first)."""
    data = partial_object(raw)
    data.pop("speech", None)
    return [text for text in texts_of(data) if len(text) > 3 and text not in ENUM_WORDS]


def now_speaking(speaker: str, activity: str, speech: str, status: str, raw: str = "") -> None:
    """Who speaks now and the speech streamed so far in the turn in flight (its points while they are prepared)."""
    if not speaker or status not in ("running", "pausing"):
        return
    with st.container(border=True, key=Live.NOW):
        st.markdown(f"{speaker_badge(speaker)} **Speaking now** · {esc(activity)}")
        if speech.strip():
            st.markdown(esc(speech) + " ▌")
        elif points := poll_cached("live_points", (len(raw), raw[:64]), lambda: preparing(raw)):
            st.caption("Preparing the points of this turn…")
            st.markdown("\n".join(f"- {esc(point)}" for point in points[-6:]))
        else:
            st.caption("Thinking…")


def partial_view(transcript: Transcript) -> None:
    partial = transcript.partial
    if partial is None:
        return
    step = PLAN[partial.step]
    with st.container(border=True):
        st.markdown(f"{speaker_badge(step.speaker)} **Paused mid-turn: {esc(step.label)}**")
        if partial.speech.strip():
            st.markdown(esc(partial.speech) + " ⏸")
            st.caption(f"{len(partial.speech)} characters of speech are kept; Resume continues the turn from there.")
        else:
            st.caption("Paused before the speech began; Resume runs this turn.")


def _bullets(label: str, items: Any) -> list[str]:
    if not isinstance(items, list):
        return []
    return [f"- *{label}:* {esc(item)}" for item in items if isinstance(item, str) and item.strip()]


def argument_badges(argument: dict[str, Any], flags: list[dict[str, Any]]) -> str:
    """Category, evidence type and confidence badges; a confidence the checks contradict (a gibberish claim, a
    guardrail flag on it: ``guardrails.argument_problem``) is withheld, an orange badge saying why."""
    badges = [f":gray-badge[{esc(str(argument[k]).replace('_', ' '))}]"
              for k in ("category", "evidence_type") if argument.get(k)]
    if argument.get("confidence"):
        problem = argument_problem(argument, flags)
        badges.append(f":orange-badge[confidence withheld: {esc(problem)}]" if problem
                      else f":gray-badge[{esc(str(argument['confidence']))}]")
    return " ".join(badges)


def field_lines(turn: Turn) -> list[str]:
    """The key structured fields of a turn, as escaped Markdown bullet lines."""
    f, lines = turn.fields, []
    if isinstance(f.get("position"), str):
        lines.append(f"- *Position:* {esc(f['position'])}")
    lines += _bullets("Preview", f.get("previews"))
    for argument in f.get("arguments", []) or []:
        if not isinstance(argument, dict):
            continue
        badges = argument_badges(argument, turn.flags)
        line = f"- **{esc(argument.get('claim', ''))}** {esc(argument.get('explanation', ''))} {badges}"
        assumptions = [a for a in argument.get("assumptions", []) if isinstance(a, str)]
        if assumptions:
            line += "  \n  *Assumes:* " + "; ".join(esc(a) for a in assumptions)
        lines.append(line)
    if turn.kind != "answer":
        lines += _bullets("Question", f.get("questions"))
    for pair in f.get("pairs", []) or []:
        if isinstance(pair, dict):
            lines.append(f"- *Q:* {esc(pair.get('question', ''))}  \n  *A:* {esc(pair.get('answer', ''))}")
    for item in f.get("rebuttals", []) or []:
        if isinstance(item, dict):
            lines.append(f"- *On* “{esc(item.get('target', ''))}”: {esc(item.get('response', ''))}")
    for key, label in (("assumptions", "Assumption"), ("uncertainties", "Uncertainty"), ("summary", "Summary"),
                       ("disagreements", "Disagreement"), ("areas_of_agreement", "Agreement")):
        lines += _bullets(label, f.get(key))
    for item in f.get("core_disagreements", []) or []:
        if isinstance(item, dict):
            root = f" *Root cause:* {esc(item['root_cause'])}" if item.get("root_cause") else ""
            title = readable_title(str(item.get("topic", "")), str(item.get("description", "")))
            lines.append(f"- *Disagreement:* **{esc(title)}**: "
                         f"{esc(item.get('description', ''))}{root}")
    for item in f.get("assumption_conflicts", []) or []:
        if isinstance(item, dict):
            lines.append(f"- *Assumption conflict:* Pro assumes {esc(item.get('pro_assumption', ''))}; "
                         f"Con assumes {esc(item.get('con_assumption', ''))}")
    lines += _bullets("Evidence gap", f.get("evidence_gaps"))
    lines += _bullets("Decision hinge", f.get("decision_hinges"))
    if isinstance(f.get("request"), str):
        lines.append(f"- *The user asked:* {esc(f['request'])}")
    if isinstance(f.get("evidence_quote"), dict):
        quote = f["evidence_quote"]
        lines.append(f"- *Quotes your source* :green-badge[:material/verified: {esc(quote_label(quote))}] "
                     f"“{esc(quote.get('quote', ''))}”")
    if isinstance(f.get("evidence_response"), str):
        lines.append(f"- *On the user's evidence:* {esc(f['evidence_response'])}")
    return lines


def turn_meta(turn: Turn) -> str:
    parts = [f"Turn {turn.turn}", speaker_label(turn.speaker), PHASE_LABELS.get(turn.phase, esc(turn.phase))]
    if turn.budget_tokens:
        parts.append(f"{turn.used_tokens} of {turn.budget_tokens} tokens used")
    if turn.truncated:
        parts.append("truncated at the hard limit")
    if turn.regenerated:
        parts.append(f"regenerated {turn.regenerated}×")
    if turn.seconds:
        parts.append(f"{turn.seconds:.1f} s")
    return " · ".join(parts)


def turn_view(turn: Turn, after: list[Intervention] | None = None, *, key: str = "",
              transcript: Transcript | None = None) -> None:
    """One finished turn: label, speaker, speech, key fields, flags, notes, then the interventions made after it."""
    with st.container(border=True, key=f"{key}turn_{turn.turn}" if key else None):
        badge = " :orange-badge[truncated]" if turn.truncated else ""
        st.markdown(f"{speaker_badge(turn.speaker)} **{esc(turn.label)}**{badge}")
        st.caption(turn_meta(turn))
        st.markdown(esc(turn.text))
        lines = field_lines(turn)
        if lines:
            st.markdown("\n".join(lines))
        for flag in turn.flags:
            quoted = f" In: “{esc(flag['text'])}”" if flag.get("text") else ""
            st.warning(f"{flag_label(flag)} ({esc(flag.get('rule', ''))}): {esc(flag.get('detail', ''))}{quoted}",
                       icon=":material/gpp_maybe:")
        for note in turn.notes:
            st.caption(f":material/info: {esc(note)}")
    for item in after or []:
        intervention_view(item, transcript)


def reach(transcript: Transcript | None, item: Intervention) -> list[str]:
    """Who received injected evidence, turn by turn, whether each acknowledged it, and who is still to receive it
    (Markdown lines); without the transcript, the turns only."""
    if transcript is None:
        return [f"Delivered in turn{'s' if len(item.delivered_to) > 1 else ''} "
                f"{', '.join(map(str, item.delivered_to))}."] if item.delivered_to else []
    lines = [f"Received by **{speaker_label(r.speaker)}** in turn {r.turn}: "
             + ("acknowledged it." if r.acknowledged else "did not acknowledge it.")
             for r in conversation.receipts(transcript, item)]
    if waiting := conversation.still_to_receive(transcript, item):
        lines.append(f":gray[Not yet received by {' or '.join(speaker_label(s) for s in waiting)}: each takes it at "
                     "its next turn (the moderator, at its own turn).]")
    return lines


def outcome(item: Intervention, transcript: Transcript | None = None) -> str:
    """What became of an intervention, in words (Markdown, escaped); with ``transcript``, who received injected
    evidence and who acknowledged it."""
    if item.status == "failed":
        return f":red[Could not be answered: {esc(item.error or 'unknown error')}]"
    lines = []
    if item.response:
        lines.append(f"**{speaker_label(item.answered_by or '')} answered:** {esc(item.response)}")
    if item.answered_in_turn:
        lines.append(f"Clarified inline in turn {item.answered_in_turn}.")
    lines += reach(transcript, item)
    if item.status == "queued":
        lines.append(":gray[Waiting for its point in the debate…]")
    elif item.status == "delivered":
        lines.append(":green[Delivered to the debaters.]")
    return "  \n".join(lines)


def intervention_anchor(item: Intervention) -> str:
    return f"cs-iv-{item.id}"


def intervention_view(item: Intervention, transcript: Transcript | None = None) -> None:
    target = f" → {speaker_label(item.to)}" if item.to else ""
    scroll.anchor(intervention_anchor(item))
    with st.container(border=True):
        st.markdown(f":violet-badge[:material/person: You · {TYPE_LABELS[item.type]}{target}] "
                    f":gray[after turn {item.after_turn}]  \n{esc(item.text)}")
        if item.source is not None:
            st.caption(f":material/attach_file: File: {esc(source_label(item.source))}")
        st.markdown(outcome(item, transcript))


def interventions_by_turn(transcript: Transcript) -> dict[int, list[Intervention]]:
    found: dict[int, list[Intervention]] = defaultdict(list)
    for item in transcript.interventions:
        found[item.after_turn].append(item)
    return found


def nav_phase(transcript: Transcript, turn: Turn) -> str:
    """The protocol phase a turn belongs to; an inline clarification belongs to the phase it followed."""
    if turn.phase in PHASES:
        return turn.phase
    earlier = [t.phase for t in transcript.turns[: turn.turn - 1] if t.phase in PHASES]
    return earlier[-1] if earlier else PHASES[0]


def transcript_view(transcript: Transcript, *, key: str = "") -> None:
    """Every finished turn under its phase heading, interventions inline after the turn they followed."""
    by_turn = interventions_by_turn(transcript)
    for item in by_turn.get(0, []):
        intervention_view(item, transcript)
    phase = ""
    for turn in transcript.turns:
        if turn.phase != phase and turn.phase in PHASES:
            phase = turn.phase
            st.markdown(f"### {PHASE_LABELS[phase]}")
        turn_view(turn, by_turn.get(turn.turn, []), key=key, transcript=transcript)
    partial_view(transcript)
    if not transcript.turns and not by_turn:
        st.caption("No finished turns yet.")


def exports(transcript: Transcript, key: str) -> None:
    """Markdown and JSON downloads of a transcript."""
    stem = file_stem("live", transcript.question, transcript.id)
    md, js = st.columns(2)
    md.download_button("Markdown", to_markdown(transcript), file_name=f"{stem}.md", mime="text/markdown",
                       key=f"{key}export_md", on_click="ignore", width="stretch", icon=":material/download:")
    js.download_button("JSON", transcript.model_dump_json(indent=2), file_name=f"{stem}.json",
                       mime="application/json", key=f"{key}export_json", on_click="ignore", width="stretch",
                       icon=":material/download:")


def cost_view(transcript: Transcript) -> None:
    """Time and tokens per turn: the summary, a chart of each turn's time and time to first token, the table."""
    facts = costs.summary(transcript)
    if not facts["timed_turns"]:
        return
    with st.expander("Time and tokens per turn", icon=":material/timer:"):
        st.caption(esc(costs.sentence(facts)))
        table = costs.rows(transcript)
        figure = go.Figure()
        figure.add_trace(go.Bar(x=[r["turn"] for r in table], y=[r["seconds"] for r in table], name="Time (s)",
                                customdata=[r["speaker"] for r in table],
                                hovertemplate="Turn %{x} · %{customdata}: %{y} s<extra></extra>"))
        if facts["first_token_p50"] is not None:
            figure.add_trace(go.Scatter(x=[r["turn"] for r in table], y=[r["first_token_seconds"] for r in table],
                                        name="First token (s)", mode="lines+markers"))
        figure.update_layout(xaxis_title="Turn", yaxis_title="seconds", legend={"orientation": "h", "y": -0.3},
                             margin={"t": 20}, height=300)
        st.plotly_chart(figure, key=Live.COSTS_CHART)
        st.dataframe(pd.DataFrame(table).rename(columns=costs.COLUMNS), hide_index=True, placeholder=MISSING)
