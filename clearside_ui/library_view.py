"""The Library page's views: the unfinished debates' notice, the search and filters, the results table with its
pages, and the actions on the debate picked (open, resume, rename, duplicate, re-run, delete).

Every title, question and stored text goes through ``esc``; the table goes to ``st.dataframe``, which shows text
literally.
"""

from __future__ import annotations

import streamlit as st

from clearside.inputs import MAX_TITLE
from clearside.modes import MODES, mode
from clearside_ui import jobs, page_path
from clearside_ui import library_actions as lib
from clearside_ui.format import MISSING, esc
from clearside_ui.inputs import current_label, length_note
from clearside_ui.state import Library

# The kinds, what Resume and Re-run do for each, and the page that opens one: the mode registry's
KINDS = {"": "Any kind", **{kind: entry.short for kind, entry in MODES.items()}}
OPEN_HELP = "Opens it on its page: " + ", ".join(f"{m.page_title} for a {m.label.lower()}" for m in MODES.values())
STATUS_LABELS = {"": "Any status", "running": "Running or interrupted", "paused": "Paused", "failed": "Failed",
                 "done": "Done"}


GOING = ("queued", "running")  # being generated (or about to be) on some host: nothing to resume


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


def unfinished_notice() -> None:
    """How many saved debates are not done; **Resume** offered only for those that stopped (interrupted, paused,
    failed), never for work still being generated."""
    counts = lib.unfinished()
    going = sum(n for status, n in counts.items() if status in GOING)
    if counts and going == sum(counts.values()):
        st.info(f"**Unfinished debates: {going}** ({_counted(counts)}): still being generated, each section saved "
                "as it finishes. **Open** one to follow it.", icon=":material/sync:")
    elif counts:
        still = (" Those running or queued are still being generated: **Open** follows them." if going else "")
        st.warning(f"**Unfinished debates: {sum(counts.values())}** ({_counted(counts)}). Every finished section is "
                   "saved: pick one that stopped below (the Status filter lists them) and press **Resume** to "
                   f"complete it.{still}", icon=":material/restore:")


def filter_bar(facets: dict[str, list[str]]) -> None:
    with st.container(horizontal=True, vertical_alignment="bottom"):  # the button keeps its whole label
        st.text_input("Search", key=Library.SEARCH, on_change=lib.filters_changed,
                      placeholder="Words anywhere in the question, title or claims", icon=":material/search:")
        st.button("Clear filters", key=Library.CLEAR, on_click=lib.clear_filters, icon=":material/filter_alt_off:",
                  disabled=not lib.filtering(), help="Empty the search and reset every filter.")
    kind, origin, status, provider, model, dates = st.columns([1, 1.2, 1.2, 1.2, 1.4, 1.6])
    kind.selectbox("Kind", list(KINDS), format_func=KINDS.get, key=Library.KIND, on_change=lib.filters_changed)
    st.session_state.setdefault(Library.ORIGIN, "own")
    origin.selectbox("Made by", list(lib.ORIGINS), format_func=lib.ORIGINS.get, key=Library.ORIGIN,
                     on_change=lib.filters_changed, help="Debates that comparisons and regression runs made are "
                     "kept apart from the ones people started.")
    status.selectbox("Status", list(STATUS_LABELS), format_func=STATUS_LABELS.get, key=Library.STATUS,
                     on_change=lib.filters_changed)
    for column, name, title in ((provider, "provider", "Provider"), (model, "model", "Model")):
        options = ["", *facets[name]]
        if st.session_state.get(Library.facet(name)) not in options:
            st.session_state[Library.facet(name)] = ""  # its last debate was deleted
        column.selectbox(title, options, format_func=lambda v, t=title: v or f"Any {t.lower()}",
                         key=Library.facet(name), on_change=lib.filters_changed)
    dates.date_input("Created between", value=(), key=Library.DATES, on_change=lib.filters_changed,
                     format="YYYY-MM-DD", help="Pick the first and the last day (inclusive), in UTC.")


def results_table(page, versions: dict[str, int], sources: dict[str, int]) -> None:
    offset = st.session_state.get(Library.OFFSET, 0)
    st.caption(f"{page.total} saved debate{'s match' if page.total != 1 else ' matches'} · showing "
               f"{offset + 1}–{offset + len(page.items)}, newest first")
    rows = lib.table(page.items, versions, sources)
    st.dataframe(rows, hide_index=True, placeholder=MISSING, key=Library.TABLE, width="stretch", column_config={
        "Link": st.column_config.LinkColumn("Share link", display_text="Open ↗",
                                            help="A link to this debate: copy it to share it, or open it.")},
        on_select=lambda: lib.row_picked([item.id for item in page.items]),
        selection_mode=["single-row", "single-cell"])
    st.caption("Click a debate's title (or any cell of its row) to pick it for the actions below.")
    if page.total > lib.PAGE_SIZE:
        pages = (page.total - 1) // lib.PAGE_SIZE + 1
        # at their own width, spread across the row and wrapping on a narrow screen: never cut off
        with st.container(horizontal=True, horizontal_alignment="distribute", vertical_alignment="center"):
            st.button("Previous", key=Library.PREVIOUS, on_click=lib.turn_page, args=(-1,), disabled=offset == 0,
                      icon=":material/chevron_left:")
            st.caption(f"Page {offset // lib.PAGE_SIZE + 1} of {pages}", width="content")
            st.button("Next", key=Library.NEXT, on_click=lib.turn_page, args=(1,),
                      disabled=offset + lib.PAGE_SIZE >= page.total, icon=":material/chevron_right:")


def delete_controls(item) -> None:
    if st.session_state.get(Library.CONFIRM) != item.id:
        st.button("Delete…", key=Library.DELETE, on_click=lib.ask_delete, args=(item,), icon=":material/delete:",
                  disabled=lib.running(item.id), help="A debate that is running here cannot be deleted.")
        return
    st.warning(f"Delete “{esc(item.title)}”? This cannot be undone.")
    confirm, cancel = st.columns(2)
    confirm.button("Confirm delete", key=Library.DELETE_CONFIRM, on_click=lib.delete, args=(item,), type="primary",
                   width="stretch")
    cancel.button("Cancel", key=Library.DELETE_CANCEL, on_click=lib.cancel_delete, width="stretch")


def actions(item, versions: int = 0) -> None:
    entry = mode(item.kind)
    if st.session_state.get(Library.TITLE_FOR) != item.id:
        st.session_state.update({Library.TITLE: item.title, Library.TITLE_FOR: item.id})
    remapped = f" · {esc(lib.remaps(versions))}" if versions else ""
    st.caption(f"{esc(lib.KIND_LABELS.get(item.kind, item.kind))} · {esc(lib.shown_status(item))} · "
               f"{esc(item.provider)}:{esc(item.model)} · created {esc(lib.when(item.created_at))}{remapped}")
    st.markdown(f"**Question:** {esc(item.question)}")
    use, why = lib.provider_label()
    left, right = st.columns(2, gap="large")
    with left:
        st.button("Open", key=Library.OPEN, on_click=lib.open_debate, args=(item,), type="primary",
                  icon=":material/open_in_new:", help=OPEN_HELP)
        if lib.resumable(item) and not lib.yours(item):
            st.caption(esc(lib.READ_ONLY))
        elif lib.resumable(item):
            st.button("Resume", key=Library.RESUME, on_click=lib.resume, args=(item,), icon=":material/play_arrow:",
                      help=entry.resume_help)
        elif entry.resumes_on_page and lib.running(item.id):
            st.button(f"Watch on the {entry.watch_title} page", key=Library.WATCH, on_click=lib.resume, args=(item,),
                      icon=entry.icon)
        elif item.status == "queued":
            st.caption("Queued for a worker (`python -m clearside worker`): Open follows it as it is generated.")
        elif lib.status_label(item) == "running":
            st.caption("Running on another host (a worker, another dashboard or the command line): Open follows it "
                       "as it is generated. Resume is offered if it stops.")
        st.text_input("Title", key=Library.TITLE)
        length_note(Library.TITLE, MAX_TITLE, "The title")
        st.button("Save title", key=Library.RENAME, on_click=lib.rename, args=(item,), icon=":material/edit:")
    with right:
        st.button("Duplicate", key=Library.DUPLICATE, on_click=lib.duplicate, args=(item,),
                  icon=":material/content_copy:")
        st.button("Re-run", key=Library.RERUN, on_click=lib.rerun, args=(item,), disabled=not use,
                  icon=":material/replay:", help="Generate it again as a new debate, with the model chosen in the "
                  "sidebar (the caption below names it).")
        if use:
            st.caption(entry.rerun_note.format(kind=item.kind, use=esc(use)))
        else:
            st.caption(f"The sidebar's model cannot be used: {esc(why)}")
        delete_controls(item)


def messages() -> None:
    if st.session_state.get(Library.NOTICE):
        st.success(esc(st.session_state.pop(Library.NOTICE)))
    if st.session_state.get(Library.ERROR):
        st.error(esc(st.session_state.pop(Library.ERROR)))


def page() -> None:
    """The page body: nothing saved yet, nothing matching the filters, or the results and the debate picked."""
    store = jobs.store()
    if store.list(limit=1).total == 0:
        messages()
        st.info("No saved debates yet. Every debate is saved as it is generated: start one on the Debate or the "
                "Live debate page and it appears here.")
        st.page_link(page_path("app_pages/debate.py"), label="Go to Debate", icon=":material/balance:")
        st.page_link(page_path("app_pages/live.py"), label="Go to Live debate", icon=":material/record_voice_over:")
        return
    unfinished_notice()
    filter_bar(store.facets())
    page = lib.results()
    if not page.items:
        messages()
        if lib.filtering():
            st.info("No saved debate matches these filters: **Clear filters** shows them all again.")
        else:
            st.info("Every saved debate so far was made by a comparison or a regression run: choose **Made by → "
                    "Anyone** to see them.")
        return
    options = lib.picked(page.items)
    versions = lib.version_counts(list(options.values()))  # the page and a pinned copy, in one query
    results_table(page, versions, lib.source_counts(page.items))
    st.divider()
    labels = {debate_id: lib.label(item, versions=versions.get(debate_id, 0))  # fixed now: status changes
              for debate_id, item in options.items()}
    current_label(Library.PICK)  # its status moves while it runs
    st.selectbox("Debate", list(labels), key=Library.PICK, format_func=labels.get)
    messages()  # next to the buttons that caused them
    actions(options[st.session_state[Library.PICK]], versions.get(st.session_state[Library.PICK], 0))
