"""ClearSide dashboard entrypoint: `streamlit run app.py`."""

import streamlit as st

from ui import settings

st.set_page_config(page_title="ClearSide", page_icon=":material/balance:", layout="wide")
settings.sidebar()
st.navigation([st.Page("app_pages/debate.py", title="Debate", icon=":material/balance:", default=True)]).run()
