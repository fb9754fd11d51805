"""The argument map drawn as SVG, built here in Python (no script, no font and nothing else from another host), and
its text alternative, a nested list of the same graph.

Two layouts of the same map: ``wide`` (two columns, FOR in green on the left, AGAINST in red on the right, the
proposition above them, the decision hinges below; assumption conflicts drawn as red dashed attack links between
the columns, a hinge's dependants as grey links) and ``narrow`` (one column for a phone, the same links written as
badges on the boxes: "conflicts with AGAINST assumption 2", "rests on Hinge 1"). Every text goes through XML
escaping (:func:`xml.sax.saxutils.escape`), so a model's or a user's text is never markup.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from clearside.inputs import clean
from clearside.render.argmap import PROPOSITION, SIDE_NAMES, ArgMap, Node

COLOURS = {"pro": ("#e8f5e9", "#1b5e20"), "con": ("#fdecea", "#b71c1c"), None: ("#f3f4f6", "#374151")}
LINE, PAD, GAP, MAX_LINES = 18, 10, 12, 5


@dataclass
class Box:
    node: Node
    x: int
    y: int
    width: int
    lines: list[str]
    badges: list[str]

    @property
    def height(self) -> int:
        return PAD * 2 + LINE * (1 + len(self.lines) + len(self.badges))


def _wrap(text: str, width: int) -> list[str]:
    lines = textwrap.wrap(clean(text), max(12, width // 8)) or [""]
    return lines if len(lines) <= MAX_LINES else [*lines[:MAX_LINES - 1], lines[MAX_LINES - 1][:-1] + "…"]


def _badges(graph: ArgMap, node: Node) -> list[str]:
    badges = []
    for link in graph.links:
        if link.kind == "conflicts" and node.id in (link.source, link.target):
            other = graph.node(link.target if link.source == node.id else link.source)
            badges.append(f"conflicts with {other.label}")
    badges += [f"rests on {graph.node(link.target).label}" for link in graph.links_from(node.id, "rests_on")]
    return badges


def _column(graph: ArgMap, nodes: list[Node], x: int, y: int, width: int, badges: bool) -> tuple[list[Box], int]:
    boxes = []
    for node in nodes:
        box = Box(node, x, y, width, _wrap(node.text, width - 2 * PAD), _badges(graph, node) if badges else [])
        boxes.append(box)
        y += box.height + GAP
    return boxes, y


def _side_nodes(graph: ArgMap, side: str) -> list[Node]:
    return graph.of("argument", side) + graph.of("assumption", side)


def layout(graph: ArgMap, narrow: bool = False) -> tuple[list[Box], int, int]:
    """The boxes of the map, and the drawing's width and height."""
    width = 360 if narrow else 960
    top = Box(graph.node(PROPOSITION), 10, 10, width - 20, _wrap(graph.title, width - 40), [])
    boxes, y = [top], top.height + 3 * GAP
    if narrow:
        column, y = _column(graph, _side_nodes(graph, "pro") + _side_nodes(graph, "con") + graph.of("hinge"),
                            10, y, width - 20, badges=True)
        return boxes + column, width, y
    pro, pro_end = _column(graph, _side_nodes(graph, "pro"), 10, y, 450, badges=False)
    con, con_end = _column(graph, _side_nodes(graph, "con"), 500, y, 450, badges=False)
    hinges, end = _column(graph, graph.of("hinge"), 255, max(pro_end, con_end) + 2 * GAP, 450, badges=False)
    return boxes + pro + con + hinges, width, end


def _box_svg(box: Box) -> list[str]:
    fill, stroke = COLOURS[box.node.side]
    dash = ' stroke-dasharray="6 3"' if box.node.kind == "assumption" else ""
    parts = [f'<g><rect x="{box.x}" y="{box.y}" width="{box.width}" height="{box.height}" rx="6" fill="{fill}" '
             f'stroke="{stroke}" stroke-width="2"{dash}/>',
             f'<text x="{box.x + PAD}" y="{box.y + PAD + 13}" font-weight="bold" fill="{stroke}">'
             f'{escape(box.node.label)}</text>']
    rows = [(text, "#111827") for text in box.lines] + [(f"↳ {badge}", stroke) for badge in box.badges]
    for i, (text, colour) in enumerate(rows, start=2):
        parts.append(f'<text x="{box.x + PAD}" y="{box.y + PAD + 13 + (i - 1) * LINE}" fill="{colour}">'
                     f'{escape(text)}</text>')
    return [*parts, "</g>"]


def _links_svg(graph: ArgMap, boxes: list[Box]) -> list[str]:
    at = {box.node.id: box for box in boxes}
    parts = []
    for link in graph.links:
        start, end = at[link.source], at[link.target]
        if link.kind == "conflicts":
            y1, y2 = start.y + start.height // 2, end.y + end.height // 2
            parts.append(f'<path d="M{start.x + start.width} {y1} C 475 {y1}, 475 {y2}, {end.x} {y2}" fill="none" '
                         'stroke="#b71c1c" stroke-width="2" stroke-dasharray="4 3"/>')
        elif link.kind == "rests_on":
            x1 = start.x + (start.width if start.node.side == "pro" else 0)
            parts.append(f'<path d="M{end.x + end.width // 2} {end.y} L {x1} {start.y + start.height // 2}" '
                         'fill="none" stroke="#6b7280" stroke-width="1" opacity="0.6"/>')
    return parts


def map_svg(graph: ArgMap, narrow: bool = False) -> str:
    """The map as one self-contained SVG element, its title the proposition (screen readers get the list too)."""
    boxes, width, height = layout(graph, narrow)
    body = [] if narrow else _links_svg(graph, boxes)
    if not narrow:
        body += [f'<text x="{x}" y="{boxes[0].height + 2 * GAP + 4}" font-weight="bold" fill="{COLOURS[side][1]}">'
                 f'{SIDE_NAMES[side]}</text>' for side, x in (("pro", 10), ("con", 500))]
    for box in boxes:
        body += _box_svg(box)
    title = escape(f"Argument map: {clean(graph.title)}")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
            f'aria-label={quoteattr(title)} font-family="sans-serif" font-size="14">'
            f'<title>{title}</title>{"".join(body)}</svg>')


def outline(graph: ArgMap) -> list[tuple[int, str]]:
    """The map as a nested list, (depth, line) rows: the text alternative of the drawing."""
    rows = [(0, f"Proposition: {graph.title}")]
    for side in ("pro", "con"):
        rows.append((1, f"{SIDE_NAMES[side]}"))
        for kind, heading in (("argument", "Arguments"), ("assumption", "Assumptions the case rests on")):
            rows.append((2, heading))
            for node in graph.of(kind, side):
                rows.append((3, f"{node.label}: {node.text}"))
                rows += [(4, badge) for badge in _badges(graph, node)]
    rows.append((1, "Decision hinges"))
    for node in graph.of("hinge"):
        rows.append((2, f"{node.label}: {node.text}"))
        rows += [(3, f"{graph.node(link.source).label} rests on it") for link in graph.links_to(node.id, "rests_on")]
    return rows
