"""Provider registry: ``get_provider("ollama:llama3.2")`` and friends.

Backends are imported lazily, so a missing optional package only matters when
that backend is chosen.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import ConfigError
from .base import ChatRequest, Completion, OnDelta, Provider, Usage

DEFAULT_PROVIDER = "embedded"

_REGISTRY: dict[str, tuple[str, str]] = {
    "embedded": ("clearside.providers.embedded", "EmbeddedProvider"),
    "ollama": ("clearside.providers.ollama", "OllamaProvider"),
    "openai": ("clearside.providers.openai_compat", "OpenAIProvider"),
    "scripted": ("clearside.providers.scripted", "ScriptedProvider"),
}


def provider_names() -> list[str]:
    return list(_REGISTRY)


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider:model``; the model part may itself contain colons (``ollama:llama3.2:1b``)."""
    spec = (spec or DEFAULT_PROVIDER).strip()
    name, _, model = spec.partition(":")
    name = name.strip().lower()
    if name not in _REGISTRY:
        raise ConfigError(
            f"Unknown provider {name!r} in {spec!r}. Use one of: {', '.join(_REGISTRY)} "
            "(for example embedded, ollama:llama3.2 or openai:gpt-4o-mini)."
        )
    return name, model.strip()


def get_provider(spec: str = DEFAULT_PROVIDER, *, small: bool | None = None, **options: Any) -> Provider:
    """Build the provider a ``provider:model`` string names; options go to its constructor.

    Every provider takes ``concurrency`` (requests in flight at its endpoint, shared by all providers for that
    endpoint in this process; None keeps the default: embedded 1, servers 4); the ollama and openai providers
    also take ``attempts`` and ``backoff`` (how an HTTP 429/503 answer is retried, see retry.py).

    ``small=True`` declares the model small (the embedded default declares itself so), which
    picks the generation strategy measured best for small models (``engine.default_strategy``)."""
    name, model = parse_spec(spec)
    module_name, class_name = _REGISTRY[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # an optional backend package is missing
        raise ConfigError(
            f"The {name} provider needs the package {exc.name!r}: run `pip install -r requirements.txt`."
        ) from exc
    provider = getattr(module, class_name)(model, **options)
    if small is not None:
        provider.small = small
    return provider


__all__ = [
    "ChatRequest",
    "Completion",
    "DEFAULT_PROVIDER",
    "OnDelta",
    "Provider",
    "Usage",
    "get_provider",
    "parse_spec",
    "provider_names",
]
