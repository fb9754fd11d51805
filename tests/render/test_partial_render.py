"""A partial debate (a persona dropped for failing its checks) opens every rendering with the line that says so, so
it is never read with the authority of a whole one; a whole debate has no such line."""

from __future__ import annotations

import json

import pytest
from helpers import fixture_dict

from clearside.render import FORMATS, render
from clearside.schema import Document

NOTICE = "Partial debate: persona 'ethicist' is missing."
MAP_FORMATS = ("argdown", "aif", "kialo")  # the argument map's formats say it in their own form


def with_a_dropped_persona() -> Document:
    from test_schema import with_additions

    data = with_additions()
    item = {"check": "persona_dropped", "path": "persona-3", "action": "dropped", "text": "ethicist",
            "message": "Persona 'ethicist' was dropped: its case failed the quality checks after 3 attempts."}
    quality = data.setdefault("quality", {"checks_version": "1", "strategy": "whole", "semantic": True, "agents": {}})
    quality["agents"]["persona-3"] = {"attempts": 3, "reasks": 2, "items": [item]}
    return Document.model_validate(data)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f not in ("json", *MAP_FORMATS)])
def test_a_partial_debate_opens_with_its_notice(fmt):
    lines = render(with_a_dropped_persona(), fmt).splitlines()
    assert lines[2] == f"> **{NOTICE}**", lines[:4]  # under the title, before anything else


def test_a_partial_debates_map_says_so_first_in_each_format():
    document = with_a_dropped_persona()
    assert render(document, "argdown").splitlines()[1] == f"// {NOTICE}"
    assert render(document, "kialo").splitlines()[0].endswith(f"({NOTICE})")
    assert json.loads(render(document, "aif"))["clearside"]["partial"] == NOTICE


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_whole_debate_has_no_partial_notice(fmt):
    assert "Partial debate" not in render(Document.model_validate(fixture_dict()), fmt)
