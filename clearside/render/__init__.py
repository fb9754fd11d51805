"""Renderers: one debate document, seven output formats.

``render(document, fmt)`` returns text for ``fmt`` in ``FORMATS``:

- ``json``: the schema document itself, pretty-printed;
- ``md``: the Markdown structured report;
- ``quick``: the quick view (short bullets with confidence and uncertainty flags);
- ``script``: the debate script;
- ``argdown``, ``aif``, ``kialo``: the argument map (:mod:`clearside.render.argmap`) as Argdown, AIF JSON (read back
  by ``import``) and Kialo's outline.

All renderers are pure functions of the document: no I/O, no UI.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from clearside.errors import InputError
from clearside.render.aif import aif_text
from clearside.render.argdown import argdown_text
from clearside.render.kialo import kialo_text
from clearside.render.markdown import structured_report
from clearside.render.quick import quick_view
from clearside.render.script import debate_script
from clearside.schema import Document


def json_text(doc: Document) -> str:
    """The document as pretty-printed JSON, as the schema defines it."""
    return json.dumps(doc.dump(), indent=2, ensure_ascii=False) + "\n"


_RENDERERS: dict[str, Callable[[Document], str]] = {
    "json": json_text,
    "md": structured_report,
    "quick": quick_view,
    "script": debate_script,
    "argdown": argdown_text,
    "aif": aif_text,
    "kialo": kialo_text,
}
FORMATS: tuple[str, ...] = tuple(_RENDERERS)


def render(document: Document, fmt: str) -> str:
    """Render ``document`` in ``fmt``; raises ``InputError`` for a format not in ``FORMATS``."""
    renderer = _RENDERERS.get(fmt.strip().lower()) if isinstance(fmt, str) else None
    if renderer is None:
        raise InputError(f"Unknown output format {fmt!r}; choose one of: {', '.join(FORMATS)}.")
    return renderer(document)


__all__ = ["FORMATS", "render", "structured_report", "quick_view", "debate_script", "json_text"]
