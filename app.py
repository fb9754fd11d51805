"""ClearSide dashboard entrypoint: `python -m streamlit run app.py` (the dashboard itself is clearside_ui/app.py)."""

from clearside_ui.app import main

main()
