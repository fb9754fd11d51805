"""``cruxes DEBATE.json|ID``: the decision hinges by load, what rests on each, and what a yes or a no would test.

Computed afresh by :mod:`clearside.cruxes` (embedding similarity, no model call); ``--json`` prints the same as
data, ``--document`` the debate document with ``moderator.cruxes`` set (for ``render``, ``import``).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..inputs import read_json
from .common import write

_ID = re.compile(r"[0-9a-f]{32}")


def _load(source: str) -> dict[str, Any]:
    """A document from a file, or a saved debate's document by its id."""
    from ..contract import validate_document
    from ..static.exchange import document_of, finished_document
    from ..store import open_store

    if not Path(source).exists() and _ID.fullmatch(source):
        return finished_document(open_store(), source)
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
        out = cruxes.text(document, semantic=semantic)
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
