"""The debate store: every saved debate, its parts, and the runs that compare models.

:class:`Store` is assembled from one mixin per aggregate, all subclasses of one
:class:`~clearside.store.database.Database` (so they share its engine and transactions):

* :class:`~clearside.store.debates.Debates`: any debate as a whole (CRUD, search, facets, duplicate);
* :class:`~clearside.store.parts.StaticParts`: a static debate's sections, document and challenges;
* :class:`~clearside.store.runs.Runs`: comparison and regression runs, and baselines;
* :class:`~clearside.store.versions.Versions`: a static debate's re-maps and stances, beside the original;
* :class:`~clearside.store.sources.Sources`: the files a user attaches to a debate, each distinct text once;
* :class:`~clearside.store.understanding.Understanding`: the understanding check's answers beside their debate;
* :class:`~clearside.store.studies.Studies`: studies, their participants (no name) and their answers;
* :class:`~clearside.store.maps.Maps`: argument maps imported from other tools, read-only beside the debates.

Mixins rather than parts held as attributes (``store.runs.add(...)``) because every
caller (the pages, the CLI, compare, regress, the live writer) keeps calling
``store.add_run(...)``, ``store.get(...)`` as before, while each aggregate reads in
one sitting. All writes are short transactions, and every value written passes
through :func:`~clearside.store.privacy.scrub`, so API keys never reach the store (but for the text of a
user's own source, kept verbatim so its quotes verify: store/sources.py).
The store stores plain values: it imports no mode (see ``.importlinter``).
"""

from __future__ import annotations

from .debates import Debates
from .maps import Maps
from .parts import StaticParts
from .records import (
    KINDS,
    SEARCH_LIMIT,
    ListQuery,
    NewDebate,
    NewRun,
    Page,
    Record,
    Summary,
    check_id,
    document_text,
    iso,
    new_id,
    now,
    search_text,
)
from .runs import Runs
from .sources import SOURCE_FIELDS, SOURCE_KINDS, Sources
from .studies import Studies
from .understanding import ANY_OWNER, STAGES, AnswerRow, Understanding
from .versions import VERSION_KINDS, Version, Versions


class Store(Debates, StaticParts, Runs, Versions, Sources, Understanding, Studies, Maps):
    """One database. ``Store()`` opens the default (``DATABASE_URL`` or the SQLite file) and migrates it."""


__all__ = ["ANY_OWNER", "KINDS", "SEARCH_LIMIT", "SOURCE_FIELDS", "SOURCE_KINDS", "STAGES", "VERSION_KINDS",
           "AnswerRow", "ListQuery", "NewDebate", "NewRun", "Page", "Record", "Store", "Summary", "Version", "check_id",
           "document_text", "iso", "new_id", "now", "search_text"]
