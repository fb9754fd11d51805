"""The debate's argument map as AIF JSON (the Argument Interchange Format in AIFdb's nodes/edges form), and read back.

Export: I-nodes for the proposition, every argument's claim, every assumption and every hinge, each under its
ClearSide id (``pro.arguments.0``...); an RA-node (``Default Inference``) for each support: a FOR argument to the
proposition, a side's assumptions together to the proposition (FOR's through an RA-node, AGAINST's through a
CA-node), a hinge to what rests on it; a CA-node (``Default Conflict``) for each conflict: an AGAINST argument to the
proposition, an assumption conflict from the FOR assumption to the AGAINST one. The debate's document rides along
under ``clearside`` (what AIF has no place for: explanations, summaries, the moderator's prose, challenges), so
reading the file back gives the same document, with any I-node text edited in another tool taken from the node.

Reading (:func:`read_aif`): a map ClearSide made is checked (every node of its map present, no cycle) and becomes
its document again; any other AIF map is a :class:`clearside.render.aif_foreign.ForeignMap`, kept read-only.
Files too large, malformed or hostile are refused with an InputError naming the problem; nothing is stored by
this module (the caller stores, or not).
"""

from __future__ import annotations

import copy
from typing import Any

from clearside.errors import InputError
from clearside.inputs import shown
from clearside.render.argmap import PROPOSITION, ArgMap, argument_map
from clearside.schema import Document

MARK = "clearside"  # the key of the document a ClearSide map carries
FORMAT = "clearside-aif/1"
INFERENCE, CONFLICT = "Default Inference", "Default Conflict"
LIMITS = {"nodes": 5000, "edges": 20000, "text": 20000}  # a debate's map has about 50 nodes and 150 edges
NODE_TYPES = frozenset({"I", "L", "RA", "CA", "MA", "PA", "TA", "YA"})


def _scheme(link_kind: str, side: str | None) -> tuple[str, str]:
    if link_kind in ("attacks", "conflicts") or (link_kind == "underlies" and side == "con"):
        return "CA", CONFLICT
    return "RA", INFERENCE


def _s_node(graph: ArgMap, link: Any) -> str:
    """The id of the scheme node a link goes through (a side's assumptions share one: they hold the case jointly)."""
    if link.kind == "underlies":
        side = graph.node(link.source).side
        return f"{'ra' if side == 'pro' else 'ca'}:{side}.assumptions"
    if link.kind == "conflicts":
        return f"ca:{link.id}"
    if link.kind == "rests_on":
        return f"ra:{link.target}:{link.source}"
    return f"{'ra' if link.kind == 'supports' else 'ca'}:{link.source}"


def aif_data(doc: Document) -> dict[str, Any]:
    """The debate as an AIF JSON object: nodes, edges, no locutions, and the document under ``clearside``."""
    graph, stamp = argument_map(doc), doc.meta.generated_at
    nodes = [{"nodeID": node.id, "text": node.text, "type": "I", "timestamp": stamp} for node in graph.nodes]
    edges, schemes = [], {}
    for link in graph.links:
        s_node = _s_node(graph, link)
        if s_node not in schemes:
            kind, text = _scheme(link.kind, graph.node(link.source).side)
            schemes[s_node] = {"nodeID": s_node, "text": text, "type": kind, "timestamp": stamp}
            edges.append((s_node, link.target))
        edges.append((link.source, s_node))
    return {"nodes": nodes + list(schemes.values()),
            "edges": [{"edgeID": f"e{i}", "fromID": src, "toID": dst, "formEdgeID": None}
                      for i, (src, dst) in enumerate(edges, start=1)],
            "locutions": [], MARK: {"format": FORMAT, "document": doc.dump(),
                                    **({"partial": graph.partial} if graph.partial else {})}}


def aif_text(doc: Document) -> str:
    import json

    return json.dumps(aif_data(doc), indent=2, ensure_ascii=False) + "\n"


def is_aif(data: Any) -> bool:
    """An AIF JSON object: ``nodes`` and ``edges`` lists (a ClearSide document has neither)."""
    return isinstance(data, dict) and isinstance(data.get("nodes"), list) and isinstance(data.get("edges"), list)


def is_own(data: Any) -> bool:
    return is_aif(data) and isinstance(data.get(MARK), dict) and data[MARK].get("format") == FORMAT


def refusal(source: str, problem: str) -> InputError:
    return InputError(f"Not imported: {source} is not a readable AIF map: {problem}. Nothing was stored.")


def _node(raw: Any, where: str, source: str) -> tuple[str, str, str]:
    if not isinstance(raw, dict):
        raise refusal(source, f"{where} is not an object")
    node_id, kind, text = raw.get("nodeID"), raw.get("type"), raw.get("text", "")
    if not isinstance(node_id, (str, int)) or isinstance(node_id, bool) or str(node_id) == "":
        raise refusal(source, f"{where} has no nodeID (a string or a number)")
    if kind not in NODE_TYPES:
        raise refusal(source, f"{where} ({shown(node_id)}) has the type {shown(kind)}, not one of "
                              f"{', '.join(sorted(NODE_TYPES))}")
    if not isinstance(text, str) or len(text) > LIMITS["text"]:
        raise refusal(source, f"{where} ({shown(node_id)}) has a text that is not a string of at most "
                              f"{LIMITS['text']} characters")
    return str(node_id), kind, text


def checked(data: dict[str, Any], source: str) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str]]]:
    """The map's nodes (id: (type, text)) and edges (from, to), or an InputError naming what is wrong."""
    for key in ("nodes", "edges"):
        if len(data[key]) > LIMITS[key]:
            raise refusal(source, f"it has {len(data[key])} {key}, over the limit of {LIMITS[key]} (a debate's map "
                                  "has about 50 nodes); split the map")
    nodes: dict[str, tuple[str, str]] = {}
    for i, raw in enumerate(data["nodes"]):
        node_id, kind, text = _node(raw, f"nodes[{i}]", source)
        if node_id in nodes:
            raise refusal(source, f"the nodeID {shown(node_id)} is used twice")
        nodes[node_id] = (kind, text)
    edges = []
    for i, raw in enumerate(data["edges"]):
        ends = (raw.get("fromID"), raw.get("toID")) if isinstance(raw, dict) else (None, None)
        if not all(isinstance(end, (str, int)) and not isinstance(end, bool) for end in ends):
            raise refusal(source, f"edges[{i}] has no fromID and toID")
        src, dst = str(ends[0]), str(ends[1])
        if src == dst:
            raise refusal(source, f"edges[{i}] links the node {shown(src)} to itself")
        edges.append((src, dst))
    return nodes, edges


def _cycle(nodes: dict[str, tuple[str, str]], edges: list[tuple[str, str]]) -> str | None:
    """A node on a cycle of the map, if there is one (an iterative depth-first search: no recursion limit)."""
    following: dict[str, list[str]] = {}
    for src, dst in edges:
        following.setdefault(src, []).append(dst)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in nodes:
        if state.get(start):
            continue
        stack = [(start, iter(following.get(start, ())))]
        state[start] = 1
        while stack:
            node, rest = stack[-1]
            nxt = next(rest, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return nxt
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(following.get(nxt, ()))))
    return None


def _set_text(document: dict[str, Any], node_id: str, text: str) -> None:
    if node_id == PROPOSITION:
        document["proposition"]["normalized_question"] = text
        return
    parts = node_id.split(".")
    if len(parts) == 3 and parts[1] == "arguments":
        document[parts[0]]["arguments"][int(parts[2])]["claim"] = text
    elif len(parts) == 3:
        document[parts[0]][parts[1]][int(parts[2])] = text


def with_texts(document: dict[str, Any], graph: ArgMap, texts: dict[str, str]) -> dict[str, Any]:
    """A copy of ``document`` (whose map is ``graph``) with each node's text from ``texts`` (by ClearSide id), each
    assumption conflict quoting the texts of the two nodes it links."""
    document = copy.deepcopy(document)
    for node in graph.nodes:
        if not node.id.startswith("moderator.assumption_conflicts."):
            _set_text(document, node.id, texts.get(node.id, node.text))
    for i, conflict in enumerate(document["moderator"]["assumption_conflicts"]):
        link = next(link for link in graph.links if link.id == f"moderator.assumption_conflicts.{i}")
        conflict["pro_assumption"] = texts.get(link.source, graph.node(link.source).text)
        conflict["con_assumption"] = texts.get(link.target, graph.node(link.target).text)
    return document


def own_document(data: dict[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """The document a ClearSide map carries, its texts taken from the map's I-nodes; notes on what was set aside."""
    nodes, edges = checked(data, source)
    if (node := _cycle(nodes, edges)) is not None:
        raise refusal(source, f"its links run in a cycle through the node {shown(node)}; a ClearSide map has none, "
                              "so the file was edited out of shape: export the debate again")
    try:
        graph = argument_map(Document.model_validate(data[MARK].get("document")))
    except Exception as exc:  # pydantic's ValidationError, or a document that is not an object
        raise refusal(source, f"the ClearSide document it carries is not valid ({shown(exc, 200)})") from None
    missing = [node.id for node in graph.nodes if nodes.get(node.id, ("",))[0] != "I"]
    if missing:
        raise refusal(source, f"{len(missing)} of the debate's nodes are missing or not I-nodes "
                              f"({', '.join(shown(m) for m in missing[:4])}); export the debate again")
    document = with_texts(data[MARK]["document"], graph, {node.id: nodes[node.id][1] for node in graph.nodes})
    known = {node.id for node in graph.nodes}
    extra = [node_id for node_id, (kind, _) in nodes.items() if kind == "I" and node_id not in known]
    notes = ["Read an AIF map made by ClearSide: the debate's document, with the texts of its map's nodes."]
    if extra:
        notes.append(f"Could not place {len(extra)} I-node(s) added to the map after it was exported (a ClearSide "
                     f"debate has no place for them): {', '.join(shown(e) for e in extra[:6])}.")
    return document, notes
