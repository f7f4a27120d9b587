"""Merkle trees of RFC 9162 section 2.1: the hashing, proofs and their verification, for the
tamper-evident history of a client's decision records.

Each record is a leaf (``leaf_hash``); a checkpoint is a tree size and its root. ``Frontier`` keeps
only the right edge of a tree (its perfect subtrees), enough to append and give the root without
holding the leaves. ``Tree`` holds every level of a tree built once and answers roots, inclusion and
consistency proofs for any of its past sizes; ``verify_inclusion`` and ``verify_consistency`` are
what an auditor runs offline. Pure: SHA-256 from the standard library, no I/O.
"""

from __future__ import annotations

from phoneid.domain.merkle.frontier import Frontier, root
from phoneid.domain.merkle.hashing import EMPTY_ROOT, HASH_SIZE, ProofError, leaf_hash, node_hash
from phoneid.domain.merkle.tree import Tree
from phoneid.domain.merkle.verify import verify_consistency, verify_inclusion

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "Frontier",
    "ProofError",
    "Tree",
    "leaf_hash",
    "node_hash",
    "root",
    "verify_consistency",
    "verify_inclusion",
]
