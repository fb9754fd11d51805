"""``clearside_ui.view``: ``esc`` shows user and model text literally in Streamlit Markdown, bare addresses included;
the redraw interval is read from the environment with a clear message when it is wrong; every table shows a
missing value as a dash."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from clearside.errors import ConfigError
from clearside_ui.view import _poll_seconds, esc


@pytest.mark.parametrize(("text", "shown"), [
    ("see https://example.org/report.", r"see `https://example.org/report`\."),
    ("(www.example.org, or a@b.com)", r"\(`www.example.org`, or `a@b.com`\)"),
    ("ftp://files.example.org/x and mailto:me@example.org", "`ftp://files.example.org/x` and "
                                                             "`mailto:me@example.org`"),
    ("https://x.org/<script>alert(1)</script>", r"`https://x.org/`\<script\>alert\(1\)\</script\>"),
    ("a `tick` https://x.org/a`b", r"a \`tick\` `https://x.org/a`\`b"),
    ("it must start with http:// or https://, not ftp", r"it must start with http\:// or https\://, not ftp"),
])
def test_a_bare_address_is_shown_as_code_which_markdown_never_links(text, shown):
    assert esc(text) == shown


def test_everything_else_is_escaped_as_before():
    assert esc("**bold** [x](y) <b> $x$ :red[no] 10:30") == (
        r"\*\*bold\*\* \[x\]\(y\) \<b\> \$x\$ \:red\[no\] 10\:30")
    assert esc("  many\n spaces\there ") == "many spaces here"


def test_the_redraw_interval_defaults_to_two_seconds_and_refuses_nonsense_by_name():
    assert _poll_seconds(None) == 2.0 and _poll_seconds("") == 2.0 and _poll_seconds("0.75") == 0.75
    for wrong in ("fast", "0.1", "600"):
        with pytest.raises(ConfigError, match=f"CLEARSIDE_POLL_SECONDS is '{wrong}': set it to a number of seconds"):
            _poll_seconds(wrong)


def test_every_table_of_the_dashboard_shows_a_missing_value_as_a_dash_not_the_word_none():
    """st.dataframe writes "None" in a cell with no value unless told otherwise: every table is told."""
    from clearside_ui.format import MISSING

    calls = []
    for path in (Path(__file__).resolve().parents[2] / "clearside_ui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dataframe":
                told = {k.arg: ast.unparse(k.value) for k in node.keywords}.get("placeholder")
                calls.append((f"{path.name}:{node.lineno}", told))
    assert MISSING == "—" and len(calls) > 20
    assert [where for where, told in calls if told != "MISSING"] == []
