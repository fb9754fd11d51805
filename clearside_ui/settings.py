"""Sidebar provider settings, shared by every page (widgets live in the entrypoint).

On a session's first run the sidebar looks for a running model server (Ollama at
``OLLAMA_HOST``, an OpenAI-compatible one at ``OPENAI_BASE_URL``) and offers it;
when the chosen server is the one found, the Model field lists its models.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import streamlit as st

from clearside.errors import ClearSideError
from clearside.providers import DEFAULT_PROVIDER, Provider, Setting, build, offered, parse_spec, provider_class
from clearside.providers.detect import Detected, detect_servers, ollama_probe_url
from clearside.providers.limits import SERVER_CONCURRENCY
from clearside.schema import ModelInfo
from clearside.store.privacy import register_secret
from clearside_ui.format import esc
from clearside_ui.state import Sidebar

STRATEGIES = {"auto": "Automatic", "whole": "Whole: one call per agent",
              "focused": "Focused: smaller calls per agent",
              "single": "Single pass: one call writes it all (a control)"}
STRATEGY_HELP = (
    "How each agent writes its section. Whole: one call per agent. Focused: the categories first, one argument "
    "per call, the synthesis field by field (slower; meant for small models). Single pass: no separate agents, "
    "one call writes both cases and the synthesis with their token budget, the control that shows what the "
    "debate adds (no personas, no sources). Automatic: the one measured best for the model (whole today, for "
    "small and large models alike).")
CONCURRENCY_HELP = (
    "Requests sent to this server at once, by every debate, comparison and batch in this app together "
    "(a regression batch also runs this many debates at once by default). Lower it if the server answers "
    "'overloaded' (HTTP 429 or 503): those answers are asked again with backoff, a few times.")
SMALL_HELP = (
    "Treat this model as small, as the embedded default always is: a reply that fails its checks is asked again "
    "with the prompt and the fixes (the model does not see its failed reply), at a gentler rise in temperature.")
DEMO_NOTE = (
    "**You are using the tiny demonstration model.** The embedded default, SmolLM2-135M, runs offline on this "
    "machine: its debates show ClearSide's pipeline, not expert reasoning. For real debates connect a real model: "
    "start Ollama (`ollama serve`, then e.g. `ollama pull llama3.2`) and pick it in the sidebar, or set "
    "`OPENAI_BASE_URL` for an OpenAI-compatible server such as vLLM, LM Studio or llama.cpp server.")


def secret(name: str) -> str | None:
    """A key from the environment or st.secrets; never written to session state, the store or an export
    (the store scrubs every value registered here, and secret-looking environment variables, before writing)."""
    try:
        value = os.environ.get(name) or st.secrets.get(name)
    except (FileNotFoundError, st.errors.StreamlitSecretNotFoundError):
        value = os.environ.get(name)
    register_secret(value)
    return value


def detected() -> list[Detected]:
    """The model servers found running, probed once per session (**Look again** probes anew)."""
    if Sidebar.DETECTED not in st.session_state:
        st.session_state[Sidebar.DETECTED] = detect_servers(api_key=secret("OPENAI_API_KEY"))
    return st.session_state[Sidebar.DETECTED]


def _look_again() -> None:
    st.session_state.pop(Sidebar.DETECTED, None)


def field_key(name: str, setting: Setting) -> str:
    """The session key of a provider's setting in the sidebar (``ollama_host``, ``openai_model``...)."""
    return Sidebar.field(name, setting.key)


def chosen() -> str:
    """The name of the provider the sidebar has chosen."""
    return st.session_state.get(Sidebar.PROVIDER, DEFAULT_PROVIDER)


def _use(server: Detected) -> None:
    """Button callback: widgets' keys may only be set before the widgets are created, so here."""
    st.session_state[Sidebar.PROVIDER] = server.provider
    address = provider_class(server.provider).address()
    if address is not None:
        st.session_state[field_key(server.provider, address)] = server.base_url


def _default(setting: Setting) -> str:
    """What a setting's field starts with: its environment variable, else its default."""
    return (os.environ.get(setting.env) if setting.env else None) or setting.default


def _server_in_use(kind: type[Provider]) -> Detected | None:
    """The detected server that the sidebar's host (or base URL) for ``kind`` points at (None for a provider
    without a server)."""
    address = kind.address()
    if address is None:
        return None
    wanted = kind.server_url(st.session_state.get(field_key(kind.name, address)) or _default(address))
    return next((s for s in detected() if s.provider == kind.name and s.base_url == wanted), None)


def _offers(name: str) -> None:
    """Each server found running, with **Use it** unless it is already the one in use."""
    for server in detected():
        where, kind = esc(server.base_url), provider_class(server.provider)
        if server.foreign:  # something answers there, and it is not that kind of server: nothing to use
            st.caption(f"Something answers at {where}, but not as {kind.label}: {esc(server.error)}")
            continue
        if name == server.provider and _server_in_use(kind) == server:
            st.caption(f"{kind.found_using} found running at {where}.")
        else:
            count = len(server.models)
            models = f"{count} model{'s' if count != 1 else ''}" if count else "no models yet"
            st.info(f"{kind.found_running} at {where} ({models}).")
            st.button("Use it", key=Sidebar.use(server.provider), on_click=_use, args=(server,))
        if server.error:
            st.caption(f"It answered with an error: {esc(server.error)}")
    if not detected():
        st.caption(f"No model server found running (Ollama at {esc(ollama_probe_url())}).")
    st.button("Look again", key=Sidebar.LOOK_AGAIN, on_click=_look_again)


def _model_field(kind: type[Provider], setting: Setting) -> None:
    """The models the detected server lists, as a selectbox; a free-text field when there is no such list."""
    key = field_key(kind.name, setting)
    server = _server_in_use(kind)
    if server is None or not server.models:
        st.text_input(setting.label, key=key, placeholder=setting.placeholder or None, help=setting.help or None)
        return
    if st.session_state.get(key) not in server.models:
        st.session_state[key] = server.models[0]  # allowed: the widget is not created yet in this run
    st.selectbox(setting.label, server.models, key=key, help=f"The models {esc(server.base_url)} lists.")


def _fields(kind: type[Provider]) -> None:
    """The provider's declared settings, in its order: the model (a list when its server offers one), text
    fields starting from their environment variable, and a note for a secret (never a field: never kept)."""
    for setting in kind.settings:
        if setting.secret:
            st.caption(f"{setting.label}: taken from {setting.env} in the environment or secrets, never stored.")
        elif setting.model:
            _model_field(kind, setting)
        else:
            key = field_key(kind.name, setting)
            st.session_state.setdefault(key, _default(setting))
            st.text_input(setting.label, key=key, placeholder=setting.placeholder or None, help=setting.help or None)


def _test_connection(kind: type[Provider]) -> None:
    """The provider's health check: the debate's first call, then the models a server offers."""
    try:
        provider = build_provider()
        st.success(esc(provider.check()))
        models = provider.list_models()
        if models and not kind.in_process:
            st.caption("Models offered: " + esc(", ".join(models[:20])))
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()))


def sidebar() -> None:
    with st.sidebar:
        st.subheader("Model")
        _offers(chosen())
        labels = {name: kind.label for name, kind in offered().items()}
        kind = provider_class(st.selectbox("Provider", list(labels), format_func=labels.get, key=Sidebar.PROVIDER))
        _fields(kind)
        st.slider("Temperature", 0.0, 1.5, 0.4, 0.05, key=Sidebar.TEMPERATURE)
        with st.expander("Generation"):
            st.selectbox("Strategy", list(STRATEGIES), format_func=STRATEGIES.get, key=Sidebar.STRATEGY,
                         help=STRATEGY_HELP)
            if not kind.in_process:
                st.checkbox("Small model", key=Sidebar.SMALL, help=SMALL_HELP)
                st.number_input("Concurrency", min_value=1, max_value=64, value=SERVER_CONCURRENCY, step=1,
                                key=Sidebar.CONCURRENCY, help=CONCURRENCY_HELP)
        if st.button("Test connection", key=Sidebar.TEST_CONNECTION):
            _test_connection(kind)


def values(kind: type[Provider]) -> dict[str, object]:
    """What the sidebar holds for each of the provider's settings but its secrets (those are read by
    :func:`secret`, never kept)."""
    return {s.key: st.session_state.get(field_key(kind.name, s)) for s in kind.settings if not s.secret}


def build_provider() -> Provider:
    """The provider the sidebar describes (tests may inject one as ``provider_override``)."""
    override = st.session_state.get(Sidebar.OVERRIDE)
    if override is not None:
        return override
    kind = provider_class(chosen())
    if kind.in_process:  # no server settings: its own concurrency, and small as it says of itself
        return build(kind.name, values(kind), secret=secret)
    small = True if st.session_state.get(Sidebar.SMALL) else None  # None: what the provider says of itself
    return build(kind.name, values(kind), secret=secret, small=small, concurrency=concurrency())


def concurrency() -> int | None:
    """The sidebar's Concurrency for a server (None before the field was shown: the provider's default)."""
    value = st.session_state.get(Sidebar.CONCURRENCY)
    return int(value) if value is not None else None


def model_label() -> tuple[str, str]:
    """``(provider:model, "")`` for the sidebar's model, or ``("", why it cannot be used)``."""
    try:
        provider = build_provider()
    except ClearSideError as exc:
        return "", exc.for_dashboard()
    return provider.spec, ""


def using_demo_model() -> bool:
    """Debates run on the default provider's own model (the embedded SmolLM2-135M): the sidebar's choice, or an
    injected provider of that kind."""
    override = st.session_state.get(Sidebar.OVERRIDE)
    if override is not None:
        return getattr(override, "name", "") == DEFAULT_PROVIDER
    kind = provider_class(DEFAULT_PROVIDER)
    return chosen() == DEFAULT_PROVIDER and not any(
        str(st.session_state.get(field_key(kind.name, s)) or "").strip() for s in kind.settings if s.model)


def is_demo_model(model: ModelInfo | Mapping[str, Any] | str) -> bool:
    """Whether a saved record's model is the tiny demonstration one: the embedded provider with its default GGUF.
    ``model`` is a document's ``meta.model_info`` (or its dict) or a ``provider:model`` spec (``embedded``)."""
    if isinstance(model, str):
        try:
            provider, name = parse_spec(model)
        except ClearSideError:
            return False
    elif isinstance(model, ModelInfo):
        provider, name = model.provider, model.model
    else:
        provider, name = str(model.get("provider") or ""), str(model.get("model") or "")
    if provider.strip().lower() != DEFAULT_PROVIDER:
        return False
    from clearside.providers.embedded import DEFAULT_GGUF  # loads llama.cpp's bindings: only when asked

    return PurePath(name.strip()).name in ("", DEFAULT_GGUF)


DEMO_LINE = ("Made by the tiny demonstration model (SmolLM2-135M): it shows ClearSide's pipeline, not expert "
             "reasoning.")


def demo_model_notice(*models: ModelInfo | Mapping[str, Any] | str | None, compact: bool = False) -> None:
    """The tiny-demonstration-model notice (``DEMO_NOTE``). With no ``models``, for the sidebar's model (what the
    next run uses); with models (a saved debate's ``meta.model_info``, a live transcript's, the ``provider:model``
    specs of a comparison or a batch), when any of them is the demonstration model, whatever the sidebar says
    (``None`` for a record not known yet: when no model is known, the sidebar decides)."""
    known = [model for model in models if model]
    if any(is_demo_model(model) for model in known) if known else using_demo_model():
        if compact:  # one line (a page whose controls must stay in a phone's first screen)
            st.caption(f":material/info: {DEMO_LINE}")
        else:
            st.info(DEMO_NOTE, icon=":material/info:")


def strategy() -> str | None:
    """The sidebar's generation strategy; ``None`` for Automatic (``engine.default_strategy``)."""
    chosen = st.session_state.get(Sidebar.STRATEGY, "auto")
    return None if chosen == "auto" else chosen


def temperature() -> float:
    return float(st.session_state.get(Sidebar.TEMPERATURE, 0.4))
