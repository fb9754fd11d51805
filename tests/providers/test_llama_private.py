"""The private parts of llama-cpp-python the embedded provider uses sit behind clearside/providers/llama_private.py,
which tells a version other than the one they were read from (no model is loaded here)."""

from __future__ import annotations

import llama_cpp
import pytest

from clearside.providers import llama_private


def test_the_installed_llama_cpp_python_is_the_pinned_one():
    assert llama_cpp.__version__ == llama_private.PINNED  # requirements.txt pins the version the module was read from
    assert llama_private.check_version() is True


def test_another_version_is_told_with_both_versions():
    with pytest.warns(RuntimeWarning, match=r"llama-cpp-python 0\.4\.0 is installed.*private parts of 0\.3\.36"):
        assert llama_private.check_version("0.4.0") is False


def test_the_json_grammar_is_the_one_create_chat_completion_builds():
    grammar = llama_private.json_grammar({"type": "object", "properties": {"a": {"type": "string"}},
                                          "required": ["a"]})
    rules, root = llama_private.grammar_rules(grammar)
    assert root == "root" and "root ::=" in rules
