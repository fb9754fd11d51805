"""Streamlit glue for the dashboard: widgets and views over ``clearside`` (which never imports Streamlit).

The pages live in ``app_pages/`` (not ``pages/``: Streamlit would take a ``pages/`` folder beside the main
script for its old multipage layout and never run ``app.py``'s st.navigation). ``app.py`` is the entry: the
repository's ``app.py`` calls it, ``clearside ui`` runs it. Pages are named relative to this package's directory
(``"app_pages/debate.py"``, as the mode registry names them) and handed to Streamlit as absolute paths by
:func:`page_path`, so every link resolves whichever entry script started the app.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent


def page_path(name: str) -> str:
    """The absolute path of the page ``name`` (``"app_pages/debate.py"``), for st.Page, st.page_link, st.switch_page."""
    path = HERE / name
    if not path.is_file():
        raise FileNotFoundError(f"No dashboard page {name!r} in {HERE}: name a file under clearside_ui/app_pages/.")
    return str(path)
