"""Sources a user attaches to a debate, and the checks that let a citation be trusted
(docs/design/requirements.md#us-010).

- :mod:`.ingest`: files (text, Markdown, HTML, PDF, CSV) read into :class:`Source` (text, content hash, S1 label),
  within the limits, or refused with the file's name, the reason and the fix;
- :mod:`.passages`: a source cut into :class:`Passage` s with exact offsets (``S1.3``; a PDF's page);
- :mod:`.verify`: a quote verified verbatim against a passage after whitespace and Unicode normalisation, and
  located in the original text;
- :mod:`.retrieve`: the passages most relevant to a query (MiniLM cosine, or weighted content words), and the
  best that fit a prompt's budget.

Everything is offline: the readers are pure Python (pypdf, BeautifulSoup) or a local wheel (the splitter), the
embeddings the MiniLM ClearSide already ships.
"""

from .ingest import MAX_BYTES, MAX_CHARS, MAX_FILES, MAX_PAGES, Source, labelled, read_source, read_sources
from .passages import Passage, split
from .retrieve import Index, budget
from .verify import MIN_QUOTE_WORDS, locate, normalise, problem, verify

__all__ = ["MAX_BYTES", "MAX_CHARS", "MAX_FILES", "MAX_PAGES", "MIN_QUOTE_WORDS", "Index", "Passage", "Source",
           "budget", "labelled", "locate", "normalise", "problem", "read_source", "read_sources", "split", "verify"]
