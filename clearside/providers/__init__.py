"""Provider registry: ``get_provider("ollama:llama3.2")`` and friends.

Backends are imported lazily, so a missing optional package only matters when
that backend is chosen (or when the dashboard lists every backend's settings: :func:`registry`).

Each backend declares its settings (``Provider.settings``: label, constructor keyword, environment variable,
secret or not, default); :func:`registry` lists them, and :func:`build` makes a provider from a name and the values
a form holds for those settings (the dashboard's sidebar and its Compare models page):

    for name, kind in registry().items():
        print(name, kind.label, [(s.key, s.env, s.secret) for s in kind.settings])
    provider = build("ollama", {"host": "127.0.0.1:11434", "model": "llama3.2"}, concurrency=4)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError
from .base import ChatRequest, Completion, OnDelta, Provider, Setting, Usage

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


def provider_class(name: str) -> type[Provider]:
    """The class of the backend ``name`` (``parse_spec``'s name), its module imported now."""
    module_name, class_name = _REGISTRY[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # an optional backend package is missing
        raise ConfigError(
            f"The {name} provider needs the package {exc.name!r}: run `pip install -r requirements.txt`."
        ) from exc
    return getattr(module, class_name)


def registry() -> dict[str, type[Provider]]:
    """Every backend by name, in the order the dashboard lists them, each with its declared ``settings``."""
    return {name: provider_class(name) for name in _REGISTRY}


def offered() -> dict[str, type[Provider]]:
    """The backends the dashboard's sidebar offers (those with a ``label``: not the scripted one)."""
    return {name: kind for name, kind in registry().items() if kind.label}


def build(name: str, values: Mapping[str, Any] | None = None, *, secret: Callable[[str], str | None] | None = None,
          small: bool | None = None, concurrency: int | None = None) -> Provider:
    """The provider ``name`` with ``values`` for its declared settings, by key (``model`` included; a missing or
    empty value: the provider's own default, from its environment variable). A secret is never taken from
    ``values``: ``secret(variable)`` reads it (default: the environment). ``small`` and ``concurrency`` as
    :func:`get_provider` takes them (None: what the provider says of itself)."""
    kind = provider_class(parse_spec(name)[0])
    values = values or {}
    read = secret or os.environ.get
    options: dict[str, Any] = {}
    for setting in kind.settings:
        if not setting.model:
            options[setting.key] = (read(setting.env) if setting.secret else values.get(setting.key)) or None
    if concurrency is not None:
        options["concurrency"] = concurrency
    return get_provider(f"{kind.name}:{values.get('model') or ''}", small=small, **options)


def get_provider(spec: str = DEFAULT_PROVIDER, *, small: bool | None = None, **options: Any) -> Provider:
    """Build the provider a ``provider:model`` string names; options go to its constructor.

    Every provider takes ``concurrency`` (requests in flight at its endpoint, shared by all providers for that
    endpoint in this process; None keeps the default: embedded 1, servers 4); the ollama and openai providers
    also take ``attempts`` and ``backoff`` (how an HTTP 429/503 answer is retried, see retry.py).

    ``small=True`` declares the model small (the embedded default declares itself so), which
    picks the generation strategy measured best for small models (``engine.default_strategy``)."""
    name, model = parse_spec(spec)
    provider = provider_class(name)(model, **options)
    if small is not None:
        provider.small = small
    return provider


__all__ = [
    "ChatRequest",
    "Completion",
    "DEFAULT_PROVIDER",
    "OnDelta",
    "Provider",
    "Setting",
    "Usage",
    "build",
    "get_provider",
    "offered",
    "parse_spec",
    "provider_class",
    "provider_names",
    "registry",
]
