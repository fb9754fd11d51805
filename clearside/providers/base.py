"""The one provider interface every backend implements."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import ProviderError, ProviderUnreachable
from .limits import checked_concurrency, endpoint_limit

OnDelta = Callable[[str], None]
# What a caller is told when a call is asked again after a provider fault (HTTP 429/5xx, a timeout, a dropped
# stream): {"attempt": 2, "attempts": 3, "cause": ..., "wait": seconds, "provider": spec}. Set by the caller
# (enforce.run_structured) for the calls it makes on this thread; a caller that set one has also agreed to drop
# the text streamed so far, so a stream cut mid-way may be asked again.
OnRetrying = Callable[[dict[str, Any]], None]
_retry_notice: ContextVar[OnRetrying | None] = ContextVar("clearside_retry_notice", default=None)
# The health check a debate's first call makes (enforce.health_check registers it: this layer knows no agent)
_health_probe: list[Callable[[Provider], str]] = []


@contextmanager
def retry_notices(callback: OnRetrying | None) -> Iterator[None]:
    """Tell ``callback`` of every provider retry made on this thread inside the block."""
    token = _retry_notice.set(callback)
    try:
        yield
    finally:
        _retry_notice.reset(token)


def retry_notice() -> OnRetrying | None:
    """The callback :func:`retry_notices` set for this thread, if any."""
    return _retry_notice.get()


def register_health_probe(probe: Callable[[Provider], str]) -> None:
    _health_probe[:] = [probe]

DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Setting:
    """One setting a provider declares: what the dashboard's sidebar shows for it and how the provider is built.

    ``key`` is the constructor's keyword (``model``: the model part of ``provider:model``); ``env`` the environment
    variable the provider reads when the setting is not given ("" for none); a ``secret`` (an API key) is never a
    field, never kept and never in a :meth:`Provider.recipe`: each process reads it from its own environment (the
    dashboard also from ``.streamlit/secrets.toml``). ``address``: where the server is (a detected server fills it).
    ``default`` is what the sidebar's field starts with when ``env`` is unset; ``placeholder`` and ``help`` are the
    field's."""

    label: str
    key: str
    env: str = ""
    secret: bool = False
    default: str = ""
    help: str = ""
    placeholder: str = ""
    address: bool = False

    @property
    def model(self) -> bool:
        """Whether this is the model: the part of the spec after ``provider:``, not a constructor option."""
        return self.key == "model"


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
    # the wait for the first text: the server providers measure it from the request, the embedded one from its batcher
    first_token_seconds: float = 0.0
    model: str = ""
    # Of prompt_tokens, those the server reported taking from its prefix cache (vLLM's automatic prefix caching,
    # llama-server's cache_prompt, Ollama): it evaluated only prompt_tokens - cached_prompt_tokens. 0 where the
    # server reports none.
    cached_prompt_tokens: int = 0

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0


class Provider(ABC):
    """A model backend chosen by a ``provider:model`` string."""

    name: ClassVar[str]
    # How the dashboard names it in the sidebar's Provider list; "" for a provider it does not offer (scripted).
    label: ClassVar[str] = ""
    # What it is configured with, in the sidebar's order (see Setting); every key is a constructor keyword.
    settings: ClassVar[tuple[Setting, ...]] = ()
    # The model runs inside this process (the embedded one): one job at a time per host, and no server settings
    # (no concurrency or small-model choice in the sidebar, no list of models to offer).
    in_process: ClassVar[bool] = False
    # What the sidebar says of a server of this kind found running, and of the one in use.
    found_running: ClassVar[str] = ""
    found_using: ClassVar[str] = ""
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

    def prefill(self, messages: list[dict[str, str]], agent: str = "") -> None:
        """Start evaluating ``messages`` (the last one cut short: what is known so far of a call expected soon)
        while other work runs, so that call's first token comes sooner. Returns at once; a backend with nothing
        to warm ignores it (servers cache what they evaluated, by prefix, on their own)."""
        return None

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
        """The call a debate makes first (the orchestrator's prompt, wire schema, decoding and limits, through
        ``enforce.health_check``), its reply validated against that schema; a description of the result. Raises
        a ProviderError, or a SchemaViolationError when the reply breaks the schema: "connected" means a debate
        will work."""
        if _health_probe:
            return _health_probe[0](self)
        reply = self.complete(  # only where clearside.enforce is not loaded (it always is under a debate)
            ChatRequest(messages=[{"role": "user", "content": "Reply with OK."}], max_tokens=4, agent="check")
        )
        return f"{self.name}:{self.model} answered in {reply.seconds:.1f} s"

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.model}"

    def recipe(self) -> dict[str, Any]:
        """What another host needs to build the same provider: the spec, whether the model is declared small, and
        the options of its settings that are set (Ollama's host, an OpenAI-compatible server's base URL) with the
        endpoint's concurrency the user chose. Never a secret (each host reads its own) nor the model (in the
        spec)."""
        options: dict[str, Any] = {}
        for setting in self.settings:
            if setting.secret or setting.model:
                continue
            value = getattr(self, setting.key, None)
            if isinstance(value, str) and value:
                options[setting.key] = value
        options["concurrency"] = self.concurrency
        return {"spec": self.spec, "small": bool(self.small), "options": options}

    @classmethod
    def address(cls) -> Setting | None:
        """The setting naming where its server is (a host, a base URL); None for a provider without one."""
        return next((s for s in cls.settings if s.address), None)

    @classmethod
    def server_url(cls, address: str) -> str:
        """``address`` (as typed in the sidebar, or its default) as the URL a detected server is listed by."""
        return address.strip().rstrip("/")

    @property
    def location(self) -> str:
        """Where the calls go, as a person reads it: a base URL, a host, a GGUF file ("" for none; a wrapper of
        another provider, such as the re-map's, holding it as ``inner``: that one's)."""
        inner = getattr(self, "inner", None)
        return inner.location if isinstance(inner, Provider) else ""

    def describe(self) -> str:
        """The provider, the model and the endpoint, for a failure message: "openai model 'x' at URL"."""
        where = f" at {self.location}" if self.location else ""
        return f"{self.name} model {self.model or '(none named)'!r}{where}"

    def fault(self, message: str, *, unreachable: bool = False, **options: Any) -> ProviderError:
        """A ProviderError (or ProviderUnreachable) of this provider, its model and endpoint attached."""
        kind = ProviderUnreachable if unreachable else ProviderError
        return kind(message, provider=self.name, model=self.model, endpoint=self.location, **options)


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
    cached_prompt_tokens: int = 0  # of prompt_tokens, those served from the server's prefix cache
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.prompt_tokens += completion.prompt_tokens
        self.cached_prompt_tokens += completion.cached_prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.seconds += completion.seconds
        self.first_token_seconds += completion.first_token_seconds
