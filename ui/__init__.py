"""Streamlit glue for the dashboard: widgets and views over ``clearside`` (which never imports Streamlit)."""
