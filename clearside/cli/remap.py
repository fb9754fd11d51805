"""The ``remap`` command: a debate's synthesis rerun under the user's value weights and assumption stances.

``remap DEBATE.json|ID --weights economic=3,ethical=1 --accept TEXT --reject TEXT --unsure TEXT`` writes the
re-mapped document (``--format json``), its Markdown report (``md``) or what changed against the original
synthesis (``diff``). A saved debate's re-map is saved as its next version; the debate itself never changes.
A saved debate's re-map runs on the runtime (workflow ``clearside.remap``) in this process, or, with ``remap ID
--enqueue``, on any host (its job id printed at once); a file's is made by the command itself, the store holding
nothing to save. ``remap ID --versions`` lists a saved debate's versions without calling a model.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..inputs import read_json
from . import here, jobs
from .common import engine_from_args, log_violations, model_options, progress, provider_from_args, write

_NAMES = {"decision_hinges": "Decision hinges", "core_disagreements": "Core disagreements",
          "areas_of_agreement": "Areas of agreement", "assumption_conflicts": "Assumption conflicts",
          "evidence_gaps": "Evidence gaps"}


def _source(source: str) -> tuple[dict[str, Any], str | None]:
    """The document, and the saved debate's id when ``source`` names one rather than a file."""
    from ..static.exchange import document_of
    from ..store import open_store

    if not Path(source).exists() and re.fullmatch(r"[0-9a-fA-F]{32}", source):
        record = open_store().get(source)
        if record.kind != "static" or record.document is None:
            raise InputError(f"Debate {source} has no finished static document to re-map (kind {record.kind}, "
                             f"status {record.status}): re-map a finished pro/con debate.")
        return record.document, record.id
    data = document_of(read_json(source, "debate"))  # an export's versions set aside
    if not isinstance(data, dict):
        raise InputError(f"{source} does not hold a ClearSide document (expected a JSON object).")
    return data, None


def diff_text(changes: dict[str, Any]) -> str:
    """What changed between two syntheses, as Markdown."""
    lines = ["# What the re-map changed", ""]
    if not changes["changed"]:
        return "# What the re-map changed\n\nNothing: the re-mapped synthesis lists the same items in the same order.\n"
    for section, d in changes["sections"].items():
        items = [*(f"- added: {t}" for t in d["added"]), *(f"- removed: {t}" for t in d["removed"]),
                 *(f"- reworded: {r['before']} → {r['after']}" for r in d["reworded"]),
                 *(f"- moved from {m['from']} to {m['to']}: {m['text']}" for m in d["moved"])]
        if items:
            lines += [f"## {_NAMES[section]}", "", *items, ""]
    how = "MiniLM similarity" if changes["semantic"] else "word overlap (no embedding model)"
    lines.append(f"Items are paired by {how}; the hinges listed first are the decisive ones under your priorities.")
    return "\n".join(lines) + "\n"


def cmd_remap(args: argparse.Namespace) -> int:
    from ..checks import Embeddings
    from ..contract import validate_document
    from ..render import render
    from ..static import remap
    from ..store import open_store

    data, debate_id = _source(args.debate)
    if args.versions:
        if debate_id is None:
            raise InputError("--versions lists a saved debate's versions: give its id, not a file.")
        listed = open_store().versions(debate_id)
        write("\n".join(f"{v.number}\t{v.created_at}\t{v.kind}\t{v.label}\t{v.provider}:{v.model}" for v in listed)
              or f"Debate {debate_id} has no versions yet.", args.out)
        return 0
    if args.enqueue and debate_id is None:
        raise InputError(f"--enqueue re-maps a saved debate, and {args.debate} is a file: import it first "
                         f"(`python -m clearside import {args.debate}`) and re-map its id, or drop --enqueue.")
    document = validate_document(data)
    weights = remap.parse_weights(args.weights) if args.weights is not None else None
    stances = remap.stances_for(document, accept=args.accept or (), reject=args.reject or (),
                                unsure=args.unsure or ())
    if weights is None and not stances:
        raise InputError("Nothing to re-map with: give --weights economic=3,... or --accept/--reject/--unsure "
                         "an assumption.")
    if args.enqueue:  # the conditions are checked above and by the job: bad input queues nothing
        return jobs.enqueue_remap(debate_id, weights, stances, provider_from_args(args),
                                  temperature=args.temperature, retries=args.retries, whole=args.whole)
    if debate_id is not None:  # a saved debate: the re-map workflow runs here, and saves it as the next version
        remapped, number = _remap_here(debate_id, weights, stances, args)
        print(f"Saved as version {number} of debate {debate_id} (the original is unchanged).", file=sys.stderr)
    else:  # a file the store does not hold: nothing to save, so the command re-maps it itself
        remapped = remap.remap(document, engine_from_args(args), weights=weights, stances=stances, whole=args.whole)
    changes = remap.diff(document.moderator, remapped.moderator, Embeddings())
    if args.format == "diff":
        write(diff_text(changes), args.out)
    elif args.format == "md":
        write(render(remapped, "md"), args.out)
    else:
        write(json.dumps(remapped.dump(), indent=2, ensure_ascii=False), args.out)
    return 0


def _remap_here(debate_id: str, weights: Any, stances: list[Any], args: argparse.Namespace) -> tuple[Any, int]:
    """The saved debate re-mapped by the workflow ``clearside.remap`` run in this process (its progress on stderr,
    Ctrl+C cancels it): the re-mapped document and the version it was saved as."""
    from ..runtime.events import Event
    from ..schema import Document
    from ..static import remap, workflow
    from ..store import open_store

    store = open_store()
    provider = provider_from_args(args)
    log_violations(args.violations_log)
    job = workflow.remap_job(debate_id, remap.Conditions(weights, tuple(stances), args.whole), provider,
                             temperature=args.temperature, retries=args.retries)
    printer = progress()
    with here.hosting(store.url):
        job_id = workflow.enqueue_remap(job, provider, here=True, store_url=store.url)
        state = here.follow(job_id, lambda entry: printer(Event.of(entry)), store_url=store.url)
    here.finished(state)
    number = int(state.result["number"])
    return Document.model_validate((store.version(debate_id, number).body or {})["document"]), number


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("remap", help="rerun a debate's synthesis under your value weights and assumption "
                                          "stances (a new version; the original is kept)")
    parser.add_argument("debate", metavar="DEBATE.json|ID")
    parser.add_argument("--weights", metavar="CATEGORY=N,...",
                        help="0 to 3 per category (economic, ethical, technical, social, political, environmental; "
                             "unset: 1), e.g. economic=3,ethical=1")
    for stance, what in (("accept", "you accept"), ("reject", "you reject"), ("unsure", "you are unsure of")):
        parser.add_argument(f"--{stance}", action="append", metavar="TEXT",
                            help=f"an assumption {what}: its id (P1, C2), its text or an unambiguous part of it "
                                 "(repeatable)")
    parser.add_argument("--format", choices=("json", "md", "diff"), default="json",
                        help="json: the re-mapped document; md: its report; diff: what changed (default json)")
    parser.add_argument("--whole", action="store_true",
                        help="rewrite every section of the synthesis (default: only the core disagreements and the "
                             "decision hinges, what your conditions change; the rest is kept)")
    parser.add_argument("--versions", action="store_true", help="list a saved debate's versions and exit")
    parser.add_argument("--enqueue", action="store_true",
                        help="queue the re-map of a saved debate for a worker (or the dashboard), which saves it as "
                             "its next version; print the job id and exit at once")
    model_options(parser)
    parser.set_defaults(func=cmd_remap)
