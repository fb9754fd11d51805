"""Saved-debate commands: ``list``, ``export``, ``import``, ``maps``, ``delete``, ``rename``, ``duplicate``.

``debate --save`` and ``debate --resume ID`` live with the ``debate`` command. An
unknown id or a refused import exits 2 and changes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..inputs import clean

if TYPE_CHECKING:
    from ..store import Summary

LIST_FIELDS = ("id", "kind", "status", "created_at", "provider", "model", "title")


def _table(items: list[Summary], shown: dict[str, str], partial: dict[str, list[str]]) -> str:
    from ..store.records import status_label

    if not items:
        return "No saved debates match."
    rows = [("ID", "CREATED", "KIND", "STATUS", "PROVIDER:MODEL", "TITLE")]
    rows += [(s.id, s.created_at.replace("T", " ").rstrip("Z")[:16], s.kind,
              status_label(shown[s.id], partial.get(s.id)), clean(f"{s.provider}:{s.model}")[:40],
              clean(s.title)[:60]) for s in items]  # no terminal escapes
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1]
                     for row in rows)


def cmd_list(args: argparse.Namespace) -> int:
    from ..runtime.status import listing
    from ..store import open_store

    found = listing(open_store(), args.search or "", kind=args.kind, provider=args.provider_filter,
                    model=args.model, status=args.status, limit=args.limit)
    if args.format == "json":  # "missing" only on a partial debate: a whole one lists as it always did
        print(json.dumps(found.rows(), indent=2, ensure_ascii=False))
    else:
        print(_table(found.items, found.shown, found.partial))
        if found.total > len(found.items):
            print(f"({len(found.items)} of {found.total}; raise --limit or narrow with --search)", file=sys.stderr)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ..modes import export_data
    from ..store import open_store

    data = export_data(open_store(), args.id)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if args.out in (None, "-"):
        sys.stdout.write(text)
        return 0
    try:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise InputError(f"Cannot write {args.out}: {exc.strerror}") from exc
    print(f"Wrote {args.out}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from ..inputs import read_json
    from ..modes import import_data
    from ..store import open_store, safe_url

    data = read_json(args.file, "the import file")
    store = open_store()
    result = import_data(store, data, args.file)
    for note in result.notes:
        print(note, file=sys.stderr)
    if result.kind == "map":
        print(f"Imported {args.file} as read-only map {result.id} into {safe_url(store.url)}: `python -m clearside "
              f"maps show {result.id}` prints its outline.", file=sys.stderr)
    else:
        print(f"Imported {args.file} as {result.kind} debate {result.id} into {safe_url(store.url)}", file=sys.stderr)
    print(result.id)
    return 0


def cmd_maps(args: argparse.Namespace) -> int:
    """``maps``: the argument maps imported from other tools; ``maps show ID``, ``maps delete ID --yes``."""
    from ..render.aif_foreign import foreign_map
    from ..store import open_store

    store = open_store()
    if args.action == "list":
        rows = store.maps()
        if args.format == "json":
            print(json.dumps([{k: v for k, v in row.as_dict().items() if k != "data"} for row in rows], indent=2,
                             ensure_ascii=False))
        else:
            print("\n".join(f"{row.id}  {row.created_at[:16].replace('T', ' ')}  {clean(row.title)[:70]}"
                            for row in rows) or "No imported maps.")
        return 0
    if not args.id:
        raise InputError(f"`maps {args.action}` needs a map's id: `python -m clearside maps` lists them.")
    row = store.get_map(args.id)
    if args.action == "delete":
        if not args.yes:
            raise InputError(f"Deleting the map “{clean(row.title)[:70]}” cannot be undone: add --yes to confirm.")
        store.delete_map(row.id)
        print(f"Deleted map {row.id}", file=sys.stderr)
        return 0
    if args.format == "json":
        sys.stdout.write(json.dumps(row.data, indent=2, ensure_ascii=False) + "\n")
        return 0
    shown = foreign_map(row.data, row.source)
    sys.stdout.write(shown.text())
    print(f"Read-only map from {row.source}. {shown.placed()}", file=sys.stderr)
    if shown.unplaced:
        print(shown.not_placed(), file=sys.stderr)
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from ..store import open_store

    store = open_store()
    record = store.get(args.id)  # an unknown id is refused before anything else
    if not args.yes:
        raise InputError(f"Deleting “{record.title}” cannot be undone: add --yes to confirm.")
    store.delete(args.id)
    print(f"Deleted {record.kind} debate {args.id} (“{record.title}”)", file=sys.stderr)
    return 0


def cmd_rename(args: argparse.Namespace) -> int:
    from ..store import open_store

    open_store().rename(args.id, args.title)
    print(f"Renamed {args.id}", file=sys.stderr)
    return 0


def cmd_duplicate(args: argparse.Namespace) -> int:
    from ..store import open_store

    copy_id = open_store().duplicate(args.id, title=args.title)
    print(f"Copied {args.id} to {copy_id}", file=sys.stderr)
    print(copy_id)
    return 0


def add_parsers(sub: Any) -> None:
    listing = sub.add_parser("list", help="list saved debates, newest first")
    listing.add_argument("--format", choices=("table", "json"), default="table")
    listing.add_argument("--search", help="words to find in questions, titles, claims and hinges")
    listing.add_argument("--kind", choices=("static", "live", "perspectives"))
    listing.add_argument("--provider", dest="provider_filter", metavar="PROVIDER")
    listing.add_argument("--model")
    listing.add_argument("--status", choices=("running", "paused", "failed", "done"))
    listing.add_argument("--limit", type=int, default=50)
    listing.set_defaults(func=cmd_list)

    export = sub.add_parser("export", help="write a saved debate as JSON (a v1 document and its versions, or a live "
                                        "transcript)")
    export.add_argument("id")
    export.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    export.set_defaults(func=cmd_export)

    imp = sub.add_parser("import", help="add an exported debate (or an AIF map, or the JSON of an Argdown export, "
                                        "ClearSide made) to the store, "
                                        "refused if unreadable or of another major schema version; an AIF map "
                                        "another tool made is kept as a read-only map (see `maps`)")
    imp.add_argument("file", metavar="FILE")
    imp.set_defaults(func=cmd_import)

    maps = sub.add_parser("maps", help="the argument maps imported from other tools (read-only): list them, show "
                                       "one's outline (or its AIF JSON), delete one")
    maps.add_argument("action", nargs="?", choices=("list", "show", "delete"), default="list")
    maps.add_argument("id", nargs="?", help="the map's id (as `maps` lists them)")
    maps.add_argument("--format", choices=("text", "json"), default="text",
                      help="list: table or JSON; show: the outline or the AIF JSON as imported")
    maps.add_argument("--yes", action="store_true", help="delete: confirm (deleting cannot be undone)")
    maps.set_defaults(func=cmd_maps)

    remove = sub.add_parser("delete", help="delete a saved debate and everything in it")
    remove.add_argument("id")
    remove.add_argument("--yes", action="store_true", help="confirm: deleting cannot be undone")
    remove.set_defaults(func=cmd_delete)

    rename = sub.add_parser("rename", help="give a saved debate a new title")
    rename.add_argument("id")
    rename.add_argument("title")
    rename.set_defaults(func=cmd_rename)

    duplicate = sub.add_parser("duplicate", help="copy a saved debate under a new id")
    duplicate.add_argument("id")
    duplicate.add_argument("--title")
    duplicate.set_defaults(func=cmd_duplicate)
