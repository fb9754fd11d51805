"""Accessibility additions to Streamlit's own styles: keyboard focus rings, legible captions, headings in order.

* Focus visible (WCAG 2.4.7). Streamlit rings most controls it focuses (buttons, expanders, sliders), but its page
  links show no ring at all, the scrollable main area takes the focus with none, and a text box or select box only
  turns its 1 px border the theme's colour. Each of them gets a 2 px ring in the theme's primary colour (#1F4E79,
  8.6:1 on white: ``primaryColor`` in .streamlit/config.toml), for the keyboard only (``:focus-visible``; a text
  box is focus-visible however it was focused). A link's ring is ``!important``: the sidebar's page links set
  ``outline: none`` on focus with a more specific rule of their own.
* Contrast (WCAG 1.4.3). A caption's inline code (an address, a comparison's id) keeps Streamlit's green code
  colour under the caption's 60 % opacity: 3:1, below AA's 4.5:1. It takes the text's colour instead (5:1).
* Headings in order (WCAG 1.3.1). Under a page's title (h1) come h2s: a debate's question, written as an h2, is
  drawn as large as the h4 it was, and a page's sections (``st.header``) as large as the ``st.subheader`` they were.

Fixed text: no user or model text goes into it. ``tests/test_browser_a11y.py`` runs axe-core on every page and checks
the ring on every control a keyboard user reaches on the way through a debate.
"""

from __future__ import annotations

import streamlit as st

RING = "#1F4E79"
TEXT = "#111827"  # the theme's textColor
CSS = f"""<style>
a:focus-visible {{ outline: 2px solid {RING} !important; outline-offset: 2px; border-radius: 0.25rem; }}
[data-testid="stMain"]:focus-visible {{ outline: 2px solid {RING}; outline-offset: -2px; }}
[data-testid="stTextAreaRootElement"]:has(textarea:focus-visible),
[data-testid="stTextInputRootElement"]:has(input:focus-visible),
[data-testid="stNumberInputContainer"]:has(input:focus-visible),
[data-testid="stSelectbox"] [role="group"]:has(input:focus-visible),
[data-testid="stMultiSelect"] [role="group"]:has(input:focus-visible) {{ box-shadow: 0 0 0 2px {RING}; }}
[data-testid="stCaptionContainer"] code {{ color: {TEXT}; }}
[data-testid="stMain"] [data-testid="stMarkdown"] h2 {{ font-size: 1.5rem; padding-top: 0.5rem; }}
[data-testid="stMain"] [data-testid="stHeading"] h2 {{ font-size: 1.75rem; padding-top: 0.75rem; }}
</style>"""


def styles() -> None:
    """Add the stylesheet to the page (a style-only ``st.html`` is kept out of the layout: it takes no space)."""
    st.html(CSS)
