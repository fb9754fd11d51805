"""Explore a finished debate with the user's priorities (docs/design/requirements.md#us-011): value weights and
assumption stances, below the debate on the Debate page.

- **Weights**: a slider per argument category, 0 to 3 (1 is the default). Moving one re-orders both cases'
  arguments at once (:func:`clearside.remap.weighted_order`, no model call): heavier categories first, a weight
  of 0 sets a category aside (its arguments collapse at the end of each case, never removed). Both cases are
  ordered by the same rule; nothing is totalled, scored or charted per side.
- **Stances**: accept, reject or unsure for each listed assumption (P1.. of the case FOR, C1.. of AGAINST).
- **Re-map with these priorities** reruns only the moderator under them (:func:`clearside.remap.remap`) on the
  durable runtime (:class:`clearside.static.job.RemapJob`, workflow ``clearside.remap``), which saves the result
  as the debate's next version: a page rerun finds the job again (its id is in the session, the job in the
  process-wide registry), and a re-map interrupted by a crash or a restart is finished by the next host. Only a
  saved debate can be re-mapped. The result is shown as a diff against the original synthesis, and the debate's
  versions are listed with theirs. The original debate is never changed.

Every assumption, claim and synthesis item is model text: all of it goes through :func:`esc`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside.errors import ClearSideError
from clearside.runtime import FINISHED
from clearside.schema import CATEGORY_VALUES, AssumptionStance, Document, Weights
from clearside.static import remap
from clearside.static.job import OneShotSnapshot, RemapJob
from clearside_ui import jobs, rate, settings
from clearside_ui.format import esc
from clearside_ui.state import Explore
from clearside_ui.view import moderator_view

NO_STANCE = "no stance"
LOST = ("This server no longer follows the re-map (it was restarted): the runtime finishes it, and its version "
        "is listed below once it is saved.")
STANCE_OPTIONS = (NO_STANCE, *remap.STANCES)
MARKS = {"high": "▲▲ ", "raised": "▲ ", "normal": "", "set_aside": ""}
SECTION_NAMES = {"decision_hinges": "Decision hinges", "core_disagreements": "Core disagreements",
                 "areas_of_agreement": "Areas of agreement", "assumption_conflicts": "Assumption conflicts",
                 "evidence_gaps": "Evidence gaps"}


def current_weights() -> Weights:
    """The sliders' weights (categories left at 1 are unset)."""
    values = {c: int(st.session_state.get(Explore.weight(c), 1)) for c in CATEGORY_VALUES}
    return Weights(**{c: w for c, w in values.items() if w != 1})


def _stance_key(scope: str, side: str, index: int) -> str:
    return Explore.stance(scope, side, index)


def current_stances(document: Document, scope: str) -> list[AssumptionStance]:
    return [AssumptionStance(side=side, index=i, assumption=text, stance=chosen)
            for side, i, _, text in remap.assumption_ids(document)
            if (chosen := st.session_state.get(_stance_key(scope, side, i), NO_STANCE)) != NO_STANCE]


def weights_panel() -> Weights:
    st.markdown("**How much each kind of argument matters to you** (0 sets it aside, 1 is the default)")
    columns = st.columns(3)
    for number, category in enumerate(CATEGORY_VALUES):
        columns[number % 3].slider(category.capitalize(), 0, remap.MAX_WEIGHT, 1, key=Explore.weight(category))
    return current_weights()


def weighted_arguments(document: Document, weights: Weights) -> None:
    """Both cases' arguments in the order the weights give them (the same rule for both)."""
    for column, (side, title, colour) in zip(st.columns(2, gap="medium"),
                                             (("pro", "FOR", "green"), ("con", "AGAINST", "red")), strict=True):
        order = remap.weighted_order(getattr(document, side), weights)
        with column.container(border=True):
            st.markdown(f"**:{colour}[{title}]**, by your priorities")
            for entry in (e for e in order if e["emphasis"] != "set_aside"):
                a = entry["argument"]
                claim = f"**{esc(a['claim'])}**" if entry["weight"] > 1 else esc(a["claim"])
                st.markdown(f"- {MARKS[entry['emphasis']]}{claim} :gray-badge[{a['category']} · "
                            f"weight {entry['weight']}]")
            aside = [e for e in order if e["emphasis"] == "set_aside"]
            if aside:
                with st.expander(f"Set aside by weight 0 ({len(aside)})"):
                    st.markdown("\n".join(f"- :gray[{esc(e['argument']['claim'])}] ({e['argument']['category']})"
                                          for e in aside))


def stances_panel(document: Document, scope: str) -> None:
    st.markdown("**Your stance on each assumption**")
    for side, i, label, text in remap.assumption_ids(document):
        st.radio(f"{label} ({'FOR' if side == 'pro' else 'AGAINST'}): {esc(text)}", STANCE_OPTIONS, horizontal=True,
                 key=_stance_key(scope, side, i))


def diff_view(changes: dict[str, Any]) -> None:
    """What the re-map changed against the original synthesis."""
    if not changes["changed"]:
        st.info("The re-mapped synthesis lists the same items in the same order as the original.")
        return
    for section, d in changes["sections"].items():
        lines = [*(f"- :blue-badge[added] {esc(t)}" for t in d["added"]),
                 *(f"- :gray-badge[removed] ~~{esc(t)}~~" for t in d["removed"]),
                 *(f"- :violet-badge[reworded] {esc(r['before'])} → {esc(r['after'])}" for r in d["reworded"]),
                 *(f"- :orange-badge[moved {m['from']} → {m['to']}] {esc(m['text'])}" for m in d["moved"])]
        if lines:
            st.markdown(f"**{SECTION_NAMES[section]}**\n\n" + "\n".join(lines))
    st.caption("Hinges listed first are the decisive ones under your priorities. Items are paired by "
               + ("meaning (MiniLM)." if changes["semantic"] else "shared words (no embedding model)."))


def start(document: Document, scope: str, debate_id: str | None, store: Any) -> None:
    weights, stances = current_weights(), current_stances(document, scope)
    try:
        with rate.challenge(st.session_state):  # one moderator call on a finished debate, as a challenge is
            job = jobs.start_job(RemapJob(store, debate_id, remap.Conditions(weights, tuple(stances)),
                                          settings.build_provider(), temperature=settings.temperature()))
    except ClearSideError as exc:
        st.session_state[Explore.ERROR] = exc.for_dashboard()
        return
    st.session_state.update({Explore.JOB: job.id, Explore.ERROR: "", Explore.LANDED: None, Explore.CANCELLED: None})


def cancel() -> None:
    job = jobs.registry().get(st.session_state.get(Explore.JOB) or "", "remap")
    if job is not None:
        job.cancel()  # the fragment sees it cancelled and says so


@st.fragment(run_every=1.0)
def _running(job_id: str) -> None:
    job = jobs.registry().get(job_id, "remap")
    try:
        snap = job.snapshot() if job is not None else OneShotSnapshot("failed", error=LOST)
        state, error = snap.status, snap.error
    except ClearSideError as exc:  # the runtime's database is unreachable: say so, the job goes on elsewhere
        state, error = "failed", exc.for_dashboard()
    if state not in FINISHED:
        st.info("Re-mapping with your priorities: the moderator rewrites the disagreements and the decision hinges "
                "under them; the rest of the synthesis is kept…", icon=":material/sync:")
        return
    landed = (job.debate_id, job.version) if state == "done" and job.version else None
    cancelled = job.debate_id if state == "cancelled" and job is not None else None
    st.session_state.update({Explore.JOB: None, Explore.ERROR: error, Explore.LANDED: landed,
                             Explore.CANCELLED: cancelled})
    if landed:
        st.session_state[Explore.VERSION] = job.version  # the versions list opens on the new one
    st.rerun()


def versions_view(debate_id: str, store: Any) -> None:
    try:
        versions = store.versions(debate_id)
    except ClearSideError as exc:
        st.caption(esc(f"The versions cannot be read: {exc.for_dashboard()}"))
        return
    if not versions:
        return
    st.markdown("**Versions of this debate** (the original is always kept as it was)")
    labels = {v.number: f"Version {v.number} · {v.created_at} · {v.label}" for v in versions}
    number = st.selectbox("Show a version's changes", list(labels), index=len(labels) - 1, key=Explore.VERSION,
                          format_func=labels.get)  # option text is shown as plain text
    cache = st.session_state.setdefault(Explore.DIFFS, {})
    if (debate_id, number) not in cache:
        document = Document.model_validate(store.version(debate_id, number).body["document"])
        cache[debate_id, number] = (document, remap.diff(document.remap.original, document.moderator))
    document, changes = cache[debate_id, number]
    diff_view(changes)
    with st.expander(f"Version {number}'s synthesis"):
        moderator_view(document, {})


def explore(document: Document, *, debate_id: str | None = None, store: Any = None, editable: bool = True) -> None:
    """The explore panel under a finished debate; ``editable``: this browser may save versions of it."""
    scope = (debate_id or "doc")[:8]
    st.markdown("#### Explore with your priorities")
    st.caption("Weights re-order the arguments for you; they never score a side or pick a winner.")
    weights = weights_panel()
    weighted_arguments(document, weights)
    stances_panel(document, scope)
    busy = bool(st.session_state.get(Explore.JOB))
    if editable and debate_id and store is not None:
        st.button("Re-map with these priorities", key=Explore.START, on_click=start,
                  args=(document, scope, debate_id, store), disabled=busy, icon=":material/alt_route:",
                  help="Rerun only the moderator under your weights and stances; saved as a new version.")
    elif editable:
        st.caption("Re-mapping needs a saved debate (each re-map is saved as one of its versions): open it from "
                   "the Library to re-map it.")
    else:
        st.caption("Read-only: make an editable copy to re-map this debate.")
    if st.session_state.get(Explore.ERROR):
        st.error(esc(st.session_state[Explore.ERROR]))
    if busy:
        st.button("Cancel the re-map", key=Explore.CANCEL, on_click=cancel, icon=":material/stop_circle:",
                  help="Stop the moderator: no version is saved, and you can re-map again.")
        _running(st.session_state[Explore.JOB])
    landed = st.session_state.get(Explore.LANDED)
    if landed and not busy and landed[0] == debate_id:
        st.success(f"Re-mapped: what changed against the original synthesis. Saved as version {landed[1]}.",
                   icon=":material/check_circle:")
    if not busy and st.session_state.get(Explore.CANCELLED) == debate_id and debate_id:
        st.info("Re-map cancelled: no version was saved.", icon=":material/stop_circle:")
    if debate_id and store is not None:
        versions_view(debate_id, store)
