"""Any OpenAI-compatible chat endpoint: OpenAI, vLLM, LM Studio, llama.cpp servers.

Configuration: ``OPENAI_BASE_URL`` (default: OpenAI's own API) and
``OPENAI_API_KEY`` (optional for local servers). Structured output is requested
as ``response_format={"type": "json_schema", ...}``; servers that only know
``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server) answer
400/422 to that, and the provider then switches to the second form for that
base URL (that server reports the refusal as HTTP 500 with the validation
error in the body, so the switch keys on the message, not only the status).

Load: at most ``concurrency`` requests (default 4) are in flight per base URL in this process, and HTTP
429/503 answers are asked again with backoff (``attempts``, ``backoff``: see retry.py).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from ..errors import ConfigError, ProviderError, ProviderUnreachable
from .base import DEFAULT_TIMEOUT_S, ChatRequest, Completion, OnDelta, Provider
from .limits import SERVER_CONCURRENCY
from .retry import OVERLOADED, RetryPolicy, retry_after
from .urls import checked_url

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


class OpenAIProvider(Provider):
    name = "openai"
    concurrency = SERVER_CONCURRENCY
    _json_object_urls: ClassVar[set[str]] = set()

    def __init__(self, model: str = "", *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT_S, concurrency: int | None = None, attempts: int | None = None,
                 backoff: float | None = None) -> None:
        import openai

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

    def _translate(self, exc: Exception) -> ProviderError:
        openai = self._openai
        where = self.base_url
        if isinstance(exc, openai.APITimeoutError):
            return ProviderUnreachable(f"The OpenAI-compatible server at {where} timed out — check that it is "
                                       "running and not overloaded, or choose another provider.", provider=self.name)
        if isinstance(exc, openai.APIConnectionError):
            return ProviderUnreachable(f"The OpenAI-compatible server at {where} is not reachable — start it or "
                                       "set OPENAI_BASE_URL, or choose another provider.", provider=self.name,
                                       dashboard=f"The OpenAI-compatible server at {where} is not reachable — "
                                                 "start it, check the sidebar's Base URL, or choose another "
                                                 "provider.")
        if isinstance(exc, openai.AuthenticationError):
            return ProviderError(f"{where} rejected the API key (401) — set a valid OPENAI_API_KEY.",
                                 provider=self.name, status_code=401)
        if isinstance(exc, openai.NotFoundError):
            return ProviderError(f"{where} does not know the model {self.model!r} (404) — pick one it lists.",
                                 provider=self.name, status_code=404)
        if isinstance(exc, openai.APIStatusError):
            return ProviderError(f"{where} answered HTTP {exc.status_code}: {exc.message}", provider=self.name,
                                 status_code=exc.status_code)
        return ProviderError(f"{where} failed: {exc}", provider=self.name)

    def _stream(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        stream = self.client.chat.completions.create(
            model=self._model(), messages=request.messages, temperature=request.temperature,
            max_tokens=request.max_tokens, stream=True,
            **({"response_format": rf} if (rf := self._response_format(request.schema)) else {}),
        )
        parts: list[str] = []
        usage = None
        for chunk in stream:
            usage = getattr(chunk, "usage", None) or usage
            if chunk.choices and (delta := chunk.choices[0].delta.content):
                parts.append(delta)
                if on_delta:
                    on_delta(delta)
        return Completion(
            text="".join(parts),
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or len(parts),
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

    def _overload(self, exc: Exception) -> tuple[int, float | None] | None:
        if isinstance(exc, self._openai.APIStatusError) and exc.status_code in OVERLOADED:
            return exc.status_code, retry_after(exc.response.headers)
        return None

    def _retrying(self, attempt, on_delta: OnDelta | None = None):
        try:
            return self.retry.call(attempt, on_delta, overload=self._overload, provider=self.name,
                                   server=f"OpenAI-compatible server at {self.base_url}")
        except self._openai.OpenAIError as exc:
            raise self._translate(exc) from exc

    def _complete(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        return self._retrying(lambda forward: self._attempt(request, forward), on_delta)

    def list_models(self) -> list[str]:
        return self._retrying(lambda _: sorted(m.id for m in self.client.models.list()))
