"""A tree built once from all its leaves, answering roots and proofs for any of its past sizes."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from phoneid.domain.merkle.frontier import Frontier
from phoneid.domain.merkle.hashing import (
    EMPTY_ROOT,
    HASH_SIZE,
    NODE,
    ProofError,
    node_hash,
    perfect_parts,
    why_no_consistency,
)


def _split(width: int) -> int:
    """The largest power of two below ``width`` (> 1): where RFC 9162 splits a tree of ``width``."""
    return 1 << ((width - 1).bit_length() - 1)


def _is_perfect(start: int, width: int) -> bool:
    return width & (width - 1) == 0 and start % width == 0


def _parents(level: bytes) -> bytes:
    """The level above ``level``: each pair of nodes hashed, a last node without a pair left out."""
    parents = bytearray()
    sha256, node, pair = hashlib.sha256, NODE, 2 * HASH_SIZE
    for at in range(0, len(level) - pair + 1, pair):
        parents += sha256(node + level[at : at + pair]).digest()
    return bytes(parents)


class Tree:
    """A tree built once from all its leaf hashes, every level kept (about 2n hashes of memory).

    A perfect subtree's hash is read from its level; only the right edge of a past size (at most
    one hash per level) is computed, once per size, so a proof costs slicing, not hashing.
    """

    __slots__ = ("_edges", "_levels", "_size")

    _EDGES_KEPT = 64

    def __init__(self, leaf_hashes: Iterable[bytes]) -> None:
        # One bytes object per level, 32 bytes a node: a million leaves take 64 MB, where as many
        # separate bytes objects would take some 160. Levels grow in a bytearray, never in a list.
        leaves = bytearray()
        for index, value in enumerate(leaf_hashes):
            if len(value) != HASH_SIZE:
                raise ValueError(f"leaf hash {index} is {len(value)} bytes, expected {HASH_SIZE}")
            leaves += value
        level = bytes(leaves)
        del leaves
        self._size = len(level) // HASH_SIZE
        self._levels = [level]
        while len(level) >= 2 * HASH_SIZE:
            level = _parents(level)
            self._levels.append(level)
        self._edges: dict[int, dict[int, bytes]] = {}

    def __len__(self) -> int:
        return self._size

    def leaf(self, index: int) -> bytes:
        """The leaf hash at ``index``."""
        if not 0 <= index < self._size:
            raise IndexError(f"no leaf {index} in a tree of {self._size}")
        return self._node(0, index)

    def root(self, size: int) -> bytes:
        """The root the tree had when it held its first ``size`` leaves."""
        self._check_size(size)
        return self._edge(size)[0] if size else EMPTY_ROOT

    def frontier(self, size: int) -> Frontier:
        """The tree's right edge at ``size``, to go on appending from there."""
        self._check_size(size)
        return Frontier(size, [self._node(height, start >> height) for start, height in perfect_parts(size)])

    def inclusion_proof(self, index: int, size: int) -> list[bytes]:
        """PATH(index, D[size]) of RFC 9162 2.1.3.1, leaf to root."""
        self._check_size(size)
        if not 0 <= index < size:
            raise ProofError(f"no inclusion proof for leaf {index} of {size}: index out of range")
        # Below level ``inner`` the leaf's path and the last leaf's differ: one sibling per level.
        # Above it the path runs along the right edge, where only left siblings exist.
        inner = (index ^ (size - 1)).bit_length()
        levels = self._levels
        proof = []
        for height in range(inner):
            sibling = (index >> height) ^ 1
            if (sibling + 1) << height <= size:
                at = sibling * HASH_SIZE
                proof.append(levels[height][at : at + HASH_SIZE])
            else:  # the sibling passes the size: the hash of what the tree held of it
                proof.append(self._edge(size)[sibling << height])
        rest, height = index >> inner, inner
        while rest:
            if rest & 1:
                at = (rest ^ 1) * HASH_SIZE
                proof.append(levels[height][at : at + HASH_SIZE])
            rest >>= 1
            height += 1
        return proof

    def consistency_proof(self, old_size: int, new_size: int) -> list[bytes]:
        """PROOF(old_size, D[new_size]) of RFC 9162 2.1.4.1."""
        self._check_size(new_size)
        if not 0 < old_size <= new_size:
            raise ProofError(
                f"no consistency proof from {old_size} to {new_size}: "
                + why_no_consistency(old_size, new_size)
            )
        # SUBPROOF unrolled: descend towards the old size's boundary, then read the proof backwards.
        proof = []
        start, end, whole = 0, new_size, True
        while old_size != end:
            middle = start + _split(end - start)
            if old_size <= middle:
                proof.append(self._subtree(middle, end, new_size))
                end = middle
            else:
                proof.append(self._subtree(start, middle, new_size))
                start, whole = middle, False
        if not whole:
            proof.append(self._subtree(start, end, new_size))
        proof.reverse()
        return proof

    def _check_size(self, size: int) -> None:
        if not 0 <= size <= self._size:
            raise ProofError(f"the tree has {self._size} leaves: size {size} is out of range")

    def _node(self, height: int, position: int) -> bytes:
        at = position * HASH_SIZE
        return self._levels[height][at : at + HASH_SIZE]

    def _subtree(self, start: int, end: int, size: int) -> bytes:
        """MTH(D[start:end]): a perfect subtree, or else one that ends at ``size`` (the right edge)."""
        width = end - start
        if _is_perfect(start, width):
            return self._node(width.bit_length() - 1, start // width)
        return self._edge(size)[start]

    def _edge(self, size: int) -> dict[int, bytes]:
        """MTH(D[start:size]) for each start of a perfect part of ``size``; the root is at 0."""
        edge = self._edges.get(size)
        if edge is None:
            edge = {}
            value = b""
            for start, height in reversed(perfect_parts(size)):
                node = self._node(height, start >> height)
                value = node_hash(node, value) if value else node
                edge[start] = value
            if len(self._edges) >= self._EDGES_KEPT:
                self._edges.clear()
            self._edges[size] = edge
        return edge
