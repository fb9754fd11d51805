"""Make this process a host of the durable runtime with every ClearSide workflow defined.

DBOS runs only the workflows defined before it launches, so every host starts here: the dashboard (its first
page view), ``python -m clearside worker``, tests and benchmarks. A module that defines workflows is imported
below; add a new one here.
"""

from __future__ import annotations

from . import runtime
from .live import workflow as live_workflow
from .perspectives import workflow as perspectives_workflow
from .quality import workflow as batches
from .static import workflow as workflows

# static debates and challenges; regression batches and comparisons; live debates; perspectives sessions
WORKFLOW_MODULES = (workflows, batches, live_workflow, perspectives_workflow)


def host(store_url: str | None = None, *, role: str = "host", concurrency: int | None = None) -> runtime.Host:
    """This process as a runtime host serving ClearSide's workflows (``concurrency``: jobs on model servers
    at once per host, a team-wide setting)."""
    made = runtime.start_host(store_url, role=role, concurrency=concurrency)
    live_workflow.serve_queue(made)
    return made
