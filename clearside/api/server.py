"""``python -m clearside serve``: this process as the API's server, and as a runtime host unless told otherwise.

Safe by default, as the dashboard is: it listens on 127.0.0.1 (this machine only). Another address is the user's
deliberate choice; without TLS (``--ssl-certfile`` and ``--ssl-keyfile``, or a reverse proxy that terminates it)
the server says, once, that tokens and debates then cross the network in the clear.
"""

from __future__ import annotations

import ipaddress
import logging
import sys
from dataclasses import dataclass

from ..errors import ConfigError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8300


@dataclass(frozen=True)
class Options:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    workers: int | None = None  # jobs on model servers this process runs at once; 0: none (None: the runtime's)
    provider: str = "embedded"
    concurrency: int | None = None  # requests sent to the model endpoint at once, per process (None: the provider's)
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check(options: Options) -> list[str]:
    """The options refused with a ConfigError naming the fix; the warnings to print."""
    if not 1 <= options.port <= 65535:
        raise ConfigError(f"--port must be between 1 and 65535, not {options.port}.")
    if options.workers is not None and options.workers < 0:
        raise ConfigError("--workers-here must be 0 (this process only queues and follows; workers run the work) "
                          "or more.")
    if options.concurrency is not None and options.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1.")
    if bool(options.ssl_certfile) != bool(options.ssl_keyfile):
        raise ConfigError("TLS needs both --ssl-certfile and --ssl-keyfile (a PEM certificate and its key).")
    warnings = []
    if not loopback(options.host) and not options.ssl_certfile:
        warnings.append(f"warning: serving on {options.host} without TLS: API tokens and debates cross the network "
                        "in the clear. Give --ssl-certfile and --ssl-keyfile, or put a reverse proxy with TLS in "
                        "front (docs/api.md, \"TLS\").")
    return warnings


def serve(options: Options) -> int:
    import uvicorn

    from .. import modes, runtime
    from ..providers import get_provider
    from ..store import open_store, safe_url
    from ..store.tokens import tokens
    from .app import create_app

    for warning in check(options):
        print(warning, file=sys.stderr)
    store = open_store()  # migrated before anything is served
    provider = get_provider(options.provider, concurrency=options.concurrency)
    if options.workers != 0:
        modes.host(store.url, role="api", concurrency=options.workers or None)
        runtime.exit_with_main_thread()  # stopped, it exits at once: the next host takes its work over
    if not tokens(store):
        print("No API token yet: make one with `python -m clearside token create` (every request needs one).",
              file=sys.stderr)
    scheme = "https" if options.ssl_certfile else "http"
    print(f"ClearSide API on {scheme}://{options.host}:{options.port} (description at /docs), store "
          f"{safe_url(store.url)}, provider {provider.spec}"
          + (", running no jobs here" if options.workers == 0 else ", running jobs here too")
          + "; Ctrl+C stops it.", file=sys.stderr, flush=True)
    logging.getLogger("clearside.api").addHandler(logging.StreamHandler(sys.stderr))
    uvicorn.run(create_app(store, provider), host=options.host, port=options.port, log_level="warning",
                ssl_certfile=options.ssl_certfile, ssl_keyfile=options.ssl_keyfile, timeout_graceful_shutdown=3,
                timeout_keep_alive=30)
    return 0
