"""The HTTP API (``python -m clearside serve``): ClearSide for other programs, over the durable runtime.

A FastAPI app (:mod:`clearside.api.app`) whose OpenAPI description is generated from the schema's pydantic models.
Every piece of work it starts is a workflow on the runtime, queued for any host (this server when it hosts, a
``worker``, a dashboard): a client that goes away loses nothing, and any number of API processes and workers share
one PostgreSQL. Tokens (:mod:`clearside.api.auth`) see only their own debates unless they are admin tokens; each has
the dashboard's rate limits (:mod:`clearside.limits`). Errors are JSON with the command line's classes and messages
(:mod:`clearside.api.errors`). The core never imports this package; only the command line does (``.importlinter``).
"""
