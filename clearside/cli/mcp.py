"""``mcp``: ClearSide as an MCP server (:mod:`clearside.mcp`), over stdio for a client that starts it, or
streamable HTTP with ``--http`` (127.0.0.1:8310 unless told otherwise)."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from ..providers import DEFAULT_PROVIDER
from .common import provider_from_args

DEFAULT_HOST = "127.0.0.1"  # clearside.mcp.server.DEFAULT_HOST
DEFAULT_PORT = 8310  # clearside.mcp.server.DEFAULT_PORT


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..mcp import server

    if not args.http and (args.host != DEFAULT_HOST or args.port != DEFAULT_PORT):
        raise InputError("--host and --port go with --http: over stdio the client that starts the server talks "
                         "to it through its standard input and output.")
    if not 0 < args.port < 65536:
        raise InputError(f"--port is {args.port}: give a port from 1 to 65535.")
    provider = provider_from_args(args)
    if args.http:
        server.serve_http(provider, args.temperature, args.host, args.port)
    else:
        server.serve_stdio(provider, args.temperature)
    return 0


def add_parser(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="serve ClearSide's tools to AI agents over the Model Context Protocol (stdio, "
                                     "or streamable HTTP with --http)")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP at http://HOST:PORT/mcp instead of "
                                                         "stdio")
    mcp.add_argument("--host", default=DEFAULT_HOST, help=f"with --http: the address to listen on (default "
                                                          f"{DEFAULT_HOST}, this machine only)")
    mcp.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"with --http (default {DEFAULT_PORT})")
    mcp.add_argument("--provider", default=DEFAULT_PROVIDER,
                     help="provider:model, e.g. embedded, ollama:llama3.2, openai:gpt-4o-mini (default: embedded)")
    mcp.add_argument("--concurrency", type=int,
                     help="requests sent to the model endpoint at once (default: embedded 1, ollama and openai 4)")
    mcp.add_argument("--temperature", type=float, default=0.4)
    mcp.set_defaults(func=cmd_mcp)
