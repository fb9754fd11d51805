"""The Study page's views, for a study's creator: the form that creates a study, this browser's studies, one study's
documents as they are made, its participant link, and its results (the gain per arm with its 95 % interval and n,
the differences between arms, the participants an effect needs) with the CSV. A study another browser created is
refused, never shown. Every user and model string goes through ``esc``.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError
from clearside.quality import study
from clearside.sources.ingest import MAX_FILES
from clearside.store.studies import ARMS
from clearside_ui import page_path
from clearside_ui import study_actions as actions
from clearside_ui.format import MISSING, esc

PAGE = "app_pages/study.py"
COMPARISONS = {"after-before": "After reading, minus before", "retest-before": "At the re-test, minus before"}
POLL_SECONDS = 2.0
ARM_HELP = {"debate": "ClearSide's debate: both cases written blind, then the moderator's map.",
            "single": "The control: one model call writes the same document in a single pass.",
            "sources": "No model: the participant reads the files you attach to the question."}


def create_form() -> None:
    """Title, questions (one a line), arms, and for the sources arm each question's files."""
    if st.session_state.pop(actions.DELETED, None):
        st.success("The study was deleted.", icon=":material/delete:")
    for arm in ARMS:
        st.session_state.setdefault(actions.arm_key(arm), arm in study.spec.DEFAULT_ARMS)
    st.markdown("#### New study")
    st.text_input("Study title", key=actions.TITLE, max_chars=study.spec.MAX_TITLE)
    st.text_area(f"Questions, one a line (at most {study.MAX_QUESTIONS})", key=actions.QUESTIONS, height=110)
    st.markdown("Arms (each participant is drawn one, at random):")
    for arm, help_text in ARM_HELP.items():
        st.checkbox(study.ARM_LABELS[arm].capitalize(), key=actions.arm_key(arm), help=help_text)
    if "sources" in actions.chosen_arms():
        for number, line in enumerate(actions.question_lines(), start=1):
            st.file_uploader(f"Sources for question {number}: {esc(line[:80])}", accept_multiple_files=True,
                             key=actions.files_key(number), help=f"Up to {MAX_FILES} files: text, Markdown, HTML, "
                                                                 "PDF or CSV.")
    st.caption("The documents are made once, with the model chosen in the sidebar, and shared by every participant "
               "of an arm. Participants give no name. Only this browser sees the results.")
    st.button("Create study", type="primary", on_click=actions.create, key=actions.PREFIX + "create")
    if st.session_state.get(actions.CREATE_ERROR):
        st.error(esc(st.session_state[actions.CREATE_ERROR]))


def studies() -> None:
    """This browser's studies, newest first, each a link."""
    found = actions.mine()
    if not found:
        return
    st.markdown("#### Your studies")
    for made in found:
        st.page_link(page_path(PAGE), label=f"{esc(made.title)} · {made.created_at}",
                     query_params={"study": made.id}, icon=":material/science:")


def _status_table(found: dict) -> None:
    rows = [{"Question": item["question"], "Arm": study.ARM_LABELS[item["arm"]], "Status": item["status"]}
            for item in found["items"]]
    st.dataframe(rows, hide_index=True, placeholder=MISSING, key=actions.table_key("status"))


def generation(study_id: str) -> None:
    """The documents as they are made, redrawn every 2 s until all are ready (then the whole page reruns)."""
    found = actions.status(study_id)
    if found["ready"]:
        return

    @st.fragment(run_every=POLL_SECONDS)
    def watch() -> None:
        now = actions.status(study_id)
        if now["ready"]:
            st.rerun()
        st.info("Making the study's documents: participants can join once every one is ready.",
                icon=":material/hourglass_top:")
        _status_table(now)
        if any(item["status"] in ("failed", "cancelled", "interrupted") for item in now["items"]):
            st.button("Retry the failed documents", on_click=actions.retry, args=(study_id,),
                      key=actions.PREFIX + "retry")

    watch()


def opened(study_id: str) -> None:
    """One study: refused unless this browser created it; else its documents, link and results."""
    try:
        found = actions.status(study_id)
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()), icon=":material/lock:")
        return
    st.markdown(f"## {esc(found['title'])}")
    st.caption(" · ".join(f"Question {n}: {esc(q)}" for n, q in enumerate(found["questions"], start=1)))
    if not found["ready"]:
        generation(study_id)
        return
    _status_table(found)
    st.markdown("#### Participant link")
    st.caption("Send it to every participant: opening it draws each one a question and an arm. Each participant then "
               "gets their own link, for the re-test.")
    st.code(actions.join_link(study_id), language=None)
    results(study_id)
    delete(study_id)


def delete(study_id: str) -> None:
    """Deleting a study takes a second, explicit click."""
    with st.expander("Delete this study"):
        st.caption("Deletes the study, its participant link, every participant's answers and its results. Its "
                   "debates stay in your Library. This cannot be undone.")
        sure = st.checkbox("Yes, delete the answers too", key=actions.DELETE + "_sure")
        st.button("Delete study", disabled=not sure, on_click=actions.delete, args=(study_id,), key=actions.DELETE)


def _interval(row: dict) -> str:
    if row.get("ci_low") is None:
        return "needs 2 or more" if row.get("n", row.get("n_a")) else ""
    return f"{row['ci_low']:+.2f} to {row['ci_high']:+.2f}"


def results(study_id: str) -> None:
    """The gain per arm, the differences between arms, the CSV."""
    found = actions.results(study_id)
    st.markdown("#### Results")
    st.markdown(f"{found['participants']} participant{'s' if found['participants'] != 1 else ''} joined: "
                + ", ".join(f"{esc(data['label'])} {data['joined']}" for data in found["arms"].values()) + ".")
    for name, label in COMPARISONS.items():
        st.markdown(f"##### {label}")
        st.dataframe([{"Arm": data["label"], "Measure": row["label"], "Mean gain": row["mean"],
                       "95 % interval": _interval(row), "n": row["n"]}
                      for data in found["arms"].values() for row in data["gains"][name].values()],
                     hide_index=True, placeholder=MISSING, key=actions.table_key(f"gains_{name}"))
    st.markdown("##### Between arms")
    st.dataframe([{"Comparison": f"{study.ARM_LABELS[d['b']]} minus {study.ARM_LABELS[d['a']]}",
                   "When": COMPARISONS[d["comparison"]], "Measure": d["label"], "Difference": d["diff"],
                   "95 % interval": _interval(d), "n": f"{d['n_a']} and {d['n_b']}", "d": d["d"],
                   "Per arm to detect this d": d["per_arm_needed"]}
                  for d in found["differences"]], hide_index=True,
                 placeholder=MISSING, key=actions.table_key("differences"))
    st.caption("Counts of the reasons participants wrote that match the question's arguments (an approximate match), "
               "self-reported, from small groups: read docs/quality/study.md before drawing conclusions.")
    st.download_button("Download CSV", actions.csv_text(study_id), file_name=f"clearside-study-{study_id}.csv",
                       mime="text/csv", key=actions.CSV, on_click="ignore")


def sample_size() -> None:
    """Participants per arm a standardized difference needs (two-sided alpha 0.05, power 0.8)."""
    with st.expander("How many participants does an effect need?"):
        d = st.number_input("Standardized difference d (0.2 small, 0.5 medium, 0.8 large)", min_value=0.05,
                            max_value=3.0, value=0.5, step=0.05, key=actions.SAMPLE_D)
        found = study.per_arm(d)
        st.markdown(f"**{found['t']} participants per arm** (two-sample t-test, two-sided alpha 0.05, power 0.8; "
                    f"{found['normal']} by the normal approximation).")
