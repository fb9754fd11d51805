"""ClearSide's typed errors. Every message says what went wrong and how to fix it.

``InputError`` (``NotFound`` included) and ``ConfigError`` are the user's to fix; ``StoreError`` means
the debate store is unreachable or refused a write; ``ProviderError`` and its
subclasses come from a model backend; ``SchemaViolationError`` means a model kept
producing output that breaks the contract after every re-ask.
"""

from __future__ import annotations

from typing import Any


class ClearSideError(Exception):
    """Root of every error ClearSide raises on purpose.

    The message names the fix in the command line's words (``--provider``, ``OLLAMA_HOST``); ``dashboard``
    is the same message in the dashboard's words (the sidebar's fields, the Library), where they differ.
    """

    exit_code = 1
    dashboard: str | None = None

    def __init__(self, *args: Any, dashboard: str | None = None) -> None:
        super().__init__(*args)
        self.dashboard = dashboard

    def for_dashboard(self) -> str:
        """The message as the dashboard shows it."""
        return self.dashboard or str(self)


class InputError(ClearSideError, ValueError):
    """The user's input cannot be used as given (empty, too long, malformed)."""

    exit_code = 2


class ConfigError(ClearSideError):
    """A setting is wrong: unknown provider, missing model file, missing key."""

    exit_code = 2


class ProviderError(ClearSideError):
    """A model backend failed while answering."""

    exit_code = 3

    def __init__(self, message: str, *, provider: str = "", status_code: int | None = None,
                 dashboard: str | None = None, model: str = "", endpoint: str = "",
                 retryable: bool = False, context_overflow: bool = False) -> None:
        super().__init__(message, dashboard=dashboard)
        self.provider = provider
        self.status_code = status_code
        self.model = model  # the model and the endpoint (a base URL, a host, a GGUF file) the call went to
        self.endpoint = endpoint
        self.retryable = retryable  # a fault that asking again may clear (it was asked again already)
        self.context_overflow = context_overflow  # the prompt does not fit the model's context: shorten it


class ProviderUnreachable(ProviderError):
    """The backend could not be reached at all (connection refused, timeout, DNS)."""


DASHBOARD_FIX = "Retry, or choose a larger model in the sidebar."


class SchemaViolationError(ClearSideError):
    """An agent's output still broke its schema after the last re-ask."""

    exit_code = 4

    def __init__(self, agent: str, attempts: int, errors: list[str], raw_output: str, source: str = "") -> None:
        shown = "; ".join(errors[:5]) + (f" (+{len(errors) - 5} more)" if len(errors) > 5 else "")
        by = f" ({source})" if source else ""
        what = f"The {agent} agent's output broke the ClearSide schema on all {attempts} attempts{by}: {shown}."
        super().__init__(f"{what} Retry, raise --retries, or choose a larger model with --provider.",
                         dashboard=f"{what} {DASHBOARD_FIX}")
        self.agent = agent
        self.attempts = attempts
        self.errors = errors
        self.raw_output = raw_output
        self.source = source  # the provider, model and endpoint that wrote it: "openai model 'x' at URL"


class QualityCheckError(SchemaViolationError):
    """An agent's output was schema-valid but still failed a substance check after the last re-ask."""

    def __init__(self, agent: str, attempts: int, errors: list[str], raw_output: str, source: str = "") -> None:
        super().__init__(agent, attempts, errors, raw_output, source)
        shown = "; ".join(errors[:5]) + (f" (+{len(errors) - 5} more)" if len(errors) > 5 else "")
        by = f" ({source})" if source else ""
        what = (f"The {agent} agent's output failed ClearSide's substance checks on all {attempts} attempts{by}: "
                f"{shown}.")
        self.args = (f"{what} Retry, raise --retries, or choose a larger model with --provider.",)
        self.dashboard = f"{what} {DASHBOARD_FIX}"


class NotFound(InputError):
    """No saved debate (or run) has the id the user gave."""


class StoreError(ClearSideError):
    """The debate store cannot be opened or written (bad DATABASE_URL, server down, disk full)."""

    exit_code = 5


class Cancelled(ClearSideError):
    """The user cancelled a running job; what finished before is kept."""

    exit_code = 130


class JobFailed(ClearSideError):
    """A job on the runtime ended failed or cancelled; the message and the exit code are its failure's own (the job
    may have run on another host, so the original exception is not at hand)."""

    def __init__(self, message: str, *, exit_code: int = 1, dashboard: str | None = None) -> None:
        super().__init__(message, dashboard=dashboard)
        self.exit_code = exit_code

    @classmethod
    def of(cls, state: Any) -> JobFailed:
        """The failure of the job whose :class:`clearside.runtime.JobState` is ``state``."""
        result = state.result or {}
        message = result.get("message") or state.error or f"The job {state.id} ended {state.status}."
        exit_code = int(result.get("exit_code") or (Cancelled.exit_code if state.status == "cancelled" else 1))
        return cls(message, exit_code=exit_code, dashboard=state.error or None)


class DebateFailed(ClearSideError):
    """A debate stopped part-way; ``run`` keeps every section that did succeed."""

    def __init__(self, cause: ClearSideError, run: Any) -> None:
        super().__init__(str(cause), dashboard=cause.for_dashboard())
        self.cause = cause
        self.run = run
        self.exit_code = cause.exit_code
