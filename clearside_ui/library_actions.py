"""The Library page's actions: filters to store queries, the results table's rows, and the actions on one saved debate.

Callbacks never raise: a ClearSideError becomes ``lib_error`` (the page shows it escaped, and every widget keeps
what was typed), and a page switch is queued in ``lib_goto`` for the page body to follow with :func:`follow`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside.errors import ClearSideError
from clearside.modes import MODES, mode
from clearside.runtime.status import debate_statuses
from clearside.store import Page, Summary
from clearside.store.records import status_label as labelled
from clearside_ui import jobs, owner, page_path, rate, settings
from clearside_ui.format import cut, plural, when
from clearside_ui.state import Library

PAGE_SIZE = 25
STATUSES = ("queued", "running", "paused", "failed", "done")
UNFINISHED = ("queued", "running", "paused", "failed")
# Which page opens, follows and resumes each kind, and its share link (relative to the Library's own URL), are
# the mode registry's (clearside/modes.py).
KIND_LABELS = {kind: entry.label for kind, entry in MODES.items()}
# Each filter widget and its empty value. Clearing assigns these (popping a widget's key would let the browser send
# its last value back on the next change, so a cleared search came back).
# The debates comparisons and regression runs make are kept apart from the user's own unless asked for ("Made by").
FILTER_DEFAULTS: dict[str, Any] = {Library.SEARCH: "", Library.KIND: "", Library.PROVIDER: "", Library.MODEL: "",
                                   Library.STATUS: "", Library.DATES: (), Library.ORIGIN: "own"}
ORIGINS = {"own": "People", "runs": "Comparisons and regression runs", "": "Anyone"}
FILTER_KEYS = tuple(FILTER_DEFAULTS)



def running(debate_id: str) -> bool:
    """Whether this server is generating that debate right now (a perspectives session: a step is in flight)."""
    return jobs.running(debate_id)


def statuses(items: list[Summary]) -> dict[str, str]:
    """The status to show for each of these debates, by id: the runtime says which unfinished ones still run, for
    all of them at once (the core's rule: :mod:`clearside.runtime.status`); the stored one when it cannot be asked."""
    try:
        return debate_statuses(jobs.store(), items)
    except ClearSideError:  # the runtime's database is unreachable: the store's word, and the page goes on
        return {item.id: item.status for item in items}


def status_label(item: Summary) -> str:
    return statuses([item])[item.id]


def partial(items: list[Summary]) -> dict[str, list[str]]:
    """What each partial debate among these lacks (the core's rule: :func:`clearside.store.records.missing_parts`),
    one query; the store's word unreadable: none labelled, and the page goes on."""
    try:
        return jobs.store().partial(item.id for item in items)
    except ClearSideError:
        return {}


def shown_status(item: Summary) -> str:
    """The status as the Library shows it: ``"failed (partial)"`` beside a debate that lacks a part."""
    return labelled(status_label(item), partial([item]).get(item.id))


def resumable(item: Summary) -> bool:
    """Not done, and not queued or running on any host (two hosts must not write the same debate)."""
    return item.status != "done" and status_label(item) not in ("queued", "running")


def remaps(count: int) -> str:
    """``2 re-maps`` (a debate's saved versions, clearside/remap.py); empty for none."""
    return plural(count, "re-map") if count else ""


def files(count: int) -> str:
    """``2 files`` (a debate's attached sources, clearside/sources); empty for none."""
    return plural(count, "file") if count else ""


def label(item: Summary, width: int = 80, versions: int = 0) -> str:
    """A plain-text selectbox label (options are not Markdown)."""
    title = cut(item.title, width)
    return " · ".join(filter(None, (title, item.kind, shown_status(item), remaps(versions), when(item.created_at))))


def link(item: Summary) -> str:
    return mode(item.kind).share_link(item.id)


def table(items: list[Summary], versions: dict[str, int] | None = None,
          sources: dict[str, int] | None = None) -> list[dict[str, str]]:
    """The results table's rows. ``versions``: each debate's number of versions; the "Versions" column ("2
    re-maps") is shown only when a debate on the page has one; so is the "Sources" column ("2 files")."""
    versions, sources = versions or {}, sources or {}
    shown, attached = any(versions.get(i.id) for i in items), any(sources.get(i.id) for i in items)
    status, gone = statuses(items), partial(items)
    # the share link beside the title, where a wide screen shows it without scrolling the table sideways
    return [{"Title": i.title, "Link": link(i), "Kind": i.kind, "Status": labelled(status[i.id], gone.get(i.id)),
             **({"Versions": remaps(versions.get(i.id, 0))} if shown else {}),
             **({"Sources": files(sources.get(i.id, 0))} if attached else {}), "Provider": i.provider,
             "Model": i.model, "Created": when(i.created_at)} for i in items]


# -- queries -----------------------------------------------------------------------------------------------------


def filters() -> dict[str, Any]:
    state = st.session_state
    dates = tuple(state.get(Library.DATES) or ())
    return {"search": state.get(Library.SEARCH) or "", "kind": state.get(Library.KIND) or None,
            "provider": state.get(Library.PROVIDER) or None, "model": state.get(Library.MODEL) or None,
            "status": state.get(Library.STATUS) or None, "origin": state.get(Library.ORIGIN, "own") or None,
            "since": dates[0] if dates else None,
            "until": dates[1] if len(dates) > 1 else None}


def results() -> Page:
    """The current page of results; a page emptied by a delete falls back to the last page that has rows."""
    store, chosen = jobs.store(), filters()
    offset = st.session_state.get(Library.OFFSET, 0)
    page = store.list(**chosen, limit=PAGE_SIZE, offset=offset)
    if offset and not page.items:
        offset = max(0, (page.total - 1) // PAGE_SIZE * PAGE_SIZE)
        st.session_state[Library.OFFSET] = offset
        page = store.list(**chosen, limit=PAGE_SIZE, offset=offset)
    return page


def version_counts(items: list[Summary]) -> dict[str, int]:
    """How many versions (re-maps) each of these debates has: one query for them all."""
    return jobs.store().version_counts(item.id for item in items)


def source_counts(items: list[Summary]) -> dict[str, int]:
    """How many sources each of these debates has: one query for them all."""
    return jobs.store().source_counts(item.id for item in items)


def unfinished() -> dict[str, int]:
    """How many saved debates are not done, by shown status (interrupted, running, paused, failed)."""
    counts: dict[str, int] = {}
    store = jobs.store()
    for status in UNFINISHED:
        page = store.list(status=status, origin="own", limit=500)
        for label in statuses(page.items).values():
            counts[label] = counts.get(label, 0) + 1
        if page.total > len(page.items):
            counts[status] = counts.get(status, 0) + page.total - len(page.items)
    return counts


def picked(items: list[Summary]) -> dict[str, Summary]:
    """The debates the picker offers: this page of results, plus the copy just made while a filter hides it."""
    options = {i.id: i for i in items}
    pin = st.session_state.get(Library.PIN)
    if pin and pin != st.session_state.get(Library.PICK):
        st.session_state.pop(Library.PIN)  # another debate was picked since
    elif pin and pin not in options and jobs.store().exists(pin):
        options = {pin: jobs.store().get(pin), **options}
    if options and st.session_state.get(Library.PICK) not in options:
        st.session_state[Library.PICK] = next(iter(options))
    return options


def provider_label() -> tuple[str, str]:
    """``(provider:model, "")`` for the sidebar's provider, or ``("", why it cannot be built)``."""
    return settings.model_label()


# -- callbacks ---------------------------------------------------------------------------------------------------


def _begin() -> None:
    st.session_state.update({Library.ERROR: "", Library.NOTICE: ""})


def _go(page: str, **query: str) -> None:
    st.session_state[Library.GOTO] = (page, query)


def follow() -> None:
    """Switch page if an action asked to (st.switch_page belongs in the script body, not in a callback)."""
    goto = st.session_state.pop(Library.GOTO, None)
    if goto:
        st.switch_page(page_path(goto[0]), query_params=goto[1])


def keep_typed() -> None:
    """Keep typed text even on a run that stops early (store down) and so never draws its box."""
    for key in (Library.SEARCH, Library.TITLE):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def filters_changed() -> None:
    st.session_state[Library.OFFSET] = 0
    st.session_state.pop(Library.PIN, None)


def filtering() -> bool:
    """Whether any filter narrows the list."""
    return any(st.session_state.get(key) not in (None, empty) for key, empty in FILTER_DEFAULTS.items())


def clear_filters() -> None:
    st.session_state.update(FILTER_DEFAULTS)
    st.session_state[Library.OFFSET] = 0
    st.session_state.pop(Library.PIN, None)


def row_picked(ids: list[str]) -> None:
    """A click on a row of the results table picks that debate for the actions below it: on its box (a row
    selected) or on any of its cells, its title among them (a cell selected: the grid selects the cell clicked,
    which alone would only highlight it)."""
    selection = (st.session_state.get(Library.TABLE) or {}).get("selection", {})
    rows = list(selection.get("rows", [])) + [cell[0] for cell in selection.get("cells", [])]
    if rows and 0 <= rows[0] < len(ids):
        st.session_state[Library.PICK] = ids[rows[0]]
        st.session_state.pop(Library.CONFIRM, None)


def turn_page(by: int) -> None:
    st.session_state[Library.OFFSET] = max(0, st.session_state.get(Library.OFFSET, 0) + by * PAGE_SIZE)
    st.session_state.pop(Library.PIN, None)


def open_debate(item: Summary) -> None:
    _begin()
    shown_by = mode(item.kind)
    _go(shown_by.page, **{shown_by.param: item.id})


def rename(item: Summary) -> None:
    _begin()
    try:
        jobs.store().rename(item.id, st.session_state.get(Library.TITLE, ""))
    except ClearSideError as exc:
        st.session_state[Library.ERROR] = exc.for_dashboard()
        return
    st.session_state[Library.NOTICE] = "Renamed."


def ask_delete(item: Summary) -> None:
    _begin()
    st.session_state[Library.CONFIRM] = item.id


def cancel_delete() -> None:
    st.session_state.pop(Library.CONFIRM, None)


def delete(item: Summary) -> None:
    _begin()
    st.session_state.pop(Library.CONFIRM, None)
    try:
        jobs.store().delete(item.id)
    except ClearSideError as exc:
        st.session_state[Library.ERROR] = exc.for_dashboard()
        return
    st.session_state.pop(Library.PICK, None)
    st.session_state[Library.NOTICE] = f"Deleted “{item.title}”."


def duplicate(item: Summary) -> None:
    _begin()
    try:
        copy_id = jobs.store().duplicate(item.id, owner=owner.token())
    except ClearSideError as exc:
        st.session_state[Library.ERROR] = exc.for_dashboard()
        return
    st.session_state.update({Library.PICK: copy_id, Library.PIN: copy_id, Library.OFFSET: 0,
                             Library.NOTICE: f"Duplicated “{item.title}”: the copy is selected below."})


def rerun(item: Summary) -> None:
    """Generate the debate again from its question and context with the sidebar's provider, as a new debate
    (``Mode.rerun``), and follow it on its mode's page."""
    _begin()
    try:
        rerun_of = mode(item.kind)
        with rate.debate_start(st.session_state):  # a re-run is a new debate
            job = rerun_of.rerun(jobs.store(), item.id, settings.build_provider(),
                                 temperature=settings.temperature(), strategy=settings.strategy(),
                                 owner=owner.token())
        jobs.registry().add(job)
        owner.claim(job.id)
        _go(rerun_of.watch_page, **{rerun_of.watch_param: job.id})
    except ClearSideError as exc:
        st.session_state[Library.ERROR] = exc.for_dashboard()


def yours(item: Summary) -> bool:
    """Whether this browser may resume the debate (clearside_ui/owner.py): its own, or nobody's."""
    try:
        return owner.may_change(item.id, jobs.store().get(item.id).data)
    except ClearSideError:
        return False


READ_ONLY = ("Read-only: this debate was started in another browser or on another machine, and only that browser "
             "can resume it. Re-run makes your own.")


def resume(item: Summary) -> None:
    """Static: complete only the missing sections here, then watch on the Debate page. Modes that resume on their
    own page (``Mode.resumes_on_page``) go there: the Live page resumes a live debate, the Perspectives page shows
    the saved session, with its questions to answer or Resume."""
    _begin()
    resume_of = mode(item.kind)
    if not resume_of.resumes_on_page:
        try:
            if not yours(item):
                st.session_state[Library.ERROR] = READ_ONLY
                return
            if not running(item.id):
                job = resume_of.resume(jobs.store(), item.id, settings.build_provider(),
                                       temperature=settings.temperature(), strategy=settings.strategy(),
                                       owner=owner.token())
                jobs.registry().add(job.start())
                owner.claim(item.id)
        except ClearSideError as exc:
            st.session_state[Library.ERROR] = exc.for_dashboard()
            return
    _go(resume_of.watch_page, **{resume_of.watch_param: item.id})
