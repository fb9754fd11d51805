"""``study``: study mode from the command line, as the dashboard's Study and Participate pages do it
(docs/quality/study.md).

    study create (--file STUDY.json | --title T --question Q ... [--arm A ...] [--source N=PATH ...]) [--enqueue]
    study generate ID [--enqueue]                  the documents still missing (after a failure)
    study list | status ID | link ID [--url URL] | delete ID
    study join ID KEY                              a participant (what opening the participant link does)
    study answer ID TOKEN --stage S --for R ... --against R ... --lean L --confidence N
    study results ID [--format json] [--csv FILE]
    study sample-size D [--alpha A] [--power P]

``create`` makes the study's documents here, on this process's runtime, and waits for them (``--enqueue``: queues
them for a worker or a dashboard and exits). The command line works on the whole store: it sees every study, as the
store's operator (the dashboard shows a browser only the studies it created). Bad input exits 2, saving nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import InputError
from ..inputs import clean
from .common import provider_from_args, report_json, write

STAGES = ("before", "after", "retest")  # clearside.store.understanding.STAGES
ARMS = ("debate", "single", "sources")  # clearside.store.studies.ARMS
PAGE = "participate"  # the dashboard's participant page (clearside_ui/app_pages/participate.py)


def _files(pairs: list[str]) -> dict[int, list[tuple[str, bytes]]]:
    files: dict[int, list[tuple[str, bytes]]] = {}
    for pair in pairs:
        number, _, path = pair.partition("=")
        if not number.isdigit() or not path:
            raise InputError(f"--source {pair[:60]!r}: write the question's number, '=' and the file, "
                             "e.g. 1=notes.txt.")
        try:
            with open(path, "rb") as handle:
                files.setdefault(int(number), []).append((path, handle.read()))
        except OSError as exc:
            raise InputError(f"Cannot read the source {path}: {exc.strerror or exc}.") from None
    return files


def _plan(args: argparse.Namespace) -> Any:
    from ..quality import study

    if args.file:
        if args.title or args.question or args.source:
            raise InputError("Give the study as --file, or as --title and --question: not both.")
        return study.from_file(args.file)
    return study.plan(args.title, args.question, args.arm or list(study.spec.DEFAULT_ARMS), _files(args.source))


def cmd_create(args: argparse.Namespace) -> int:
    from ..quality import study
    from ..store import open_store

    plan = _plan(args)
    provider = provider_from_args(args)
    store = open_store()
    made = study.create(store, plan, owner=None, provider=provider.spec)
    print(f"Saved study {made.id}: {len(plan.questions)} question(s), arms {', '.join(plan.arms)}.", file=sys.stderr)
    if args.enqueue:
        study.queue(store, made.id, provider, temperature=args.temperature, lend=False)
        print(f"Queued its documents: a worker (`python -m clearside worker`) or a dashboard makes them. Follow with "
              f"`python -m clearside study status {made.id}`.", file=sys.stderr)
    else:
        _make_here(store, made.id, provider, args.temperature)
    print(made.id)
    return _status(store, made.id, "text", file=sys.stderr)


def _make_here(store: Any, study_id: str, provider: Any, temperature: float) -> None:
    """The documents made on this process's runtime, followed to their end; one that fails stops the command
    with its message (``study generate ID`` continues what is missing)."""
    from ..quality import study
    from . import here

    with here.hosting(store.url):
        for job_id in study.queue(store, study_id, provider, temperature=temperature, here=True):
            state = here.follow(job_id, None, store_url=store.url)
            if state.status != "done":
                print(f"A document failed: `python -m clearside study generate {study_id}` continues the missing "
                      "ones.", file=sys.stderr)
            here.finished(state)


def cmd_generate(args: argparse.Namespace) -> int:
    from ..quality import study
    from ..store import open_store

    store = open_store()
    provider = provider_from_args(args)
    if args.enqueue:
        study.queue(store, args.id, provider, temperature=args.temperature, lend=False)
    else:
        _make_here(store, args.id, provider, args.temperature)
    return _status(store, args.id, "text")


def _status(store: Any, study_id: str, fmt: str, file: Any = None) -> int:
    from ..quality import study

    found = study.status(store, study_id)
    if fmt == "json":
        write(report_json(found), None)
        return 0
    lines = [f"{clean(found['title'])}  ({found['study_id']}): "
             f"{'ready' if found['ready'] else 'not ready'}, {found['participants']} participant(s)"]
    lines += [f"  question {i['question']}, {study.ARM_LABELS[i['arm']]}: {i['status']}" for i in found["items"]]
    print("\n".join(lines), file=file or sys.stdout)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from ..store import open_store

    return _status(open_store(), args.id, args.format)


def cmd_list(args: argparse.Namespace) -> int:
    from ..store import open_store

    rows = open_store().studies()
    if args.format == "json":
        write(report_json([{k: v for k, v in r.as_dict().items() if k != "join_key"} for r in rows]), None)
        return 0
    print("\n".join(f"{r.id}  {r.created_at}  {clean(r.title)[:80]}" for r in rows) or "No study yet.")
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    from ..store import open_store

    found = open_store().study(args.id)
    print(f"{args.url.rstrip('/')}/{PAGE}?study={found.id}&join={found.join_key}")
    return 0


def cmd_join(args: argparse.Namespace) -> int:
    from ..quality import study
    from ..store import open_store

    token, who = study.join(open_store(), args.id, args.key)
    print(f"Participant {who.number}: question {who.question}, arm {who.arm}. Keep the token: it is the only way "
          "back to these answers.", file=sys.stderr)
    print(token)
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    from ..quality import study
    from ..store import open_store

    store = open_store()
    study.answer(store, args.id, args.token, args.stage, args.reasons_for, args.reasons_against, lean=args.lean,
                 confidence=args.confidence)
    print(f"Saved the '{args.stage}' answer; next: {study.where(store, args.id, args.token)['step']}.")
    return 0


def _interval(row: dict[str, Any]) -> str:
    if row.get("n", row.get("n_a")) == 0 or row.get("mean", row.get("diff")) is None:
        return "no participant answered both"
    value = row.get("mean", row.get("diff"))
    spread = (f"95 % interval {row['ci_low']:+.2f} to {row['ci_high']:+.2f}" if row["ci_low"] is not None
              else "an interval needs 2 participants")
    return f"{value:+.2f} ({spread})"


def _results_text(found: dict[str, Any]) -> str:
    lines = [f"{clean(found['title'])}: {found['participants']} participant(s)"]
    for arm, data in found["arms"].items():
        lines.append(f"{data['label']} ({arm}): {data['joined']} joined, answered {data['answered']}")
        for name, table in data["gains"].items():
            lines += [f"  {name}, {row['label']}: {_interval(row)}, n = {row['n']}" for row in table.values()]
    for row in found["differences"]:
        if row["measure"] == "named_total":
            needed = f"; {row['per_arm_needed']} per arm would detect this d" if row["per_arm_needed"] else ""
            lines.append(f"{row['b']} minus {row['a']}, {row['comparison']}, {row['label']}: {_interval(row)}, "
                         f"n = {row['n_a']} and {row['n_b']}, d = {row['d']}{needed}")
    return "\n".join(lines)


def cmd_results(args: argparse.Namespace) -> int:
    from ..quality import study
    from ..store import open_store

    store = open_store()
    if args.csv:
        try:
            with open(args.csv, "w", encoding="utf-8", newline="") as handle:
                handle.write(study.csv_text(study.csv_rows(store, args.id)))
        except OSError as exc:
            raise InputError(f"Cannot write {args.csv}: {exc.strerror}") from exc
        print(f"Wrote {args.csv}", file=sys.stderr)
    found = study.results(store, args.id)
    write(report_json(found) if args.format == "json" else _results_text(found) + "\n", None)
    return 0


def cmd_sample_size(args: argparse.Namespace) -> int:
    from ..quality import study

    try:
        found = study.per_arm(args.d, alpha=args.alpha, power=args.power)
    except ValueError as exc:
        raise InputError(f"{exc}.") from None
    print(f"To detect d = {found['d']} (two-sided alpha {found['alpha']}, power {found['power']}): {found['t']} "
          f"participants per arm (two-sample t-test; {found['normal']} by the normal approximation).")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from ..store import open_store

    open_store().delete_study(args.id)
    print(f"Deleted study {args.id} (its debates stay in the store).", file=sys.stderr)
    return 0


def _create_parser(inner: Any, model_options: Any) -> None:
    c = inner.add_parser("create", help="create a study and make its documents")
    c.add_argument("--file", help="a study file (JSON: title, questions, arms)")
    c.add_argument("--title", help="the study's title")
    c.add_argument("--question", action="append", default=[], help="a question (repeat for each)")
    c.add_argument("--arm", action="append", choices=ARMS, help="an arm (repeat; default: debate and single)")
    c.add_argument("--source", action="append", default=[], metavar="N=PATH",
                   help="a file for question N, shown in the 'sources' arm (repeat)")
    c.add_argument("--enqueue", action="store_true", help="queue the documents for a worker and exit")
    model_options(c)
    c.set_defaults(func=cmd_create)
    g = inner.add_parser("generate", help="make the documents a study still lacks (after a failure)")
    g.add_argument("id")
    g.add_argument("--enqueue", action="store_true", help="queue them for a worker and exit")
    model_options(g)
    g.set_defaults(func=cmd_generate)


def _participant_parsers(inner: Any) -> None:
    j = inner.add_parser("join", help="a new participant (what opening the participant link does): prints a token")
    j.add_argument("id")
    j.add_argument("key", help="the join key of the participant link")
    j.set_defaults(func=cmd_join)
    a = inner.add_parser("answer", help="a participant's answer at one stage")
    a.add_argument("id")
    a.add_argument("token", help="the participant's token (from `study join`)")
    a.add_argument("--stage", choices=STAGES, required=True)
    a.add_argument("--for", dest="reasons_for", action="append", metavar="REASON", default=[])
    a.add_argument("--against", dest="reasons_against", action="append", metavar="REASON", default=[])
    a.add_argument("--lean", help="-2 (strongly against) to 2 (strongly for)")
    a.add_argument("--confidence", help="0 to 100")
    a.set_defaults(func=cmd_answer)


def add_parser(sub: Any, model_options: Any) -> None:
    s = sub.add_parser("study", help="study mode: questions and arms, participants drawn at random, the gain per arm")
    inner = s.add_subparsers(dest="study_command", required=True)
    _create_parser(inner, model_options)
    for name, func, text in (("list", cmd_list, "the studies"), ("status", cmd_status, "a study's documents"),
                             ("delete", cmd_delete, "delete a study and its answers")):
        p = inner.add_parser(name, help=text)
        if name != "list":
            p.add_argument("id")
        p.add_argument("--format", choices=("text", "json"), default="text")
        p.set_defaults(func=func)
    k = inner.add_parser("link", help="the participant link to send")
    k.add_argument("id")
    k.add_argument("--url", default="http://localhost:8501", help="the dashboard's address")
    k.set_defaults(func=cmd_link)
    _participant_parsers(inner)
    r = inner.add_parser("results", help="the gain per arm (mean, 95 %% interval, n) and between arms")
    r.add_argument("id")
    r.add_argument("--format", choices=("text", "json"), default="text")
    r.add_argument("--csv", metavar="FILE", help="also write every answer as CSV")
    r.set_defaults(func=cmd_results)
    z = inner.add_parser("sample-size", help="participants per arm to detect a standardized difference d")
    z.add_argument("d", type=float)
    z.add_argument("--alpha", type=float, default=0.05)
    z.add_argument("--power", type=float, default=0.8)
    z.set_defaults(func=cmd_sample_size)
