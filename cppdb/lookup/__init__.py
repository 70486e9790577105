"""Looking paraphrases up: a DuckDB index over a run's (or an export's) pair table.

``open_database(path)`` → :class:`cppdb.lookup.database.Database`; ``cppdb lookup`` is a thin
command over it.  ``keys`` holds the query/data normalisation, ``source`` finds the pair
table of a run directory or export, ``index`` builds and queries the DuckDB file.
"""
from cppdb.lookup.database import Database, open_database

__all__ = ["Database", "open_database"]
