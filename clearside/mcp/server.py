"""The MCP server as a process: the tools on the official SDK's FastMCP, this process a host of the durable runtime
(like the dashboard: it runs the debates its tools start, and any other queued work), over stdio or streamable
HTTP.

stdio (the default) is what an MCP client starts as a subprocess: the protocol owns this process's standard output,
so file descriptor 1 is pointed at standard error for everything else (a library or llama.cpp writing there would
break the protocol). Streamable HTTP takes the HTTP API's tokens (:mod:`clearside.mcp.auth`) and listens on
127.0.0.1 unless told otherwise, as the dashboard and the API do; there the SDK also refuses requests whose Host or
Origin header names another site (DNS rebinding). Another address is the user's deliberate choice, and standard
error says that tokens then need TLS in front.
"""

from __future__ import annotations

import io
import ipaddress
import logging
import os
import sys

from mcp.server.fastmcp import FastMCP

from .. import modes, runtime
from ..providers import Provider
from ..store import open_store, safe_url
from . import auth, tools, work

NAME = "clearside"
HTTP_PATH = "/mcp"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8310
INSTRUCTIONS = ("ClearSide maps both sides of a decision before anyone decides: map_question runs a structured "
                "debate (blind FOR and AGAINST advocates, a neutral moderator, no verdict) and returns the "
                "arguments, assumptions, disagreements and decision hinges with ids; challenge_element probes one "
                "of them; get_debate, list_cruxes and list_debates read saved debates.")


def build(settings: work.Settings, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> FastMCP:
    """The server with every tool, for ``host``:``port`` when served over HTTP. Log records go to standard error
    as plain lines, as the command line prints them (the SDK would otherwise format them for a terminal)."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    server = FastMCP(NAME, instructions=INSTRUCTIONS, host=host, port=port, streamable_http_path=HTTP_PATH,
                     log_level="WARNING")
    tools.register(server, settings)
    return server


def hosted(provider: Provider, temperature: float) -> work.Settings:
    """The store opened (migrated), this process a runtime host on it, the embedded model loading ahead."""
    store = open_store()
    modes.host(store.url, role="mcp")
    runtime.exit_with_main_thread()  # stopped, it exits at once: the next host takes its unfinished work over
    preload = getattr(provider, "preload", None)
    if preload is not None:
        preload()
    print(f"ClearSide MCP server: debates saved in {safe_url(store.url)}, answered by {provider.name}"
          f"{':' + provider.model if provider.model else ''}.", file=sys.stderr, flush=True)
    return work.Settings(store, provider, temperature)


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve_stdio(provider: Provider, temperature: float) -> None:
    """Serve one client over this process's standard input and output until it closes them."""
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # anything else written to fd 1 goes to stderr
    sys.stdout = io.TextIOWrapper(protocol, encoding="utf-8", write_through=True)  # what the SDK's stdio writes to
    build(hosted(provider, temperature)).run("stdio")


def serve_http(provider: Provider, temperature: float, host: str, port: int) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until stopped (Ctrl+C, SIGTERM), every request with an API
    token (:mod:`clearside.mcp.auth`)."""
    import uvicorn

    settings = hosted(provider, temperature)
    app = auth.TokenGuard(build(settings, host=host, port=port).streamable_http_app(), settings.store)
    if not loopback(host):
        print(f"Listening on {host}: API tokens travel in the clear over plain HTTP. Put TLS in front of it "
              "(docs/security.md); `python -m clearside token create` makes a token.", file=sys.stderr, flush=True)
    print(f"MCP over streamable HTTP at http://{host}:{port}{HTTP_PATH}", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
