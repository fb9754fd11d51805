"""AppTest for the user's own sources on the Debate page (docs/design/requirements.md#us-010) on the scripted provider:
attaching files and a pasted text, refusals under the uploader with nothing started, each citation's marker opening its
passage with the quote highlighted and escaped, "fact claimed, no source", the Sources panel's counts per side, and the
Library's Sources column."""

from __future__ import annotations

import app_kit as kit
import pytest
from app_kit import AppTest, generate, has, open_page, text_of
from app_kit import settle_debate as settle
from helpers import challenge_reply, fixture_dict, moderator_reply, orchestrator_reply, request_text, side_reply
from test_citations import LEX, cited, scripted

from clearside import sources
from clearside.modes import import_data
from clearside.providers.scripted import ScriptedProvider
from clearside.sources import MAX_BYTES
from clearside.static.engine import Engine
from clearside.static.exchange import SOURCES_FILES
from clearside.static.run import DebateRun
from clearside_ui import jobs
from clearside_ui.view import esc

QUESTION = "Should we adopt microservices?"
REPORT = ("# Incident review\n\nOutages crossed four services on average last year. Debugging one failed request "
          "took the on-call engineer three hours without tracing.\n")
CON_QUOTE = "Debugging one failed request took the on-call engineer three hours without tracing."
HOSTILE = ("Our platform team measured the move in 2025. <img src=x onerror=alert(1)> **bold** claims aside, scaling "
           "each service on its own halved the monthly hosting bill within a year. The checkout service alone "
           "handles the holiday peaks now.")
PRO_QUOTE = ("<img src=x onerror=alert(1)> **bold** claims aside, scaling each service on its own halved the monthly "
             "hosting bill within a year.")


def sourced_export() -> dict:
    """A finished debate whose FOR side quotes the pasted hostile text and AGAINST the Markdown file (scripted
    provider, lexical ranking), as an export file holds it: the document and, under ``sources_files``, its sources
    for the store."""
    files = sources.read_sources([("incident review.md", REPORT.encode()), ("pasted text.txt", HOSTILE.encode())])
    pro = cited(side_reply("pro"), ("S2.1", PRO_QUOTE))
    con = cited(side_reply("con"), ("S1.1", CON_QUOTE))
    con["arguments"][1]["evidence_type"] = "fact"
    document = Engine(scripted(pro, con), embeddings=LEX).run(DebateRun.from_input(QUESTION, sources=files))
    return {**document.dump(), SOURCES_FILES: [
        {"ref": f.ref, "name": f.name, "sha256": f.id, "kind": f.kind, "text": f.text, "pages": f.pages,
         "size": f.size} for f in files]}


def finished(at: AppTest) -> bool:
    return any("MODERATOR SYNTHESIS" in m.value for m in at.markdown)


@pytest.fixture
def app():
    return kit.debate_app()


def script(provider: ScriptedProvider, pro: dict, con: dict) -> None:
    provider.enqueue(orchestrator_reply(), agent="orchestrator")
    provider.enqueue(pro, agent="pro")
    provider.enqueue(con, agent="con")
    provider.enqueue(moderator_reply(), agent="moderator")


def started(at: AppTest) -> bool:
    return "debate_id" in at.session_state and bool(at.session_state["debate_id"])


def citation(at: AppTest, marker: str):
    [toggle] = [e for e in at.expander if e.label.startswith(f"`[{marker}]`")]
    return toggle


def test_an_uploaded_file_and_a_pasted_text_are_quoted_and_each_marker_opens_its_passage_highlighted(app):
    at, provider = app
    pro = cited(side_reply("pro"), ("S2.1", PRO_QUOTE))
    con = cited(side_reply("con"), ("S1.1", CON_QUOTE))
    con["arguments"][1]["evidence_type"] = "fact"  # a fact quoting nothing
    script(provider, pro, con)
    at.file_uploader(key="sources_files").set_value([("incident review.md", REPORT.encode(), "text/markdown")])
    at.text_area(key="sources_paste").set_value(HOSTILE)
    at.run()
    assert f"Attached (2): incident review\\.md ({len(REPORT)} bytes), pasted text\\.txt ({len(HOSTILE)} characters)" \
        in text_of(at)
    generate(at, QUESTION)
    settle(at, finished)
    assert not at.error, [e.value for e in at.error]
    debate_id = at.session_state["debate_id"]
    assert [s["name"] for s in jobs.store().sources(debate_id)] == ["incident review.md", "pasted text.txt"]
    assert "YOUR SOURCES" in request_text(provider.requests_for("pro")[0]), "the advocates were shown the sources"

    claim = pro["arguments"][0]["claim"]
    [line] = [m.value for m in at.markdown if m.value.startswith(f"- **{esc(claim)}**")]
    assert line.startswith(f"- **{esc(claim)}** `[S2.1]` "), "the marker follows the claim"
    toggle = citation(at, "S2.1")
    assert toggle.label == "`[S2.1]` pasted text\\.txt"
    [passage] = [m.value for m in toggle.markdown]
    assert passage.startswith("> Our platform team measured the move in 2025\\. :orange-background[**")
    assert f":orange-background[**{esc(PRO_QUOTE[:-1])}**]\\." in passage, "the quote highlighted, escaped"
    assert passage.endswith("]\\. The checkout service alone handles the holiday peaks now\\.")
    assert "\\<img src\\=x onerror\\=alert\\(1\\)\\>" in passage and "\\*\\*bold\\*\\*" in passage
    shown = "\n".join(m.value for m in at.markdown)
    assert "<img" not in shown.replace("\\<img", ""), "the source's markup is never markup on the page"
    assert "**bold**" not in shown
    assert "(1)> **bold" not in passage
    con_toggle = citation(at, "S1.1")
    assert con_toggle.label == "`[S1.1]` incident review\\.md"
    assert f":orange-background[**{esc(CON_QUOTE[:-1])}**]" in con_toggle.markdown[0].value

    badges = [m.value for m in at.markdown if "fact claimed, no source" in m.value]
    assert len(badges) == 1 and badges[0].startswith(f"- **{esc(con['arguments'][1]['claim'])}**")
    assert ":orange-badge[fact claimed, no source]" in badges[0]
    panel = [m.value for m in at.markdown if m.value.startswith("- **S")]
    assert panel == ["- **S1** incident review\\.md (markdown) · arguments citing it: FOR 0 · AGAINST 1",
                     "- **S2** pasted text\\.txt (text) · arguments citing it: FOR 1 · AGAINST 0"]
    assert at.text_area(key="question").value == QUESTION and at.text_area(key="sources_paste").value == HOSTILE


def test_a_refused_file_is_named_under_the_uploader_nothing_starts_and_nothing_is_lost(app):
    at, provider = app
    files = [("notes.md", REPORT.encode(), "text/markdown"),
             ("big.txt", b"a" * (MAX_BYTES + 1), "text/plain"),
             ("<img src=x onerror=alert(1)>.txt", b"\x00\x01\x02\x03binary", "text/plain")]
    at.file_uploader(key="sources_files").set_value(files)
    at.run()
    generate(at, QUESTION)
    [error] = [e.value for e in at.error]
    assert error.startswith("big\\.txt is 5\\.0 MB, over the 5 MB limit per file"), error
    assert "  \n\\<img src\\=x onerror\\=alert\\(1\\)\\>\\.txt is not readable text" in error, "one line each"
    assert provider.requests == [] and not started(at), "nothing started"
    assert len(at.file_uploader(key="sources_files").value) == 3, "the uploader keeps its files"
    assert at.text_area(key="question").value == QUESTION
    at.text_area(key="sources_paste").set_value("More notes of mine on the matter.").run()
    assert not at.error, "editing the sources clears the refusal"


def test_sources_with_personas_are_refused_under_the_uploader(app):
    at, provider = app
    at.multiselect(key="personas").set_value(["economist", "ethicist"])
    at.text_area(key="sources_paste").set_value(HOSTILE)
    generate(at, QUESTION)
    [error] = [e.value for e in at.error]
    assert "not yet by persona debates: drop the sources or the personas" in error.replace("\\", "")
    assert provider.requests == [] and not started(at)
    assert at.text_area(key="sources_paste").value == HOSTILE


def test_with_citations_off_the_sources_are_read_but_no_marker_or_badge_is_shown(app):
    at, provider = app
    script(provider, side_reply("pro"), side_reply("con"))
    at.text_area(key="sources_paste").set_value(HOSTILE)
    at.checkbox(key="sources_cite").uncheck()
    generate(at, QUESTION)
    settle(at, finished)
    assert "no citations requested" in at.session_state["document"].meta.notes
    assert "`[S" not in text_of(at) and "fact claimed" not in text_of(at)
    assert any("Citations were off" in c.value for c in at.caption)
    assert "- **S1** pasted text\\.txt (text) · arguments citing it: FOR 0 · AGAINST 0" in text_of(at)


def test_a_saved_debate_with_sources_opens_with_its_citations_and_the_library_counts_its_files():
    store = jobs.store()
    imported = import_data(store, sourced_export()).id
    plain = import_data(store, fixture_dict())
    at = open_page(provider=ScriptedProvider(), query={"debate": imported})
    assert finished(at)
    assert ":orange-background[**" in citation(at, "S2.1").markdown[0].value
    assert "- **S2** pasted text\\.txt (text) · arguments citing it: FOR 1 · AGAINST 0" in text_of(at)
    at.switch_page("clearside_ui/app_pages/library.py").run()
    table = at.dataframe[0].value
    assert "Sources" in table.columns and "Versions" not in table.columns
    links = [link.split("debate=")[1] for link in table["Link"]]
    assert dict(zip(links, table["Sources"], strict=True)) == {imported: "2 files", plain.id: ""}


def test_a_citation_can_be_challenged_and_the_answer_quotes_its_passage_beside_the_claim(app):
    at, provider = app
    pro = cited(side_reply("pro"), ("S1.1", CON_QUOTE))
    script(provider, pro, cited(side_reply("con")))
    at.file_uploader(key="sources_files").set_value([("incident review.md", REPORT.encode(), "text/markdown")])
    generate(at, QUESTION)
    settle(at, finished)
    choices = at.selectbox(key="challenge_choice").options
    target = f'[S1.1] "{CON_QUOTE}"'
    [label] = [c for c in choices if "citation [S1.1]" in c]
    assert label.startswith("FOR citation [S1.1] for “") and label.endswith(CON_QUOTE)
    assert not has(at, "challenge_question_source"), "the source action is offered on a citation only"
    at.selectbox(key="challenge_choice").set_value(target).run()
    assert has(at, "challenge_question_source")
    provider.enqueue({**challenge_reply(about="whether a single incident review can show debugging takes hours"),
                      "citations": [{"passage": "S1.1", "quote": "Outages crossed four services on average last "
                                                                  "year."}]}, agent="challenge")
    at.button(key="challenge_question_source").click().run()
    settle(at, lambda a: any("Is this source reliable for this claim?" in e.label for e in a.expander))
    [answer] = [e for e in at.expander if e.label.startswith("Challenge · Is this source reliable")]
    quoted = [m.value for m in answer.markdown if m.value.startswith("**Quotes the passage**")]
    assert quoted == ["**Quotes the passage**\n\n- `[S1.1]` :orange-background[Outages crossed four services on "
                      "average last year\\.]"]
    assert at.session_state["document"].challenges.responses[0].target == target
    assert "THE CITED PASSAGE" in request_text(provider.requests_for("challenge")[0])
