"""Ollama through the ``ollama`` package: ``/api/chat`` with ``format=<schema>``.

The host comes from the argument, else ``OLLAMA_HOST``, else http://127.0.0.1:11434. At most
``concurrency`` requests (default 4) are in flight per host in this process, and HTTP 429/500/502/503/504
answers, timeouts, dropped connections and streams cut before their ``done`` line are asked again with backoff
(``attempts``, ``backoff``: see retry.py); ollama-python retries nothing.

Usage: the final ``done`` line's ``prompt_eval_count`` is the prompt tokens, and ``prompt_eval_cached_count``
(sent by newer servers) those of them Ollama read from its prompt cache, recorded as ``cached_prompt_tokens``.
Since Ollama 0.30 (llama-server inside) ``prompt_eval_count`` counts the whole prompt, cached tokens included;
older servers counted only the tokens they evaluated, and sent no cached count (the record then has 0 cached).
"""

from __future__ import annotations

import json
import os
import time

import httpx
import ollama

from ..errors import ConfigError, ProviderError, ProviderUnreachable
from .base import DEFAULT_TIMEOUT_S, ChatRequest, Completion, OnDelta, Provider, Setting
from .detect import answered, api_error, fix_for, ollama_url
from .limits import SERVER_CONCURRENCY
from .retry import RETRIED_STATUS, Fault, RetryPolicy, StreamCut, retry_after
from .urls import checked_url

DEFAULT_HOST = "http://127.0.0.1:11434"


class _ChatResponse(ollama.ChatResponse):
    """ollama-python's chat line, with the cached count it does not know yet (it drops unknown fields)."""

    prompt_eval_cached_count: int | None = None


class _Client(ollama.Client):
    """ollama-python's client, reading chat lines as :class:`_ChatResponse`."""

    def _request(self, cls, *args, **kwargs):
        return super()._request(_ChatResponse if cls is ollama.ChatResponse else cls, *args, **kwargs)


def _not_ollama(exc: ollama.ResponseError) -> str | None:
    """What answered, in words (status, server, content type; never its page), when the answer was not Ollama's
    JSON error: an HTML page from a web server or a proxy, say. None for Ollama's own error."""
    response = getattr(exc.__context__, "response", None)  # ollama-python raises it out of httpx's error
    try:
        body = response.text if response is not None else None
    except httpx.ResponseNotRead:
        body = None
    if body is None:  # no response kept: judge by the text ollama-python kept (its error, or the raw body)
        raw = str(exc.error or "")
        return answered(exc.status_code, {}, raw, expected="Ollama") if raw.lstrip().startswith("<") else None
    return None if api_error(body) is not None else answered(exc.status_code, response.headers, body,
                                                               expected="Ollama")


class OllamaProvider(Provider):
    name = "ollama"
    label = "Ollama"
    settings = (Setting("Ollama host", "host", env="OLLAMA_HOST", default=DEFAULT_HOST, address=True),
                Setting("Model", "model", placeholder="llama3.2"))
    found_running = "Ollama is running"
    found_using = "Using Ollama"
    concurrency = SERVER_CONCURRENCY

    def __init__(self, model: str = "", *, host: str | None = None, timeout: float = DEFAULT_TIMEOUT_S,
                 concurrency: int | None = None, attempts: int | None = None, backoff: float | None = None) -> None:
        self.limit_to(concurrency)
        self.retry = RetryPolicy.checked(attempts, backoff)
        self.host = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")
        if "://" not in self.host:
            self.host = f"http://{self.host}"
        self.host = checked_url(self.host, what="Ollama", example=DEFAULT_HOST, env="OLLAMA_HOST",
                                field="Ollama host")
        self.timeout = timeout
        self.client = _Client(host=self.host, timeout=timeout)
        self.model = model

    @classmethod
    def server_url(cls, address: str) -> str:
        return ollama_url(address)  # as the ollama client reads OLLAMA_HOST: no scheme, no port

    @property
    def endpoint(self) -> str:
        return f"ollama:{self.host}"

    @property
    def location(self) -> str:
        return self.host

    def _unreachable(self) -> ProviderUnreachable:
        model = f" ({self.name} model {self.model!r})"
        return self.fault(
            f"Ollama is not reachable at {self.host}{model} — start it with `ollama serve`, set OLLAMA_HOST, "
            "or choose another provider.", unreachable=True,
            dashboard=f"Ollama is not reachable at {self.host}{model} — start it with `ollama serve`, check the "
                      "sidebar's Ollama host, or choose another provider.",
        )

    def _translate(self, exc: Exception) -> ProviderError:
        where = f"Ollama at {self.host} ({self.name} model {self.model!r})"
        if isinstance(exc, httpx.TimeoutException):
            return self.fault(f"{where} timed out — is the model still loading? Retry, raise the timeout, or "
                              "choose a smaller model.", unreachable=True)
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            return self.fault(f"{where} dropped the connection mid-stream — check the server's log (it may have "
                              "crashed or run out of memory), then retry, or choose another provider.")
        if isinstance(exc, (ConnectionError, httpx.TransportError)):
            return self._unreachable()
        if isinstance(exc, ollama.ResponseError):
            if (other := _not_ollama(exc)) is not None:  # never "run ollama pull" to a server that is not Ollama
                return self.fault(f"The server at {self.host} (asked as Ollama for the model {self.model!r}) "
                                  f"answered {other} — {fix_for(exc.status_code, 'Ollama host')}",
                                  status_code=exc.status_code)
            if exc.status_code == 404:
                return self.fault(f"Ollama at {self.host} has no model {self.model!r} — run "
                                  f"`ollama pull {self.model}` or pick one it lists.", status_code=404)
            return self.fault(f"{where} answered: {exc.error} (status {exc.status_code}) — check the server's "
                              "log, or choose another provider.", status_code=exc.status_code)
        if isinstance(exc, json.JSONDecodeError):
            return self.fault(f"{where} sent a stream that is not valid JSON ({exc}) — the server is not speaking "
                              "Ollama's wire format as expected: check its version and log, or choose another "
                              "provider.")
        return self.fault(f"{where} failed: {exc}")

    def _need_model(self) -> None:
        if not self.model:
            raise ConfigError("Name an Ollama model: --provider ollama:MODEL (for example ollama:llama3.2).",
                              dashboard="Name an Ollama model in the sidebar's Model field (for example llama3.2).")

    def _fault(self, exc: Exception) -> Fault | None:
        if isinstance(exc, ollama.ResponseError):
            if exc.status_code not in RETRIED_STATUS:
                return None
            # ollama-python raises ResponseError out of httpx's HTTPStatusError, whose response has the headers
            response = getattr(exc.__context__, "response", None)
            return Fault(f"answered {_not_ollama(exc) or f'HTTP {exc.status_code}'}", exc.status_code,
                         retry_after(getattr(response, "headers", None)))
        if isinstance(exc, StreamCut):
            return Fault(str(exc))
        if isinstance(exc, httpx.TimeoutException):
            return Fault(f"timed out (no answer within {self.timeout:g} s)")
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            return Fault("dropped the connection mid-stream")
        return None

    def _retrying(self, attempt, on_delta: OnDelta | None = None):
        try:
            return self.retry.call(attempt, on_delta, overload=self._fault, server=f"Ollama server at {self.host}",
                                   provider=self.name, model=self.model, endpoint=self.host)
        except (ollama.ResponseError, ConnectionError, httpx.HTTPError, json.JSONDecodeError) as exc:
            raise self._translate(exc) from exc
        except StreamCut as exc:  # only where no retry notice allowed asking again after text streamed
            raise self.fault(f"Ollama at {self.host} ({self.name} model {self.model!r}): {exc} — check the "
                             "server's log and any proxy in between, then retry.", retryable=True) from exc

    def _complete(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        self._need_model()
        return self._retrying(lambda forward: self._attempt(request, forward), on_delta)

    def _attempt(self, request: ChatRequest, on_delta: OnDelta) -> Completion:
        parts: list[str] = []
        last, started, first = None, time.perf_counter(), 0.0  # the wait for the first text, as the user has it
        for chunk in self.client.chat(
            model=self.model, messages=request.messages, stream=True, format=request.schema,
            options={"temperature": request.temperature, "num_predict": request.max_tokens},
        ):
            last = chunk
            if delta := chunk.message.content:
                first = first or time.perf_counter() - started
                parts.append(delta)
                on_delta(delta)
        if last is None or not last.done:  # the stream closed before its final ``done`` line
            raise StreamCut(sum(map(len, parts)))
        prompt_tokens = last.prompt_eval_count or 0
        return Completion(
            text="".join(parts),
            prompt_tokens=prompt_tokens,
            completion_tokens=last.eval_count or len(parts),
            seconds=(last.total_duration or 0) / 1e9,
            cached_prompt_tokens=min(getattr(last, "prompt_eval_cached_count", None) or 0, prompt_tokens),
            first_token_seconds=first,
        )

    def list_models(self) -> list[str]:
        return self._retrying(lambda _: sorted(m.model for m in self.client.list().models if m.model))

    def preflight(self) -> None:
        """The server answers and has the model (a bare name means its ``:latest`` tag)."""
        self._need_model()
        listed = self.list_models()
        if self.model not in listed and f"{self.model}:latest" not in listed:
            raise self.fault(f"Ollama at {self.host} has no model {self.model!r} — run `ollama pull {self.model}` "
                             f"or pick one it lists ({', '.join(listed) or 'none yet'}).", status_code=404)
