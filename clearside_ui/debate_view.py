"""The Debate page's views: the example debate, a debate generating (here or on another host), one that stopped,
a saved one with its challenge panel, explore panel and exports, and the pointer to debates that stopped part-way.

Every debate is saved as it is generated; ``?debate=<id>`` opens a saved one (the share link). Debates started,
resumed or copied in this browser are editable (challenges), across reloads and tabs (clearside_ui/owner.py); the
same link in another browser opens read-only, with a button to make an editable copy. Every user or model string
goes through ``esc``.
"""

from __future__ import annotations

import itertools

import streamlit as st

from clearside.errors import ClearSideError
from clearside.inputs import MAX_TARGET, shown
from clearside.modes import mode
from clearside.quality.references import flagship
from clearside.render import render
from clearside.schema import ACTIONS, SOURCE_ACTION, Document
from clearside.static.job import Snapshot, StaticJob, past_debates
from clearside.static.job import timing as job_timing
from clearside.store.records import missing_parts, partial_notice
from clearside_ui import (
    argmap_view,
    explore_view,
    jobs,
    owner,
    page_path,
    personas_view,
    scroll,
    settings,
    sources_view,
    understanding_view,
    view,
)
from clearside_ui.debate_actions import (
    cancel_challenge,
    challenge_element,
    copy_to_edit,
    resume,
    saved_record,
    show,
    start_challenge,
)
from clearside_ui.format import download_name, esc, file_stem
from clearside_ui.inputs import length_note
from clearside_ui.quality_view import quality_view
from clearside_ui.state import Challenge, Debate

PAGE = "app_pages/debate.py"  # this page, as the mode registry names it: it shows static debates
OTHER = "__other__"
EXPORTS = {"json": ("JSON", "json", "application/json"), "md": ("Markdown report", "md", "text/markdown"),
           "quick": ("Quick View", "md", "text/markdown"), "script": ("Debate Script", "md", "text/markdown"),
           "argdown": ("Argument map: Argdown", "argdown", "text/plain"),
           "aif": ("Argument map: AIF", "json", "application/json"),
           "kialo": ("Argument map: Kialo", "txt", "text/plain")}


def example_debate(name: str) -> None:
    """The reference example, read-only: not saved, no challenges."""
    if name != "flagship":
        st.error(esc(f"There is no example debate named '{shown(name)}'; the one example is the flagship."))
    else:
        st.info("**Reference example:** the flagship debate, written by hand, not generated. "
                "Read-only: it is not saved and cannot be challenged.", icon=":material/menu_book:")
        st.caption(esc(flagship().title))
        view.document_view(Document.model_validate(flagship().document))
        argmap_view.map_panel(Document.model_validate(flagship().document), where="example")
    st.button("Back to a new debate", key=Debate.EXAMPLE_BACK, on_click=show, args=(None,))


def retry_button(debate_id: str, failed_with: str, verb: str = "Retry") -> None:
    """Retry (or Resume) runs the sidebar's model (switched after a failure, it is the one used), and says which."""
    use, why = settings.model_label()
    if not use:
        st.warning(f"{verb} needs a model the sidebar can use: {esc(why)}")
        return
    st.button(f"{verb} with {use}", key=Debate.RETRY, on_click=resume, args=(debate_id,), icon=":material/refresh:")
    if use != failed_with:
        st.caption(f"The run that stopped used {esc(failed_with)}; {verb} uses the sidebar's model, "
                   f"{esc(use)}, for the sections still missing.")


# every run costs each tab following the debate a redraw, and the server a run, beside the model: streamed text
# is redrawn every POLL_SECONDS (bench/ui_load.py measures the cost; CLEARSIDE_POLL_SECONDS sets it), slower while
# nothing changes (a queued debate): view.follow
def live_debate(job_id: str) -> None:
    snap = jobs.registry().get(job_id, "static").snapshot()
    view.poll_changed("debate", view.progress_fingerprint(snap))
    if snap.status == "queued":
        st.info("Queued: it starts as soon as the model is free (it is generating another debate). It stays "
                "queued if you close this tab.", icon=":material/schedule:")
    timing(snap, snap.id)
    view.progress_view(snap)
    personas_view.progress(snap, job_id)
    if snap.finished:
        st.rerun()


def timing(snap: Snapshot, debate_id: str) -> None:
    """How long it has run and about how long is left, from the debates this model finished here (read once)."""
    past = view.poll_cached("eta", debate_id, lambda: past_debates(jobs.store(), debate_id))
    if line := job_timing(snap, past):
        st.caption(line)


@st.fragment(run_every=1.0)
def live_challenge(job_id: str) -> None:
    job = jobs.registry().get(job_id, "challenge")
    snap = job.snapshot()
    state, document, error = snap.status, snap.document, snap.error
    if not snap.finished:
        st.info(f"Working on: {view.ACTION_LABELS[job.action]}…")
        return
    landed = None
    if not error and document is not None and document.challenges.responses:
        landed = (job.action, len(document.challenges.responses) - 1)
    cancelled = (st.session_state.get(Debate.ID), job.action) if state == "cancelled" else None
    st.session_state.update({Challenge.JOB: None, Challenge.ERROR: error, Challenge.LANDED: landed,
                             Challenge.CANCELLED: cancelled})
    st.rerun()


def opening(text: str, words: int = 5) -> str:
    """The first ``words`` words of an element, an ellipsis marking the cut: the name of its challenge control."""
    head = text.split()
    return " ".join(head[:words]).rstrip(",;:") + ("…" if len(head) > words else "")


def element_control() -> view.Control:
    """The challenge offered beside each element the document view draws (an argument, an assumption, a hinge): a
    popover named after the element, with the panel's challenges for it. On a phone the user taps it where the
    element is, rather than finding the element in the panel's long picker (which stays, for the keyboard)."""
    drawn = itertools.count()  # an element drawn twice (the same assumption on both sides) gets two controls
    busy = bool(st.session_state.get(Challenge.JOB))

    def control(target: str) -> None:
        number = next(drawn)
        with st.popover(f"Challenge: {esc(opening(target))}", icon=":material/flag:",
                        key=Challenge.action("element", number)):
            st.caption(esc(target))
            for action in ACTIONS:
                st.button(view.ACTION_LABELS[action], key=Challenge.action(action, number), disabled=busy,
                          on_click=challenge_element, args=(action, target), width="stretch")
            if busy:
                st.caption("A challenge is being answered: wait for it, or cancel it under **Challenge the "
                           "reasoning**, below the debate.")
    return control


def challenge_panel(document: Document) -> None:
    st.markdown("#### Challenge the reasoning")
    targets = view.challenge_targets(document)
    choice = st.selectbox("Element to challenge", [*targets, OTHER], key=Challenge.CHOICE,
                          format_func=lambda t: "Other (type it below)" if t == OTHER else targets[t])
    typed = st.text_input("Your own target", key=Challenge.TYPED) if choice == OTHER else ""
    if choice == OTHER:
        length_note(Challenge.TYPED, MAX_TARGET, "Challenge target")
    target = typed if choice == OTHER else choice
    busy = bool(st.session_state.get(Challenge.JOB))
    with st.container(horizontal=True):  # at their own width, wrapping on a narrow screen: never cut off
        for action in (*ACTIONS, SOURCE_ACTION) if target in view.citation_targets(document) else ACTIONS:
            st.button(view.ACTION_LABELS[action], key=Challenge.action(action), on_click=start_challenge,
                      args=(action, target), disabled=busy)
    if st.session_state.get(Challenge.ERROR):
        st.error(esc(st.session_state[Challenge.ERROR]))
    landed = st.session_state.get(Challenge.LANDED)
    if landed and not busy:
        action, number = landed
        name = view.challenge_anchor(number)
        st.success(f"{view.ACTION_LABELS[action]}: answered beside the element you challenged. "
                   f"[Jump to the answer ↑](#{name})", icon=":material/check_circle:")
        scroll.into_view(name, once=f"challenge:{st.session_state.get(Debate.ID)}:{number}")
    cancelled = st.session_state.get(Challenge.CANCELLED)
    if cancelled and not busy and cancelled[0] == st.session_state.get(Debate.ID):
        st.info(f"Challenge cancelled (“{view.ACTION_LABELS[cancelled[1]]}”): nothing was added to the debate. "
                "The element you chose is still selected; press a button above to ask the challenge again.",
                icon=":material/stop_circle:")
    if busy:
        st.button("Cancel", key=Challenge.CANCEL, on_click=cancel_challenge, icon=":material/stop_circle:",
                  help="Stop generating this answer. Nothing is added to the debate; you can ask again.")
        live_challenge(st.session_state[Challenge.JOB])


def exports(document: Document) -> None:
    st.markdown("#### Export")
    stem = file_stem("debate", document.proposition.normalized_question, st.session_state.get(Debate.ID))
    with st.container(horizontal=True):
        for fmt, (label, ext, mime) in EXPORTS.items():
            st.download_button(label, render(document, fmt), file_name=download_name(stem, fmt, ext),
                               mime=mime, key=Debate.export(fmt), on_click="ignore")


def unfinished_hint() -> None:
    """After a crash or restart: point at the static debates that stopped part-way (nothing they finished is lost)."""
    try:
        stopped = [s for status in ("running", "failed") for s in jobs.store().list(kind="static", status=status).items
                   if not jobs.running(s.id)]
    except ClearSideError:
        return  # the page still works without the store's list; generating reports any store error
    if stopped:
        st.caption(f"{len(stopped)} earlier debate{'s' if len(stopped) != 1 else ''} stopped part-way; the finished "
                   "sections are saved.")
        st.page_link(page_path("app_pages/library.py"), label="Resume from the Library", icon=":material/restore:")


def saved_debate(debate_id: str) -> None:
    """A saved debate: finished (editable here, or read-only when shared), or unfinished with Resume."""
    try:
        record = jobs.store().get(debate_id)
    except ClearSideError as exc:  # in the dashboard's words: the Library, never a command to run
        st.error(esc(f"This link does not open a saved debate. {exc.for_dashboard()}"))
        st.page_link(page_path("app_pages/library.py"), label="Open the Library", icon=":material/folder_open:")
        return
    shown_by = mode(record.kind)
    ours = shown_by.page == PAGE
    if not ours:  # a live debate (its assembled document is shown below too) or a perspectives session
        st.info(f"This is a {shown_by.label.lower()}: {shown_by.where()}")
        st.page_link(page_path(shown_by.page), label=f"Open in {shown_by.page_title}", icon=":material/open_in_new:",
                     query_params={shown_by.param: debate_id})
    if record.document is None:
        title_line(record, ours)
        if ours and owner.may_change(debate_id, record.data):
            st.warning(f"This debate was not finished ({record.status}). The sections that did finish are kept; "
                       "Resume generates only the missing ones with the model chosen in the sidebar.")
            st.button("Resume", key=Debate.RESUME_SAVED, type="primary", on_click=resume, args=(debate_id,))
            sections(debate_id)
        elif ours:
            st.warning(f"This debate was not finished ({record.status}). Read-only: it was started in another "
                       "browser or on another machine, and only that browser can resume it.")
            sections(debate_id)
        return
    document = Document.model_validate(record.document)
    st.session_state[Debate.DOCUMENT] = document
    editable = ours and owner.owns(debate_id, record.data)
    scroll.anchor("cs-debate")  # a finished debate starts below the fold: it is brought into view once
    scroll.into_view("cs-debate", once=f"debate:{debate_id}")
    title_line(record, ours)
    if ours and not editable:  # said first, with the way out, not under the whole debate
        st.info("Read-only: this debate was made in another browser or on another machine. Make an editable copy "
                "to challenge it or explore it under your priorities; the original stays as it is.",
                icon=":material/lock:")
        st.button("Make an editable copy", key=Debate.COPY_TO_EDIT, on_click=copy_to_edit, args=(debate_id,))
    elif editable and st.session_state.get(Debate.COPIED) == debate_id:
        st.success(f"You are now on your own copy, “{esc(record.title)}”: challenges and re-maps change only this "
                   "copy; the shared original stays as it is.", icon=":material/content_copy:")
    partial_warning(record.document)
    view.document_view(document, control=element_control() if editable else None)
    personas_view.columns(document)
    sources_view.panel(document)
    quality_view(document)
    explore_view.explore(document, debate_id=debate_id, store=jobs.store(), editable=editable)
    argmap_view.map_panel(document, editable=editable)
    if editable:
        challenge_panel(document)
    elif ours:
        st.caption("Read-only: challenges are for your own copy (**Make an editable copy**, at the top).")
    else:
        st.caption("Read-only: this debate was made in another browser or on another machine. "
                   "Make a copy to challenge it.")
        st.button("Make an editable copy", key=Debate.COPY_TO_EDIT, on_click=copy_to_edit, args=(debate_id,))
    exports(document)
    understanding_view.after(debate_id)  # with the sidebar's switch on: what the user knows now, then the counts


def title_line(record, ours: bool) -> None:
    """A saved debate's title where the user gave it one (renamed in the Library, or a copy's): every debate
    starts titled by its question, which the page shows anyway."""
    title = " ".join(record.title.split()).casefold()
    question = (record.document or {}).get("proposition", {}).get("normalized_question", "")
    if ours and title and title not in (" ".join(t.split()).casefold() for t in (record.question, question)):
        st.markdown(f"**Title:** {esc(record.title)}")


def followed_debate(debate_id: str, job_id: str) -> None:
    """A debate a worker or another replica generates: its progress as the job's rows tell it, until it ends."""
    state, snap = jobs.followed(job_id)
    if state.finished:
        st.rerun()  # the whole page: the saved debate (finished, failed or cancelled) replaces the progress
    view.poll_changed("followed", (state.status, view.progress_fingerprint(snap)))
    if state.status == "queued":
        st.info("Queued: it starts when a worker is free (`python -m clearside worker` runs one).",
                icon=":material/schedule:")
    else:
        st.caption("Generating on a worker: it goes on if you close this tab, and every section is saved as it "
                   "finishes.")
    timing(snap, debate_id)
    view.progress_view(snap)
    personas_view.progress(snap, debate_id)


def debate(debate_id: str, job: StaticJob | None, snapshot: Snapshot | None) -> None:
    """The debate the page shows: generating here (its progress, Cancel), stopped here (Resume or Retry and the
    sections that finished), generating on another host (followed), or saved."""
    if snapshot is not None and not snapshot.finished:
        scroll.anchor("cs-progress")  # on a phone the progress is below the buttons: it comes into view
        scroll.into_view("cs-progress", once=f"started:{job.id}")
        st.button("Cancel", key=Debate.CANCEL, on_click=job.cancel, icon=":material/stop_circle:",
                  help="Stop generating. Every section that finished stays saved, and Resume completes the rest.")
        view.follow("debate", view.POLL_SECONDS, live_debate, job.id)
    elif snapshot is not None and snapshot.status in ("failed", "cancelled"):
        stopped(debate_id, job, snapshot)
    elif (record := saved_record(debate_id)) is not None and (job_id := jobs.queued_job(record.data)):
        if owner.may_change(debate_id, record.data):
            st.button("Cancel", key=Debate.CANCEL_FOLLOWED, on_click=jobs.cancel_followed, args=(debate_id,),
                      icon=":material/stop_circle:", help="Stop generating. Every section that finished stays "
                      "saved, and Resume completes the rest.")
        view.follow("followed", view.POLL_SECONDS, followed_debate, debate_id, job_id)
    else:
        saved_debate(debate_id)


def partial_warning(parts: dict | None) -> None:
    """A debate missing a side, the synthesis or a persona says so before anything of it is shown
    (``missing_parts``: the one definition of a partial debate)."""
    if notice := partial_notice(missing_parts(parts)):
        st.warning(esc(notice) + " What is shown is not a whole debate.", icon=":material/warning:")


def sections(debate_id: str) -> None:
    """The sections of an unfinished debate, under its partial label."""
    kept = jobs.store().sections(debate_id)
    partial_warning(kept)
    personas_view.sections_view(kept)


def stopped(debate_id: str, job: StaticJob, snapshot: Snapshot) -> None:
    """A debate this server ran that failed or was cancelled: why, Retry or Resume, and what finished."""
    cancelled = snapshot.status == "cancelled"
    scroll.anchor("cs-stopped")
    scroll.into_view("cs-stopped", once=f"stopped:{job.id}")
    if cancelled:
        st.info("Cancelled. Every section that finished is kept (saved); Resume completes the rest.",
                icon=":material/stop_circle:")
    else:
        st.error(esc(snapshot.error))
        st.caption("Your question and context are kept, and so is every section that finished (saved).")
    retry_button(debate_id, job.provider.spec, "Resume" if cancelled else "Retry")
    sections(debate_id)
