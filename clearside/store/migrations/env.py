"""Alembic environment: migrations run on the connection the store hands over (``config.attributes``).

After changing ``tables.py``, write the next migration with
``python -m clearside.store.revision "what changed"`` and review the generated file.
"""

from alembic import context

from clearside.store.tables import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True,
                  compare_type=True)
context.run_migrations()
