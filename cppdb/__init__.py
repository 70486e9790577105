"""cppdb: a PPDB-style Chinese paraphrase database builder."""
from cppdb.version import __version__

__all__ = ["__version__", "open_database"]


def open_database(path, index=None, rebuild=False):  # noqa: ANN001, ANN201 - see the target
    """Open a paraphrase database (run directory or export): ``cppdb.lookup.open_database``."""
    # lazy: importing any cppdb module must not load the lookup stack
    from cppdb.lookup import open_database as _open

    return _open(path, index=index, rebuild=rebuild)
