"""The dashboard: the sidebar, the browser's ownership cookie and the pages (st.navigation).

Run it with ``python -m streamlit run app.py`` from the repository (that ``app.py`` calls :func:`main`), with
``clearside ui``, or with ``python -m streamlit run`` on this file.
"""

import logging

import streamlit as st

from clearside.errors import ClearSideError
from clearside_ui import a11y, jobs, links, owner, page_path, phone, settings, understanding_view
from clearside_ui.format import esc

# The tab's icon, a balance, drawn inline: Streamlit fetches a ":material/..." page icon from a font CDN (a request
# that leaves the machine, and fails offline); an SVG text becomes a data: URL and nothing is fetched.
PAGE_ICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g fill="none" stroke="#1F4E79" '
             'stroke-width="2" stroke-linecap="round"><path d="M12 3v17M7 21h10M3 6h18M5 6 2 13M5 6l3 7M19 6l-3 7'
             'M19 6l3 7"/></g><path d="M1.5 13h7a3.5 3.5 0 0 1-7 0zM15.5 13h7a3.5 3.5 0 0 1-7 0z" fill="#1F4E79"/>'
             '</svg>')

log = logging.getLogger("clearside_ui")


def main() -> None:
    st.set_page_config(page_title="ClearSide", page_icon=PAGE_ICON, layout="wide")
    a11y.styles()  # a keyboard focus ring on every control (WCAG 2.4.7)
    try:
        pages()
    except ClearSideError as exc:  # a store that cannot be opened, and any typed error a page let through
        log.error("A page stopped on %s: %s", type(exc).__name__, exc, exc_info=exc)  # the operator's details
        st.error(esc(exc.for_dashboard()), icon=":material/error:")
        st.caption("Fix what the message names, then reload the page: nothing saved is lost.")


def pages() -> None:
    """The sidebar and the page the user chose."""
    jobs.adopt_live_files()  # once per database: live transcripts an earlier ClearSide kept as JSON files
    # this server hosts the durable runtime: it runs queued debates and finishes what a stopped host left, unasked
    unhosted = jobs.hosting()
    settings.sidebar()
    if unhosted:
        st.sidebar.warning(f"Debates cannot be generated here: {esc(unhosted)}", icon=":material/cloud_off:")
    with st.sidebar:
        understanding_view.switch()  # the understanding check, off by default
        owner.keep()  # the browser's ownership cookie: debates made here stay editable across reloads and tabs
        phone.close_sidebar_after_navigation()
    page = st.navigation([
        st.Page(page_path("app_pages/debate.py"), title="Debate", icon=":material/balance:", default=True),
        st.Page(page_path("app_pages/live.py"), title="Live debate", icon=":material/record_voice_over:"),
        st.Page(page_path("app_pages/perspectives.py"), title="Perspectives", icon=":material/diversity_3:"),
        st.Page(page_path("app_pages/timeline.py"), title="Timeline", icon=":material/timeline:"),
        st.Page(page_path("app_pages/library.py"), title="Library", icon=":material/folder_open:"),
        st.Page(page_path("app_pages/compare.py"), title="Compare models", icon=":material/view_column:"),
        st.Page(page_path("app_pages/regression.py"), title="Regression", icon=":material/monitoring:"),
        st.Page(page_path("app_pages/understanding.py"), title="Understanding", icon=":material/psychology:"),
        st.Page(page_path("app_pages/study.py"), title="Study", icon=":material/science:"),
        st.Page(page_path("app_pages/participate.py"), title="Participate", icon=":material/how_to_reg:"),
    ])
    links.arrive(page.url_path)  # a link opened from another page is the user's, never a stale rerun's
    page.run()


if __name__ == "__main__":  # Streamlit runs its main script as __main__
    main()
