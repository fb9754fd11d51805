"""Alembic environment: migrations run on the connection the store hands over (``config.attributes``).

After changing ``tables.py``, write the next migration with
``python -m clearside.store.revision "what changed"`` and review the generated file.
"""

from alembic import context

from clearside.store.debates import SEARCH_FTS, SEARCH_INDEX
from clearside.store.tables import Base


def declared(obj, name, kind, reflected, compare_to) -> bool:
    """What autogenerate compares: not the search's word-form objects, which tables.py cannot declare (SQLite's
    FTS5 table and its shadow tables, PostgreSQL's expression index: migration 0011)."""
    return not (name or "").startswith((SEARCH_FTS, SEARCH_INDEX))


connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True,
                  compare_type=True, include_object=declared)
context.run_migrations()
