"""The ``check`` command: the dashboard's **Test connection** at the command line.

``check --provider SPEC`` makes the call a debate makes first (the orchestrator's prompt, wire schema, decoding and
limits: ``Provider.check``) and validates the reply against that schema, so "connected" means a debate will work;
it prints what answered and how fast, then the models the server offers (``--models`` lists them all). Exit 0 when
the call worked, 3 when the provider is unreachable or failing, 4 when its reply broke the schema, 2 for a bad
``--provider``.
"""

from __future__ import annotations

import argparse

from .common import provider_from_args

SHOWN_MODELS = 20


def add_parser(sub) -> None:
    parser = sub.add_parser("check", help="test a provider with the call a debate makes first (the dashboard's "
                                          "Test connection)")
    parser.add_argument("--provider", default="embedded",
                        help="provider:model, e.g. embedded, ollama:llama3.2, openai:gpt-4o-mini (default: embedded)")
    parser.add_argument("--concurrency", type=int, help="requests sent to the model endpoint at once")
    parser.add_argument("--small", action="store_true", help="treat the model as small (as --small of debate)")
    parser.add_argument("--models", action="store_true", help="list every model the server offers, not the first "
                                                              f"{SHOWN_MODELS}")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..static import engine  # noqa: F401  (registers the health probe: the debate's first call, on its schema)

    provider = provider_from_args(args)
    print(f"ok: {provider.check()}")
    if provider.name != "embedded":
        models = provider.list_models()
        shown = models if args.models else models[:SHOWN_MODELS]
        more = f" (and {len(models) - len(shown)} more: --models lists them)" if len(models) > len(shown) else ""
        print("models offered: " + (", ".join(shown) or "none") + more)
    return 0
