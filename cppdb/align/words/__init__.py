"""zh–en word alignment (SPEC §1.2): aligners, ensemble, decoding, gold scoring.

Entry point for other stages: :func:`cppdb.align.words.api.align_tokenized`.
Modules: base (protocol, bulk cell grid) · statistical (thot, eflomal) · dictionary (CC-CEDICT)
· simalign_backend · attention (SHIFT-ATT) · matching (argmax/itermax/match) · symmetrize ·
ensemble (combine, decode, tune) · gold (formats, AER) · lexical (p(e|f) tables) · workflow
(file-level `cppdb align-words`).
"""
