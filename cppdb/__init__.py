"""cppdb: a PPDB-style Chinese paraphrase database builder."""
__version__ = "0.1.0"
