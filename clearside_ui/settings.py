"""Sidebar provider settings, shared by every page (widgets live in the entrypoint).

On a session's first run the sidebar looks for a running model server (Ollama at
``OLLAMA_HOST``, an OpenAI-compatible one at ``OPENAI_BASE_URL``) and offers it;
when the chosen server is the one found, the Model field lists its models.
"""

from __future__ import annotations

import os

import streamlit as st

from clearside.errors import ClearSideError
from clearside.providers import Provider, get_provider
from clearside.providers.detect import DEFAULT_OLLAMA, Detected, detect_servers, ollama_url
from clearside.providers.limits import SERVER_CONCURRENCY
from clearside.store.privacy import register_secret
from clearside_ui.view import esc

PROVIDERS = {"embedded": "Embedded (offline, in-process)", "ollama": "Ollama", "openai": "OpenAI-compatible"}
HOST_KEYS = {"ollama": "ollama_host", "openai": "openai_base_url"}
MODEL_KEYS = {"ollama": "ollama_model", "openai": "openai_model"}
RUNNING = {"ollama": "Ollama is running", "openai": "An OpenAI-compatible server is running"}
USING = {"ollama": "Using Ollama", "openai": "Using the OpenAI-compatible server"}
DEFAULT_HOSTS = {"ollama": ("OLLAMA_HOST", DEFAULT_OLLAMA),
                 "openai": ("OPENAI_BASE_URL", "https://api.openai.com/v1")}
DETECTED = "detected_servers"
STRATEGIES = {"auto": "Automatic", "whole": "Whole: one call per agent",
              "focused": "Focused: smaller calls per agent"}
STRATEGY_HELP = (
    "How each agent writes its section. Whole: one call per agent. Focused: the categories first, one argument "
    "per call, the synthesis field by field (slower; meant for small models). Automatic: the one measured best "
    "for the model (whole today, for small and large models alike).")
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
    if DETECTED not in st.session_state:
        st.session_state[DETECTED] = detect_servers(api_key=secret("OPENAI_API_KEY"))
    return st.session_state[DETECTED]


def _look_again() -> None:
    st.session_state.pop(DETECTED, None)


def _use(server: Detected) -> None:
    """Button callback: widgets' keys may only be set before the widgets are created, so here."""
    st.session_state["provider_name"] = server.provider
    st.session_state[HOST_KEYS[server.provider]] = server.base_url


def _default_host(provider: str) -> str:
    variable, default = DEFAULT_HOSTS[provider]
    return os.environ.get(variable) or default


def _server_in_use(provider: str) -> Detected | None:
    """The detected server that the sidebar's host (or base URL) for ``provider`` points at."""
    host = st.session_state.get(HOST_KEYS[provider]) or _default_host(provider)
    wanted = ollama_url(host) if provider == "ollama" else host.strip().rstrip("/")
    return next((s for s in detected() if s.provider == provider and s.base_url == wanted), None)


def _offers(name: str) -> None:
    """Each server found running, with **Use it** unless it is already the one in use."""
    for server in detected():
        where = esc(server.base_url)
        if name == server.provider and _server_in_use(name) == server:
            st.caption(f"{USING[server.provider]} found running at {where}.")
        else:
            count = len(server.models)
            models = f"{count} model{'s' if count != 1 else ''}" if count else "no models yet"
            st.info(f"{RUNNING[server.provider]} at {where} ({models}).")
            st.button("Use it", key=f"use_{server.provider}", on_click=_use, args=(server,))
        if server.error:
            st.caption(f"It answered with an error: {esc(server.error)}")
    if not detected():
        st.caption(f"No model server found running (Ollama at {esc(ollama_url(_default_host('ollama')))}).")
    st.button("Look again", key="look_again", on_click=_look_again)


def _model_field(provider: str, placeholder: str) -> None:
    """The models the detected server lists, as a selectbox; a free-text field when there is no such list."""
    key = MODEL_KEYS[provider]
    server = _server_in_use(provider)
    if server is None or not server.models:
        st.text_input("Model", key=key, placeholder=placeholder)
        return
    if st.session_state.get(key) not in server.models:
        st.session_state[key] = server.models[0]  # allowed: the widget is not created yet in this run
    st.selectbox("Model", server.models, key=key, help=f"The models {esc(server.base_url)} lists.")


def sidebar() -> None:
    with st.sidebar:
        st.subheader("Model")
        _offers(st.session_state.get("provider_name", "embedded"))
        name = st.selectbox("Provider", list(PROVIDERS), format_func=PROVIDERS.get, key="provider_name")
        if name == "embedded":
            st.text_input("GGUF file (empty: SmolLM2-135M default)", key="embedded_model",
                          placeholder="/path/model.gguf")
        elif name == "ollama":
            st.session_state.setdefault("ollama_host", _default_host("ollama"))
            st.text_input("Ollama host", key="ollama_host")
            _model_field("ollama", "llama3.2")
        else:
            st.session_state.setdefault("openai_base_url", _default_host("openai"))
            st.text_input("Base URL", key="openai_base_url")
            _model_field("openai", "gpt-4o-mini")
            st.caption("API key: taken from OPENAI_API_KEY in the environment or secrets, never stored.")
        st.slider("Temperature", 0.0, 1.5, 0.4, 0.05, key="temperature")
        with st.expander("Generation"):
            st.selectbox("Strategy", list(STRATEGIES), format_func=STRATEGIES.get, key="strategy",
                         help=STRATEGY_HELP)
            if name != "embedded":
                st.checkbox("Small model", key="small_model", help=SMALL_HELP)
                st.number_input("Concurrency", min_value=1, max_value=64, value=SERVER_CONCURRENCY, step=1,
                                key="concurrency", help=CONCURRENCY_HELP)
        if st.button("Test connection", key="test_connection"):
            try:
                provider = build_provider()
                st.success(esc(provider.check()))
                models = provider.list_models()
                if models and name != "embedded":
                    st.caption("Models offered: " + esc(", ".join(models[:20])))
            except ClearSideError as exc:
                st.error(esc(exc.for_dashboard()))


def build_provider() -> Provider:
    """The provider the sidebar describes (tests may inject one as ``provider_override``)."""
    override = st.session_state.get("provider_override")
    if override is not None:
        return override
    name = st.session_state.get("provider_name", "embedded")
    small = True if st.session_state.get("small_model") else None  # None: what the provider says of itself
    if name == "ollama":
        return get_provider(f"ollama:{st.session_state.get('ollama_model', '')}", small=small,
                            host=st.session_state.get("ollama_host") or None, concurrency=concurrency())
    if name == "openai":
        return get_provider(f"openai:{st.session_state.get('openai_model', '')}", small=small,
                            base_url=st.session_state.get("openai_base_url") or None,
                            api_key=secret("OPENAI_API_KEY"), concurrency=concurrency())
    return get_provider(f"embedded:{st.session_state.get('embedded_model', '')}")


def concurrency() -> int | None:
    """The sidebar's Concurrency for a server (None before the field was shown: the provider's default)."""
    value = st.session_state.get("concurrency")
    return int(value) if value is not None else None


def model_label() -> tuple[str, str]:
    """``(provider:model, "")`` for the sidebar's model, or ``("", why it cannot be used)``."""
    try:
        provider = build_provider()
    except ClearSideError as exc:
        return "", exc.for_dashboard()
    return provider.spec, ""


def using_demo_model() -> bool:
    """Debates run on the embedded default (SmolLM2-135M): the sidebar's choice, or an injected provider."""
    override = st.session_state.get("provider_override")
    if override is not None:
        return getattr(override, "name", "") == "embedded"
    return (st.session_state.get("provider_name", "embedded") == "embedded"
            and not (st.session_state.get("embedded_model") or "").strip())


def demo_model_notice() -> None:
    if using_demo_model():
        st.info(DEMO_NOTE, icon=":material/info:")


def strategy() -> str | None:
    """The sidebar's generation strategy; ``None`` for Automatic (``engine.default_strategy``)."""
    chosen = st.session_state.get("strategy", "auto")
    return None if chosen == "auto" else chosen


def temperature() -> float:
    return float(st.session_state.get("temperature", 0.4))
