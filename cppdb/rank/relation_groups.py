"""The relation label a pair shows, and the three groups ``cppdb lookup --relation`` filters by.

The label is what an export writes in PPDB 2.0's entailment field
(:func:`cppdb.export.entailment_of`): the ranked table's ``relation`` (``Exclusion`` from the
rule of :mod:`cppdb.rank.exclusion`, else the classifier's of :mod:`cppdb.rank.relations`),
and for a pair without one (a table ranked with ``rank.relation_model = "none"``)
``ForwardEntailment`` / ``ReverseEntailment`` where one side's words all occur in the other,
longer side, else ``""`` (undecided).  A pair file that carries its own ``entailment`` field
(JSONL, PPDB 2.0) keeps it.

Groups (:data:`LABEL_GROUPS`):

``equivalence``
    ``Equivalence`` (海洋 / 大海), and the undecided pairs: with no classifier, one the ranker
    kept as a paraphrase with no containment and no exclusion evidence against it.
``entailment``
    ``ForwardEntailment``, ``ReverseEntailment``: one side more general than the other
    (这 座 城市 / 城市).
``related``
    ``OtherRelated``, ``Independent``, ``Exclusion``: not paraphrases.
"""
from __future__ import annotations

import polars as pl

from cppdb.errors import BadInputError
from cppdb.export import entailment_of

#: the column of an export file (JSONL, PPDB) that already holds the label
ENTAILMENT = "entailment"
LABEL, GROUP = "relation_label", "relation_group"
EQUIVALENCE, ENTAILMENT_GROUP, RELATED = "equivalence", "entailment", "related"
GROUPS = (EQUIVALENCE, ENTAILMENT_GROUP, RELATED)
#: ``--relation all``: every group, in the order of GROUPS
ALL = "all"
CHOICES = (*GROUPS, ALL)
UNDECIDED = ""
LABEL_GROUPS = {"Equivalence": EQUIVALENCE, UNDECIDED: EQUIVALENCE,
                "ForwardEntailment": ENTAILMENT_GROUP, "ReverseEntailment": ENTAILMENT_GROUP,
                "OtherRelated": RELATED, "Independent": RELATED, "Exclusion": RELATED}
#: how the labels are listed (PPDB 2.0's order, then the undecided pairs)
LABEL_ORDER = ("Equivalence", "ForwardEntailment", "ReverseEntailment", "Exclusion",
               "OtherRelated", "Independent", UNDECIDED)


def label_expr(columns: list[str]) -> pl.Expr:
    """The pair's relation label (module docstring) for a table with these columns; a null
    or empty label is undecided (``""``)."""
    label = pl.col(ENTAILMENT) if ENTAILMENT in columns else entailment_of(columns)
    return label.fill_null(UNDECIDED).alias(LABEL)


def group_expr(label: pl.Expr) -> pl.Expr:
    """The group of a label; a label PPDB 2.0 does not have counts as related (it is no
    claim of equivalence)."""
    return label.replace_strict(LABEL_GROUPS, default=RELATED, return_dtype=pl.String)


def group_rank(group: pl.Expr) -> pl.Expr:
    """0, 1, 2 for equivalence, entailment, related: the order ``--relation all`` shows."""
    return group.replace_strict({g: i for i, g in enumerate(GROUPS)}, default=len(GROUPS),
                                return_dtype=pl.Int32)


def with_group(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``relation_group`` (kept when the frame has it already)."""
    if GROUP in frame.columns:
        return frame
    return frame.with_columns(group_expr(label_expr(frame.columns)).alias(GROUP))


def check_relation(relation: str | None) -> str | None:
    """``relation`` when it is a group or ``all`` (or None: no filter, score order); a coded
    error otherwise, raised before any index is built."""
    if relation is None or relation in CHOICES:
        return relation
    raise BadInputError(f"unknown relation {relation!r}", hint=f"choose one of "
                        f"{', '.join(CHOICES)} ({EQUIVALENCE}: Equivalence and undecided; "
                        f"{ENTAILMENT_GROUP}: Forward/ReverseEntailment; {RELATED}: "
                        "OtherRelated, Independent, Exclusion)")


def wanted_groups(relation: str | None) -> tuple[str, ...]:
    """The groups a ``relation`` choice keeps."""
    return GROUPS if relation in (None, ALL) else (relation,)

