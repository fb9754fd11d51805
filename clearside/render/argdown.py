"""The debate's argument map as Argdown (https://argdown.org), for the Argdown editor, its command line and its maps.

Statements in brackets (``[FOR assumption 1]``, ``[Hinge 2]``, ``[Proposition]``), arguments in angle brackets
(``<FOR 1>``, ``<AGAINST 3>``, and ``<FOR case>`` / ``<AGAINST case>``, what each case rests on). Relations, as
:mod:`clearside.render.argmap` draws them: ``+``/``-`` an argument supporting or attacking the proposition, each
assumption supporting its side's case, ``><`` an assumption conflict (a contradiction), and ``+>`` from a hinge to
what rests on it. Every text is escaped character by character (a backslash before each ASCII punctuation mark),
so nothing a model or a user wrote is read as Argdown syntax: ``<b>`` stays text, ``//`` starts no comment.
"""

from __future__ import annotations

import string

from clearside.inputs import clean
from clearside.render.argmap import PROPOSITION, SIDE_NAMES, ArgMap, argument_map
from clearside.schema import Document

_PUNCTUATION = frozenset(string.punctuation)
CASE_TEXT = {"pro": "What the case FOR rests on: its advocate's assumptions.",
             "con": "What the case AGAINST rests on: its advocate's assumptions."}


def escaped(text: str) -> str:
    """``text`` on one line, every ASCII punctuation mark escaped (Argdown reads ``\\x`` as the character x)."""
    return "".join(f"\\{ch}" if ch in _PUNCTUATION else ch for ch in clean(text))


def _ref(graph: ArgMap, node_id: str) -> str:
    node = graph.node(node_id)
    return f"<{node.label}>" if node.kind == "argument" else f"[{node.label}]"


class _Writer:
    """Lines of Argdown, each node's text given where it first appears and referred to by its title after."""

    def __init__(self, graph: ArgMap) -> None:
        self.graph, self.lines, self.defined = graph, [], set()

    def node(self, node_id: str) -> str:
        ref = _ref(self.graph, node_id)
        if node_id in self.defined:
            return ref
        self.defined.add(node_id)
        return f"{ref}: {escaped(self.graph.node(node_id).text)}"

    def add(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)


def _cases(writer: _Writer) -> None:
    graph = writer.graph
    writer.add(0, "# The cases FOR and AGAINST")
    writer.add(0, "")
    writer.add(0, writer.node(PROPOSITION))
    for side, sign in (("pro", "+"), ("con", "-")):
        for node in graph.of("argument", side):
            writer.add(1, f"{sign} {writer.node(node.id)}")
        assumptions = graph.of("assumption", side)
        if any(not node.id.startswith("moderator.") for node in assumptions):
            writer.add(1, f"{sign} <{SIDE_NAMES[side]} case>: {escaped(CASE_TEXT[side])}")
            for node in assumptions:
                if not node.id.startswith("moderator."):
                    writer.add(2, f"+ {writer.node(node.id)}")


def _conflicts(writer: _Writer) -> None:
    conflicts = [link for link in writer.graph.links if link.kind == "conflicts"]
    if not conflicts:
        return
    writer.lines += ["", "# Assumption conflicts", ""]
    for link in conflicts:
        writer.add(0, writer.node(link.source))
        writer.add(1, f">< {writer.node(link.target)}")
        writer.add(0, "")  # top-level elements are paragraphs: a blank line between them


def _hinges(writer: _Writer) -> None:
    writer.lines += ["# Decision hinges", ""]
    for hinge in writer.graph.of("hinge"):
        writer.add(0, writer.node(hinge.id))
        for link in writer.graph.links_to(hinge.id, "rests_on"):
            writer.add(1, f"+> {writer.node(link.source)}")
        writer.add(0, "")


def argdown_text(doc: Document) -> str:
    """The debate's map as an Argdown document: every argument, assumption, conflict and hinge, escaped."""
    writer = _Writer(argument_map(doc))
    writer.lines += [f"// ClearSide argument map: {clean(doc.proposition.normalized_question)}", ""]
    _cases(writer)
    _conflicts(writer)
    _hinges(writer)
    return "\n".join(writer.lines).rstrip("\n") + "\n"
