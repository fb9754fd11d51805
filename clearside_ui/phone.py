"""On a phone the sidebar covers the page: after the user picks a page from its navigation, it closes.

Streamlit leaves the sidebar open after navigating on a narrow screen, so the page the user
asked for stays hidden behind it. One listener per browser tab watches clicks on the
sidebar's page links; when the sidebar overlays the page (a phone, not a desktop where the
two sit side by side) it presses the sidebar's own collapse button. The script is fixed
text, never user text.
"""

from __future__ import annotations

import streamlit as st

_SCRIPT = """<script>(() => {
  if (window.__csSidebarCloser) return;
  window.__csSidebarCloser = true;
  const overlays = () => {
    const side = document.querySelector('section[data-testid="stSidebar"]');
    const main = document.querySelector('[data-testid="stMain"]');
    if (!side || !main || side.getAttribute('data-collapsed') !== 'false') return false;
    return main.getBoundingClientRect().left < side.getBoundingClientRect().right - 1;
  };
  document.addEventListener('click', (event) => {
    if (!event.target.closest('[data-testid="stSidebarNav"] a')) return;
    setTimeout(() => {
      if (!overlays()) return;
      const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button')
        || document.querySelector('[data-testid="stSidebarCollapseButton"]');
      if (button) button.click();
    }, 50);
  }, true);
})();</script>"""


def close_sidebar_after_navigation() -> None:
    """Install (once per tab) the listener that closes an overlaying sidebar after a page link is clicked."""
    st.html(_SCRIPT, unsafe_allow_javascript=True, width="content")
