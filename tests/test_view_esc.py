"""``ui.view.esc``: user and model text shown literally in Streamlit Markdown, bare addresses included."""

from __future__ import annotations

import pytest

from ui.view import esc


@pytest.mark.parametrize(("text", "shown"), [
    ("see https://example.org/report.", r"see `https://example.org/report`\."),
    ("(www.example.org, or a@b.com)", r"\(`www.example.org`, or `a@b.com`\)"),
    ("ftp://files.example.org/x and mailto:me@example.org", "`ftp://files.example.org/x` and "
                                                             "`mailto:me@example.org`"),
    ("https://x.org/<script>alert(1)</script>", r"`https://x.org/`\<script\>alert\(1\)\</script\>"),
    ("a `tick` https://x.org/a`b", r"a \`tick\` `https://x.org/a`\`b"),
])
def test_a_bare_address_is_shown_as_code_which_markdown_never_links(text, shown):
    assert esc(text) == shown


def test_everything_else_is_escaped_as_before():
    assert esc("**bold** [x](y) <b> $x$ :red[no] 10:30") == (
        r"\*\*bold\*\* \[x\]\(y\) \<b\> \$x\$ \:red\[no\] 10\:30")
    assert esc("  many\n spaces\there ") == "many spaces here"
