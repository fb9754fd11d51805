"""Each backend declares its own settings (``Provider.settings``), the registry lists them, and ``build`` makes a
provider from a name and a form's values: environment variables fill what is not given, a secret is read only
through its reader and never travels in a job's recipe. No network, no model is loaded."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from clearside.errors import ConfigError
from clearside.providers import Setting, build, get_provider, offered, provider_class, registry
from clearside.providers.embedded import EmbeddedProvider
from clearside.providers.ollama import OllamaProvider
from clearside.providers.openai_compat import OpenAIProvider
from clearside.providers.scripted import ScriptedProvider
from clearside.runtime import steps

SERVER_VARS = ("OLLAMA_HOST", "OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL")
SECRET = "sk-test-secret-5b1e09d4"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in SERVER_VARS:
        monkeypatch.delenv(name, raising=False)


def declared(kind) -> list[tuple[str, str, str, bool, str, bool]]:
    return [(s.label, s.key, s.env, s.secret, s.default, s.address) for s in kind.settings]


def test_the_registry_lists_every_backend_in_the_sidebars_order_and_offers_all_but_the_scripted_one():
    assert list(registry()) == ["embedded", "ollama", "openai", "scripted"]
    assert registry()["ollama"] is OllamaProvider and provider_class("openai") is OpenAIProvider
    assert {name: kind.label for name, kind in offered().items()} == {
        "embedded": "Embedded (offline, in-process)", "ollama": "Ollama", "openai": "OpenAI-compatible"}


def test_each_backend_declares_its_settings():
    assert declared(EmbeddedProvider) == [("GGUF file (empty: SmolLM2-135M default)", "model", "", False, "", False)]
    assert declared(OllamaProvider) == [("Ollama host", "host", "OLLAMA_HOST", False, "http://127.0.0.1:11434", True),
                                        ("Model", "model", "", False, "", False)]
    assert declared(OpenAIProvider) == [
        ("Base URL", "base_url", "OPENAI_BASE_URL", False, "https://api.openai.com/v1", True),
        ("Model", "model", "OPENAI_MODEL", False, "", False),
        ("API key", "api_key", "OPENAI_API_KEY", True, "", False)]
    assert ScriptedProvider.settings == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        OllamaProvider.settings[0].key = "url"  # type: ignore[misc]


@pytest.mark.parametrize("name", ["embedded", "ollama", "openai", "scripted"])
def test_every_setting_is_a_keyword_of_the_constructor_and_only_servers_run_out_of_process(name):
    kind = provider_class(name)
    parameters = inspect.signature(kind.__init__).parameters
    for setting in kind.settings:
        assert setting.key in parameters, f"{name}: {setting.key} is not a constructor keyword"
        assert not (setting.secret and setting.address), "a secret is never where the server is"
    assert kind.in_process is (name == "embedded")
    assert (kind.address() is not None) is (name in ("ollama", "openai"))
    assert sum(s.model for s in kind.settings) == (name != "scripted")


def test_values_given_are_used_and_empty_ones_fall_back_to_the_environment(monkeypatch):
    given = build("ollama", {"host": "127.0.0.1:9", "model": "llama3.2"}, concurrency=2, small=True)
    assert (given.host, given.model, given.concurrency, given.small) == ("http://127.0.0.1:9", "llama3.2", 2, True)
    monkeypatch.setenv("OLLAMA_HOST", "10.1.2.3:4567")
    assert build("ollama", {"host": "", "model": "m"}).host == "http://10.1.2.3:4567"
    assert build("ollama").spec == "ollama:" and build("ollama").concurrency == 4, "the provider's own defaults"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1/")
    monkeypatch.setenv("OPENAI_MODEL", "from-env")
    openai = build("openai", {"base_url": None})
    assert (openai.base_url, openai.model, openai.small) == ("http://127.0.0.1:8000/v1", "from-env", False)
    assert build("openai", {"base_url": "http://127.0.0.1:7/v1", "model": "typed"}).base_url == "http://127.0.0.1:7/v1"


def test_a_secret_comes_only_from_its_reader_never_from_the_values(monkeypatch):
    asked: list[str] = []

    def reader(variable: str) -> str | None:
        asked.append(variable)
        return SECRET

    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):  # api.openai.com needs a key: a typed one is ignored
        build("openai", {"model": "gpt-4o-mini", "api_key": SECRET})
    provider = build("openai", {"model": "gpt-4o-mini", "api_key": "typed-and-ignored"}, secret=reader)
    assert asked == ["OPENAI_API_KEY"]
    assert provider.client.api_key == SECRET
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert build("openai", {"model": "gpt-4o-mini"}).client.api_key == SECRET, "default reader: the environment"


@pytest.mark.parametrize(("name", "values"), [
    ("embedded", {}),
    ("ollama", {"host": "http://127.0.0.1:11434/", "model": "llama3.2:1b"}),
    ("openai", {"base_url": "http://127.0.0.1:8000/v1", "model": "m"}),
    ("scripted", {}),
])
def test_a_recipe_is_the_runtimes_and_holds_no_secret(name, values, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    provider = build(name, values, secret=lambda variable: SECRET)
    made = provider.recipe()
    assert made == steps.recipe(provider)
    assert json.dumps(made, sort_keys=False) == json.dumps(steps.recipe(provider), sort_keys=False), "byte-identical"
    assert SECRET not in json.dumps(made) and "api_key" not in made["options"]
    assert set(made["options"]) <= {"host", "base_url", "concurrency"}
    if name != "scripted":  # (a scripted spec names the file of its replies: "scripted:script" names none)
        rebuilt = get_provider(made["spec"], small=made["small"] or None, **made["options"])
        assert rebuilt.recipe() == made, "another host builds the same provider from it"


def test_a_recipe_keeps_the_small_flag_and_the_concurrency_chosen():
    provider = build("ollama", {"model": "x"}, small=True, concurrency=9)
    assert provider.recipe() == {"spec": "ollama:x", "small": True,
                                 "options": {"host": "http://127.0.0.1:11434", "concurrency": 9}}
    assert EmbeddedProvider.in_process and build("embedded").recipe()["small"] is True


def test_server_urls_are_read_as_each_backend_reads_them():
    assert OllamaProvider.server_url("127.0.0.1") == "http://127.0.0.1:11434"
    assert OllamaProvider.server_url("http://[::1]:11434/") == "http://[::1]:11434"
    assert OpenAIProvider.server_url(" http://127.0.0.1:8000/v1/ ") == "http://127.0.0.1:8000/v1"


def test_an_unknown_name_is_refused_naming_the_valid_ones():
    with pytest.raises(ConfigError, match="embedded, ollama, openai, scripted"):
        build("anthropic", {"model": "x"})
    assert isinstance(Setting("Model", "model"), Setting) and Setting("Model", "model").model
