"""A debate as an agent reads it: the compact summary the MCP tools return, as data and as text.

The proposition, each side's arguments and assumptions in one line each, where the sides agree, what they
disagree on and why, the assumption conflicts, the decision hinges and the evidence gaps. Every element a challenge
can name carries its ClearSide id (the argument map's: ``pro.arguments.0``, ``con.assumptions.1``,
``moderator.decision_hinges.0``), which ``challenge_element`` takes as its target.
"""

from __future__ import annotations

from typing import Any

from ..render.argmap import ArgMap, argument_map
from ..render.markdown import NO_VERDICT
from ..schema import ChallengeResponse, Document
from ..store.records import missing_parts, partial_notice

SIDES = {"pro": "for", "con": "against"}
HOW_TO_CHALLENGE = ("To probe an element, call challenge_element with this debate_id and one of the ids above as "
                    "the target (or any text); list_cruxes shows what rests on each decision hinge.")


def _arguments(doc: Document, graph: ArgMap, side: str) -> list[dict[str, Any]]:
    body = getattr(doc, side)
    nodes = graph.of("argument", side)
    return [{"id": node.id, "claim": argument.claim, "category": argument.category,
             "evidence": argument.evidence_type, "confidence": argument.confidence,
             **({"persona": argument.persona} if argument.persona else {})}
            for node, argument in zip(nodes, body.arguments, strict=True)]


def _assumptions(graph: ArgMap, side: str) -> list[dict[str, str]]:
    return [{"id": node.id, "text": node.text} for node in graph.of("assumption", side)
            if node.id.startswith(f"{side}.assumptions.")]


def _conflicts(graph: ArgMap) -> list[dict[str, Any]]:
    """Each assumption conflict by the ids of the assumptions it opposes (a side's, or the moderator's own words)."""
    return [{"for_id": link.source, "for": graph.node(link.source).text, "against_id": link.target,
             "against": graph.node(link.target).text, "conflict": link.note or None}
            for link in graph.links if link.kind == "conflicts"]


def summary(debate_id: str, doc: Document) -> dict[str, Any]:
    """The debate's summary as data: ids, the proposition, both cases, the moderator's map."""
    graph = argument_map(doc)
    mod = doc.moderator
    data: dict[str, Any] = {"debate_id": debate_id, "question": doc.proposition.normalized_question}
    if notice := partial_notice(missing_parts(doc.dump())):
        data["partial"] = notice
    for side, name in SIDES.items():
        data[name] = {"arguments": _arguments(doc, graph, side), "assumptions": _assumptions(graph, side)}
    data["agreements"] = list(mod.areas_of_agreement)
    data["disagreements"] = [item.dump() for item in mod.core_disagreements]
    data["assumption_conflicts"] = _conflicts(graph)
    data["decision_hinges"] = [{"id": node.id, "text": node.text} for node in graph.of("hinge")]
    data["evidence_gaps"] = list(mod.evidence_gaps)
    data["challenges"] = len(doc.challenges.responses)
    return data


def _argument_line(item: dict[str, Any]) -> str:
    who = f" ({item['persona']})" if item.get("persona") else ""
    return (f"- {item['id']}: {item['claim']}{who} [{item['category']}; {item['evidence'].replace('_', ' ')}; "
            f"{item['confidence']} confidence]")


def _side_lines(data: dict[str, Any], name: str) -> list[str]:
    case = data[name]
    lines = [f"{name.upper()} ({len(case['arguments'])} arguments)"]
    lines += [_argument_line(item) for item in case["arguments"]]
    lines += [f"- {item['id']} (assumption): {item['text']}" for item in case["assumptions"]]
    return [*lines, ""]


def _moderator_lines(data: dict[str, Any]) -> list[str]:
    lines = ["Where they agree", *(f"- {text}" for text in data["agreements"]), "", "Where they disagree"]
    for item in data["disagreements"]:
        cause = f" Root cause: {item['root_cause']}" if item.get("root_cause") else ""
        lines.append(f"- {item['topic']}: {item['description']}{cause}")
    lines += ["", "Assumption conflicts"]
    for item in data["assumption_conflicts"]:
        why = f": {item['conflict']}" if item.get("conflict") else ""
        lines.append(f"- FOR {item['for_id']} “{item['for']}” against AGAINST {item['against_id']} “{item['against']}”"
                     f"{why}")
    lines += ["", "Decision hinges (what the decision turns on)"]
    lines += [f"- {item['id']}: {item['text']}" for item in data["decision_hinges"]]
    lines += ["", "Evidence gaps", *(f"- {text}" for text in data["evidence_gaps"]), ""]
    return lines


def summary_text(data: dict[str, Any]) -> str:
    """The summary as text an agent reads in one pass."""
    lines = [f"Debate {data['debate_id']}: {data['question']}", ""]
    if data.get("partial"):
        lines += [data["partial"], ""]
    for name in SIDES.values():
        lines += _side_lines(data, name)
    lines += _moderator_lines(data)
    if data["challenges"]:
        lines += [f"Challenges answered so far: {data['challenges']} (get_debate with format json shows them).", ""]
    lines += [NO_VERDICT, HOW_TO_CHALLENGE]
    return "\n".join(lines) + "\n"


def answer(debate_id: str, response: ChallengeResponse) -> dict[str, Any]:
    """A challenge's answer as data: what was challenged, how, and the answer."""
    return {"debate_id": debate_id, **response.dump()}


def answer_text(data: dict[str, Any]) -> str:
    """A challenge's answer as text."""
    body = data["response"]
    lines = [f"Challenge of debate {data['debate_id']} ({data['action'].replace('_', ' ')}): {data['target']}",
             f"Classification: {body['classification'].replace('_', ' ')}", "", "Analysis",
             *(f"- {text}" for text in body["analysis"])]
    if body.get("historical_context"):
        lines += ["", "Historical context", *(f"- {text}" for text in body["historical_context"])]
    return "\n".join(lines) + "\n"
