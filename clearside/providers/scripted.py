"""A deterministic provider for tests and demos of the pipeline itself.

Responses are queued per agent (or in one shared queue) and every request is
recorded, so tests can assert exactly what each agent was shown. A response
may be a string, a JSON-ready object (sent as JSON text) or
``{"__error__": "unreachable" | "provider", "message": ...}`` to simulate a
backend failure, or ``{"__delay__": seconds, "reply": ...}`` to answer slowly
(a model still thinking, e.g. when a test kills the process mid-debate).
``scripted:/path/script.json`` loads the queues from a file holding either a
list (shared queue) or an object of agent name to list.
A queued item may also be a callable taking the request, and ``fallback``
(a callable) answers whenever the queues are empty.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ProviderError, ProviderUnreachable
from .base import ChatRequest, Completion, OnDelta, Provider

Script = list[Any] | dict[str, list[Any]]


class ScriptedProvider(Provider):
    name = "scripted"
    concurrency = 4  # debates a batch runs at once by default

    def __init__(self, model: str = "", *, script: Script | None = None, chunk_size: int = 16,
                 fallback: Callable[[ChatRequest], Any] | None = None, chunk_delay: float = 0.0,
                 concurrency: int | None = None) -> None:
        self.limit_to(concurrency)  # debates a batch runs at once; a script has no endpoint to protect
        self.model = model or "script"
        if script is None and model:
            path = Path(model).expanduser()
            try:
                script = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise ConfigError(f"Cannot read the scripted provider's file {path}: {exc}") from exc
        self._shared: deque[Any] = deque()
        self._queues: dict[str, deque[Any]] = {}
        self._lock = threading.Lock()
        self.requests: list[ChatRequest] = []
        self.chunk_size = chunk_size
        self.fallback = fallback
        self.chunk_delay = chunk_delay  # seconds between streamed chunks, to mimic a real model's pace
        if isinstance(script, list):
            self._shared.extend(script)
        elif isinstance(script, dict):
            for agent, items in script.items():
                self.enqueue(*items, agent=agent)

    def enqueue(self, *responses: Any, agent: str | None = None) -> None:
        with self._lock:
            (self._queues.setdefault(agent, deque()) if agent else self._shared).extend(responses)

    def requests_for(self, agent: str) -> list[ChatRequest]:
        return [r for r in self.requests if r.agent == agent]

    def _next(self, agent: str) -> Any:
        with self._lock:
            queue = self._queues.get(agent)
            if queue:
                return queue.popleft()
            if self._shared:
                return self._shared.popleft()
        if self.fallback is not None:
            return self.fallback
        raise ProviderError(f"The scripted provider has no response left for the {agent or 'unnamed'} agent.",
                            provider=self.name)

    def _complete(self, request: ChatRequest, on_delta: OnDelta | None) -> Completion:
        with self._lock:
            self.requests.append(request)
        item = self._next(request.agent)
        if callable(item):
            item = item(request)
        if isinstance(item, dict) and "__delay__" in item:
            time.sleep(float(item["__delay__"]))
            item = item.get("reply", "")
        if isinstance(item, dict) and "__error__" in item:
            error = ProviderUnreachable if item["__error__"] == "unreachable" else ProviderError
            raise error(item.get("message", "scripted failure"), provider=self.name)
        text = item if isinstance(item, str) else json.dumps(item)
        if on_delta:
            for start in range(0, len(text), self.chunk_size):
                if self.chunk_delay:
                    time.sleep(self.chunk_delay)
                on_delta(text[start : start + self.chunk_size])
        prompt_words = sum(len(m["content"].split()) for m in request.messages)
        return Completion(text=text, prompt_tokens=prompt_words, completion_tokens=len(text.split()))

    def list_models(self) -> list[str]:
        return [self.model]

    def check(self) -> str:
        return "The scripted provider is always available (tests and demos of the pipeline only)."
