"""The feature table of candidate pairs: SPEC §3's 18 features as vectorised polars expressions.

Every feature column is named ``f_*``.  The input is any frame with the pair-table columns of
:data:`cppdb.schema.PAIR_COLUMNS` (phrases, patterns, sentences alike); features that need
information a granularity does not have (pivot probabilities of sentence pairs, alignments
of raw ``score`` pairs) are null, which LightGBM treats as "missing", never as zero.

Strings are compared as *character text*: the pair's text with whitespace removed (phrases
are stored space-joined) and NFKC-normalised, with each slot ``[NP1]`` collapsed to the two
characters ``§1`` so that a slot counts as one unit plus its index, not five letters.

Edit and Hamming distances are computed by rapidfuzz's C++ ``cpdist`` over whole columns
(batched, multi-threaded), the only place that leaves polars.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.features.detectors import argument_swap, meaning_change_detectors, negation_flip
from cppdb.features.glosses import gloss_overlap
from cppdb.features.lexical_weights import LEX_FEATURES, null_weights
from cppdb.features.numbers import number_candidates, number_values
from cppdb.features.pivot_context import PIVOT_CONTEXT
from cppdb.text.distance import edit_distances, jaccard, rapidfuzz_workers

#: a slot (non-terminal) token of a pattern: [NP1], [ADJP2], [X1]
SLOT_PATTERN = S.SLOT_TOKEN_PATTERN
_SLOT_IN_TEXT = r"\[[A-Z$]+(\d*)\]"

SOURCE_CHARS = "_source_chars"
TARGET_CHARS = "_target_chars"
SOURCE_NUMBERS = "_source_numbers"
TARGET_NUMBERS = "_target_numbers"

#: feature name -> what it is (the SPEC §3 number in brackets); the order is the model order.
FEATURE_DESCRIPTIONS: dict[str, str] = {
    "f_jaccard_distance": "[1] 1 - |S∩T|/|S∪T| over the sets of words",
    "f_edit_distance": "[2] Levenshtein distance over characters",
    "f_normalised_edit_distance": "[2] Levenshtein distance / max(len(s), len(t)) in characters",
    "f_hamming_distance": "[3] Hamming distance over characters, the shorter side padded",
    "f_source_in_target": "[4] s is a substring of t",
    "f_target_in_source": "[5] t is a substring of s",
    "f_source_words": "[6] number of words of s",
    "f_target_words": "[7] number of words of t",
    "f_shared_words": "[8] number of distinct words in both",
    "f_source_unaligned": "[9] words of s without an alignment link (null: no alignment)",
    "f_source_has_unaligned": "[9] s has a word not aligned to t",
    "f_numbers_identical": "[10] the multisets of number values in s and t are identical "
                           "(the article 一 is not a number; cppdb.features.numbers)",
    "f_pos_identical": "[11] POS sequences identical",
    "f_pos_first_letters_identical": "[11] sequences of POS first letters identical",
    "f_first_pos_identical": "[11] first POS tags identical",
    "f_p_t_given_s": "[12] pivot probability p(t|s)",
    "f_p_s_given_t": "[12] pivot probability p(s|t)",
    "f_only_nonterminals": "[13] s or t consists of slots only",
    "f_source_adjacent_terminals": "[14] s has two adjacent terminal (non-slot) words",
    "f_target_adjacent_terminals": "[14] t has two adjacent terminal (non-slot) words",
    "f_char_difference": "[15] len(t) - len(s) in characters",
    "f_char_ratio": "[15] len(t) / len(s)",
    "f_char_log_ratio": "[15] log(len(t) / len(s))",
    "f_same_nonterminal_order": "[16] slots appear in the same order (null: no slots)",
    "f_alignments": "[17] number of word alignment links between s and t",
    "f_target_unaligned": "[18] words of t without an alignment link (null: no alignment)",
    "f_target_has_unaligned": "[18] t has a word not aligned to s",
    "f_negation_flip": "extra: one side negates the other and the rest is identical "
                       "(cppdb.features.detectors)",
    "f_argument_swap": "extra: the sides exchange two nominal spans, e.g. 张三打败了李四 / "
                       "李四打败了张三 (cppdb.features.detectors)",
    "f_determiner_only": "extra: the sides differ only in determiners/classifiers, e.g. "
                         "这个[NP1] / 那张[NP1] (cppdb.features.detectors)",
    "f_deixis_flip": "extra: the sides differ only in person/deixis/quantity words, e.g. "
                     "我们班 / 你们班, 这 / 那 (cppdb.features.detectors)",
    "f_classifier_clash": "extra: the sides use classifiers that count no common noun "
                          "(CC-CEDICT CL:), e.g. 一朵[NP1] / 一辆[NP1]",
    "f_head_change": "extra: one side is the other plus a new head noun, e.g. X的时候 / X",
    "f_no_content": "extra: a pattern side has no content word outside its slots (他 [VP1])",
    "f_person_mismatch": "extra: both sides have personal pronouns and share none "
                         "(你的母亲 / 我们的妈妈)",
    "f_kinship_flip": "extra: the sides differ only in kinship terms of different relations "
                      "(你哥哥 / 你弟弟)",
    "f_char_jaccard": "extra: Jaccard similarity of character sets",
    "f_bigram_jaccard": "extra: Jaccard similarity of character-bigram sets",
    "f_lcs_ratio": "extra: 1 - Indel distance / (len(s)+len(t)) (LCS based)",
    "f_count": "extra: co-occurrence count through pivots",
    "f_n_pivots": "extra: number of distinct pivots",
    "f_lex_t_given_s": "[12] PPDB lexical weight lex(t|s) through the pivots, weighted by "
                       "each pivot's share of p(t|s) (cppdb.features.lexical_weights)",
    "f_lex_s_given_t": "[12] PPDB lexical weight lex(s|t) through the pivots, weighted by "
                       "each pivot's share of p(s|t)",
    "f_lex_best": "[12] best single pivot: max over pivots of min(lex(t|s), lex(s|t))",
    "f_gloss_overlap": "extra: Jaccard similarity of the CC-CEDICT gloss words of s and t "
                       "(each side as one headword, else its words); null for sentences "
                       "and sides the dictionary lacks (cppdb.features.glosses)",
    "f_pivot_context": "extra: best cosine over shared pivots of the English contexts (tf-idf "
                       "of the sentences around the pivot) of s and of t: one sense of the "
                       "pivot or two (cppdb.features.pivot_context)",
    "f_lm_source": "model: language-model log-probability per unit of s",
    "f_lm_target": "model: language-model log-probability per unit of t",
    "f_lm_difference": "model: f_lm_target - f_lm_source",
    "f_cosine": "model: sentence-embedding cosine of s and t",
}

#: features that exist only with pivot/alignment evidence (null for raw scored pairs)
EVIDENCE_FEATURES = ("f_source_unaligned", "f_source_has_unaligned", "f_p_t_given_s",
                     "f_p_s_given_t", "f_alignments", "f_target_unaligned",
                     "f_target_has_unaligned", "f_count", "f_n_pivots", *LEX_FEATURES,
                     PIVOT_CONTEXT)
#: the pair-table columns each evidence feature is computed from (every other feature reads
#: only the text, token and POS columns); weak labels must not come from these columns
#: (cppdb.rank.weak_labels.independent_features)
FEATURE_INPUTS: dict[str, tuple[str, ...]] = {
    "f_source_unaligned": (S.SOURCE_TOKENS, S.ALIGN_SRC),
    "f_source_has_unaligned": (S.SOURCE_TOKENS, S.ALIGN_SRC),
    "f_p_t_given_s": (S.P_TGT_GIVEN_SRC,),
    "f_p_s_given_t": (S.P_SRC_GIVEN_TGT,),
    "f_alignments": (S.ALIGN_SRC,),
    "f_target_unaligned": (S.TARGET_TOKENS, S.ALIGN_TGT),
    "f_target_has_unaligned": (S.TARGET_TOKENS, S.ALIGN_TGT),
    "f_count": (S.COUNT,),
    "f_n_pivots": (S.N_PIVOTS,),
    **{name: (S.TYPE, S.LHS, S.SOURCE, S.TARGET, S.PIVOTS) for name in LEX_FEATURES},
    PIVOT_CONTEXT: (S.TYPE, S.SOURCE, S.TARGET, S.PIVOTS),
}
LM_FEATURES = ("f_lm_source", "f_lm_target", "f_lm_difference")
EMBEDDING_FEATURES = ("f_cosine",)
LEXICAL_FEATURES = tuple(name for name in FEATURE_DESCRIPTIONS
                         if name not in LM_FEATURES + EMBEDDING_FEATURES)


def char_text(column: str | pl.Expr) -> pl.Expr:
    """Whitespace-free, NFKC-normalised text with slots collapsed to ``§<index>``."""
    return _compact_text(column, slot="§$1")


def _compact_text(column: str | pl.Expr, *, slot: str) -> pl.Expr:
    text = pl.col(column) if isinstance(column, str) else column
    return (text.str.normalize("NFKC")
            .str.replace_all(_SLOT_IN_TEXT, slot)
            .str.replace_all(r"\s+", ""))


def number_text(column: str | pl.Expr) -> pl.Expr:
    """The text numbers are read from: the character text with every slot one bare mark, so
    that a slot's index never joins a neighbouring number (9月[NT1] / [NT1]9月: 9 on both
    sides, where the character text ``9月§1`` / ``§19月`` would read 9, 1 and 19)."""
    return _compact_text(column, slot="§")


def has_slot(column: str | pl.Expr) -> pl.Expr:
    """True where the text holds a slot ([NP1]): where template and character text differ."""
    text = pl.col(column) if isinstance(column, str) else column
    return text.str.contains(_SLOT_IN_TEXT)


def template_text(column: str | pl.Expr) -> pl.Expr:
    """The template words (模板词) of a pattern: its :func:`char_text` without the slots.

    The two sides of a pattern pair carry the same slots by construction, so the slots say
    nothing about how differently the pair is worded; the paper's pattern diversity (Table 4:
    ED 3.34 at ED÷len 0.775, about 4.3 characters a side) is only consistent with counting
    the template words.  A phrase has no slots: its template text is its character text."""
    return _compact_text(column, slot="")


def pair_edit_distances(sources: list[str], targets: list[str], *, template: bool = False
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(edit distance, ED÷len) of each pair over its :func:`char_text`, or with ``template``
    over its :func:`template_text` — the one definition the evaluation and the ranking's
    diversity penalty share."""
    text = template_text if template else char_text
    frame = pl.DataFrame({"s": sources, "t": targets}, schema={"s": pl.String, "t": pl.String})
    chars = frame.select(text("s").alias("s"), text("t").alias("t"))
    return edit_distances(chars["s"].to_list(), chars["t"].to_list())


def contained(source: str | pl.Expr = S.SOURCE, target: str | pl.Expr = S.TARGET) -> pl.Expr:
    """True where one side's :func:`char_text` contains the other's (男孩 / 这个男孩): a pair
    that gives the user the same words back (``f_source_in_target`` | ``f_target_in_source``;
    the containment share of ``cppdb evaluate``; ``rank.containment_penalty``)."""
    s, t = char_text(source), char_text(target)
    return s.str.contains(t, literal=True) | t.str.contains(s, literal=True)


def contained_in_order(sources: list[str], targets: list[str], *,
                       substring: np.ndarray | None = None) -> np.ndarray:
    """1.0 where one side is the other with words added *anywhere*: its words (slots
    included, split at whitespace) appear in order in the other's (腐败 和 [NP1] / 腐败 和
    其他 [NP1]), or its character text is a substring of the other's (:func:`contained`).

    The substring test misses a word inserted between two words of a pattern or a phrase;
    this one does not, so it is the stricter measure of "the same words back" (a superset of
    :func:`contained`).  Text without spaces is one word, so for it the two agree.
    ``substring``: the pairs' :func:`contained` values when the caller already has them."""
    from rapidfuzz.distance import LCSseq
    from rapidfuzz.process import cpdist

    if len(sources) == 0:
        return np.zeros(0)
    frame = pl.DataFrame({"s": sources, "t": targets}, schema={"s": pl.String, "t": pl.String})
    words = frame.select(*[pl.col(c).str.normalize("NFKC").str.extract_all(r"\S+").alias(c)
                           for c in ("s", "t")])
    common = cpdist(words["s"].to_list(), words["t"].to_list(), scorer=LCSseq.similarity,
                    workers=-1)
    shorter = np.minimum(words["s"].list.len().to_numpy(), words["t"].list.len().to_numpy())
    if substring is None:
        substring = frame.select(contained("s", "t")).to_series().to_numpy()
    return ((common.astype(np.int64) == shorter) | (substring > 0)).astype(np.float64)


def _is_slot(tokens: str) -> pl.Expr:
    return pl.col(tokens).list.eval(pl.element().str.contains(SLOT_PATTERN))


def _bigrams(chars: pl.Expr) -> pl.Expr:
    return (chars.str.split("").list.eval(pl.element() + pl.element().shift(-1))
            .list.drop_nulls())


def _unaligned(tokens: str, links: str) -> pl.Expr:
    """Words of ``tokens`` whose index is not in ``links`` (null when there is no alignment)."""
    indices = pl.int_ranges(0, pl.col(tokens).list.len(), dtype=pl.Int32)
    return (pl.when(pl.col(links).is_null()).then(None)
            .otherwise(indices.list.set_difference(pl.col(links)).list.len()))


def _adjacent_terminals(tokens: str) -> pl.Expr:
    terminal = pl.col(tokens).list.eval(~pl.element().str.contains(SLOT_PATTERN))
    return terminal.list.eval(pl.element() & pl.element().shift(-1)).list.any()


def _slot_order(tokens: str) -> pl.Expr:
    return pl.col(tokens).list.eval(pl.element().filter(pl.element().str.contains(SLOT_PATTERN)))


def _surface_features() -> list[pl.Expr]:
    src_len = pl.col(SOURCE_CHARS).str.len_chars().cast(pl.Int64)
    tgt_len = pl.col(TARGET_CHARS).str.len_chars().cast(pl.Int64)
    src_set = pl.col(S.SOURCE_TOKENS).list.unique()
    tgt_set = pl.col(S.TARGET_TOKENS).list.unique()
    src_chars = pl.col(SOURCE_CHARS).str.split("").list.unique()
    tgt_chars = pl.col(TARGET_CHARS).str.split("").list.unique()
    return [
        (1.0 - jaccard(src_set, tgt_set, empty=1.0)).alias("f_jaccard_distance"),
        pl.col(TARGET_CHARS).str.contains(pl.col(SOURCE_CHARS), literal=True)
        .cast(pl.Int8).alias("f_source_in_target"),
        pl.col(SOURCE_CHARS).str.contains(pl.col(TARGET_CHARS), literal=True)
        .cast(pl.Int8).alias("f_target_in_source"),
        pl.col(S.SOURCE_TOKENS).list.len().alias("f_source_words"),
        pl.col(S.TARGET_TOKENS).list.len().alias("f_target_words"),
        src_set.list.set_intersection(tgt_set).list.len().alias("f_shared_words"),
        (pl.col(SOURCE_NUMBERS) == pl.col(TARGET_NUMBERS)).cast(pl.Int8)
        .alias("f_numbers_identical"),
        negation_flip(SOURCE_CHARS, TARGET_CHARS),
        *meaning_change_detectors(),
        (tgt_len - src_len).alias("f_char_difference"),
        (tgt_len / src_len.clip(lower_bound=1)).alias("f_char_ratio"),
        (tgt_len.clip(lower_bound=1) / src_len.clip(lower_bound=1)).log()
        .alias("f_char_log_ratio"),
        jaccard(src_chars, tgt_chars, empty=1.0).alias("f_char_jaccard"),
        jaccard(_bigrams(pl.col(SOURCE_CHARS)).list.unique(),
                _bigrams(pl.col(TARGET_CHARS)).list.unique(), empty=1.0
                ).alias("f_bigram_jaccard"),
    ]


def _structure_features() -> list[pl.Expr]:
    src_pos, tgt_pos = pl.col(S.SOURCE_POS), pl.col(S.TARGET_POS)
    has_pos = (src_pos.list.len() > 0) & (tgt_pos.list.len() > 0)
    first_letters = lambda pos: pos.list.eval(pl.element().str.slice(0, 1))
    only_slots = _is_slot(S.SOURCE_TOKENS).list.all() | _is_slot(S.TARGET_TOKENS).list.all()
    src_slots, tgt_slots = _slot_order(S.SOURCE_TOKENS), _slot_order(S.TARGET_TOKENS)
    return [
        pl.when(has_pos).then((src_pos == tgt_pos).cast(pl.Int8)).alias("f_pos_identical"),
        pl.when(has_pos).then((first_letters(src_pos) == first_letters(tgt_pos)).cast(pl.Int8))
        .alias("f_pos_first_letters_identical"),
        pl.when(has_pos).then((src_pos.list.first() == tgt_pos.list.first()).cast(pl.Int8))
        .alias("f_first_pos_identical"),
        only_slots.cast(pl.Int8).alias("f_only_nonterminals"),
        _adjacent_terminals(S.SOURCE_TOKENS).cast(pl.Int8).alias("f_source_adjacent_terminals"),
        _adjacent_terminals(S.TARGET_TOKENS).cast(pl.Int8).alias("f_target_adjacent_terminals"),
        pl.when(src_slots.list.len() > 0).then((src_slots == tgt_slots).cast(pl.Int8))
        .alias("f_same_nonterminal_order"),
    ]


def _evidence_features() -> list[pl.Expr]:
    src_un = _unaligned(S.SOURCE_TOKENS, S.ALIGN_SRC)
    tgt_un = _unaligned(S.TARGET_TOKENS, S.ALIGN_TGT)
    return [
        src_un.alias("f_source_unaligned"),
        (src_un > 0).cast(pl.Int8).alias("f_source_has_unaligned"),
        pl.col(S.P_TGT_GIVEN_SRC).cast(pl.Float64).alias("f_p_t_given_s"),
        pl.col(S.P_SRC_GIVEN_TGT).cast(pl.Float64).alias("f_p_s_given_t"),
        pl.col(S.ALIGN_SRC).list.len().alias("f_alignments"),
        tgt_un.alias("f_target_unaligned"),
        (tgt_un > 0).cast(pl.Int8).alias("f_target_has_unaligned"),
        pl.col(S.COUNT).cast(pl.Float64).alias("f_count"),
        pl.col(S.N_PIVOTS).cast(pl.Float64).alias("f_n_pivots"),
    ]


def _string_distances(frame: pl.DataFrame, threads: int) -> pl.DataFrame:
    """Edit, normalised edit, Hamming and LCS features via rapidfuzz's batched cpdist
    (``threads`` threads; 0 = all cores)."""
    from rapidfuzz.distance import Hamming, Indel
    from rapidfuzz.process import cpdist

    sources = frame[SOURCE_CHARS].to_list()
    targets = frame[TARGET_CHARS].to_list()
    if not sources:
        empty = pl.Series([], dtype=pl.Float64)
        return frame.with_columns(f_edit_distance=empty, f_normalised_edit_distance=empty,
                                  f_hamming_distance=empty, f_lcs_ratio=empty)
    edit, normalised = edit_distances(sources, targets, threads=threads)
    workers = rapidfuzz_workers(threads)
    hamming = cpdist(sources, targets, scorer=Hamming.distance, scorer_kwargs={"pad": True},
                     workers=workers)
    indel = cpdist(sources, targets, scorer=Indel.normalized_distance, workers=workers)
    return frame.with_columns(
        pl.Series("f_edit_distance", edit.astype(np.float64)),
        pl.Series("f_normalised_edit_distance", normalised.astype(np.float64)),
        pl.Series("f_hamming_distance", hamming.astype(np.float64)),
        pl.Series("f_lcs_ratio", (1.0 - indel).astype(np.float64)),
    )


def ensure_pair_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """Add missing optional pair columns as typed nulls (source/target are required)."""
    missing = [c for c in (S.SOURCE, S.TARGET, S.SOURCE_TOKENS, S.TARGET_TOKENS)
               if c not in frame.columns]
    if missing:
        raise BadInputError(f"pair table lacks required column(s) {', '.join(missing)}",
                            hint="pair tables must follow cppdb.schema.PAIR_COLUMNS")
    extra = [pl.lit(None, dtype=dtype).alias(name) for name, dtype in S.PAIR_COLUMNS.items()
             if name not in frame.columns]
    return frame.with_columns(extra) if extra else frame


def _side_text(frame: pl.DataFrame, column: str, normalised: str) -> pl.Expr:
    """A side's text with names in their canonical spelling when the run has it, so that
    哈利 / 哈里 is no edit and no character difference."""
    if normalised in frame.columns:
        return pl.coalesce(pl.col(normalised), pl.col(column))
    return pl.col(column)


def lexical_feature_table(pairs: pl.DataFrame, *, threads: int = 0) -> pl.DataFrame:
    """``pairs`` plus every lexical/structural/evidence ``f_*`` column (no model features);
    ``threads``: the string distances' threads (``features.threads``, 0 = all cores)."""
    frame = ensure_pair_columns(pairs)
    frame = frame.with_columns(
        char_text(_side_text(frame, S.SOURCE, S.SOURCE_NORM)).alias(SOURCE_CHARS),
        char_text(_side_text(frame, S.TARGET, S.TARGET_NORM)).alias(TARGET_CHARS))
    frame = frame.with_columns(
        number_candidates(number_text(_side_text(frame, S.SOURCE, S.SOURCE_NORM)))
        .alias(SOURCE_NUMBERS),
        number_candidates(number_text(_side_text(frame, S.TARGET, S.TARGET_NORM)))
        .alias(TARGET_NUMBERS))
    frame = frame.with_columns(number_values(frame, SOURCE_NUMBERS),
                               number_values(frame, TARGET_NUMBERS))
    frame = frame.with_columns(*_surface_features(), *_structure_features(),
                               *_evidence_features())
    frame = _string_distances(frame, threads).with_columns(argument_swap(frame),
                                                           gloss_overlap(frame))
    # filled from the run's lexical tables by cppdb.features.lexical_weights.add_run_weights
    frame = frame.with_columns(null_weights())
    if PIVOT_CONTEXT not in frame.columns:   # rank's filter stage adds it from the run
        frame = frame.with_columns(pl.lit(None, dtype=pl.Float64).alias(PIVOT_CONTEXT))
    return frame.drop(SOURCE_CHARS, TARGET_CHARS, SOURCE_NUMBERS, TARGET_NUMBERS)


def feature_columns(frame: pl.DataFrame) -> list[str]:
    """The ``f_*`` columns of ``frame`` in the canonical order."""
    return [name for name in FEATURE_DESCRIPTIONS if name in frame.columns]


def model_text(column: str) -> pl.Expr:
    """The text a language model or sentence encoder sees: the pair text without the
    spaces between words (phrases are stored space-joined); otherwise unchanged."""
    return pl.col(column).str.replace_all(r"\s+", "")
