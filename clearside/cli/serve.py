"""``python -m clearside serve`` (the HTTP API) and ``token create|list|revoke`` (its tokens).

The API itself lives in :mod:`clearside.api` (imported when ``serve`` runs); a token's secret is printed once, on
stdout, when it is made: the store keeps only its hash.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..providers import DEFAULT_PROVIDER

DEFAULT_PORT = 8300  # clearside.api.server.DEFAULT_PORT


def cmd_serve(args: argparse.Namespace) -> int:
    from ..api.server import Options, serve

    return serve(Options(host=args.host, port=args.port, workers=args.workers_here, provider=args.provider,
                         concurrency=args.concurrency,
                         ssl_certfile=args.ssl_certfile, ssl_keyfile=args.ssl_keyfile))


def cmd_token(args: argparse.Namespace) -> int:
    from ..store import open_store
    from ..store.tokens import create_token, revoke_token, tokens

    store = open_store()
    if args.action == "create":
        token, secret = create_token(store, args.name or "", admin=args.admin)
        print(secret)
        print(f"Made {'admin ' if token.admin else ''}API token {token.id}"
              + (f" ({token.name})" if token.name else "")
              + ": the secret above is shown only now; send it as `Authorization: Bearer <secret>`.", file=sys.stderr)
    elif args.action == "list":
        made = tokens(store)
        if args.format == "json":
            print(json.dumps([t.as_dict() for t in made], indent=2, ensure_ascii=False))
        elif not made:
            print("No API tokens: `python -m clearside token create` makes one.")
        for t in made if args.format == "table" else ():
            state = f"revoked {t.revoked_at[:16].replace('T', ' ')}" if t.revoked else "active"
            print(f"{t.id}  {t.created_at[:16].replace('T', ' ')}  {'admin' if t.admin else 'user '}  {state:<24}  "
                  f"{t.name}")
    else:
        token = revoke_token(store, args.id)
        print(f"Revoked API token {token.id}: it is refused from now on.", file=sys.stderr)
    return 0


def add_parsers(sub: Any) -> None:
    serve = sub.add_parser("serve", help="serve the HTTP API (docs/api.md): debates, live debates and perspectives "
                                         "for other programs, on the durable runtime")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (default 127.0.0.1: this machine only; another needs TLS)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    serve.add_argument("--workers-here", type=int, metavar="N",
                       help="jobs on model servers this process runs at once (default: the runtime's, 4); 0: run no "
                            "jobs here, only queue and follow them (workers run them)")
    serve.add_argument("--provider", default=DEFAULT_PROVIDER,
                       help="the model every API job runs on, provider:model (default: embedded)")
    serve.add_argument("--concurrency", type=int, metavar="N",
                       help="requests sent to the model endpoint at once by each host running API jobs (default: "
                            "embedded 1, ollama and openai 4)")
    serve.add_argument("--ssl-certfile", metavar="FILE", help="serve HTTPS with this PEM certificate")
    serve.add_argument("--ssl-keyfile", metavar="FILE", help="and this key")
    serve.set_defaults(func=cmd_serve)

    token = sub.add_parser("token", help="the HTTP API's tokens: create (the secret is shown once), list, revoke")
    actions = token.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="make a token and print its secret (shown only now)")
    create.add_argument("--admin", action="store_true", help="an admin token sees every debate, not only its own")
    create.add_argument("--name", metavar="NAME", help="what it is for (shown by token list)")
    listing = actions.add_parser("list", help="every token: id, made, admin, revoked, name (never the secret)")
    listing.add_argument("--format", choices=("table", "json"), default="table")
    revoke = actions.add_parser("revoke", help="refuse a token from now on")
    revoke.add_argument("id", metavar="ID")
    for parser in (create, listing, revoke):
        parser.set_defaults(func=cmd_token)
