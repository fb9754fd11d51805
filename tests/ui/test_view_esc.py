"""``clearside_ui.view``: ``esc`` shows user and model text literally in Streamlit Markdown, bare addresses included;
the redraw interval is read from the environment with a clear message when it is wrong."""

from __future__ import annotations

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
