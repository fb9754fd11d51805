"""The argument map on the dashboard (docs/tools/argument-map.md): the drawing, its text alternative, a chosen node's
text with the challenge actions; and, on the Library page, a map file read: a ClearSide export or a map ClearSide
made is imported, a foreign AIF map kept as a read-only map (clearside_ui/maps_view.py) with what could and could not
be placed.

The drawing is an SVG built in Python (:mod:`clearside.render.mapsvg`: no script, no font, nothing from another
host), every text XML-escaped, shown as an image (an SVG in an image runs nothing); a wide layout (two columns)
and a narrow one (one column) are both sent, a CSS media query showing the one that fits. Its text alternative is
a nested list of the same graph (every string through ``esc``). The keys of this module's widgets live here
(``argmap_``), not in ``state``: they belong to the map alone.
"""

from __future__ import annotations

import base64
from xml.sax.saxutils import quoteattr

import streamlit as st

from clearside.errors import ClearSideError, InputError
from clearside.inputs import clean, loads
from clearside.modes import import_data
from clearside.render.argmap import PROPOSITION, ArgMap, argument_map
from clearside.render.mapsvg import map_svg, outline
from clearside.schema import ACTIONS, Document
from clearside_ui import jobs, maps_view, page_path, view
from clearside_ui.debate_actions import start_challenge
from clearside_ui.format import esc

PREFIX = "argmap_"
NODE = "argmap_node"
UPLOAD = "argmap_upload"
IMPORTED = "argmap_imported"  # (the uploaded file's id, the message, the new debate's or map's id, its kind): once
LEGEND = ("FOR's arguments and the assumptions its case rests on in green (left), AGAINST's in red (right); "
          "assumptions have dashed borders. Red dashed links: assumption conflicts. Grey links: what rests on a "
          "decision hinge (found by text similarity: a guide, not a verdict).")
_STYLE = ("<style>.cs-map-narrow{display:none}@media (max-width: 700px){.cs-map-wide{display:none}"
          ".cs-map-narrow{display:block}}.cs-map img{height:auto;width:100%;max-width:100%}</style>")
MAX_UPLOAD_MB = 5


def key(name: str) -> str:
    return f"{PREFIX}{name}"


def _image(svg: str, alt: str) -> str:
    """An SVG as an image (an SVG in an image runs nothing, and the dashboard's HTML keeps images only)."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{data}" alt={quoteattr(alt)}>'


def drawing(graph: ArgMap) -> str:
    """Both layouts of the map in one block, the one that fits the screen shown; the SVGs are built with every text
    XML-escaped, the alternative text says where the same map is as a list."""
    alt = f"Argument map: {clean(graph.title)} (the same map is under the tab As a list)"
    return (f'{_STYLE}<div class="cs-map"><div class="cs-map-wide">{_image(map_svg(graph), alt)}</div>'
            f'<div class="cs-map-narrow">{_image(map_svg(graph, narrow=True), alt)}</div></div>')


def outline_markdown(rows: list[tuple[int, str]]) -> str:
    """The map's nested list as Markdown, every line escaped."""
    return "\n".join(f"{'    ' * depth}- {esc(text)}" for depth, text in rows)


def _chosen(graph: ArgMap, where: str, editable: bool) -> None:
    choices = [node.id for node in graph.nodes]
    labels = {node.id: f"{node.label}: {node.text[:70]}" for node in graph.nodes}
    chosen = st.selectbox("Choose a node", choices, key=key(f"{where}_node"), format_func=lambda n: labels[n])
    node = graph.node(chosen)
    st.markdown(f"**{esc(node.label)}**: {esc(node.text)}")
    if node.detail:
        st.caption(esc(node.detail))
    links = [f"conflicts with {graph.node(link.target if link.source == node.id else link.source).label}"
             for link in graph.links if link.kind == "conflicts" and node.id in (link.source, link.target)]
    links += [f"rests on {graph.node(link.target).label}" for link in graph.links_from(node.id, "rests_on")]
    links += [f"{graph.node(link.source).label} rests on it" for link in graph.links_to(node.id, "rests_on")]
    if links:
        st.caption(esc("; ".join(links)))
    if node.id == PROPOSITION:
        return
    if not editable:
        st.caption("Read-only here: challenges are asked on a debate made (or copied) in this browser.")
        return
    with st.container(horizontal=True):
        for action in ACTIONS:
            st.button(view.ACTION_LABELS[action], key=key(f"{where}_{action}"), on_click=start_challenge,
                      args=(action, node.text))


def map_panel(document: Document, *, where: str = "debate", editable: bool = False) -> None:
    """The debate's argument map: the drawing, the same graph as a list, a node's text and challenges, exports."""
    graph = argument_map(document)
    with st.expander("Argument map", icon=":material/account_tree:"):
        st.caption(LEGEND)
        drawn, listed = st.tabs(["Map", "As a list"])
        with drawn:
            st.html(drawing(graph))
        with listed:
            st.markdown(outline_markdown(outline(graph)))
        _chosen(graph, where, editable)
        st.caption("Its exports (Argdown, AIF, Kialo) are with the others under Export.")


def _read(upload) -> object:
    raw = upload.getvalue()
    if len(raw) > MAX_UPLOAD_MB * 1024 * 1024:
        raise InputError(f"Not imported: {upload.name} is over {MAX_UPLOAD_MB} MB; import it with `python -m "
                         "clearside import FILE`, which reads up to CLEARSIDE_MAX_JSON_MB.")
    try:
        return loads(raw.decode("utf-8-sig"), upload.name)
    except UnicodeDecodeError:
        raise InputError(f"Not imported: {upload.name} is not UTF-8 text. Save it as UTF-8.") from None


def import_panel() -> None:
    """Import a ClearSide export or an AIF map; a foreign AIF map is kept read-only (listed under Imported maps)."""
    with st.expander("Import a debate or an argument map", icon=":material/upload_file:"):
        st.caption("A ClearSide export (JSON), an AIF map (JSON) or the JSON of ClearSide's Argdown (`argdown json`). "
                   "A map ClearSide made comes back as its debate; an AIF map from another tool is kept read-only "
                   "under Imported maps.")
        upload = st.file_uploader("Debate or map file", type=["json"], key=UPLOAD)
        if upload is None:
            return
        done = st.session_state.get(IMPORTED)
        if done is None or done[0] != upload.file_id:  # a rerun keeps the file: it is imported once
            done = _import(upload)
        if done is None:
            return
        st.success(esc(done[1]))
        if done[3] == "map":
            maps_view.show(jobs.store().get_map(done[2]), where="imported")
        else:
            st.page_link(page_path("app_pages/debate.py"), label="Open it", icon=":material/open_in_new:",
                         query_params={"debate": done[2]})


def _import(upload) -> tuple[str, str, str, str] | None:
    """The file imported (its id, what was done, the debate's or map's id, its kind), or refused (None)."""
    try:
        imported = import_data(jobs.store(), _read(upload), upload.name)
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()))
        return None
    what = "a read-only map" if imported.kind == "map" else f"a {imported.kind} debate"
    done = (upload.file_id, f"Imported {upload.name} as {what}. " + " ".join(imported.notes[1:] if
                                                                            imported.kind == "map" else imported.notes),
            imported.id, imported.kind)
    st.session_state[IMPORTED] = done
    return done
