"""The user's own sources on the Debate page (docs/design/requirements.md#us-010): attaching them in the input area (an
upload area, a paste box, the citations checkbox and the limits), each argument's citation markers, each opening the
quoted passage with the quote highlighted, the "fact claimed, no source" badge, and the Sources panel under a finished
debate.

A source's name and text and every quote are the user's or the model's text: all of it goes through :func:`esc`.
A highlight is Streamlit Markdown around text already escaped, never HTML.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from clearside.schema import Argument, CitedPassage, Document, SourceInfo
from clearside.sources import MAX_BYTES, MAX_CHARS, MAX_FILES, MAX_PAGES, Source, locate, read_sources
from clearside_ui.format import SIDES as COLUMNS
from clearside_ui.format import esc, lines
from clearside_ui.state import Sources

FILES, PASTE, CITE, ERROR = Sources.FILES, Sources.PASTE, Sources.CITE, Sources.ERROR  # its session keys
PASTED = "pasted text.txt"  # the name a pasted source goes by
TYPES = ["txt", "md", "markdown", "html", "htm", "pdf", "csv"]
SIDES = tuple((side, title) for side, title, _colour in COLUMNS)  # the sides and their titles, FOR first


def _size(size: int) -> str:
    """As the limits count it (a MB is 1,024 KB)."""
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.0f} KB" if size < 1024 * 1024 else f"{size / (1024 * 1024):.1f} MB"


def limits() -> str:
    return (f"Up to {MAX_FILES} files: text, Markdown, HTML, PDF or CSV; at most {MAX_BYTES // (1024 * 1024)} MB "
            f"and {MAX_CHARS:,} characters of text each, and at most {MAX_PAGES} pages per PDF.")


def _clear() -> None:
    st.session_state[ERROR] = ""


def _uploaded() -> list[UploadedFile]:
    return [f for f in st.session_state.get(FILES) or [] if isinstance(f, UploadedFile)]


def _pasted() -> str:
    text = str(st.session_state.get(PASTE) or "")
    return text if text.strip() else ""  # a blank paste is no source


def attach() -> None:
    """The input area's sources: files to upload, a box to paste one, whether the advocates quote them; a refusal
    from the last Generate under the uploader (the files and the text stay as they are)."""
    with st.expander("Sources (optional)"):
        st.caption("Attach your own documents: the advocates draw on them and, with citations on, quote them "
                   "word for word; every quote is checked against your text before it is shown. " + limits())
        st.file_uploader("Attach files", type=TYPES, accept_multiple_files=True, key=FILES, on_change=_clear,
                         help="Read when you press Generate; the same file twice counts once.")
        if st.session_state.get(ERROR):
            st.error(lines(st.session_state[ERROR]), icon=":material/block:")
        st.text_area("Or paste a source", key=PASTE, height=100, persist_state="session", on_change=_clear,
                     placeholder="Paste the text of an article, a report or your notes",
                     help=f"Used as a source named “{PASTED}”. At most {MAX_CHARS:,} characters.")
        st.checkbox("Quote the sources (citations)", value=True, key=CITE, persist_state="session",
                    help="On: each argument may quote a passage of your sources, checked word for word, and a fact "
                         "claimed without a source is marked. Off: the advocates read the sources but quote none.")
        shown = [f"{esc(f.name)} ({_size(f.size)})" for f in _uploaded()]
        if _pasted():
            shown.append(f"{esc(PASTED)} ({len(_pasted()):,} characters)")
        if shown:
            st.caption(f"Attached ({len(shown)}): " + ", ".join(shown))


def chosen() -> tuple[list[Source] | None, bool]:
    """The attached files and the pasted text, read all or nothing (an InputError names each file refused, the
    reason and the fix), and whether the advocates quote them; ``None``: nothing attached."""
    files = [(f.name, f.getvalue()) for f in _uploaded()]
    if _pasted():
        files.append((PASTED, _pasted().encode("utf-8")))
    cite = bool(st.session_state.get(CITE, True))
    return (read_sources(files) if files else None), cite


# -- a finished debate's citations --------------------------------------------------------------------------------


def passages(sources: Sequence[SourceInfo] | None) -> dict[str, tuple[SourceInfo, CitedPassage]]:
    """Each cited passage of the document's sources by its id (``S1.3``), with its source."""
    return {p.id: (s, p) for s in sources or [] for p in s.passages}


def markers(argument: Argument) -> str:
    """`` `[S1.3]` `` after a claim, one per citation (code: drawn as written, never Markdown)."""
    return "".join(f" `[{c.passage}]`" for c in argument.citations or [])


def badge(argument: Argument) -> str:
    """The badge of a fact no verified quote supports."""
    if argument.support == "unsupported" and argument.evidence_type == "fact":
        return " :orange-badge[fact claimed, no source]"
    return ""


def highlighted(text: str, quote: str) -> str:
    """``text`` as escaped Markdown with the quote's span (found as the quotes were verified) in bold on an orange
    background; the text alone when the quote is not in it."""
    span = locate(quote, text)
    if span is None:
        return esc(text)
    before, inside, after = text[:span[0]], text[span[0]:span[1]], text[span[1]:]
    left = esc(before) + (" " if before[-1:].isspace() else "") if before.strip() else ""
    right = (" " if after[:1].isspace() else "") + esc(after) if after.strip() else ""
    return f"{left}:orange-background[**{esc(inside)}**]{right}"


def citations(argument: Argument, cited: dict[str, tuple[SourceInfo, CitedPassage]]) -> None:
    """One compact toggle per citation, labelled with its marker: opened, the passage it quotes, the quote
    highlighted in it."""
    for citation in argument.citations or []:
        source, passage = cited.get(citation.passage, (None, None))
        name = f" {esc(source.name)}" if source is not None else ""
        page = f", page {passage.page}" if passage is not None and passage.page else ""
        with st.expander(f"`[{citation.passage}]`{name}{page}", type="compact"):
            if passage is None:
                st.markdown(f"> :orange-background[**{esc(citation.quote)}**]")
                st.caption("The quote alone: the passage it comes from is listed with the finished debate.")
                continue
            st.caption(f"Passage {citation.passage} of {source.ref}, {esc(source.name)} ({source.kind}{page}); "
                       "the quote the argument makes is highlighted.")
            st.markdown(f"> {highlighted(passage.text, citation.quote)}")


# -- the Sources panel --------------------------------------------------------------------------------------------


def cited_by(document: Document) -> dict[str, dict[str, int]]:
    """How many arguments of each side cite each source (an argument citing it twice counts once)."""
    counts = {s.ref: {side: 0 for side, _ in SIDES} for s in document.sources or []}
    for side, _ in SIDES:
        for argument in getattr(document, side).arguments:
            for ref in {c.source for c in argument.citations or []}:
                counts.setdefault(ref, {name: 0 for name, _ in SIDES})[side] += 1
    return counts


def panel(document: Document) -> None:
    """Under a finished debate with sources: each source (label, name, kind, pages) and how many arguments of each
    side cite it; nothing for a debate without sources."""
    if not document.sources:
        return
    st.markdown("### Sources")
    quoted = any(a.support is not None for side, _ in SIDES for a in getattr(document, side).arguments)
    st.caption("The files attached to this debate. Every quote above was checked word for word against its "
               "passage before it was shown." if quoted else
               "The files attached to this debate. Citations were off: the advocates read them but quote none.")
    counts = cited_by(document)
    for source in document.sources:
        pages = f", {source.pages} page{'s' if source.pages != 1 else ''}" if source.pages else ""
        n = counts[source.ref]
        cites = " · ".join(f"{title} {n[side]}" for side, title in SIDES)
        st.markdown(f"- **{source.ref}** {esc(source.name)} ({source.kind}{pages}) · arguments citing it: {cites}")
