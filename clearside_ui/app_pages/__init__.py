"""The dashboard's pages: thin Streamlit scripts that st.navigation runs (clearside_ui/app.py); never imported."""
