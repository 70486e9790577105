"""Minimal rooted subtree covering the keywords (Filippova & Altun 2013, §3).

The compression is the smallest subtree of the dependency tree of S that contains every
keyword: the keywords, their lowest common ancestor, and every node on the paths between
them.  ``root="sentence_root"`` instead always extends the subtree up to the sentence root
(every compression is then a rooted subtree of the whole sentence).  Words are emitted in
source order by the caller.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from cppdb.errors import BadInputError, ConfigError

ROOT_POLICIES = ("lca", "sentence_root")


def path_to_root(heads: Sequence[int], node: int) -> list[int]:
    """``[node, parent, ..., root]``; raises on a cycle or an out-of-range head."""
    path, seen = [node], {node}
    while heads[path[-1]] >= 0:
        parent = heads[path[-1]]
        if parent >= len(heads):
            raise BadInputError(f"dependency head {parent} out of range (n={len(heads)})")
        if parent in seen:
            raise BadInputError(f"dependency tree has a cycle through token {parent}")
        path.append(parent)
        seen.add(parent)
    return path


def minimal_rooted_subtree(heads: Sequence[int], keywords: Iterable[int], *,
                           root: str = "lca") -> tuple[int, ...]:
    """Sorted token indices of the minimal subtree covering ``keywords``."""
    if root not in ROOT_POLICIES:
        raise ConfigError(f"unknown subtree root policy '{root}'",
                          hint=f"choose from: {', '.join(ROOT_POLICIES)}")
    keys = sorted(set(keywords))
    if not keys:
        return ()
    paths = [path_to_root(heads, k) for k in keys]
    if root == "sentence_root":
        return tuple(sorted({n for p in paths for n in p}))
    common = set(paths[0])
    for path in paths[1:]:
        common &= set(path)
    if not common:  # a forest (several roots): keep the full paths
        return tuple(sorted({n for p in paths for n in p}))
    lca = next(n for n in paths[0] if n in common)  # deepest common ancestor
    nodes: set[int] = set()
    for path in paths:
        for n in path:
            nodes.add(n)
            if n == lca:
                break
    return tuple(sorted(nodes))
