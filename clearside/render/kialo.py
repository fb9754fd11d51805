"""The debate's argument map as Kialo's plain-text outline (the form Kialo imports: ``Discussion Title:``, then a
numbered tree, ``1.`` the thesis, ``1.1. Pro:`` / ``1.2. Con:`` its claims).

Under the thesis: each FOR argument (``Pro:``) and each AGAINST argument (``Con:``), then each side's case, the
assumptions it rests on (``Pro:`` each), an assumption in conflict with the other side's carrying that one as its
``Con:``. A decision hinge sits under each argument the cruxes say rests on it, as a ``Con:`` (it questions that
argument's footing); a hinge nothing rests on sits under the thesis twice, once ``Pro:`` (its yes) and once
``Con:`` (its no), since ClearSide does not say which answer favours which side. Texts on one line each.
"""

from __future__ import annotations

from clearside.inputs import clean
from clearside.render.argmap import PROPOSITION, SIDE_NAMES, ArgMap, argument_map
from clearside.schema import Document


def _line(number: list[int], sign: str, text: str) -> str:
    return f"{'.'.join(map(str, number))}. {sign}: {clean(text)}"


def _hinges_on(graph: ArgMap, node_id: str, number: list[int], start: int = 1) -> list[str]:
    hinges = [graph.node(link.target) for link in graph.links_from(node_id, "rests_on")]
    return [_line([*number, i], "Con", f"{hinge.label}, which this rests on: {hinge.text}")
            for i, hinge in enumerate(hinges, start=start)]


def _case(graph: ArgMap, side: str, sign: str, number: list[int]) -> list[str]:
    assumptions = [node for node in graph.of("assumption", side) if not node.id.startswith("moderator.")]
    lines = [_line(number, sign, f"The case {SIDE_NAMES[side]} rests on its advocate's assumptions.")]
    for i, node in enumerate(assumptions, start=1):
        lines.append(_line([*number, i], "Pro", node.text))
        others = [graph.node(link.target if link.source == node.id else link.source) for link in graph.links
                  if link.kind == "conflicts" and node.id in (link.source, link.target)]
        for j, other in enumerate(others, start=1):
            lines.append(_line([*number, i, j], "Con", f"In conflict: {other.text}"))
        lines += _hinges_on(graph, node.id, [*number, i], start=len(others) + 1)
    return lines


def kialo_text(doc: Document) -> str:
    """The debate as a Kialo outline."""
    graph = argument_map(doc)
    partial = f" ({graph.partial})" if graph.partial else ""
    lines = [f"Discussion Title: {clean(doc.proposition.normalized_question)}{clean(partial)}", "",
             f"1. {clean(graph.node(PROPOSITION).text)}"]
    child = 0
    for side, sign in (("pro", "Pro"), ("con", "Con")):
        for node in graph.of("argument", side):
            child += 1
            lines.append(_line([1, child], sign, node.text))
            lines += _hinges_on(graph, node.id, [1, child])
    for side, sign in (("pro", "Pro"), ("con", "Con")):
        child += 1
        lines += _case(graph, side, sign, [1, child])
    for hinge in graph.of("hinge"):
        if not graph.links_to(hinge.id, "rests_on"):
            for sign, answer in (("Pro", "yes"), ("Con", "no")):
                child += 1
                lines.append(_line([1, child], sign, f"{hinge.label} answered {answer}: {hinge.text}"))
    return "\n".join(lines) + "\n"
