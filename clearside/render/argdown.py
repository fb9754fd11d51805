"""The debate's argument map as Argdown (https://argdown.org), for the Argdown editor, its command line and its maps.

Statements in brackets (``[FOR assumption 1]``, ``[Hinge 2]``, ``[Proposition]``), arguments in angle brackets
(``<FOR 1>``, ``<AGAINST 3>``, and ``<FOR case>`` / ``<AGAINST case>``, what each case rests on). Relations, as
:mod:`clearside.render.argmap` draws them: ``+``/``-`` an argument supporting or attacking the proposition, each
assumption supporting its side's case, ``><`` an assumption conflict (a contradiction), and ``+>`` from a hinge to
what rests on it. Every text is escaped character by character (a backslash before each ASCII punctuation mark),
so nothing a model or a user wrote is read as Argdown syntax: ``<b>`` stays text, ``//`` starts no comment.
"""

from __future__ import annotations

import base64
import binascii
import json
import string
import zlib
from typing import Any

from clearside.errors import InputError
from clearside.inputs import clean, loads, shown
from clearside.render.aif import with_texts
from clearside.render.argmap import PROPOSITION, SIDE_NAMES, ArgMap, argument_map
from clearside.schema import Document

_PUNCTUATION = frozenset(string.punctuation)
DATA_KEY = "clearside"  # the proposition's data: the whole document, packed
MAX_UNPACKED = 20 * 1024 * 1024  # a debate's document is about 20 KB; a bigger one is a zip bomb, not a debate
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


def carried(doc: Document) -> str:
    """The whole document, compressed, as one Argdown-safe string (URL-safe base64 of zlib of its JSON)."""
    raw = json.dumps(doc.dump(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii")


def argdown_text(doc: Document) -> str:
    """The debate's map as an Argdown document: every argument, assumption, conflict and hinge, escaped; at its end
    the whole document as the proposition's data, which ``argdown json`` keeps, so its JSON export imports back."""
    writer = _Writer(argument_map(doc))
    writer.lines += [f"// ClearSide argument map: {clean(doc.proposition.normalized_question)}",
                     *([f"// {clean(writer.graph.partial)}"] if writer.graph.partial else []), ""]
    _cases(writer)
    _conflicts(writer)
    _hinges(writer)
    writer.lines += ["", "# ClearSide", "", "// The debate's whole document, for `python -m clearside import` of this "
                     "file's JSON export (argdown json).", f'[{graph_label(writer.graph)}] {{{DATA_KEY}: '
                     f'"{carried(doc)}"}}']
    return "\n".join(writer.lines).rstrip("\n") + "\n"


# -- reading back Argdown's JSON export (argdown json) of an export made here ---------------------------------------

def graph_label(graph: ArgMap) -> str:
    return graph.node(PROPOSITION).label


def is_argdown_json(data: Any) -> bool:
    """Argdown's JSON export: ``statements`` and ``arguments`` objects and a ``relations`` list."""
    return (isinstance(data, dict) and isinstance(data.get("statements"), dict)
            and isinstance(data.get("arguments"), dict) and isinstance(data.get("relations"), list))


def _refuse(source: str, problem: str) -> InputError:
    return InputError(f"Not imported: {source} is an Argdown JSON export ClearSide cannot read back: {problem}. "
                      "Nothing was stored.")


def _unpacked(blob: Any, source: str) -> Any:
    try:
        packed = base64.urlsafe_b64decode(blob.encode("ascii")) if isinstance(blob, str) else None
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_UNPACKED) if packed is not None else None
    except (binascii.Error, UnicodeEncodeError, ValueError, zlib.error):
        raw = None
    if raw is None or not inflater.eof:
        raise _refuse(source, "the ClearSide document in its Proposition's data is damaged or over "
                              f"{MAX_UNPACKED // 1024 // 1024} MB unpacked; export the debate again")
    return loads(raw.decode("utf-8", errors="replace"), source)


def _titled_texts(data: dict[str, Any]) -> dict[str, str]:
    """Each statement's and argument's text as written where it is defined, by title."""
    texts = {}
    for group in ("statements", "arguments"):
        for title, item in data[group].items():
            members = item.get("members") if isinstance(item, dict) else None
            text = next((m["text"] for m in members or [] if isinstance(m, dict) and isinstance(m.get("text"), str)
                         and m["text"].strip()), None)
            if isinstance(title, str) and text is not None:
                texts[title] = text
    return texts


def argdown_document(data: dict[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """The document an Argdown export made here carries, with any text edited in Argdown taken from it."""
    proposition = data["statements"].get("Proposition")
    blob = proposition.get("data", {}).get(DATA_KEY) if isinstance(proposition, dict) and isinstance(
        proposition.get("data"), dict) else None
    if blob is None:
        raise InputError(f"Not imported: {source} is an Argdown JSON export that was not made from ClearSide's "
                         "Argdown (no ClearSide document in its Proposition's data). ClearSide reads back the "
                         "Argdown it exports; from other tools it imports AIF maps (kept read-only).")
    document = _unpacked(blob, source)
    try:
        graph = argument_map(Document.model_validate(document))
    except Exception as exc:  # pydantic's ValidationError, or not an object
        raise _refuse(source, f"the ClearSide document it carries is not valid ({shown(exc, 200)})") from None
    texts = _titled_texts(data)
    missing = [node.label for node in graph.nodes if node.label not in texts]
    if missing:
        raise _refuse(source, f"{len(missing)} of the debate's elements are missing from the map "
                              f"({', '.join(shown(m) for m in missing[:4])}); export the debate again")
    edited = {node.id: texts[node.label] for node in graph.nodes
              if " ".join(texts[node.label].split()) != clean(node.text)}  # Argdown keeps each text on one line
    notes = ["Read an Argdown JSON export made from ClearSide's Argdown: the debate's document"
             + (f", with {len(edited)} text(s) edited in Argdown." if edited else ".")]
    extra = sorted(set(texts) - {node.label for node in graph.nodes} - {f"{n} case" for n in SIDE_NAMES.values()})
    if extra:
        notes.append(f"Could not place {len(extra)} statement(s) or argument(s) added in Argdown (a ClearSide "
                     f"debate has no place for them): {', '.join(shown(e) for e in extra[:6])}.")
    return with_texts(document, graph, edited), notes
