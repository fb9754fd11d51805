"""``cruxes DEBATE.json|ID``: the decision hinges by load, what rests on each, and what a yes or a no would test.

Computed afresh by :mod:`clearside.cruxes` (embedding similarity, no model call); ``--json`` prints the same as
data, ``--document`` the debate document with ``moderator.cruxes`` set (for ``render``, ``import``).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..inputs import read_json
from .common import write

if TYPE_CHECKING:  # the rest is imported by the command that runs (see common.py)
    from ..schema import Document

_ID = re.compile(r"[0-9a-f]{32}")


def _load(source: str) -> dict[str, Any]:
    """A document from a file, or a saved debate's document by its id."""
    from ..contract import validate_document
    from ..static.exchange import document_of
    from ..store import open_store

    if not Path(source).exists() and _ID.fullmatch(source):
        record = open_store().get(source)
        if record.document is None:
            raise InputError(f"Debate {source} has no finished document yet (status {record.status}).")
        return record.document
    if not Path(source).exists():
        raise InputError(f"No debate file {source}: give a debate JSON file or a saved debate's id "
                         "(`python -m clearside list` shows them).")
    data = document_of(read_json(source, "debate"))  # an export's versions set aside
    if isinstance(data, dict) and "key_points" in data and isinstance(data.get("document"), dict):
        data = data["document"]  # a reference file: its v1 document
    if not isinstance(data, dict):
        raise InputError(f"{source} is not a debate: expected a ClearSide v1 document, a JSON object with "
                         "proposition, pro, con and moderator (a saved debate's id also works).")
    try:
        validate_document(data)
    except InputError as exc:
        raise InputError(f"{source} is not a debate to find cruxes in: {exc}") from None
    return data


def text(document: Document, *, semantic: bool) -> str:
    """The hinges by load as plain text."""
    from .. import cruxes

    how = (f"MiniLM similarity at least {cruxes.FLOOR:g} and within {cruxes.MARGIN:g} of the item's closest hinge"
           if semantic else f"word overlap at least {cruxes.FLOOR_LEXICAL:g} with the item's closest hinge (no "
                            "embedding model)")
    lines = [f"Decision hinges of: {document.proposition.normalized_question}", cruxes.LOAD_NOTE,
             f"{cruxes.CAVEAT} Here: {how}.", ""]
    for rank, (hinge, crux) in enumerate(cruxes.sorted_by_load(document), start=1):
        lines += [f"{rank}. {hinge}  (hinge {crux.hinge + 1})", f"   Load: {cruxes.load_line(document, crux)}",
                  f"   Rests on it: {cruxes.dependants_line(crux)}"]
        lines += [f"   {crux.if_yes}"] if crux.if_yes == crux.if_no else [f"   {crux.if_yes}", f"   {crux.if_no}"]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def cmd_cruxes(args: argparse.Namespace) -> int:
    from .. import cruxes
    from ..checks import LEXICAL_ONLY, Embeddings
    from ..render import json_text

    data = _load(args.debate)
    embeddings = LEXICAL_ONLY if args.no_embeddings else Embeddings()
    document = cruxes.attach(data, embeddings)
    semantic = embeddings.enabled  # off when asked, or when the model turned out to be missing
    if args.document:
        out = json_text(document)
    elif args.json:
        out = json.dumps(cruxes.report(document, semantic=semantic), indent=2, ensure_ascii=False) + "\n"
    else:
        out = text(document, semantic=semantic)
    write(out, args.out)
    return 0


def add_parser(sub: Any) -> None:
    c = sub.add_parser("cruxes", help="the decision hinges of a debate by load: what rests on each, and what a yes "
                                      "or a no would test (no model call)")
    c.add_argument("debate", metavar="DEBATE.json|ID", help="a debate file or a saved debate's id")
    form = c.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the hinges by load as JSON")
    form.add_argument("--document", action="store_true",
                      help="the debate document with moderator.cruxes set (schema 1.1.0)")
    c.add_argument("--no-embeddings", action="store_true",
                   help="word overlap instead of MiniLM similarity (as with CLEARSIDE_SEMANTIC_CHECKS=0)")
    c.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    c.set_defaults(func=cmd_cruxes)
