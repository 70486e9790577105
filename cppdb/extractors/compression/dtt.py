"""Dependency tree transformation (DTT) for Chinese (Zhao et al. 2022, §2.1.2).

If a word is retained and has a child attached by one of these relations, the child is kept:

* particle  — ``mark:relcl``, ``case:dec``, ``case:aspect``, ``case:pref`` (的 了 着 得 ...)
* auxiliary — ``aux``, ``cop`` (是 为 要 可 才能 ...)
* numeral   — ``nummod`` (11 in 11 月, 第一, 多个, 首批 ...)
* negation  — ``advmod`` or ``aux`` to a word of the negation list (不 没 没有 不再 尚未 ...)

The rules are applied to a fixpoint (a kept child is itself a retained word).  Because every
added node hangs from a kept node, a rooted subtree stays a rooted subtree.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError
from cppdb.extractors.compression.settings import compression_toml
from cppdb.text.negation import load_negation_words

_COMPRESSION = toml_defaults("compression")

RULE_NAMES = ("particle", "auxiliary", "numeral", "negation")


@dataclass(frozen=True)
class DTTRules:
    """Which relations keep a child; ``rules`` are the enabled rule names."""

    rules: tuple[str, ...] = RULE_NAMES
    particle_relations: frozenset[str] = frozenset(_COMPRESSION["particle_relations"])
    auxiliary_relations: frozenset[str] = frozenset(_COMPRESSION["auxiliary_relations"])
    numeral_relations: frozenset[str] = frozenset(_COMPRESSION["numeral_relations"])
    negation_relations: frozenset[str] = frozenset(_COMPRESSION["negation_relations"])
    negation_words: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, section: Any) -> DTTRules:
        toml = compression_toml(section)
        unknown = [r for r in toml.dtt_rules if r not in RULE_NAMES]
        if unknown:
            raise ConfigError(f"unknown DTT rule(s): {', '.join(unknown)}",
                              hint=f"choose from: {', '.join(RULE_NAMES)}")
        return cls(rules=toml.dtt_rules,
                   particle_relations=frozenset(toml.particle_relations),
                   auxiliary_relations=frozenset(toml.auxiliary_relations),
                   numeral_relations=frozenset(toml.numeral_relations),
                   negation_relations=frozenset(toml.negation_relations),
                   negation_words=load_negation_words(toml.negation_words or None))

    def rule_for(self, child_token: str, deprel: str) -> str | None:
        """The rule that keeps a child with this token and relation (negation checked first)."""
        if ("negation" in self.rules and deprel in self.negation_relations
                and child_token in self.negation_words):
            return "negation"
        for name, relations in (("particle", self.particle_relations),
                                ("auxiliary", self.auxiliary_relations),
                                ("numeral", self.numeral_relations)):
            if name in self.rules and deprel in relations:
                return name
        return None


@dataclass(frozen=True)
class DTTAddition:
    """Token ``token`` kept because its head ``head`` is kept, by ``rule`` via ``deprel``."""

    token: int
    head: int
    rule: str
    deprel: str


def apply_dtt(tokens: Sequence[str], heads: Sequence[int], deprels: Sequence[str],
              kept: Iterable[int],
              rules: DTTRules) -> tuple[frozenset[int], tuple[DTTAddition, ...]]:
    """Kept set closed under the rules, and what each rule added (in order of discovery)."""
    children: list[list[int]] = [[] for _ in tokens]
    for child, head in enumerate(heads):
        if head >= 0:
            children[head].append(child)
    keep = set(kept)
    queue = sorted(keep)
    added: list[DTTAddition] = []
    while queue:
        node = queue.pop(0)
        for child in children[node]:
            if child in keep:
                continue
            rule = rules.rule_for(tokens[child], deprels[child])
            if rule is not None:
                keep.add(child)
                queue.append(child)
                added.append(DTTAddition(child, node, rule, deprels[child]))
    return frozenset(keep), tuple(added)
