"""The Perspectives page's logic and views (spec 003): the clarification gate, the rounds of A and B, the synthesis.

A session runs in a :class:`PerspectivesJob` on the durable runtime (``jobs.registry()``, keyed by the session
id, which is also its saved debate's id; any host runs its steps). The page polls the job's snapshot in a fragment
while a step runs. A session from the address bar that this server has no job for is followed when the runtime
runs it (its progress rows), otherwise loaded from the store and shown as saved: its questions (when it waits
for answers), or what it has so far with Resume. Callbacks never raise: a ClearSideError is kept in session
state and shown escaped, and every box keeps what was typed. Every user or model string goes through ``esc``.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from clearside.enforce import partial_object
from clearside.errors import ClearSideError, InputError, NotFound
from clearside.inputs import shown
from clearside.perspectives import (
    DEFAULT_ROUNDS,
    MAX_ROUNDS,
    MAX_SITUATION,
    MIN_ROUNDS,
    PerspectivesRun,
    Session,
    load,
)
from clearside.perspectives import workflow as flow
from clearside.perspectives.job import PerspectivesJob, PerspectivesSnapshot
from clearside.perspectives.session import blank_answers
from clearside.store import check_id
from clearside_ui import jobs, owner, rate, settings
from clearside_ui.format import esc, when
from clearside_ui.inputs import question_box
from clearside_ui.view import follow, poll_cached, poll_changed

PARAM = "perspectives"  # ?perspectives=<session id>: the share link
AGENT_NAMES = {"A": "expansion", "B": "compression"}
WHERE = {"situation": "in the situation", "other_perspective": "in the other perspective's reasoning"}
CHECKLIST = (("boundary", "Boundary"), ("insecurity", "Insecurity"), ("values_mismatch", "Values mismatch"))
POLL_SECONDS = 1.0  # streamed rounds: each redraw costs every following tab (bench/ui_load.py); slower when idle


# -- small helpers -----------------------------------------------------------------------------------------------



def answer_key(session_id: str, number: int) -> str:
    return f"persp_ans_{session_id}_{number}"


def gate_error_key(session_id: str) -> str:
    return f"persp_gate_error_{session_id}"


def gate_blank_key(session_id: str) -> str:
    """The numbers of the questions the last Continue found unanswered (highlighted under their boxes)."""
    return f"persp_gate_blank_{session_id}"


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


# -- loading, starting, answering, resuming --------------------------------------------------------------------


def load_saved(session_id: str) -> Session:
    """The saved session for an id from the address bar, or an InputError that says what is wrong."""
    try:
        check_id(session_id)
    except NotFound:
        raise InputError(f"“{shown(session_id)}” in the address is not a perspectives session id "
                         "(ids are 32 letters and digits).") from None
    try:
        session = load(jobs.store(), session_id)
    except NotFound:
        raise InputError(f"No saved perspectives session has the id “{session_id}”: it was deleted, or the address "
                         "is wrong (ids are 32 letters and digits).") from None
    except ClearSideError:
        raise
    except (KeyError, TypeError, ValueError) as exc:  # saved by something else, or damaged
        raise InputError(f"The saved perspectives session “{session_id}” cannot be read: "
                         f"{str(exc).splitlines()[0]}") from None
    return session


def resumed_job(session_id: str) -> PerspectivesJob:
    """A job for a saved session, run by the sidebar's model (it continues from the saved state)."""
    run = PerspectivesRun.resume(session_id, settings.build_provider(), jobs.store(),
                                 temperature=settings.temperature())
    return PerspectivesJob(run)


def attach(session_id: str) -> None:
    st.session_state.update(persp_job=session_id, persp_error="", persp_saved_error="")
    st.query_params[PARAM] = session_id


def detach() -> None:
    st.session_state.update(persp_job=None, persp_error="", persp_saved_error="")
    st.query_params.pop(PARAM, None)


def start() -> None:
    """Create the session (saved at once), then ask the clarifier on a worker."""
    state = st.session_state
    state["persp_error"] = ""
    try:
        jobs.host()  # the runtime runs the session's steps; this dashboard is one of its hosts
        with rate.debate_start(state):  # a question create() refuses gives the start back
            run = PerspectivesRun.create(state.get("persp_question", ""), settings.build_provider(),
                                         rounds=int(state.get("persp_rounds", DEFAULT_ROUNDS)), store=jobs.store(),
                                         observability=bool(state.get("persp_observe", True)),
                                         temperature=settings.temperature(), owner=owner.token())
    except ClearSideError as exc:
        state["persp_error"] = exc.for_dashboard()  # the question stays in its box
        return
    job = jobs.registry().add(PerspectivesJob(run))
    job.ask()
    owner.claim(job.id)
    attach(job.id)


READ_ONLY = ("Read-only: this session was started in another browser or on another machine. Only that browser "
             "can answer its questions, cancel, retry or resume it.")


def steerable(session_id: str) -> bool:
    """Only the browser that started a session answers and steers it; a link opened elsewhere shows it read-only."""
    try:
        return owner.may_change(session_id, jobs.store().get(session_id).data)
    except ClearSideError:
        return True  # not saved: nothing to protect, and nothing to steer either


def submit_answers(session_id: str, count: int) -> None:
    """Merge the answers (refused when empty: the gate cannot be skipped), then run the rounds and the synthesis."""
    if not steerable(session_id):
        st.session_state[gate_error_key(session_id)] = READ_ONLY
        return
    state = st.session_state
    answers = [state.get(answer_key(session_id, n)) or "" for n in range(1, count + 1)]
    state[gate_error_key(session_id)] = ""
    state[gate_blank_key(session_id)] = blank_answers(answers)
    try:
        jobs.host()
        job = jobs.registry().get(session_id)
        if isinstance(job, PerspectivesJob):
            job.answer(answers)
        else:  # a saved session that waits for answers (opened from a link or after a restart)
            job = resumed_job(session_id)
            job.answer(answers)
            jobs.registry().add(job)
    except ClearSideError as exc:
        state[gate_error_key(session_id)] = exc.for_dashboard()  # nothing runs; the answers stay in their boxes
        return
    attach(session_id)


def _continue(job: PerspectivesJob) -> None:
    if job.busy:
        return
    try:
        jobs.host()
        job.retry()  # from INIT (the clarifier failed) it asks again and waits for the answers
    except ClearSideError as exc:
        st.session_state["persp_saved_error"] = exc.for_dashboard()


def followed_job(session_id: str | None) -> PerspectivesJob | None:
    """A job for a session the runtime runs now that this server has no job for (started on another replica,
    by a worker, or before a restart): the page follows it. None when no leg of it is queued or running."""
    if not session_id:
        return None
    try:
        if flow.running_leg(jobs.store(), check_id(session_id)) is None:
            return None
        job = resumed_job(session_id)
    except ClearSideError:
        return None  # not a saved session (the saved view says why), or the runtime is unreachable
    return jobs.registry().add(job)


def retry(session_id: str) -> None:
    """Continue a failed session from its last saved step, with the model it was running with."""
    if not steerable(session_id):
        return
    job = jobs.registry().get(session_id)
    if isinstance(job, PerspectivesJob):
        _continue(job)
    else:
        resume_saved(session_id)


def cancel(session_id: str) -> None:
    """Stop the step in flight at its next token; finished steps and the answers stay saved."""
    if not steerable(session_id):
        return
    job = jobs.registry().get(session_id)
    if isinstance(job, PerspectivesJob):
        job.cancel()


def resume_saved(session_id: str) -> None:
    """Continue a saved session that this server is not running, with the sidebar's model."""
    if not steerable(session_id):
        st.session_state["persp_saved_error"] = READ_ONLY
        return
    st.session_state["persp_saved_error"] = ""
    job = jobs.registry().get(session_id)
    if not isinstance(job, PerspectivesJob):
        try:
            job = resumed_job(session_id)
        except ClearSideError as exc:
            st.session_state["persp_saved_error"] = exc.for_dashboard()
            return
        jobs.registry().add(job)
    _continue(job)
    attach(session_id)


# -- views of outputs ----------------------------------------------------------------------------------------------


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
    with st.container(border=True, key="persp_synthesis"):
        st.markdown("### Synthesis")
        st.caption("The perspectives brought together: options and open questions, not orders. "
                   "What to do stays your decision.")
        synthesis_body(session.synthesis or {})


def streaming_view(session: Session, streaming: str) -> None:
    """The step in flight and what its model has written so far."""
    what = in_flight(session)[0]
    with st.container(border=True, key="persp_streaming"):
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
                    with st.container(border=True, key=f"persp_r{number}{agent}"):
                        colour = "violet" if agent == "A" else "blue"
                        st.markdown(f":{colour}-badge[Perspective {agent} · {AGENT_NAMES[agent]}]")
                        round_output(session, number, agent)
                elif (live_round, live_agent) == (number, agent) and streaming is not None:
                    streaming_view(session, streaming)
    if streaming is not None and what == "synthesis":
        streaming_view(session, streaming)


def progress(session: Session) -> None:
    done, total = steps_done(session)
    st.progress(min(done / total, 1.0), text=progress_text(session))


def summaries_view(session: Session) -> None:
    if not session.summaries:
        return
    parts = [f"{', '.join(esc(c) for c in s.covers)} for {esc(step_name(s.step))} ({esc(s.reason)})"
             for s in session.summaries]
    st.info("Earlier rounds were summarized to fit the model's context: " + "; ".join(parts) + ".",
            icon=":material/compress:")
    with st.expander("The summaries"):
        for s in session.summaries:
            st.markdown(f"**{', '.join(esc(c) for c in s.covers)}** (for {esc(step_name(s.step))})  \n{esc(s.text)}")


def details(session: Session) -> None:
    """The merged prompt and the state history, each in an expander."""
    with st.expander("Merged prompt (fixed once the questions were answered)"):
        if session.merged_user_prompt:
            st.markdown("  \n".join(esc(line) for line in session.merged_user_prompt.splitlines() if line.strip()))
        else:
            st.caption("Not merged yet: the clarifying questions are not answered.")
    with st.expander("State history"):
        st.markdown(" → ".join(esc("Started" if state == "INIT" else step_label(state, session.max_rounds))
                               for state in session.state_history))


def export_text(session: Session) -> str:
    """The session file (what ``perspectives --out FILE`` writes), as the download holds it."""
    return json.dumps(session.file(), indent=2, ensure_ascii=False)


def export(session: Session) -> None:
    st.download_button("Download session (JSON)", export_text(session),
                       file_name=f"clearside-perspectives-{session.session_id[:8]}.json", mime="application/json",
                       key="persp_export", on_click="ignore", icon=":material/download:")


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


def header(session: Session, *, running: bool = False) -> None:
    """The question and the session's settings; a running session's step is shown by its live panel instead
    (a header drawn once would go stale)."""
    st.markdown(f"## {esc(session.original_user_prompt)}")
    parts = [f"{session.max_rounds} round{'s' if session.max_rounds != 1 else ''}",
             f"observability {'on' if session.observability else 'off'}",
             f"Model: {esc(session.provider or 'not run yet')}", f"Started {when(session.created_at)}"]
    if not running:
        parts.append(f"Status: {esc(state_label(session))}")
    st.caption(" · ".join(parts))


def questions_view(session: Session, *, answerable: bool = True) -> None:
    """The clarification gate: one answer box per question, and Continue (only the questions, read-only)."""
    sid, questions = session.session_id, session.clarification_questions
    if not answerable:
        st.markdown("### Clarifying questions (waiting for the author's answers)")
        st.markdown("\n".join(f"{number}\\. {esc(question)}" for number, question in enumerate(questions, 1)))
        return
    with st.container(border=True, key="persp_gate"):
        st.markdown("### A few questions first")
        st.caption("Your answers are merged with your question and fixed for every round. The perspectives start "
                   "only once the questions are answered.")
        blank = st.session_state.get(gate_blank_key(sid), [])
        for number, question in enumerate(questions, 1):
            st.markdown(f"**{number}\\.** {esc(question)}")
            st.text_area(f"Your answer to question {number}", key=answer_key(sid, number), height=80,
                         label_visibility="collapsed", persist_state="session",
                         placeholder="Your answer (what you know; “not sure” is an answer too)")
            if number in blank:
                st.error(f"Question {number} needs an answer (“not sure” is an answer too).",
                         icon=":material/edit_note:")
        st.button("Continue", key="persp_continue", type="primary", on_click=submit_answers,
                  args=(sid, len(questions)), icon=":material/arrow_forward:")
        if st.session_state.get(gate_error_key(sid)):
            st.error(esc(st.session_state[gate_error_key(sid)]))


def outcome_view(session: Session, *, key: str) -> None:
    """A session that is not running: the synthesis (when there is one), the rounds as observability allows, the
    details and the export."""
    if session.synthesis is not None:
        synthesis_view(session)
    else:
        progress(session)
    summaries_view(session)
    if session.round_outputs:
        shown = session.observability
        if not shown:
            shown = st.toggle("Show the rounds", key=f"persp_show_rounds_{key}",
                              help="Observability was off for this session: only the synthesis is shown unless "
                                   "you open the rounds.")
        if shown:
            st.markdown("### The rounds" if session.synthesis is not None else "### Finished rounds")
            rounds_view(session)
    details(session)
    export(session)


# -- the running job ---------------------------------------------------------------------------------------------


def running_body(snap: PerspectivesSnapshot) -> None:
    session = snap.session
    if session.state == "INIT":
        streaming_view(session, snap.streaming)
        return
    progress(session)
    if session.observability:
        rounds_view(session, snap.streaming)
    elif in_flight(session)[0] == "synthesis":
        streaming_view(session, snap.streaming)  # the synthesis is always shown
    else:
        st.caption("Observability is off: the rounds run without being shown; the synthesis appears when ready.")


def running_panel(job_id: str) -> None:
    job = jobs.registry().get(job_id)
    if not isinstance(job, PerspectivesJob):
        st.rerun()
    snap = job.snapshot()
    if not snap.busy:
        st.rerun()  # finished, failed or waiting for answers: the whole page changes
    session = snap.session
    poll_changed("perspectives", (session.state, snap.step, len(session.round_outputs), session.synthesis is None,
                                  len(snap.streaming), snap.notice))
    st.caption(f"Status: {esc(state_label(snap.session, running=True))}")
    if snap.notice:  # a provider fault being asked again: what it had written is gone, the step starts over
        st.caption(f":material/autorenew: {esc(snap.notice)}")
    running_body(snap)


def failure(session_id: str, message: str, state: str) -> None:
    st.error(esc(message or "The session stopped before it finished."))
    st.caption("Every finished step is saved; Retry continues from the step that failed."
               if state != "INIT" else "Retry asks the model for the clarifying questions again.")
    st.button("Retry", key="persp_retry", on_click=retry, args=(session_id,), type="primary",
              icon=":material/refresh:")


def cancelled_view(session_id: str, state: str) -> None:
    """A step the user cancelled: what finished is kept, and the button runs the stopped step again, then the rest."""
    if state == "INIT":
        st.info("Cancelled while the clarifying questions were being prepared. Your question is saved; "
                "Ask again requests the questions.", icon=":material/stop_circle:")
    else:
        st.info(f"Cancelled during {esc(step_name(state))}. Every finished step is kept (saved), and so are your "
                "answers; Continue runs the rest from where it stopped.", icon=":material/stop_circle:")
    st.button("Ask again" if state == "INIT" else "Continue", key="persp_retry", on_click=retry, args=(session_id,),
              type="primary", icon=":material/play_arrow:")


def job_view(job: PerspectivesJob) -> None:
    snap = job.snapshot()
    session = snap.session
    header(session, running=snap.busy)
    mine = steerable(job.id)
    if not mine:
        st.caption(READ_ONLY)
    if snap.busy and not mine:
        follow("perspectives", POLL_SECONDS, running_panel, job.id)
    elif snap.busy:
        st.button("Cancel", key="persp_cancel", on_click=cancel, args=(job.id,), icon=":material/stop_circle:",
                  help="Stop at the next token. Every finished step and your answers stay saved; Continue runs "
                       "the rest.")
        follow("perspectives", POLL_SECONDS, running_panel, job.id)
    elif session.state == "CLARIFICATION_PENDING":
        questions_view(session, answerable=mine)
    elif session.state != "COMPLETE":
        if not mine:
            st.info(f"This session stopped during {esc(step_name(session.state))}.")
        elif session.cancelled:
            cancelled_view(job.id, session.state)
        else:
            failure(job.id, snap.error, session.state)
        if session.state != "INIT":
            outcome_view(session, key=job.id)
    else:
        st.success("Complete: every round ran and the synthesis is ready.", icon=":material/check:")
        outcome_view(session, key=job.id)
    st.button("New question", key="persp_new", on_click=detach, icon=":material/add:")


def saved_view(session_id: str) -> bool:
    """A session from the address bar that this server is not running. False when it cannot be loaded."""
    try:
        session = load_saved(session_id)
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()))
        return False
    header(session)
    mine = steerable(session_id)
    if not mine:
        st.caption(READ_ONLY)
    if st.session_state.get("persp_saved_error"):
        st.error(esc(st.session_state["persp_saved_error"]))
    if session.state == "COMPLETE":
        st.success("This saved session is complete.", icon=":material/check:")
        outcome_view(session, key=session_id)
    elif session.state == "CLARIFICATION_PENDING":
        if mine:
            st.caption("This session is saved and waits for your answers; Continue runs it with the sidebar's "
                       "model.")
        questions_view(session, answerable=mine)
    elif not mine:
        st.info(f"This session is saved, stopped at {esc(step_name(session.state))}.")
        if session.state != "INIT":
            outcome_view(session, key=session_id)
    else:
        if session.error:
            st.error(esc(session.error))
        if session.state == "INIT":
            st.info("This session has no clarifying questions yet. Resume asks for them with the sidebar's model.")
        elif session.cancelled:
            st.info(f"This session was cancelled during {esc(step_name(session.state))}. Every finished step and "
                    "your answers are kept; Resume continues from there with the model chosen in the sidebar.")
        else:
            st.info("This session is saved but not running on this server (it failed, or the server restarted). "
                    "Resume continues it from its last finished step with the model chosen in the sidebar.")
        st.button("Resume", key="persp_resume", on_click=resume_saved, args=(session_id,), type="primary",
                  icon=":material/play_arrow:")
        if session.state != "INIT":
            outcome_view(session, key=session_id)
    st.button("New question", key="persp_new", on_click=detach, icon=":material/add:")
    return True


def start_view() -> None:
    question_box("persp_question", label="Your question or situation", limit=MAX_SITUATION, height=120,
                 error_key="persp_error",
                 placeholder="e.g. My partner reads my messages without asking. Should I say something?",
                 help=f"At most {MAX_SITUATION} characters. You will be asked a few questions before anything else.")
    rounds, observe = st.columns(2, vertical_alignment="center")
    rounds.number_input("Rounds", min_value=MIN_ROUNDS, max_value=MAX_ROUNDS, value=DEFAULT_ROUNDS, step=1,
                        key="persp_rounds", persist_state="session",
                        help="Each round: perspective A widens the possibilities, then perspective B narrows them.")
    observe.toggle("Show every round (observability)", value=True, key="persp_observe", persist_state="session",
                   help="On: watch each perspective as it is written. Off: only the progress, then the synthesis.")
    st.button("Ask clarifying questions", key="persp_start", type="primary", on_click=start,
              icon=":material/help:")
    if st.session_state.get("persp_error"):
        st.error(esc(st.session_state["persp_error"]))


def page() -> None:
    """The page body: attach to ``?perspectives=<id>``, then the job, the saved session or the start form."""
    state = st.session_state
    wanted = st.query_params.get(PARAM)
    if wanted:
        state["persp_job"] = wanted
    elif state.get("persp_job"):
        st.query_params[PARAM] = state["persp_job"]  # back from another page: the URL re-attaches on reload
    session_id = state.get("persp_job")
    job = jobs.registry().get(session_id)
    if not isinstance(job, PerspectivesJob):
        job = followed_job(session_id)
    if isinstance(job, PerspectivesJob):
        job_view(job)
    elif not session_id or not saved_view(session_id):
        start_view()
