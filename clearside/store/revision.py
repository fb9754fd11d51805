"""Write a new migration after changing ``tables.py``: ``python -m clearside.store.revision "what changed"``.

Alembic compares the models with a scratch SQLite database migrated to the
current head and writes the difference to ``migrations/versions/``; read and
adjust it before committing (``tests/test_store.py`` checks that the migrations
and the models agree on SQLite and PostgreSQL).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from alembic import command

from .db import WRITE, alembic_config, make_engine, migrate


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].strip():
        print('usage: python -m clearside.store.revision "what changed"', file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        engine = make_engine(f"sqlite:///{Path(scratch) / 'scratch.db'}")
        migrate(engine)
        config = alembic_config()
        count = len(list((Path(config.get_main_option("script_location")) / "versions").glob("*.py")))
        with engine.connect().execution_options(**{WRITE: True}) as connection, connection.begin():
            config.attributes["connection"] = connection
            command.revision(config, argv[0], autogenerate=True, rev_id=f"{count + 1:04d}")
        engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
