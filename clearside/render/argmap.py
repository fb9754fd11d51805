"""The debate as an argument map: one graph derived from the document, which the map view and the Argdown, AIF
and Kialo exports all draw from (docs/tools/argument-map.md).

Nodes carry ClearSide ids, the document path of their text (``pro.arguments.0``, ``con.assumptions.2``,
``moderator.decision_hinges.1``, ``proposition``), so an export made from the map can be read back into the same
document. Links:

- ``supports`` / ``attacks``: a FOR argument supports the proposition, an AGAINST argument attacks it;
- ``underlies``: a side's assumption is what that side's case rests on (the document ties assumptions to a side,
  not to one argument: every export says "the case", never a single argument);
- ``conflicts``: an assumption conflict the moderator found, from the FOR assumption to the AGAINST one (an
  assumption the conflict quotes in other words than the side does gets a node of its own, under the conflict's id);
- ``rests_on``: an argument or an assumption resting on a decision hinge, as the document's cruxes say (a debate
  without cruxes shows its hinges unlinked).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clearside.schema import Document
from clearside.store.records import missing_parts, partial_notice

SIDE_NAMES = {"pro": "FOR", "con": "AGAINST"}
PROPOSITION = "proposition"


@dataclass(frozen=True)
class Node:
    id: str  # the ClearSide id: the document path of the text
    kind: str  # proposition | argument | assumption | hinge
    side: str | None  # pro | con, or None (the proposition, a hinge)
    label: str  # "FOR 1", "AGAINST assumption 2", "Hinge 1"
    text: str
    detail: str = ""  # an argument's explanation


@dataclass(frozen=True)
class Link:
    source: str
    target: str
    kind: str  # supports | attacks | underlies | conflicts | rests_on
    id: str = ""  # a conflict's ClearSide id
    note: str = ""  # a conflict's description


@dataclass
class ArgMap:
    title: str
    partial: str | None = None  # a partial debate's notice (a persona dropped), said first by every export
    nodes: list[Node] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)

    def node(self, node_id: str) -> Node:
        return next(node for node in self.nodes if node.id == node_id)

    def of(self, kind: str, side: str | None = None) -> list[Node]:
        return [node for node in self.nodes if node.kind == kind and (side is None or node.side == side)]

    def links_to(self, node_id: str, kind: str | None = None) -> list[Link]:
        return [link for link in self.links if link.target == node_id and (kind is None or link.kind == kind)]

    def links_from(self, node_id: str, kind: str | None = None) -> list[Link]:
        return [link for link in self.links if link.source == node_id and (kind is None or link.kind == kind)]

    def __len__(self) -> int:
        return len(self.nodes)


def _side_nodes(doc: Document, side: str) -> tuple[list[Node], list[Link]]:
    name, body = SIDE_NAMES[side], getattr(doc, side)
    nodes = [Node(f"{side}.arguments.{i}", "argument", side, f"{name} {i + 1}", argument.claim, argument.explanation)
             for i, argument in enumerate(body.arguments)]
    nodes += [Node(f"{side}.assumptions.{i}", "assumption", side, f"{name} assumption {i + 1}", text)
              for i, text in enumerate(body.assumptions)]
    kind = "supports" if side == "pro" else "attacks"
    links = [Link(node.id, PROPOSITION, kind if node.kind == "argument" else "underlies") for node in nodes]
    return nodes, links


def _conflicts(doc: Document) -> tuple[list[Node], list[Link]]:
    nodes, links = [], []
    for i, conflict in enumerate(doc.moderator.assumption_conflicts):
        ends = []
        for side, text in (("pro", conflict.pro_assumption), ("con", conflict.con_assumption)):
            known = getattr(doc, side).assumptions
            if text in known:
                ends.append(f"{side}.assumptions.{known.index(text)}")
            else:  # the moderator's own words for it: a node of the conflict's own
                node_id = f"moderator.assumption_conflicts.{i}.{side}_assumption"
                nodes.append(Node(node_id, "assumption", side, f"{SIDE_NAMES[side]} assumption of conflict {i + 1}",
                                  text))
                ends.append(node_id)
        links.append(Link(ends[0], ends[1], "conflicts", f"moderator.assumption_conflicts.{i}",
                          conflict.conflict_description or ""))
    return nodes, links


def _hinges(doc: Document) -> tuple[list[Node], list[Link]]:
    nodes = [Node(f"moderator.decision_hinges.{i}", "hinge", None, f"Hinge {i + 1}", text)
             for i, text in enumerate(doc.moderator.decision_hinges)]
    links = []
    for crux in doc.moderator.cruxes or []:
        if crux.hinge >= len(nodes):  # an index past the list (a file edited by hand) links nothing
            continue
        hinge = f"moderator.decision_hinges.{crux.hinge}"
        for side in ("pro", "con"):
            body = getattr(doc, side)
            links += [Link(f"{side}.arguments.{i}", hinge, "rests_on") for i in getattr(crux, f"{side}_arguments")
                      if i < len(body.arguments)]
            links += [Link(f"{side}.assumptions.{i}", hinge, "rests_on") for i in getattr(crux, f"{side}_assumptions")
                      if i < len(body.assumptions)]
    return nodes, links


def argument_map(doc: Document) -> ArgMap:
    """The debate's map: the proposition, both sides' arguments and assumptions, the conflicts, the hinges."""
    question = doc.proposition.normalized_question
    result = ArgMap(question, partial_notice(missing_parts(doc.dump())),
                    [Node(PROPOSITION, "proposition", None, "Proposition", question)])
    for nodes, links in (_side_nodes(doc, "pro"), _side_nodes(doc, "con"), _conflicts(doc), _hinges(doc)):
        result.nodes += nodes
        result.links += links
    return result
