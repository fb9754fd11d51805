"""The Compare models page: one question debated by 2 to 4 provider:model choices side by side.

A column per model, a metrics table and charts, and which arguments the models share ("in k of n models").
Every debate is saved as it runs; ``?compare=<batch>`` reopens a comparison (the share link), here or elsewhere.
"""

import streamlit as st

from clearside.errors import ClearSideError, InputError
from clearside.schema import Document
from clearside_ui import compare_view as cv
from clearside_ui import page_path
from clearside_ui.inputs import question_box
from clearside_ui.view import POLL_SECONDS, document_view, esc, follow, poll_changed


def model_rows() -> None:
    rows = cv.rows()
    st.markdown(f"**Models** ({cv.MIN_MODELS} to {cv.MAX_MODELS})")
    for number, row in enumerate(rows, 1):
        field, heat, remove = st.columns([5, 2, 2], vertical_alignment="bottom")
        field.text_input(f"Model {number}", key=f"cmp_model_{row}", max_chars=300, persist_state="session",
                         placeholder="provider:model, e.g. ollama:llama3.2", help=cv.SPEC_HELP)
        cv.row_temperature(row)  # a new row starts at the sidebar's temperature
        heat.number_input(f"Temperature {number}", min_value=0.0, max_value=1.5, step=0.05, format="%.2f",
                          key=f"cmp_temp_{row}", persist_state="session",
                          help="Each row is a configuration: the same model may be compared at two temperatures.")
        remove.button("Remove", key=f"cmp_remove_{row}", on_click=cv.remove_row, args=(row,), width="stretch",
                      disabled=len(rows) <= cv.MIN_MODELS, help=f"A comparison needs at least {cv.MIN_MODELS} "
                      "models.")
    st.button("Add a model", key="cmp_add", on_click=cv.add_row, icon=":material/add:",
              disabled=len(rows) >= cv.MAX_MODELS, help=f"Up to {cv.MAX_MODELS} models.")


def inputs(batch: str | None, job) -> None:
    busy = job is not None and job.state != "done"
    question_box("cmp_question", error_key="cmp_error",
                 placeholder="e.g. Should the U.S. impose a temporary moratorium on new AI data centers?")
    model_rows()
    with st.container(horizontal=True):  # at their own width, wrapping on a narrow screen: never cut off
        st.button("Compare", key="cmp_start", type="primary", on_click=cv.start, disabled=busy,
                  icon=":material/view_column:", help="Runs every model's debate at once; each is saved as it goes.")
        st.button("New comparison", key="cmp_new", on_click=cv.show, args=(None,), disabled=not batch)
    if busy:
        st.button("Cancel", key="cmp_cancel", on_click=job.cancel, icon=":material/stop_circle:",
                  help="Stop every model's debate. Finished debates and sections stay saved; each unfinished one "
                       "can be resumed from the Library.")
    if st.session_state.get("cmp_error"):
        st.error(esc(st.session_state["cmp_error"]))


# each redraw costs every following tab (bench/ui_load.py): drawn by follow(), slower while nothing moves
def watch(batch: str, shown: tuple) -> None:
    """While the debates run: each model's status; the whole page redraws when one changes."""
    if cv.signature(batch) != shown:
        st.rerun()
    elsewhere = cv.find(batch) is None
    lines = cv.statuses(batch)
    poll_changed("compare", (elsewhere, *((line["label"], line["status"], tuple(sorted(line["agents"].items())))
                                          for line in lines)))
    st.markdown("**Debating…**" if not elsewhere else
                "**Still running elsewhere** (another app or the command line), or it was interrupted.")
    for line in lines:
        agents = f" — {cv.agents_line(line['agents'])}" if line["agents"] and line["status"] == "running" else ""
        st.markdown(f"{cv.ICONS.get(line['status'], '')} **{esc(line['label'])}**: {line['status']}{agents}")


def model_column(label: str, result: dict, document: dict | None) -> None:
    st.markdown(f"**{esc(label)}**")
    st.caption(cv.status_label(result))
    if result["status"] == "failed":
        st.error(esc(result.get("error") or "This model's debate failed."))
    elif result["status"] == "cancelled":
        st.info("Cancelled. Whatever finished is saved: open it to resume it." if result.get("debate_id")
                else "Cancelled before it started.")
    elif result["status"] == "done" and document is None:
        st.warning("This debate is no longer in the store (deleted from the Library?).")
    if document is not None:
        doc = Document.model_validate(document)
        for side, title, colour in ((doc.pro, "FOR", "green"), (doc.con, "AGAINST", "red")):
            st.markdown(f"**:{colour}[{title}]**\n\n" + "\n".join(f"- {esc(a.claim)}" for a in side.arguments))
        st.markdown("**Decision hinges**\n\n" + "\n".join(f"- {esc(h)}" for h in doc.moderator.decision_hinges))
    if result.get("debate_id"):
        text = "Open what was saved" if result["status"] in ("failed", "cancelled") else "Open the full debate"
        st.page_link(page_path(cv.DEBATE), label=text, icon=":material/open_in_new:",
                     query_params={"debate": result["debate_id"]})


def full_debate(documents: dict) -> None:
    if not documents:
        return
    options = list(documents)
    if st.session_state.get("cmp_full") not in options:
        st.session_state["cmp_full"] = options[0]
    with st.expander("Read one debate in full"):
        label = st.selectbox("Model", options, key="cmp_full")
        document_view(Document.model_validate(documents[label]))


def metrics_section(report: dict) -> None:
    frame = cv.metrics_frame(report)
    if frame is None:
        return
    st.header("Metrics")
    st.caption("Headline metrics of each debate (the column *better* says which way is better); no reference "
               "answers exist for a free question, so coverage and stance are absent.")
    st.dataframe(frame, hide_index=True, width="stretch", height=35 * (len(frame) + 1) + 3)
    for figure in (cv.quality_figure(report), cv.cost_figure(report)):
        if figure is not None:
            st.plotly_chart(figure, width="stretch")
    costs = cv.cost_frame(report)
    if costs is not None:
        st.caption("Time and tokens: wall time from start to finish, model time summed over every call, the mean "
                   "wait for a call's first token (where the backend reports it) and the tokens generated.")
        st.dataframe(costs, hide_index=True, width="stretch", key="cmp_costs")


def agreement_section(report: dict, running: bool) -> None:
    st.header("Arguments across models")
    if report.get("agreement") is None or running:
        st.info("Shown when every model's debate has finished.")
        return
    if not report["agreement"]:
        st.info("Needs at least two finished debates.")
        return
    st.caption(esc(cv.agreement_caption(report)))
    for side, title in cv.SIDES.items():
        frame = cv.agreement_frame(report, side)
        if frame is not None:
            st.markdown(f"**{title}**")
            st.dataframe(frame, hide_index=True, width="stretch")


def comparison(batch: str) -> None:
    shown = cv.signature(batch)  # before the report: a status that changes in between reruns the page, not lost
    report, documents, running = cv.result(batch)
    st.divider()
    st.markdown(f"**Question:** {esc(report['question'])}")
    st.caption(f"Comparison `{esc(batch)}` · share this page's address to reopen it.")
    if report.get("error"):
        st.error(esc(report["error"]))
    if running:
        follow("compare", POLL_SECONDS, watch, batch, shown)
    for column, label in zip(st.columns(len(report["models"]), border=True), report["models"], strict=True):
        with column:
            model_column(label, report["results"][label], documents.get(label))
    full_debate(documents)
    metrics_section(report)
    agreement_section(report, running)


def earlier() -> None:
    items = cv.earlier()
    if not items:
        return
    st.divider()
    st.header("Earlier comparisons")
    share = st.column_config.LinkColumn("Share link", display_text="Open ↗", help="A link that reopens it.")
    st.dataframe([{k: v for k, v in item.items() if k not in ("id", "label")} for item in items], hide_index=True,
                 width="stretch", column_config={"Link": share})
    labels = {item["id"]: item["label"] for item in items}
    pick, open_ = st.columns([5, 1], vertical_alignment="bottom")
    chosen = pick.selectbox("Comparison", list(labels), key="cmp_pick", format_func=labels.get)
    open_.button("Open", key="cmp_open", on_click=cv.open_batch, args=(chosen,), width="stretch")


st.title("Compare models")
st.caption("The same question debated by 2 to 4 models side by side: their cases, their metrics, and the arguments "
           "they share.")
try:
    batch = cv.current()
    job = cv.find(batch)
    inputs(batch, job)
    if batch:
        try:
            comparison(batch)
        except InputError as exc:  # a link to a comparison this store does not have
            st.error(esc(f"This link does not open a saved comparison. {exc}"))
    earlier()
except ClearSideError as exc:  # an unknown comparison id, or the store is unreachable
    st.error(esc(exc.for_dashboard()))
