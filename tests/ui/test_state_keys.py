"""Session keys live in one place, clearside_ui/state.py, each beginning with its page's (or panel's) prefix.

A key written as a literal anywhere else in the dashboard (``key="..."``, ``st.session_state["..."]``,
``st.session_state.get("...")``) fails here, and so does a key in state.py without its class's prefix unless it is
one of the few kept under an older name (tests outside the dashboard's own set or read those)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from clearside_ui import state

ROOT = Path(__file__).resolve().parents[2] / "clearside_ui"
PREFIXES = {state.App: "app_", state.Sidebar: "sidebar_", state.Debate: "debate_", state.Challenge: "challenge_",
            state.Sources: "sources_", state.Personas: "personas", state.Explore: "remap_", state.Live: "live_",
            state.Timeline: "timeline_", state.Perspectives: "persp_", state.Library: "lib_", state.Compare: "cmp_",
            state.Regression: "rg_"}
# Kept under an older name: tests/app_kit.py, tests/static/test_strategy.py, test_personas.py, test_remap.py and
# tests/store/test_db_faults.py use them.
KEPT = {"provider_name", "provider_override", "strategy", "small_model", "question", "document", "generate", "retry",
        "custom_personas"}
KEPT_FAMILIES = {"Sidebar.field": (("ollama", "host"), "ollama_host"), "Explore.weight": (("social",), "weight_social"),
                 "Explore.stance": (("0123abcd", "pro", 1), "stance_0123abcd_pro_1")}
SAMPLE = {"str": "x1", "int": 1}


SESSION = ("st.session_state", "state")  # (pages and views name it ``state`` for short)


def literal(node: ast.expr) -> bool:
    """A string written out: a constant, or an f-string that does not start from a prefix handed in."""
    if isinstance(node, ast.JoinedStr):
        return bool(node.values) and isinstance(node.values[0], ast.Constant)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def literal_keys(path: Path) -> list[str]:
    """Where a module writes a session key as a string literal."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            found += [f"{path.name}:{node.lineno} key={ast.unparse(k.value)}" for k in node.keywords
                      if k.arg == "key" and literal(k.value)]
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault") and node.args
                    and ast.unparse(func.value) in SESSION and literal(node.args[0])):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) in SESSION and literal(node.slice):
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_module_of_the_dashboard_writes_a_session_key_as_a_literal():
    modules = [p for p in ROOT.rglob("*.py") if p.name != "state.py"]
    assert len(modules) > 30
    assert [hit for path in modules for hit in literal_keys(path)] == []


def test_the_check_finds_a_literal_key(tmp_path):
    sample = tmp_path / "page.py"
    sample.write_text('st.button("Go", key="go")\nst.session_state["x"] = 1\nst.session_state.get("y")\n'
                      'st.text_input("Z", key=f"z_{n}")\nst.text_input("Z", key=f"{prefix}z")\n')
    assert len(literal_keys(sample)) == 4, "a key made from a prefix handed in is the caller's"


@pytest.mark.parametrize("kind", list(PREFIXES), ids=lambda kind: kind.__name__)
def test_every_key_begins_with_its_pages_prefix(kind):
    prefix = PREFIXES[kind]
    constants = {name: value for name, value in vars(kind).items() if name.isupper()}
    assert constants, kind
    for name, value in constants.items():
        assert value.startswith(prefix) or value in KEPT, f"{kind.__name__}.{name} = {value!r}"
    for name, member in vars(kind).items():
        if isinstance(member, staticmethod):
            function, qualified = member.__func__, f"{kind.__name__}.{name}"
            if qualified in KEPT_FAMILIES:
                arguments, kept = KEPT_FAMILIES[qualified]
                assert function(*arguments) == kept, qualified
                continue
            key = function(*(SAMPLE[p.annotation] for p in inspect.signature(function).parameters.values()))
            assert key.startswith(prefix), (qualified, key)


def test_no_two_keys_are_the_same():
    values = [value for kind in PREFIXES for name, value in vars(kind).items()
              if name.isupper() and not value.endswith("_")]  # (a prefix a view adds its own names to)
    assert len(values) == len(set(values)), sorted(v for v in values if values.count(v) > 1)
