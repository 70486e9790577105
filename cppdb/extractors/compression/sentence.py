"""What makes a compression a sentence: tree rules that complete it, and a check that rejects
what still is not one.

The minimal subtree over the keywords (plus the DTT) keeps the words the headline names and the
tree path between them; on news it often stops short of a sentence: a subject without its verb
(``被困三天的登山者`` — the verb 救出 lay above the keywords), a verb without its object, an
oblique noun without its preposition (``在北京`` → ``北京``, ``从下月起`` → ``下月``), one
conjunct of a coordination (``中国和俄罗斯两国海军`` → ``中国``, which changes who acted).  The
rules below decide from the UD relations alone, applied with the DTT to a fixpoint (each adds
a child or the head of a kept node, so the kept set stays one rooted subtree):

* ``case`` — a kept word keeps its ``case`` children: a preposition or postposition belongs to
  its object (在 北京, 从 … 起, 对 中国).
* ``coordination`` — a kept nominal keeps its nominal ``conj`` children, and a kept conjunct its
  ``cc`` (和 与 及): a coordinated argument is one argument.
* ``object`` — a kept verb keeps its ``obj`` (else its ``ccomp``): a transitive verb without its
  object or complement is not a sentence.
* ``predicate`` — the top of the kept subtree climbs to the nearest ancestor that is a
  predicate (VERB or ADJ) heading a clause (root, ccomp, parataxis, conj, advcl): a subject or
  a modifier alone is not a sentence.
* ``unit`` — a kept word keeps its ``flat`` (not ``flat:vv``) and ``fixed`` children: UD joins
  with them the parts of one unit without a head of its own (a name 李/建华, a multiword
  function word); half of it is not a word.
* ``copula`` — a kept predicate whose copula (是, 为) is kept keeps its ``nsubj`` (same clause):
  "是 X" says what something is only with the something (题目 是 《…》).
* ``subject`` (not a default) — a kept clause head keeps its ``nsubj`` (same clause).  On the
  paper's development sentences it lowers word F1 slightly (annotators drop subjects
  Chinese can leave implicit, and the parser's nsubj is often wrong); it is there for users
  who want who-did-what spelled out.

Case, coordination, object, predicate and unit each raise word F1 against the paper's human
compressions (development sentences, half the gold content words as keywords); copula leaves it
level and turns "是 X" fragments into sentences: docs/benchmarks/compression.md.

:func:`sentence_problem` then names what is still wrong (a coded reason for the rejected
table), so a compression that does not read as a sentence is rejected, never shipped.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cppdb.errors import ConfigError
from cppdb.extractors.compression.dtt import DTTAddition, DTTRules, apply_dtt
from cppdb.extractors.compression.settings import compression_toml

DEFAULT_RULES = ("case", "coordination", "object", "predicate", "unit", "copula")
RULE_NAMES = DEFAULT_RULES + ("subject",)

#: relations whose dependent heads a clause that can stand as a sentence (UD; Chinese serial
#: clauses "A，B" are often parsed A = advcl of B, and A alone reads as a sentence)
CLAUSE_RELATIONS = frozenset({"root", "ccomp", "parataxis", "conj", "advcl"})
#: marks that separate clauses: a verb and its object, or a noun and its modifier, are never
#: split by one, so such an edge in a parse is an attachment error
CLAUSE_PUNCTUATION = frozenset("，；：,;:")
#: the relations a function word may govern in UD (anything else under ADP/PART/CCONJ/SCONJ
#: means the parser made a particle the head of content words)
FUNCTION_WORD_CHILDREN = frozenset({"fixed", "flat", "conj", "cc", "punct", "goeswith"})
FUNCTION_UPOS = frozenset({"ADP", "PART", "CCONJ", "SCONJ"})
#: relations UD gives only to nominals: a VERB or ADJ in them means the tagger or the parser
#: failed on that word (a clause there would be csubj / ccomp)
NOMINAL_RELATIONS = frozenset({"nsubj", "obj", "iobj", "obl"})
#: relations of 的-type markers: a clause carrying one is a modifier, not a predicate
MODIFIER_MARKERS = frozenset({"mark:relcl", "mark:rel", "case:dec"})
#: relations joining the parts of one unit (UD: headless multiword expressions).  Not the
#: older GSD ``flat:vv`` (verb compounds): udchinese gives it as often to a time word and the
#: 在 of a dropped place (今天/在 深圳 闭幕 -> 今天在闭幕) as to the parts of a split verb
UNIT_RELATIONS = frozenset({"flat", "flat:name", "flat:foreign", "fixed"})
#: parts of speech a clause's predicate has (nominal predicates carry a kept ``cop``)
PREDICATE_UPOS = frozenset({"VERB", "ADJ"})
NOMINAL_UPOS = frozenset({"NOUN", "PROPN", "PRON", "NUM"})
#: a compression cannot end in these: they introduce or link a word that would follow
OPENING_UPOS = frozenset({"ADP", "CCONJ", "SCONJ"})
#: relations of particles that open a phrase or mark a modifier of a following head (的 of a
#: relative clause or possessor): a compression cannot end in one
OPENING_PARTICLE_RELATIONS = frozenset({"mark", "mark:relcl", "mark:rel", "case:dec", "case"})

#: the coded reasons of the ``not_a_sentence`` rejection
PROBLEMS = {
    "no_predicate": "the compression has no verb or adjective at its top (a subject or a "
                    "modifier alone)",
    "not_a_clause": "the top of the compression modifies a word the compression dropped",
    "ends_in_function_word": "the compression ends in a preposition, conjunction or 的-type "
                             "particle",
    "verb_without_object": "a kept verb lost its object",
    "modifier_as_predicate": "the top carries a 的-type marker: it modifies a noun",
    "function_word_head": "the parse makes a particle or preposition the head of kept words",
    "verb_as_nominal": "a kept verb or adjective fills a nominal relation (nsubj, obj, obl)",
    "relation_across_comma": "a kept non-clausal dependency crosses a clause mark (，；：)",
    "clause_without_keyword": "a kept word lies in a clause (between clause marks) where the "
                              "headline named nothing: the tree path left the clauses it names",
    "only_a_title": "the compression is a quoted title (《…》) with at most one word around "
                    "it: it names a publication and states no event",
    "subject_dropped": "the compression opens with a predicate, preposition or adverb while S "
                       "names who acted before it: the actor was cut",
    "object_cut": "the compression ends in a verb while S goes on, in the same clause, with "
                  "a nominal the compression dropped (what the verb governs was cut)",
}


@dataclass(frozen=True)
class SentenceRules:
    """Which completion rules run, and whether an incomplete result is rejected."""

    rules: tuple[str, ...] = DEFAULT_RULES
    check: bool = True

    @classmethod
    def from_config(cls, section: Any) -> "SentenceRules":
        toml = compression_toml(section)
        unknown = [r for r in toml.sentence_rules if r not in RULE_NAMES]
        if unknown:
            raise ConfigError(f"unknown sentence rule(s): {', '.join(unknown)}",
                              hint=f"choose from: {', '.join(RULE_NAMES)}")
        return cls(toml.sentence_rules, toml.sentence_check)


@dataclass(frozen=True)
class Tree:
    """The parts of a parse the rules read (UPOS, 0-based heads with -1 = root, relations)."""

    tokens: Sequence[str]
    upos: Sequence[str]
    heads: Sequence[int]
    deprels: Sequence[str]

    def children(self) -> list[list[int]]:
        children: list[list[int]] = [[] for _ in self.heads]
        for child, head in enumerate(self.heads):
            if head >= 0:
                children[head].append(child)
        return children

    def relation(self, node: int) -> str:
        return "root" if self.heads[node] < 0 else self.deprels[node].split(":")[0]

    def clause_of(self, node: int) -> int:
        """How many clause marks (，；：) precede token ``node``."""
        return sum(1 for t in self.tokens[:node] if t in CLAUSE_PUNCTUATION)

    def same_clause(self, a: int, b: int) -> bool:
        """No clause mark (，；：) lies between tokens ``a`` and ``b``."""
        low, high = min(a, b), max(a, b)
        return not any(t in CLAUSE_PUNCTUATION for t in self.tokens[low + 1:high])


def top_node(tree: Tree, kept: Iterable[int]) -> int:
    """The kept node whose head is not kept (the first such, for a forest)."""
    keep = set(kept)
    return next(n for n in sorted(keep) if tree.heads[n] < 0 or tree.heads[n] not in keep)


def is_clause_head(tree: Tree, node: int) -> bool:
    return tree.upos[node] in PREDICATE_UPOS and tree.relation(node) in CLAUSE_RELATIONS


def _child_additions(tree: Tree, kept: set[int], rules: tuple[str, ...],
                     children: list[list[int]]) -> list[DTTAddition]:
    """Children the ``case``, ``unit``, ``coordination``, ``object``, ``copula`` and
    ``subject`` rules add to kept nodes."""
    added: list[DTTAddition] = []
    for node in sorted(kept):
        below = children[node]
        for child in below:
            relation, deprel = tree.relation(child), tree.deprels[child]
            if child in kept:
                continue
            if "case" in rules and relation == "case":
                added.append(DTTAddition(child, node, "case", deprel))
            elif "unit" in rules and deprel in UNIT_RELATIONS:
                added.append(DTTAddition(child, node, "unit", deprel))
            elif "coordination" in rules and (
                    (relation == "cc" and tree.relation(node) == "conj")
                    or (relation == "conj" and tree.upos[node] in NOMINAL_UPOS
                        and tree.upos[child] in NOMINAL_UPOS)):
                added.append(DTTAddition(child, node, "coordination", deprel))
        if "object" in rules and tree.upos[node] == "VERB":
            added.extend(_object(tree, node, kept, below))
        copular = any(c in kept and tree.relation(c) == "cop" for c in below)
        if "copula" in rules and copular:
            added.extend(_subject(tree, node, kept, below, "copula"))
        elif "subject" in rules and is_clause_head(tree, node):
            added.extend(_subject(tree, node, kept, below, "subject"))
    return added


def _subject(tree: Tree, node: int, kept: set[int], below: list[int],
             rule: str) -> list[DTTAddition]:
    """A clause's subject (same clause) when none is kept: who did it, or what is."""
    found = [c for c in below if tree.relation(c) == "nsubj" and tree.same_clause(node, c)]
    if found and not any(c in kept for c in found):
        return [DTTAddition(found[0], node, rule, tree.deprels[found[0]])]
    return []


def _object(tree: Tree, node: int, kept: set[int], below: list[int]) -> list[DTTAddition]:
    """The verb's object (else its clausal complement) when none of them is kept."""
    for relation in ("obj", "ccomp"):
        found = [c for c in below if tree.relation(c) == relation and tree.same_clause(node, c)]
        if found and not any(c in kept for c in found):
            return [DTTAddition(found[0], node, "object", tree.deprels[found[0]])]
        if found:
            return []
    return []


def _predicate_path(tree: Tree, kept: set[int]) -> list[DTTAddition]:
    """From the top of the kept subtree up to the nearest clause-heading predicate."""
    node, added = top_node(tree, kept), []
    while not is_clause_head(tree, node) and tree.heads[node] >= 0:
        head = tree.heads[node]
        added.append(DTTAddition(head, node, "predicate", tree.deprels[node]))
        node = head
    return added if is_clause_head(tree, node) else []


def complete_sentence(tree: Tree, kept: Iterable[int], rules: SentenceRules,
                      dtt: DTTRules | None) -> tuple[frozenset[int], tuple[DTTAddition, ...]]:
    """The kept set closed under the DTT and the sentence rules (to a fixpoint), and what each
    rule added, in order of discovery."""
    keep, added = set(kept), []
    children = tree.children()
    while True:
        if dtt is not None:
            closed, by_dtt = apply_dtt(tree.tokens, tree.heads, tree.deprels, keep, dtt)
            keep, added = set(closed), added + list(by_dtt)
        new = _child_additions(tree, keep, rules.rules, children)
        if not new and "predicate" in rules.rules and keep:
            new = _predicate_path(tree, keep)
        new = [a for a in new if a.token not in keep]
        if not new:
            return frozenset(keep), tuple(added)
        keep.update(a.token for a in new)
        added.extend(new)


def contracted(tree: Tree, kept: Iterable[int]) -> Tree:
    """The tree as the kept words read it: a kept word whose head was dropped hangs from its
    nearest kept ancestor (deleting a word attaches its children to its head); a kept word
    with no kept ancestor keeps its own head, so the top still says what it modified."""
    keep = set(kept)
    heads = list(tree.heads)
    for node in keep:
        head = tree.heads[node]
        while head >= 0 and head not in keep:
            head = tree.heads[head]
        if head >= 0:
            heads[node] = head
    return Tree(tree.tokens, tree.upos, heads, tree.deprels)


def sentence_problem(tree: Tree, kept: Iterable[int],
                     keywords: Iterable[int]) -> tuple[str, str] | None:
    """(code, detail) of the first reason the kept words are not a sentence, or None."""
    keep = sorted(set(kept))
    if not keep:
        return "no_predicate", "nothing is kept"
    tree = contracted(tree, keep)
    top, last = top_node(tree, keep), keep[-1]
    if tree.upos[top] not in PREDICATE_UPOS:
        return "no_predicate", f"top word {_word(tree, top)} is {tree.upos[top]}"
    if tree.relation(top) not in CLAUSE_RELATIONS:
        return "not_a_clause", (f"top word {_word(tree, top)} is {tree.deprels[top]} of "
                                f"{_word(tree, tree.heads[top])}")
    if tree.upos[last] in OPENING_UPOS or (tree.upos[last] == "PART"
                                           and tree.deprels[last] in OPENING_PARTICLE_RELATIONS):
        return "ends_in_function_word", f"last word {_word(tree, last)} is {tree.upos[last]}"
    named = {tree.clause_of(k) for k in keywords}
    stray = next((n for n in keep if tree.clause_of(n) not in named), None)
    if stray is not None:
        return "clause_without_keyword", f"{_word(tree, stray)} is in a clause H does not name"
    return _edge_problem(tree, keep, top)


def _edge_problem(tree: Tree, keep: list[int], top: int) -> tuple[str, str] | None:
    """Problems of single kept edges: a marked modifier on top, a function word as head, an
    edge across a clause mark, a verb without its object."""
    children, kept = tree.children(), set(keep)
    for node in keep:
        below = [c for c in children[node] if c in kept]
        if node == top and any(tree.deprels[c] in MODIFIER_MARKERS for c in below):
            return "modifier_as_predicate", f"top word {_word(tree, top)} carries 的"
        if tree.relation(node) in NOMINAL_RELATIONS and tree.upos[node] in PREDICATE_UPOS:
            return "verb_as_nominal", f"{_word(tree, node)} is {tree.upos[node]}"
        if tree.upos[node] in FUNCTION_UPOS and any(
                tree.relation(c) not in FUNCTION_WORD_CHILDREN for c in below):
            return "function_word_head", f"{_word(tree, node)} heads kept words"
        if node != top and tree.relation(node) not in CLAUSE_RELATIONS | {"punct"} \
                and not tree.same_clause(node, tree.heads[node]):
            return "relation_across_comma", (f"{_word(tree, node)} attaches across a clause "
                                             f"mark to {_word(tree, tree.heads[node])}")
        objects = [c for c in children[node]
                   if tree.relation(c) == "obj" and tree.same_clause(node, c)]
        if tree.upos[node] == "VERB" and objects and not set(objects) & kept:
            return "verb_without_object", (f"verb {_word(tree, node)} lost its object "
                                           f"{_word(tree, objects[0])}")
    return None


def _word(tree: Tree, node: int) -> str:
    return f"{tree.tokens[node]}@{node} ({tree.deprels[node]})"
