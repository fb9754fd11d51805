"""ClearSide's typed errors. Every message says what went wrong and how to fix it.

``InputError`` (``NotFound`` included) and ``ConfigError`` are the user's to fix; ``StoreError`` means
the debate store is unreachable or refused a write; ``ProviderError`` and its
subclasses come from a model backend; ``SchemaViolationError`` means a model kept
producing output that breaks the contract after every re-ask.
"""

from __future__ import annotations

from typing import Any


class ClearSideError(Exception):
    """Root of every error ClearSide raises on purpose."""

    exit_code = 1


class InputError(ClearSideError, ValueError):
    """The user's input cannot be used as given (empty, too long, malformed)."""

    exit_code = 2


class ConfigError(ClearSideError):
    """A setting is wrong: unknown provider, missing model file, missing key."""

    exit_code = 2


class ProviderError(ClearSideError):
    """A model backend failed while answering."""

    exit_code = 3

    def __init__(self, message: str, *, provider: str = "", status_code: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status_code = status_code


class ProviderUnreachable(ProviderError):
    """The backend could not be reached at all (connection refused, timeout, DNS)."""


class SchemaViolationError(ClearSideError):
    """An agent's output still broke its schema after the last re-ask."""

    exit_code = 4

    def __init__(self, agent: str, attempts: int, errors: list[str], raw_output: str) -> None:
        shown = "; ".join(errors[:5]) + (f" (+{len(errors) - 5} more)" if len(errors) > 5 else "")
        super().__init__(
            f"The {agent} agent's output broke the ClearSide schema on all {attempts} attempts: {shown}. "
            "Retry, raise --retries, or choose a larger model with --provider."
        )
        self.agent = agent
        self.attempts = attempts
        self.errors = errors
        self.raw_output = raw_output


class QualityCheckError(SchemaViolationError):
    """An agent's output was schema-valid but still failed a substance check after the last re-ask."""

    def __init__(self, agent: str, attempts: int, errors: list[str], raw_output: str) -> None:
        super().__init__(agent, attempts, errors, raw_output)
        shown = "; ".join(errors[:5]) + (f" (+{len(errors) - 5} more)" if len(errors) > 5 else "")
        self.args = (f"The {agent} agent's output failed ClearSide's substance checks on all {attempts} attempts: "
                     f"{shown}. Retry, raise --retries, or choose a larger model with --provider.",)


class NotFound(InputError):
    """No saved debate (or run) has the id the user gave."""


class StoreError(ClearSideError):
    """The debate store cannot be opened or written (bad DATABASE_URL, server down, disk full)."""

    exit_code = 5


class DebateFailed(ClearSideError):
    """A debate stopped part-way; ``run`` keeps every section that did succeed."""

    def __init__(self, cause: ClearSideError, run: Any) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.run = run
        self.exit_code = cause.exit_code
