"""Sidebar provider settings, shared by every page (widgets live in the entrypoint)."""

from __future__ import annotations

import os

import streamlit as st

from clearside.errors import ClearSideError
from clearside.providers import Provider, get_provider
from clearside.store.privacy import register_secret
from ui.view import esc

PROVIDERS = {"embedded": "Embedded (offline, in-process)", "ollama": "Ollama", "openai": "OpenAI-compatible"}


def _secret(name: str) -> str | None:
    """A key from the environment or st.secrets; never written to session state, the store or an export
    (the store scrubs every value registered here, and secret-looking environment variables, before writing)."""
    try:
        value = os.environ.get(name) or st.secrets.get(name)
    except (FileNotFoundError, st.errors.StreamlitSecretNotFoundError):
        value = os.environ.get(name)
    register_secret(value)
    return value


def sidebar() -> None:
    with st.sidebar:
        st.subheader("Model")
        name = st.selectbox("Provider", list(PROVIDERS), format_func=PROVIDERS.get, key="provider_name")
        if name == "embedded":
            st.text_input("GGUF file (empty: SmolLM2-135M default)", key="embedded_model",
                          placeholder="/path/model.gguf")
        elif name == "ollama":
            st.text_input("Ollama host", key="ollama_host", value=os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434"))
            st.text_input("Model", key="ollama_model", placeholder="llama3.2")
        else:
            st.text_input("Base URL", key="openai_base_url",
                          value=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"))
            st.text_input("Model", key="openai_model", placeholder="gpt-4o-mini")
            st.caption("API key: taken from OPENAI_API_KEY in the environment or secrets, never stored.")
        st.slider("Temperature", 0.0, 1.5, 0.4, 0.05, key="temperature")
        if st.button("Test connection", key="test_connection"):
            try:
                provider = build_provider()
                st.success(esc(provider.check()))
                models = provider.list_models()
                if models and name != "embedded":
                    st.caption("Models offered: " + esc(", ".join(models[:20])))
            except ClearSideError as exc:
                st.error(esc(str(exc)))


def build_provider() -> Provider:
    """The provider the sidebar describes (tests may inject one as ``provider_override``)."""
    override = st.session_state.get("provider_override")
    if override is not None:
        return override
    name = st.session_state.get("provider_name", "embedded")
    if name == "ollama":
        return get_provider(f"ollama:{st.session_state.get('ollama_model', '')}",
                            host=st.session_state.get("ollama_host") or None)
    if name == "openai":
        return get_provider(f"openai:{st.session_state.get('openai_model', '')}",
                            base_url=st.session_state.get("openai_base_url") or None,
                            api_key=_secret("OPENAI_API_KEY"))
    return get_provider(f"embedded:{st.session_state.get('embedded_model', '')}")


def temperature() -> float:
    return float(st.session_state.get("temperature", 0.4))
