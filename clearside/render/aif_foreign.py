"""An AIF map ClearSide did not make, read as a read-only outline: what could be placed and what could not.

A ClearSide debate needs both cases, their assumptions and a moderator's map, which no foreign AIF map has, so a
foreign map is never stored as a debate: it is kept as an imported map (clearside/store/maps.py) and shown,
read-only, as a numbered outline of its claims, each with
the claims that support it (``Pro:``, through an RA-node) or attack it (``Con:``, through a CA-node). Placed: the
I-nodes and the RA/CA-nodes linking them. Not placed, and said so: dialogue nodes (L, TA, YA), rephrasings (MA),
preferences (PA), scheme nodes lacking a premise or a conclusion, edges naming no node. A map whose every claim
supports another (a loop with no starting point) is refused; other loops are shown once, where first met.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from clearside.inputs import clean, shown
from clearside.render.aif import checked, refusal

MAX_DEPTH = 40  # an outline deeper than this is cut, and the cut said
UNPLACED_KINDS = {"L": "locutions", "TA": "dialogue transitions", "YA": "illocutions", "MA": "rephrasings",
                  "PA": "preferences"}


@dataclass
class Child:
    sign: str  # "Pro" | "Con"
    node: str


@dataclass
class ForeignMap:
    source: str
    texts: dict[str, str]  # the placed claims (I-nodes) by id
    children: dict[str, list[Child]]
    roots: list[str]
    unplaced: list[str] = field(default_factory=list)  # what could not be placed, in words

    def title(self) -> str:
        """The map's first claim, as a title for lists."""
        return self.texts[self.roots[0]]

    def not_placed(self) -> str:
        """What could not be placed, in one sentence (the first ten things, and how many there are)."""
        more = "; ..." if len(self.unplaced) > 10 else ""
        return f"Could not place {len(self.unplaced)} thing(s): " + "; ".join(self.unplaced[:10]) + more + "."

    def placed(self) -> str:
        links = sum(len(kids) for kids in self.children.values())
        return f"Placed {len(self.texts)} claim(s) and {links} support or attack link(s)."

    def outline(self) -> list[tuple[int, str, str]]:
        """(depth, "Pro"/"Con"/"", text) rows, each claim once (a claim met again says so)."""
        rows, seen = [], set()
        stack = [(0, "", root) for root in reversed(self.roots)]
        while stack:
            depth, sign, node = stack.pop()
            if node in seen:
                rows.append((depth, sign, f"(again) {self.texts[node][:80]}"))
                continue
            seen.add(node)
            rows.append((depth, sign, self.texts[node]))
            if depth + 1 >= MAX_DEPTH and self.children.get(node):
                rows.append((depth + 1, "", f"(cut: the map runs deeper than {MAX_DEPTH} levels)"))
                continue
            stack += [(depth + 1, kid.sign, kid.node) for kid in reversed(self.children.get(node, []))]
        return rows

    def text(self) -> str:
        """The outline as plain numbered text (1., 1.1. Pro: ...)."""
        lines, counters = [], [0] * (MAX_DEPTH + 2)
        for depth, sign, text in self.outline():
            counters[depth] += 1
            counters[depth + 1:] = [0] * (len(counters) - depth - 1)
            number = ".".join(str(c) for c in counters[:depth + 1])
            lines.append(f"{'  ' * depth}{number}. {sign + ': ' if sign else ''}{clean(text)}")
        return "\n".join(lines) + "\n"


def _schemes(nodes: dict[str, tuple[str, str]], edges: list[tuple[str, str]]) -> tuple[dict, list[str]]:
    """Each claim's supporters and attackers through RA/CA-nodes; what could not be placed."""
    into: dict[str, list[str]] = {}
    out: dict[str, list[str]] = {}
    unplaced = []
    for src, dst in edges:
        if src not in nodes or dst not in nodes:
            unplaced.append(f"an edge from {shown(src)} to {shown(dst)} names no node of the map")
            continue
        into.setdefault(dst, []).append(src)
        out.setdefault(src, []).append(dst)
    children: dict[str, list[Child]] = {}
    for node_id, (kind, _) in nodes.items():
        if kind not in ("RA", "CA"):
            continue
        premises = [n for n in into.get(node_id, []) if nodes[n][0] == "I"]
        conclusions = [n for n in out.get(node_id, []) if nodes[n][0] == "I"]
        if not premises or not conclusions:
            unplaced.append(f"the {kind}-node {shown(node_id)} lacks a premise or a conclusion claim")
            continue
        for conclusion in conclusions:
            children.setdefault(conclusion, []).extend(
                Child("Pro" if kind == "RA" else "Con", premise) for premise in premises if premise != conclusion)
    return children, unplaced


def foreign_map(data: dict[str, Any], source: str) -> ForeignMap:
    """A foreign AIF map as a read-only outline, or an InputError naming why it cannot be read."""
    nodes, edges = checked(data, source)
    texts = {node_id: clean(text) or "(no text)" for node_id, (kind, text) in nodes.items() if kind == "I"}
    if not texts:
        raise refusal(source, "it has no I-node (no claim) to show")
    children, unplaced = _schemes(nodes, edges)
    premises = {kid.node for kids in children.values() for kid in kids}
    roots = [node for node in texts if node not in premises]
    if not roots:
        raise refusal(source, "every claim supports or attacks another, in a loop with no starting point; a map "
                              "needs at least one claim that is a conclusion only")
    kinds = Counter(kind for kind, _ in nodes.values() if kind in UNPLACED_KINDS)
    unplaced = [f"{count} {UNPLACED_KINDS[kind]} ({kind}-nodes): a ClearSide map has no dialogue layer"
                for kind, count in sorted(kinds.items())] + unplaced
    return ForeignMap(source, texts, children, roots, unplaced)
