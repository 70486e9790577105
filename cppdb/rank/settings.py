"""The ``[rank]`` section as typed, frozen settings, and what one ``rank`` run reads.

Fields are the TOML keys of ``cppdb/defaults/rank.toml`` (``config.settings_from`` fills them
by name); the views a stage takes (:class:`FilterSettings`, :class:`RankerSettings`,
:class:`NoveltySettings`) are filled from it the same way, so no key is renamed on the way.
Building one checks every rank setting that only a late stage reads, before any work.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import settings_from
from cppdb.defaults import toml_defaults
from cppdb.embed.settings import EmbedSettings
from cppdb.errors import ConfigError
from cppdb.features.settings import FeatureSettings
from cppdb.rank.exclusion import EVIDENCE, EXCLUSION
from cppdb.rank.filters import FilterSettings
from cppdb.rank.novelty import NoveltySettings
from cppdb.rank.ranker import OBJECTIVES, RankerSettings
from cppdb.rank.relations import RELATIONS
from cppdb.rank.tiers import Tier, tier_list
from cppdb.rank.weak_labels import WeakLabelSettings

_RANK = toml_defaults("rank")
FEATURE_SETS = ("all", "text", "portable")


def _table(name: str) -> Mapping[str, float]:
    return field(default_factory=lambda: dict(_RANK[name]))


@dataclass(frozen=True)
class RankSettings:
    """Filtering and ranking of candidate pairs (see ``cppdb/defaults/rank.toml``)."""

    SECTION: ClassVar[str] = "rank"


    model: str = _RANK["model"]
    labels_with_weak: bool = _RANK["labels_with_weak"]
    feature_set: str = _RANK["feature_set"]
    filters: tuple[str, ...] = _RANK["filters"]
    filter_particles: str = _RANK["filter_particles"]
    filter_entity_tags: tuple[str, ...] = _RANK["filter_entity_tags"]
    min_pivot_product: float = _RANK["min_pivot_product"]
    synonym_min_pivot_product: float = _RANK["synonym_min_pivot_product"]
    exclusion: tuple[str, ...] = _RANK["exclusion"]
    exclusion_negation_overlap: float = _RANK["exclusion_negation_overlap"]
    relation_model: str = _RANK["relation_model"]
    demoted_relations: tuple[str, ...] = _RANK["demoted_relations"]
    pruned_relations: tuple[str, ...] = _RANK["pruned_relations"]
    pruned_below: float = _RANK["pruned_below"]
    objective: str = _RANK["objective"]
    num_leaves: int = _RANK["num_leaves"]
    n_estimators: int = _RANK["n_estimators"]
    learning_rate: float = _RANK["learning_rate"]
    min_data_in_leaf: int = _RANK["min_data_in_leaf"]
    feature_fraction: float = _RANK["feature_fraction"]
    bagging_fraction: float = _RANK["bagging_fraction"]
    lambda_l2: float = _RANK["lambda_l2"]
    threads: int = _RANK["threads"]
    seed: int = _RANK["seed"]
    increasing: tuple[str, ...] = _RANK["increasing"]
    decreasing: tuple[str, ...] = _RANK["decreasing"]
    containment_penalty: float = _RANK["containment_penalty"]
    diversity_penalty: float = _RANK["diversity_penalty"]
    diversity_target: float = _RANK["diversity_target"]
    pattern_diversity_penalty: float = _RANK["pattern_diversity_penalty"]
    tier_diversity: Mapping[str, float] = _table("tier_diversity")
    max_diversity_penalty: float = _RANK["max_diversity_penalty"]
    tiers: Mapping[str, float] = _table("tiers")
    weak: WeakLabelSettings = field(default_factory=WeakLabelSettings)

    def __post_init__(self) -> None:
        if self.feature_set not in FEATURE_SETS:
            raise ConfigError(f"unknown rank.feature_set {self.feature_set!r}",
                              hint="choose all, text or portable")
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"unknown rank.objective {self.objective!r}",
                              hint=f"choose one of {', '.join(OBJECTIVES)}")
        unknown = [kind for kind in self.exclusion if kind not in EVIDENCE]
        if unknown:
            raise ConfigError(f"setting 'rank.exclusion' names unknown evidence "
                              f"{', '.join(unknown)}", hint=f"choose from: {', '.join(EVIDENCE)}")
        if not 0 < self.exclusion_negation_overlap <= 1:
            raise ConfigError("setting 'rank.exclusion_negation_overlap' must be in (0, 1], "
                              f"got {self.exclusion_negation_overlap}")
        for name in ("demoted_relations", "pruned_relations"):
            unknown = [r for r in getattr(self, name) if r not in RELATIONS]
            if unknown:
                raise ConfigError(f"setting 'rank.{name}' names unknown relation(s) "
                                  f"{', '.join(unknown)}",
                                  hint=f"choose from: {', '.join(RELATIONS)}")
        if EXCLUSION in self.pruned_relations:
            raise ConfigError("setting 'rank.pruned_relations' names Exclusion, which stays in "
                              "the table (marked, ranked last)",
                              hint='list only "OtherRelated", "Independent" or entailments')
        if not 0 < self.pruned_below <= 1:
            raise ConfigError(f"setting 'rank.pruned_below' must be in (0, 1], "
                              f"got {self.pruned_below}",
                              hint="a share of each type's ranking, e.g. 0.6; 1 prunes none")
        if self.relation_model not in ("default", "none") \
                and not Path(self.relation_model).is_file():
            raise ConfigError(f"setting 'rank.relation_model' names {self.relation_model!r}, "
                              "which is not a file",
                              hint='use "default" (the shipped classifier), "none", or the '
                                   "path of a model devtools/train_relations.py wrote")
        # the filter names, the tier-diversity targets and the tier shares are checked by the
        # views that use them: each is built once here, so a bad one fails before any work
        self.filter_settings()
        self.novelty_settings()
        self.tier_list()

    def filter_settings(self) -> FilterSettings:
        return settings_from(FilterSettings, self)

    def ranker_settings(self) -> RankerSettings:
        return settings_from(RankerSettings, self)

    def novelty_settings(self) -> NoveltySettings:
        return settings_from(NoveltySettings, self)

    def tier_list(self) -> tuple[Tier, ...]:
        return tier_list(self.tiers)


@dataclass(frozen=True)
class RankRun:
    """Every section one ``rank`` run reads, resolved once where the run starts."""

    rank: RankSettings = field(default_factory=RankSettings)
    features: FeatureSettings = field(default_factory=FeatureSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    annotate: AnnotateSettings = field(default_factory=AnnotateSettings)
