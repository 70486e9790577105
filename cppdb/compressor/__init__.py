"""A keep/drop sentence compressor trained on a ``cppdb build-compression`` corpus.

``features`` (per-token parse features and their vocabulary), ``model`` (the BiLSTM tagger),
``train`` (seeded training), ``data`` (corpus rows; parsing new sentences as the corpus was),
``metrics`` (keep-label F1), ``api`` (train / load / predict) and ``files`` (`cppdb compress`).
"""
