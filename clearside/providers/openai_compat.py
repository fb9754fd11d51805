"""Any OpenAI-compatible chat endpoint: OpenAI, vLLM, LM Studio, llama.cpp servers.

Configuration: ``OPENAI_BASE_URL`` (default: OpenAI's own API) and
``OPENAI_API_KEY`` (optional for local servers). Structured output is requested
as ``response_format={"type": "json_schema", ...}``; servers that only know
``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server) answer
400/422 to that, and the provider then switches to the second form for that
base URL (that server reports the refusal as HTTP 500 with the validation
error in the body, so the switch keys on the message, not only the status).

Usage: each stream asks for its usage (``stream_options.include_usage``); of the prompt tokens, those the server
took from its prefix cache are recorded as ``cached_prompt_tokens`` where it reports them (see :func:`prompt_usage`).

Load: at most ``concurrency`` requests (default 4) are in flight per base URL in this process, and HTTP
429/500/502/503/504 answers, timeouts, dropped connections and streams cut before their last chunk (no
``finish_reason``) are asked again with backoff (``attempts``, ``backoff``: see retry.py).
"""

from __future__ import annotations

import json
import os
import threading
import time
import typing
from typing import Any, ClassVar

import httpx

from ..errors import ConfigError, ProviderError
from .base import DEFAULT_TIMEOUT_S, ChatRequest, Completion, OnDelta, Provider, Setting
from .detect import answered, api_error, fix_for
from .limits import SERVER_CONCURRENCY
from .retry import RETRIED_STATUS, Fault, RetryPolicy, StreamCut, retry_after
from .urls import checked_url

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


def _not_the_api(exc: Any) -> str | None:
    """What answered, in words (status, server, content type; never its page), when an error answer was not the
    API's JSON: an HTML page from a web server or a proxy, say. None for the API's own error."""
    response = getattr(exc, "response", None)
    try:
        body = response.text if response is not None else None
    except httpx.ResponseNotRead:
        return None
    if body is None or api_error(body) is not None:
        return None
    return answered(exc.status_code, response.headers, body, expected="an OpenAI-compatible API")


class OpenAIProvider(Provider):
    name = "openai"
    label = "OpenAI-compatible"
    settings = (Setting("Base URL", "base_url", env="OPENAI_BASE_URL", default=OPENAI_DEFAULT_URL, address=True),
                Setting("Model", "model", env="OPENAI_MODEL", placeholder="gpt-4o-mini"),
                Setting("API key", "api_key", env="OPENAI_API_KEY", secret=True))
    found_running = "An OpenAI-compatible server is running"
    found_using = "Using the OpenAI-compatible server"
    concurrency = SERVER_CONCURRENCY
    _json_object_urls: ClassVar[set[str]] = set()

    def __init__(self, model: str = "", *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT_S, concurrency: int | None = None, attempts: int | None = None,
                 backoff: float | None = None) -> None:
        import openai
        from openai.types import Model
        from openai.types.chat import ChatCompletionChunk

        settle_types(ChatCompletionChunk, Model)
        self.limit_to(concurrency)
        self.retry = RetryPolicy.checked(attempts, backoff)

        self._openai = openai
        self.base_url = checked_url((base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL).rstrip("/"),
                                    what="OpenAI-compatible server", example="http://127.0.0.1:8000/v1",
                                    env="OPENAI_BASE_URL", field="Base URL")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and self.base_url == OPENAI_DEFAULT_URL:
            raise ConfigError(
                "The openai provider needs an API key for api.openai.com: set OPENAI_API_KEY, "
                "or point OPENAI_BASE_URL at a local OpenAI-compatible server."
            )
        self.timeout = timeout
        self.client = openai.OpenAI(base_url=self.base_url, api_key=key or "not-needed",
                                    timeout=timeout, max_retries=0)  # overloads are retried in retry.py
        self.model = model or os.environ.get("OPENAI_MODEL", "")

    @property
    def endpoint(self) -> str:
        return f"openai:{self.base_url}"

    def _model(self) -> str:
        if not self.model:
            models = self.list_models()
            if not models:
                raise ConfigError(f"No model named and {self.base_url} lists none: use --provider openai:MODEL.",
                                  dashboard=f"No model named and {self.base_url} lists none: type one in the "
                                            "sidebar's Model field.")
            self.model = models[0]
        return self.model

    def _response_format(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None:
            return None
        if self.base_url in self._json_object_urls:
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "clearside_section", "schema": schema}}

    @property
    def location(self) -> str:
        return self.base_url

    def _translate(self, exc: Exception) -> ProviderError:
        openai = self._openai
        where = f"The OpenAI-compatible server at {self.base_url} ({self.name} model {self.model!r})"
        if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException) or _caused_by(exc, "Timeout"):
            return self.fault(f"{where} timed out — check that it is running and not overloaded, raise the "
                              "timeout, or choose another provider.", unreachable=True)
        if _caused_by(exc, "RemoteProtocolError", "ReadError"):
            return self.fault(f"{where} dropped the connection mid-stream — check the server's log (it may have "
                              "crashed) and any proxy in between, then retry, or choose another provider.")
        if isinstance(exc, openai.APIConnectionError | httpx.TransportError):
            return self.fault(f"{where} is not reachable — start it or set OPENAI_BASE_URL, or choose another "
                              "provider.", unreachable=True,
                              dashboard=f"{where} is not reachable — start it, check the sidebar's Base URL, or "
                                        "choose another provider.")
        if isinstance(exc, openai.APIStatusError) and (other := _not_the_api(exc)) is not None:
            return self.fault(f"The server at {self.base_url} (asked as an OpenAI-compatible API for the model "
                              f"{self.model!r}) answered {other} — {fix_for(exc.status_code, 'Base URL')}",
                              status_code=exc.status_code)  # never its page
        if isinstance(exc, openai.AuthenticationError):
            return self.fault(f"{where} rejected the API key (HTTP 401) — set a valid OPENAI_API_KEY.",
                              status_code=401)
        if isinstance(exc, openai.NotFoundError):
            return self.fault(f"{where}: {self.base_url} does not know the model {self.model!r} (HTTP 404) — pick "
                              "one it lists.", status_code=404)
        if isinstance(exc, openai.APIStatusError):
            overflow = exc.status_code == 400 and "context" in str(exc.message).lower()  # "context length exceeded"
            return self.fault(f"{where} answered HTTP {exc.status_code}: {exc.message} — check the request and "
                              "the server's log, or choose another provider.", status_code=exc.status_code,
                              context_overflow=overflow)
        if isinstance(exc, json.JSONDecodeError):  # the stream's data is not JSON
            return self.fault(f"{where} sent a stream that is not valid JSON ({exc}) — the server is not speaking "
                              "the OpenAI wire format as expected: check its version and log, or choose another "
                              "provider.")
        return self.fault(f"{where} failed: {exc}")

    def _stream(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        started, first = time.perf_counter(), 0.0  # the wait for the first text, as the user has it
        stream = self.client.chat.completions.create(
            model=self._model(), messages=request.messages, temperature=request.temperature,
            max_tokens=request.max_tokens, stream=True,
            stream_options={"include_usage": True},  # else OpenAI and vLLM send no usage in a stream
            **({"response_format": rf} if (rf := self._response_format(request.schema)) else {}),
        )
        parts: list[str] = []
        usage = timings = None
        finished = False
        for chunk in stream:
            usage = getattr(chunk, "usage", None) or usage
            timings = getattr(chunk, "timings", None) or timings  # llama-server's own figures, on its last chunks
            if chunk.choices and (delta := chunk.choices[0].delta.content):
                first = first or time.perf_counter() - started
                parts.append(delta)
                if on_delta:
                    on_delta(delta)
            finished = finished or bool(chunk.choices and chunk.choices[0].finish_reason)
        if not finished:  # the connection closed before the last chunk: what came is not the whole reply
            raise StreamCut(sum(map(len, parts)))
        prompt_tokens, cached = prompt_usage(usage, timings)
        return Completion(
            text="".join(parts),
            prompt_tokens=prompt_tokens,
            completion_tokens=getattr(usage, "completion_tokens", 0) or len(parts),
            cached_prompt_tokens=cached,
            first_token_seconds=first,
        )

    def _attempt(self, request: ChatRequest, on_delta: OnDelta) -> Completion:
        openai = self._openai
        try:
            return self._stream(request, on_delta)
        except (openai.BadRequestError, openai.UnprocessableEntityError, openai.InternalServerError) as exc:
            # llama-cpp-python's server refuses json_schema with a 422 wrapped into a 500
            if request.schema is None or self.base_url in self._json_object_urls:
                raise
            if "response_format" not in str(exc) and "json_schema" not in str(exc):
                raise
            self._json_object_urls.add(self.base_url)
            return self._stream(request, on_delta)

    def _fault(self, exc: Exception) -> Fault | None:
        openai = self._openai
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code in RETRIED_STATUS:
                return Fault(f"answered {_not_the_api(exc) or f'HTTP {exc.status_code}'}", exc.status_code,
                             retry_after(exc.response.headers))
            return None
        if isinstance(exc, StreamCut):
            return Fault(str(exc))
        if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException) or _caused_by(exc, "Timeout"):
            return Fault(f"timed out (no answer within {self.timeout:g} s)")
        if _caused_by(exc, "RemoteProtocolError", "ReadError"):
            return Fault("dropped the connection mid-stream")
        return None

    def _retrying(self, attempt, on_delta: OnDelta | None = None):
        try:
            return self.retry.call(attempt, on_delta, overload=self._fault, provider=self.name, model=self.model,
                                   endpoint=self.base_url, server=f"OpenAI-compatible server at {self.base_url}")
        except (self._openai.OpenAIError, httpx.HTTPError, json.JSONDecodeError) as exc:
            raise self._translate(exc) from exc
        except StreamCut as exc:  # only where no retry notice allowed asking again after text streamed
            raise self.fault(f"The OpenAI-compatible server at {self.base_url} ({self.name} model {self.model!r}): "
                             f"{exc} — check the server's log and any proxy in between, then retry.",
                             retryable=True) from exc

    def _complete(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        self._model()  # named before the call, so its faults name it too
        return self._retrying(lambda forward: self._attempt(request, forward), on_delta)

    def list_models(self) -> list[str]:
        return self._retrying(lambda _: sorted(m.id for m in self.client.models.list()))


_SETTLING = threading.Lock()
_settled: set[type] = set()


def settle_types(*roots: type) -> None:
    """Build the schemas of the openai client's response types now, once per process, under a lock.

    The client defers each type's pydantic schema to its first use (its ``DEFER_PYDANTIC_BUILD``), and that lazy
    build is not thread-safe: two runs of a comparison or batch reading their first chunk at once can find a type
    half rebuilt ("type object 'ChatCompletionChunk' has no attribute '__pydantic_core_schema__'"), which failed the
    run. Each root and every model type its fields hold is built here, before any thread reads a stream."""
    with _SETTLING:
        todo = [cls for cls in roots if cls not in _settled]
        while todo:
            cls = todo.pop()
            if cls in _settled:
                continue
            cls.model_rebuild(_parent_namespace_depth=0)  # nothing to do for a type already built
            _settled.add(cls)
            for field in cls.model_fields.values():
                todo.extend(_models_in(field.annotation))


def _models_in(annotation: Any) -> list[type]:
    """The pydantic model classes an annotation names, through unions, lists and other generics."""
    import pydantic

    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return [annotation]
    return [cls for arg in typing.get_args(annotation) for cls in _models_in(arg)]


def prompt_usage(usage: Any, timings: Any) -> tuple[int, int]:
    """The prompt's tokens and, of them, those the server took from its prefix cache: OpenAI's
    ``usage.prompt_tokens_details.cached_tokens`` (OpenAI, vLLM with ``--enable-prompt-tokens-details``, recent
    llama-server), else llama-server's ``timings`` (``cache_n`` cached, ``prompt_n`` evaluated). Where the server
    reports no cache, 0 cached."""
    prompt = _count(getattr(usage, "prompt_tokens", 0))
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, dict):  # a server's extra field the client left unparsed
        cached = _count(details.get("cached_tokens"))
    else:
        cached = _count(getattr(details, "cached_tokens", 0))
    if not cached and isinstance(timings, dict) and "cache_n" in timings:
        cached = _count(timings.get("cache_n"))
        prompt = prompt or cached + _count(timings.get("prompt_n"))
    return prompt, min(cached, prompt)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _caused_by(exc: BaseException, *names: str) -> bool:
    """Whether ``exc`` or an exception behind it is of a class whose name ends with one of ``names``: the openai
    client wraps the HTTP library's errors mid-stream (a dropped connection, a read timeout) as an
    APIConnectionError, and its HTTP library may be httpx or a vendored copy, so the classes are matched by name."""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return False
        if any(type(seen).__name__.endswith(name) for name in names):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
