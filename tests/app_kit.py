"""The dashboard tests' one AppTest kit (tests/test_app_*.py): open a page of app.py on a provider, run it checking
that it raised nothing, read what it shows, and rerun it until a state is reached (timers never fire in AppTest).

    at = open_page(LIVE, ScriptedProvider(), query={"live": debate_id})
    settle(at, lambda a: has(a, "live_resume"))
    assert "finished" in plain(at)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import helpers
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parent.parent / "app.py")
COMPARE = "clearside_ui/app_pages/compare.py"
LIBRARY = "clearside_ui/app_pages/library.py"
LIVE = "clearside_ui/app_pages/live.py"
PERSPECTIVES = "clearside_ui/app_pages/perspectives.py"
REGRESSION = "clearside_ui/app_pages/regression.py"
TIMELINE = "clearside_ui/app_pages/timeline.py"
TEXT_KINDS = ("markdown", "caption", "warning", "error", "success", "info")  # the elements that hold the page's text

__all__ = ["APP", "COMPARE", "LIBRARY", "LIVE", "PERSPECTIVES", "REGRESSION", "TEXT_KINDS", "TIMELINE", "AppTest",
           "debate_app", "generate", "has", "of_kind", "open_page", "plain", "run", "settle", "settle_debate",
           "text_of", "texts"]


def run(target: Any) -> AppTest:
    """Run the app (or the app of a widget just set or clicked) and check that the page raised nothing."""
    at = target.run()
    assert not at.exception, at.exception
    return at


def open_page(page: str | None = None, provider: Any = None, *, query: dict[str, str] | None = None,
              state: dict[str, Any] | None = None, secrets: dict[str, str] | None = None,
              timeout: float = 30) -> AppTest:
    """A new session of the app on ``page`` (None: the Debate page), run once. ``provider`` is the sidebar's model
    (``provider_override``; None leaves the sidebar's own), ``query`` the address's parameters, ``state`` further
    session state (a browser's ``owner_key``, a ``document``...) and ``secrets`` what ``st.secrets`` holds."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in (secrets or {}).items():
        at.secrets[key] = value
    if provider is not None:
        at.session_state["provider_override"] = provider
    for key, value in (state or {}).items():
        at.session_state[key] = value
    for name, value in (query or {}).items():
        at.query_params[name] = value
    if page is not None:
        at.switch_page(page)
    return run(at)


def texts(at: AppTest) -> list[str]:
    """Every text element's value, Markdown escapes included."""
    return [e.value for kind in TEXT_KINDS for e in at.get(kind)]


def plain(at: AppTest) -> str:
    """The page's text with Markdown escapes removed (what a reader sees)."""
    return "\n".join(texts(at)).replace("\\", "")


def of_kind(at: AppTest, kind: str) -> str:
    """The text of every ``kind`` element ("info", "error"...), one a line, Markdown escapes removed."""
    return "\n".join(e.value for e in at.get(kind)).replace("\\", "")


def text_of(at: AppTest) -> str:
    """The Debate page's Markdown, then its captions, as written (escapes kept)."""
    return "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)


def has(at: AppTest, key: str) -> bool:
    """Whether the page shows the button ``key``."""
    return any(button.key == key for button in at.button)


def settle(at: AppTest, until, *, describe=plain, timeout: float = 30, pause: float = 0.05) -> AppTest:
    """Rerun the page until ``until(at)`` holds (see helpers.settle); ``describe`` says what it showed if never."""
    return helpers.settle(at, until, describe=describe, timeout=timeout, pause=pause)


def settle_debate(at: AppTest, until, timeout: float = 30) -> AppTest:
    """:func:`settle` on the Debate page, described by :func:`text_of` if it never gets there."""
    return settle(at, until, describe=text_of, timeout=timeout)


def debate_app() -> tuple[AppTest, Any]:
    """The Debate page on a fresh scripted provider (the tests enqueue its replies), run once; and the provider."""
    from clearside.providers.scripted import ScriptedProvider

    provider = ScriptedProvider()
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["provider_override"] = provider
    at.run()
    return at, provider


def generate(at: AppTest, question: str) -> None:
    """Type ``question`` on the Debate page and press Generate."""
    at.text_area(key="question").set_value(question)
    at.button(key="generate").click().run()
