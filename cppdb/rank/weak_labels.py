"""Weak supervision for the ranker when no human labels are given.

Labels are on the human 1–5 scale (Callison-Burch) so that weak and human labels mix:

===========  =====  ========================================================================
kind         label  which pairs
===========  =====  ========================================================================
positive     5      strong evidence: phrase/pattern pairs with at least ``min_pivots``
                    distinct pivots and ``p(t|s)`` and ``p(s|t)`` both ≥ ``min_probability``;
                    sentence pairs that are BAM anchors (column ``anchor``) or whose bead
                    cost is in the lowest ``sentence_cost_quantile`` of the run
unlabelled   3      a sample of the other real pairs (unknown quality: between the two)
hard         2      PAWS-style perturbations of a positive's target: two words swapped,
                    two names (NR) swapped / a name replaced by another name of the run,
                    negation flipped (不/没/未… removed or 不 inserted before the first verb),
                    a number changed
easy         1      random pairs: a positive's source with the target of another pair of
                    the same character length (±1)
===========  =====  ========================================================================

**Independence from the ranker's inputs.**  The positive rule reads the pivot statistics
``n_pivots``, ``p_t_given_s`` and ``p_s_given_t`` (and, for sentences, ``anchor`` and
``cost``, which are no feature).  A model trained on these labels with the features made
from the same columns (``f_n_pivots``, ``f_p_*``) would learn the rule back and nothing
else, so :func:`independent_features` drops every feature whose inputs
(:data:`cppdb.features.table.FEATURE_INPUTS`) meet :data:`LABEL_INPUTS`; ``count`` is listed
there too because it is bounded below by the number of pivots (count ≥ n_pivots), so
``f_count`` would leak the rule's ``n_pivots ≥ 2``.  The weakly trained ranker then learns
which *text* properties (overlap, cosine, detectors, alignment coverage) go with strong
pivot evidence, and can rank pairs with weak evidence by them.

Perturbed and random pairs copy the evidence columns (pivot probabilities, counts,
alignment) of the pair they were made from, so evidence alone cannot tell them from real
pairs and the model must learn what is wrong with the text.  Perturbation is per-row Python
over at most ``max_positives`` pairs (a sample, never the whole table).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.defaults import toml_defaults
from cppdb.errors import RunStateError
from cppdb.features.table import FEATURE_INPUTS
from cppdb.text.negation import packaged_negation_words
from cppdb.text.numerals import ONE_TO_NINE

_WEAK = toml_defaults("rank.weak")

LABEL = "label"
LABEL_KIND = "label_kind"
#: every column the label decision (:func:`positive_mask`) reads, plus ``count``, which is
#: bounded below by ``n_pivots`` (see the module docstring); the rule also reads ``type``
#: (:data:`RULE_SELECTOR`) to choose the sentence or the pivot rule, a key, not evidence
LABEL_INPUTS = (S.N_PIVOTS, S.P_TGT_GIVEN_SRC, S.P_SRC_GIVEN_TGT, S.COUNT, "anchor", "cost")
RULE_SELECTOR = S.TYPE
_DIGITS = re.compile(r"[0-9]+")
_ZH_NUMERALS = ONE_TO_NINE + "十两"


@dataclass(frozen=True)
class WeakLabelSettings:
    min_pivots: int = _WEAK["min_pivots"]
    min_probability: float = _WEAK["min_probability"]
    sentence_cost_quantile: float = _WEAK["sentence_cost_quantile"]
    max_positives: int = _WEAK["max_positives"]
    unlabelled_per_positive: float = _WEAK["unlabelled_per_positive"]
    hard_per_positive: int = _WEAK["hard_per_positive"]
    easy_per_positive: int = _WEAK["easy_per_positive"]
    seed: int = _WEAK["seed"]


def positive_mask(frame: pl.DataFrame, settings: WeakLabelSettings) -> pl.Series:
    """Rows with strong evidence of being paraphrases (see the module docstring)."""
    pivots = ((pl.col(S.N_PIVOTS).fill_null(0) >= settings.min_pivots)
              & (pl.col(S.P_TGT_GIVEN_SRC).fill_null(0) >= settings.min_probability)
              & (pl.col(S.P_SRC_GIVEN_TGT).fill_null(0) >= settings.min_probability))
    sentence = pl.lit(False)
    if "anchor" in frame.columns:
        sentence = sentence | pl.col("anchor").fill_null(False).cast(pl.Boolean)
    if "cost" in frame.columns and frame["cost"].drop_nulls().len() > 0:
        cut = frame["cost"].quantile(settings.sentence_cost_quantile)
        sentence = sentence | (pl.col("cost") <= cut).fill_null(False)
    is_sentence = pl.col(S.TYPE) == "sentence"
    return frame.select(pl.when(is_sentence).then(sentence).otherwise(pivots)
                        .fill_null(False).alias("m"))["m"]


def independent_features(candidates: list[str]) -> list[str]:
    """The ``candidates`` not computed from a column of :data:`LABEL_INPUTS`."""
    return [f for f in candidates if not set(FEATURE_INPUTS.get(f, ())) & set(LABEL_INPUTS)]


Tagged = list[tuple[str, str]]   # (token, CTB tag); the tag is "" when POS is unknown


def _swap_words(words: Tagged, rng: np.random.Generator, names: list[str]) -> Tagged | None:
    candidates = [i for i, (t, _) in enumerate(words) if not re.fullmatch(r"[\W_]+", t)]
    if len(candidates) < 2:
        return None
    for _ in range(5):
        i, j = sorted(rng.choice(candidates, size=2, replace=False))
        if words[i][0] != words[j][0]:
            out = list(words)
            out[i], out[j] = out[j], out[i]
            return out
    return None


def _swap_entities(words: Tagged, rng: np.random.Generator, names: list[str]) -> Tagged | None:
    slots = [i for i, (_, tag) in enumerate(words) if tag == "NR"]
    out = list(words)
    if len(slots) >= 2 and words[slots[0]][0] != words[slots[1]][0]:
        out[slots[0]], out[slots[1]] = out[slots[1]], out[slots[0]]
        return out
    others = [n for n in names if slots and n != words[slots[0]][0]]
    if slots and others:
        out[slots[0]] = (others[int(rng.integers(len(others)))], "NR")
        return out
    return None


def _flip_negation(words: Tagged, rng: np.random.Generator, names: list[str]) -> Tagged | None:
    negations = packaged_negation_words()
    negated = [i for i, (t, _) in enumerate(words) if t in negations]
    if negated:
        return [w for i, w in enumerate(words) if i != negated[0]] or None
    verbs = [i for i, (_, tag) in enumerate(words) if tag in ("VV", "VA", "VE")]
    at = verbs[0] if verbs else (0 if len(words) > 1 else None)
    if at is None:
        return None
    tag = "AD" if any(tag for _, tag in words) else ""
    return words[:at] + [("不", tag)] + words[at:]


def _change_number(words: Tagged, rng: np.random.Generator, names: list[str]) -> Tagged | None:
    for i, (token, tag) in enumerate(words):
        match = _DIGITS.search(token)
        if match:
            value = int(match.group()) + int(rng.integers(1, 9))
            new = token[:match.start()] + str(value) + token[match.end():]
            return words[:i] + [(new, tag)] + words[i + 1:]
        numeral = next((c for c in token if c in _ZH_NUMERALS), None)
        if numeral:
            choices = [c for c in _ZH_NUMERALS if c != numeral]
            new = token.replace(numeral, choices[int(rng.integers(len(choices)))], 1)
            return words[:i] + [(new, tag)] + words[i + 1:]
    return None


PERTURBATIONS = {"hard_swap_words": _swap_words, "hard_swap_entities": _swap_entities,
                 "hard_negation": _flip_negation, "hard_number": _change_number}


def _joiner(pair_type: str | None) -> str:
    return "" if pair_type == "sentence" else " "


def hard_negatives(positives: pl.DataFrame, settings: WeakLabelSettings,
                   rng: np.random.Generator, names: list[str]) -> pl.DataFrame:
    """PAWS-style perturbations of the positives' targets (label 2)."""
    rows: list[dict] = []
    kinds = list(PERTURBATIONS)
    for row in positives.iter_rows(named=True):
        tokens = list(row[S.TARGET_TOKENS] or [])
        pos = list(row[S.TARGET_POS] or [])
        words = list(zip(tokens, pos if len(pos) == len(tokens) else [""] * len(tokens)))
        made = 0
        for kind in rng.permutation(kinds):
            if made >= settings.hard_per_positive:
                break
            new = PERTURBATIONS[str(kind)](words, rng, names)
            if new is None or [t for t, _ in new] == tokens:
                continue
            made += 1
            new_tokens = [t for t, _ in new]
            new_pos = [p for _, p in new] if row[S.TARGET_POS] is not None else None
            rows.append({**row, S.TARGET: _joiner(row[S.TYPE]).join(new_tokens),
                         S.TARGET_TOKENS: new_tokens, S.TARGET_POS: new_pos, LABEL: 2.0,
                         LABEL_KIND: str(kind)})
    if not rows:
        return positives.clear().with_columns(pl.lit(0.0).alias(LABEL),
                                              pl.lit("").alias(LABEL_KIND))
    return pl.DataFrame(rows, schema={**positives.schema, LABEL: pl.Float64,
                                      LABEL_KIND: pl.String})


def easy_negatives(positives: pl.DataFrame, pool: pl.DataFrame, settings: WeakLabelSettings,
                   rng: np.random.Generator) -> pl.DataFrame:
    """A positive's source with a target of similar length from another pair (label 1)."""
    if positives.height == 0 or pool.height < 2:
        return positives.clear().with_columns(pl.lit(0.0).alias(LABEL),
                                              pl.lit("").alias(LABEL_KIND))
    lengths = pool[S.TARGET].str.replace_all(r"\s+", "").str.len_chars().to_numpy()
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = lengths[order]
    out = []
    for _ in range(settings.easy_per_positive):
        want = positives[S.SOURCE].str.replace_all(r"\s+", "").str.len_chars().to_numpy()
        where = np.searchsorted(sorted_lengths, want)
        jitter = rng.integers(-2, 3, size=len(want))
        picks = order[np.clip(where + jitter, 0, len(order) - 1)]
        donor = pool[picks]
        swapped = positives.with_columns(donor[S.TARGET].alias(S.TARGET),
                                         donor[S.TARGET_TOKENS].alias(S.TARGET_TOKENS),
                                         donor[S.TARGET_POS].alias(S.TARGET_POS))
        out.append(swapped.filter(pl.col(S.SOURCE) != pl.col(S.TARGET)))
    frame = pl.concat(out)
    return frame.with_columns(pl.lit(1.0).alias(LABEL), pl.lit("easy_random").alias(LABEL_KIND))


def entity_names(frame: pl.DataFrame, limit: int = 5000) -> list[str]:
    pairs = frame.select(pl.col(S.TARGET_TOKENS).alias("t"), pl.col(S.TARGET_POS).alias("p"))
    pairs = pairs.filter(pl.col("t").list.len() == pl.col("p").list.len()).head(50000)
    names = pairs.explode("t", "p").filter(pl.col("p") == "NR")["t"].unique(maintain_order=True)
    return names.head(limit).to_list()


def weak_label_pairs(frame: pl.DataFrame, settings: WeakLabelSettings) -> pl.DataFrame:
    """Labelled training pairs built from a run's (filtered) pair table."""
    rng = np.random.default_rng(settings.seed)
    mask = positive_mask(frame, settings)
    positives = frame.filter(mask)
    if positives.height == 0:
        raise RunStateError(
            "no pair of the run has strong enough evidence to serve as a weak positive "
            f"(≥{settings.min_pivots} pivots and both pivot probabilities "
            f"≥{settings.min_probability}; or sentence anchors)",
            hint="pass human labels (--labels FILE), lower rank.weak.min_pivots / "
                 "min_probability, or use the shipped model: --set rank.model=default")
    if positives.height > settings.max_positives:
        positives = positives.sample(settings.max_positives, seed=settings.seed)
    others = frame.filter(~mask)
    n_unlabelled = min(others.height, int(positives.height * settings.unlabelled_per_positive))
    unlabelled = others.sample(n_unlabelled, seed=settings.seed) if n_unlabelled else others.clear()
    parts = [
        positives.with_columns(pl.lit(5.0).alias(LABEL), pl.lit("positive").alias(LABEL_KIND)),
        unlabelled.with_columns(pl.lit(3.0).alias(LABEL), pl.lit("unlabelled").alias(LABEL_KIND)),
        hard_negatives(positives, settings, rng, entity_names(frame)),
        easy_negatives(positives, frame, settings, rng),
    ]
    return pl.concat(parts, how="vertical_relaxed")
