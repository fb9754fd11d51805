"""A challenge of a citation (docs/design/requirements.md#us-010; clearside/sources/citations.py) on the scripted
provider.

"Is this source reliable for this claim?" and the other actions may target a citation: the challenge agent is
shown the passage as quoted data, its answer quotes that passage, and only a verified quote is kept (else the
challenged quote itself), so the answer always cites the passage it discusses.
"""

from __future__ import annotations

import json

import pytest
from helpers import QUESTION, challenge_reply, request_text, script_file, side_reply
from test_citations import GOOD, SCALING, cited, library_files, scripted
from test_cli import cli

from clearside import checks
from clearside.contract import jsonschema_errors
from clearside.errors import InputError
from clearside.providers.scripted import ScriptedProvider
from clearside.render import render
from clearside.schema import ACTIONS, SOURCE_ACTION, Document
from clearside.sources import citations
from clearside.static.engine import Engine
from clearside.static.run import DebateRun

LEX = checks.Embeddings(enabled=False)
PEAKS = "The checkout service alone handles the holiday peaks now."
TRACING = "Debugging one failed request took the on-call engineer three hours without tracing."


def sourced(pro_pairs=(("S1.1", GOOD),), con_pairs=(("S2.1", TRACING),)) -> Document:
    provider = scripted(cited(side_reply("pro"), *pro_pairs), cited(side_reply("con"), *con_pairs))
    return Engine(provider, embeddings=LEX).run(DebateRun.from_input(QUESTION, sources=library_files()))


def answer(*quotes: tuple[str, str], about: str = "the report's hosting bill and holiday peaks figures") -> dict:
    reply = challenge_reply(about=about)
    return {**reply, "citations": [{"passage": p, "quote": q} for p, q in quotes]}


def challenge(document: Document, reply: dict, action: str, target: str) -> tuple[Document, ScriptedProvider]:
    provider = ScriptedProvider()
    provider.enqueue(reply, agent="challenge")
    return Engine(provider, embeddings=LEX).challenge(document, action, target), provider


def test_a_challenge_of_a_citation_is_shown_its_passage_and_quotes_it_verified():
    document = sourced()
    assert document.challenges.available_actions == [*ACTIONS, SOURCE_ACTION], "sources offer the source action"
    out, provider = challenge(document, answer(("S1.1", PEAKS)), SOURCE_ACTION, "S1.1")  # by its passage id
    response = out.challenges.responses[-1]
    assert response.target == f'[S1.1] "{GOOD}"', "the target is the citation, whichever way it was named"
    assert [c.dump() for c in response.response.citations] == [{"source": "S1", "passage": "S1.1", "quote": PEAKS}]
    request = provider.requests_for("challenge")[0]
    text = request_text(request)
    assert "Is this source reliable for this claim?" in text
    assert "THE CITED PASSAGE (the user's own source: DATA" in text and json.dumps(SCALING) in text
    assert '"scaling report.txt"' in text and json.dumps(side_reply("pro")["arguments"][0]["claim"]) in text
    branch = request.schema["properties"]["citations"]["items"]
    assert branch["anyOf"][0]["properties"]["passage"] == {"type": "string", "const": "S1.1"}
    assert PEAKS in branch["anyOf"][0]["properties"]["quote"]["enum"], "decoded as the passage's own sentences"
    assert jsonschema_errors(out.dump()) == [] and out.meta.schema_version == "1.1.0"
    assert "challenge 1.1.0" in out.meta.notes


def test_an_unverified_quote_in_the_answer_is_dropped_and_the_challenged_quote_cited_instead():
    document = sourced()
    reply = answer(("S1.1", "Microservices always halve every bill."), ("S2.1", TRACING))
    out, _ = challenge(document, reply, "stronger_counterargument", f'[S1.1]   "{GOOD}"')  # spacing differs
    response = out.challenges.responses[-1]
    assert [c.quote for c in response.response.citations] == [GOOD], "it still cites the passage it discusses"
    items = [(i.check, i.action, i.path) for i in out.quality.agents["challenge"].items]
    assert ("unverified_quote", "dropped", "citations/0") in items and ("unverified_quote", "dropped",
                                                                       "citations/1") in items
    dropped = next(i for i in out.quality.agents["challenge"].items if i.path == "citations/1")
    assert "not the challenged passage S1.1" in dropped.message


def test_the_source_action_needs_a_citation_and_a_passage_quoted_twice_must_be_named():
    document = sourced(pro_pairs=(("S1.1", GOOD), ("S1.1", PEAKS)))
    claim = document.pro.arguments[0].claim
    with pytest.raises(InputError, match="asks about a citation"):
        challenge(document, answer(), SOURCE_ACTION, claim)
    with pytest.raises(InputError, match=r"Passage S1.1 is quoted by 2 citations: name one") as caught:
        challenge(document, answer(), SOURCE_ACTION, "S1.1")
    assert f'[S1.1] "{PEAKS}"' in str(caught.value)
    out, _ = challenge(document, answer(("S1.1", GOOD)), SOURCE_ACTION, f'[S1.1] "{PEAKS}"')
    assert out.challenges.responses[-1].target == f'[S1.1] "{PEAKS}"'


def test_a_claim_challenge_is_unchanged_and_a_debate_without_sources_offers_the_three_actions():
    document = sourced()
    assumption = document.pro.assumptions[0]
    out, provider = challenge(document, challenge_reply(about=assumption), "question_assumption", assumption)
    assert out.challenges.responses[-1].response.citations is None
    assert "citations" not in provider.requests_for("challenge")[0].schema["properties"]
    plain = scripted(side_reply("pro"), side_reply("con"))
    bare = Engine(plain, embeddings=LEX).run(DebateRun.from_input(QUESTION))
    assert bare.challenges.available_actions == list(ACTIONS), "no sources: the three actions of 1.0"


def test_the_markdown_report_and_the_cli_carry_the_quote_of_a_challenged_citation(tmp_path):
    saved = tmp_path / "debate.json"
    saved.write_text(json.dumps(sourced().dump()), encoding="utf-8")
    out = tmp_path / "challenged.json"
    result = cli("challenge", str(saved), "--action", SOURCE_ACTION, "--target", "S2.1", "--out", str(out),
                 "--provider", script_file(tmp_path, challenge=[answer(("S2.1", TRACING),
                                                                       about="debugging a request without tracing")]))
    assert result.returncode == 0, result.stderr
    document = Document.model_validate(json.loads(out.read_text(encoding="utf-8")))
    report = render(document, "md")
    assert "### 1. Is this source reliable for this claim?" in report
    assert f'**Target:** [S2.1] "{TRACING}"' in report
    assert f'**Quotes the passage**\n\n- [S2.1] "{TRACING}"' in report
    refused = cli("challenge", str(saved), "--action", SOURCE_ACTION, "--target", "free text about cars",
                  "--provider", script_file(tmp_path, challenge=[answer()]))
    assert refused.returncode != 0 and "asks about a citation" in refused.stderr
    assert citations.target(document.challenges.responses[0].response.citations[0]) == f'[S2.1] "{TRACING}"'
