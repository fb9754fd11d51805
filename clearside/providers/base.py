"""The one provider interface every backend implements."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .limits import checked_concurrency, endpoint_limit

OnDelta = Callable[[str], None]

DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ChatRequest:
    """One structured-output chat call.

    ``schema`` is the wire JSON Schema the backend should constrain decoding to;
    ``agent`` names the calling agent (used for logs and by the scripted provider).
    """

    messages: list[dict[str, str]]
    schema: dict[str, Any] | None = None
    agent: str = ""
    temperature: float = 0.4
    max_tokens: int = 1024


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    first_token_seconds: float = 0.0  # prompt evaluation until the first text, where the backend reports it
    model: str = ""

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0


class Provider(ABC):
    """A model backend chosen by a ``provider:model`` string."""

    name: ClassVar[str]
    supports_schema: ClassVar[bool] = True
    can_stream: ClassVar[bool] = True
    # Requests this provider sends its endpoint at once (the ``concurrency`` option; every provider for one
    # endpoint shares the limit, see limits.py), and so the debates a regression batch runs at once by default:
    # 1 where calls serialise anyway (the in-process model), 4 for servers that batch requests.
    concurrency: int = 1
    # A small model (the embedded default; any provider with small=True) gets the generation strategy
    # bench/quality.py measured best for small models.
    small: bool = False

    model: str

    @abstractmethod
    def _complete(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        """Run one chat call; stream text deltas to ``on_delta`` where the backend can."""

    @property
    def endpoint(self) -> str | None:
        """What the requests in flight are counted by: kind and base URL (or the GGUF file); None for a
        provider with no endpoint to protect (the scripted one)."""
        return None

    def limit_to(self, concurrency: int | None) -> None:
        """Set the ``concurrency`` option (None keeps the default); a ConfigError names the fix."""
        if concurrency is not None:
            self.concurrency = checked_concurrency(concurrency)

    def complete(self, request: ChatRequest, on_delta: OnDelta | None = None) -> Completion:
        key = self.endpoint
        with endpoint_limit(key).slot(self.concurrency) if key else nullcontext():
            started = time.perf_counter()  # the call's own time, not the wait for a free slot
            result = self._complete(request, on_delta)
        if not result.seconds:
            result.seconds = time.perf_counter() - started
        result.model = result.model or self.model
        return result

    def constrain(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema to decode with; backends with grammar quirks may tighten it. ClearSide's own
        annotations (``x-...`` keys, e.g. ``x-statement``) are left out: servers need not know them."""
        return plain(schema)

    def list_models(self) -> list[str]:
        """Models this backend offers; empty when it cannot list them."""
        return []

    def preflight(self) -> None:
        """Before a long run: that the backend answers, without generating anything (a server is asked for
        its models). Raises a ProviderError whose message names the fix."""
        self.list_models()

    @property
    def identity(self) -> str:
        """What tells two providers apart: two specs that name one model (a GGUF by name and by its path)
        have one identity."""
        return self.spec

    def check(self) -> str:
        """Make a cheap real call and describe the result; raise a ProviderError on failure."""
        reply = self.complete(
            ChatRequest(messages=[{"role": "user", "content": "Reply with OK."}], max_tokens=4, agent="check")
        )
        return f"{self.name}:{self.model} answered in {reply.seconds:.1f} s"

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.model}"


def plain(schema: Any) -> Any:
    """``schema`` without ClearSide's ``x-`` annotation keys."""
    if isinstance(schema, dict):
        return {key: plain(value) for key, value in schema.items() if not str(key).startswith("x-")}
    if isinstance(schema, list):
        return [plain(item) for item in schema]
    return schema


@dataclass
class Usage:
    """Tokens and time an agent used, summed over its attempts."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    first_token_seconds: float = 0.0
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.seconds += completion.seconds
        self.first_token_seconds += completion.first_token_seconds
