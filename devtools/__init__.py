"""Development tools: what fits the shipped models, judges quality and makes test data.

The product (``cppdb/``) never imports this package (tests/project/test_layers.py checks
it); the benchmarks (``bench/``) and the tests may.  It ships in no wheel: these tools need
the repository's data/ and a developer's corpora, not an installed cppdb.
"""
