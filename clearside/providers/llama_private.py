"""The private parts of llama-cpp-python ClearSide uses, in one place, read from the version requirements.txt pins.

The embedded provider (embedded.py), its batching context (batched.py) and its sampler (grammar_first.py) reach
into llama-cpp-python where its public API stops: the ``_internals`` context and model classes, a ``Llama``'s
model, sampler chain and tokens' text, and the JSON-Schema grammar ``create_chat_completion`` builds. Any of these
may change in another release, so a version other than :data:`PINNED` is told once, when this module is imported
(a warning naming both versions); then read this module against that release's source, and the two private hooks
used elsewhere: ``grammar_first.GrammarFirstLlama`` overrides ``Llama._init_sampler``, and ``embedded.quiet_llama``
replaces the ``print`` of ``llama_cpp.llama``.
"""

from __future__ import annotations

import warnings
from typing import Any

import llama_cpp
from llama_cpp import _internals as internals  # noqa: F401  (LlamaContext and LlamaModel: batched.py's context)
from llama_cpp import llama_chat_format

PINNED = "0.3.36"  # the llama-cpp-python release every function here was read from (requirements.txt pins it)


def check_version(installed: str = llama_cpp.__version__) -> bool:
    """Whether the installed llama-cpp-python is the pinned one; warns once (this module is imported once) if not."""
    if installed == PINNED:
        return True
    warnings.warn(f"llama-cpp-python {installed} is installed; ClearSide's embedded provider uses private parts of "
                  f"{PINNED} (clearside/providers/llama_private.py): install {PINNED} "
                  "(`pip install -r requirements.txt`), or check that module against this version.",
                  RuntimeWarning, stacklevel=2)
    return False


def model_of(llm: Any) -> Any:
    """A ``Llama``'s ``_internals.LlamaModel``: its weights, which a batching context of its own shares."""
    return llm._model


def vocab_of(llm: Any) -> Any:
    """A ``Llama``'s vocabulary (llama.cpp's ``llama_vocab`` pointer), which a grammar sampler is made with."""
    return llm._model.vocab


def token_text(llm: Any, token: int) -> str:
    """A token's text as the chat template sees it (e.g. ``<|im_end|>``)."""
    return llm._model.token_get_text(token)


def json_grammar(schema: dict[str, Any]) -> Any:
    """The ``LlamaGrammar`` of a JSON Schema, as ``create_chat_completion`` builds it for a ``response_format`` of
    ``{"type": "json_object", "schema": ...}``; raises ValueError when llama.cpp cannot compile it."""
    return llama_chat_format._grammar_for_response_format({"type": "json_object", "schema": schema})


def grammar_rules(grammar: Any) -> tuple[str, str]:
    """A ``LlamaGrammar``'s GBNF text and root rule name, as ``llama_sampler_init_grammar`` takes them."""
    return grammar._grammar, grammar._root


def sampler_chain(llm: Any, *, temperature: float, repeat_penalty: float) -> Any:
    """The sampler chain ``create_chat_completion`` builds for a call (its defaults for top-k, top-p and min-p),
    without a grammar."""
    return llm._init_sampler(temp=temperature, repeat_penalty=repeat_penalty, grammar=None)


check_version()
