"""Explore a finished debate with the user's priorities (issue 16 items 3 and 4): value weights and assumption
stances, below the debate on the Debate page.

- **Weights**: a slider per argument category, 0 to 3 (1 is the default). Moving one re-orders both cases'
  arguments at once (:func:`clearside.remap.weighted_order`, no model call): heavier categories first, a weight
  of 0 sets a category aside (its arguments collapse at the end of each case, never removed). Both cases are
  ordered by the same rule; nothing is totalled, scored or charted per side.
- **Stances**: accept, reject or unsure for each listed assumption (P1.. of the case FOR, C1.. of AGAINST).
- **Re-map with these priorities** reruns only the moderator under them (:func:`clearside.remap.remap`) in a
  background thread of this server. The job lives in a process-wide registry, so a page rerun (or a reload)
  finds it again, and a re-map of a saved debate is saved as its next version as soon as it is done: nothing
  is lost if the tab closes. The result is shown as a diff against the original synthesis, and the debate's
  versions are listed with theirs. The original debate is never changed.

Every assumption, claim and synthesis item is model text: all of it goes through :func:`esc`.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import streamlit as st

from clearside import remap
from clearside.engine import Engine
from clearside.errors import ClearSideError, InputError
from clearside.schema import CATEGORY_VALUES, AssumptionStance, Document, Weights
from clearside_ui import settings
from clearside_ui.view import esc, moderator_view

NO_STANCE = "no stance"
STANCE_OPTIONS = (NO_STANCE, *remap.STANCES)
MARKS = {"high": "▲▲ ", "raised": "▲ ", "normal": "", "set_aside": ""}
SECTION_NAMES = {"decision_hinges": "Decision hinges", "core_disagreements": "Core disagreements",
                 "areas_of_agreement": "Areas of agreement", "assumption_conflicts": "Assumption conflicts",
                 "evidence_gaps": "Evidence gaps"}


class RemapJob:
    """One re-map running in a thread of this server; ``state``: running, done or failed."""

    def __init__(self, document: Document, weights: Weights | None, stances: list[AssumptionStance], provider: Any,
                 *, temperature: float, store: Any = None, debate_id: str | None = None) -> None:
        self.id = uuid.uuid4().hex
        self.debate_id, self.state, self.error = debate_id, "running", ""
        self.document: Document | None = None
        self.changes: dict[str, Any] | None = None
        self.version: int | None = None
        self._args = (document, weights, stances, provider, temperature, store)
        self.thread = threading.Thread(target=self._run, name="clearside-remap", daemon=True)

    def start(self) -> RemapJob:
        self.thread.start()
        return self

    def _run(self) -> None:
        document, weights, stances, provider, temperature, store = self._args
        try:
            engine = Engine(provider, temperature=temperature)
            remapped = remap.remap(document, engine, weights=weights, stances=stances)
            self.changes = remap.diff(document.moderator, remapped.moderator, engine.embeddings)
            if store is not None and self.debate_id:
                self.version = remap.save_version(store, self.debate_id, remapped, provider)
            self.document, self.state = remapped, "done"
        except ClearSideError as exc:
            self.error, self.state = exc.for_dashboard(), "failed"
        except Exception as exc:  # noqa: BLE001 - a thread's failure must reach the page, not vanish
            self.error, self.state = f"The re-map failed: {exc}", "failed"


@st.cache_resource
def registry() -> dict[str, RemapJob]:
    return {}


def current_weights() -> Weights:
    """The sliders' weights (categories left at 1 are unset)."""
    values = {c: int(st.session_state.get(f"weight_{c}", 1)) for c in CATEGORY_VALUES}
    return Weights(**{c: w for c, w in values.items() if w != 1})


def _stance_key(scope: str, side: str, index: int) -> str:
    return f"stance_{scope}_{side}_{index}"


def current_stances(document: Document, scope: str) -> list[AssumptionStance]:
    return [AssumptionStance(side=side, index=i, assumption=text, stance=chosen)
            for side, i, _, text in remap.assumption_ids(document)
            if (chosen := st.session_state.get(_stance_key(scope, side, i), NO_STANCE)) != NO_STANCE]


def weights_panel() -> Weights:
    st.markdown("**How much each kind of argument matters to you** (0 sets it aside, 1 is the default)")
    columns = st.columns(3)
    for number, category in enumerate(CATEGORY_VALUES):
        columns[number % 3].slider(category.capitalize(), 0, remap.MAX_WEIGHT, 1, key=f"weight_{category}")
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
        if not weights.dump() and not stances:
            raise InputError("Set a weight other than 1 or a stance on an assumption first.")
        job = RemapJob(document, weights if weights.dump() else None, stances, settings.build_provider(),
                       temperature=settings.temperature(), store=store, debate_id=debate_id).start()
    except ClearSideError as exc:
        st.session_state["remap_error"] = exc.for_dashboard()
        return
    registry()[job.id] = job
    st.session_state.update(remap_job=job.id, remap_error="", remap_shown=job.id)


@st.fragment(run_every=1.0)
def _running(job_id: str) -> None:
    job = registry().get(job_id)
    if job is None or job.state != "running":
        st.session_state["remap_job"] = None
        if job is not None and job.version:
            st.session_state["remap_version"] = job.version  # the versions list opens on the new one
        st.rerun()
    st.info("Re-mapping with your priorities: the moderator is rerun, only it…", icon=":material/sync:")


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
    number = st.selectbox("Show a version's changes", list(labels), index=len(labels) - 1, key="remap_version",
                          format_func=labels.get)  # option text is shown as plain text
    cache = st.session_state.setdefault("remap_diffs", {})
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
    job = registry().get(st.session_state.get("remap_job") or "")
    busy = job is not None and job.state == "running"
    if editable:
        st.button("Re-map with these priorities", key="remap_start", on_click=start,
                  args=(document, scope, debate_id, store), disabled=busy, icon=":material/alt_route:",
                  help="Rerun only the moderator under your weights and stances; saved as a new version.")
    else:
        st.caption("Read-only: make an editable copy to re-map this debate.")
    if st.session_state.get("remap_error"):
        st.error(esc(st.session_state["remap_error"]))
    if busy:
        _running(job.id)
    shown = registry().get(st.session_state.get("remap_shown") or "")
    if shown is not None and shown.debate_id == debate_id and shown.state != "running":
        if shown.state == "failed":
            st.error(esc(shown.error))
        elif shown.changes is not None:
            saved = f" Saved as version {shown.version}." if shown.version else ""
            st.success(f"Re-mapped: what changed against the original synthesis.{saved}",
                       icon=":material/check_circle:")
            if shown.version is None:
                diff_view(shown.changes)
    if debate_id and store is not None:
        versions_view(debate_id, store)
