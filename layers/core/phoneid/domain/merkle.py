"""Merkle trees of RFC 9162 section 2.1: the hashing, proofs and their verification, for the
tamper-evident history of a client's decision records.

Each record is a leaf (``leaf_hash``); a checkpoint is a tree size and its root. ``Frontier`` keeps
only the right edge of a tree (its perfect subtrees), enough to append and give the root without
holding the leaves. ``Tree`` holds every level of a tree built once and answers roots, inclusion and
consistency proofs for any of its past sizes; ``verify_inclusion`` and ``verify_consistency`` are
what an auditor runs offline. Pure: SHA-256 from the standard library, no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

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

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()

# Domain separation (RFC 9162 2.1.1): a leaf can never pass for an interior node.
_LEAF = b"\x00"
_NODE = b"\x01"


class ProofError(ValueError):
    """A proof that does not hold, or one asked for sizes or indexes that cannot have one."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(_LEAF + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(_NODE + left + right).digest()


def root(leaf_hashes: Iterable[bytes]) -> bytes:
    """MTH (RFC 9162 2.1.1) of a list of leaf hashes; ``EMPTY_ROOT`` for none."""
    frontier = Frontier()
    frontier.extend(leaf_hashes)
    return frontier.root()


def _split(width: int) -> int:
    """The largest power of two below ``width`` (> 1): where RFC 9162 splits a tree of ``width``."""
    return 1 << ((width - 1).bit_length() - 1)


def _is_perfect(start: int, width: int) -> bool:
    return width & (width - 1) == 0 and start % width == 0


def _perfect_parts(size: int) -> list[tuple[int, int]]:
    """(start, height) of the perfect subtrees a tree of ``size`` leaves is made of, left to right."""
    parts = []
    start = 0
    for height in range(size.bit_length() - 1, -1, -1):
        if size >> height & 1:
            parts.append((start, height))
            start += 1 << height
    return parts


def _check_hash(value: bytes, what: str) -> None:
    if len(value) != HASH_SIZE:
        raise ValueError(f"{what} is {len(value)} bytes, expected {HASH_SIZE}")


class Frontier:
    """The right edge of a tree (a compact range): one hash per perfect subtree, largest first.

    O(log n) hashes stand for n leaves: appending a batch to a big tree needs only this, and the
    root it gives is the root of the whole tree.
    """

    __slots__ = ("_hashes", "_size")

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        if size < 0:
            raise ValueError(f"a frontier cannot have size {size}")
        if len(hashes) != size.bit_count():
            raise ValueError(f"a frontier of size {size} has {size.bit_count()} hashes, not {len(hashes)}")
        for position, value in enumerate(hashes):
            _check_hash(value, f"frontier hash {position}")
        self._size = size
        self._hashes = list(hashes)

    @property
    def size(self) -> int:
        return self._size

    @property
    def hashes(self) -> tuple[bytes, ...]:
        return tuple(self._hashes)

    def append(self, leaf: bytes) -> None:
        """Add the next leaf's hash (``leaf_hash`` of the record), merging the subtrees it completes."""
        _check_hash(leaf, "a leaf hash")
        hashes = self._hashes
        hashes.append(leaf)
        # Each trailing 1 bit of the old size is a subtree of the same height as the new one: merge.
        carry = self._size
        while carry & 1:
            right = hashes.pop()
            hashes[-1] = node_hash(hashes[-1], right)
            carry >>= 1
        self._size += 1

    def extend(self, leaves: Iterable[bytes]) -> None:
        for leaf in leaves:
            self.append(leaf)

    def root(self) -> bytes:
        if not self._hashes:
            return EMPTY_ROOT
        value = self._hashes[-1]
        for left in reversed(self._hashes[:-1]):
            value = node_hash(left, value)
        return value

    def to_json(self) -> dict[str, Any]:
        return {"size": self._size, "hashes": [value.hex() for value in self._hashes]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Frontier:
        size, hashes = data.get("size"), data.get("hashes")
        if not isinstance(size, int) or isinstance(size, bool):
            raise ValueError(f"a frontier's size is a whole number, not {size!r}")
        if not isinstance(hashes, list) or not all(isinstance(value, str) for value in hashes):
            raise ValueError("a frontier's hashes are a list of hex strings")
        try:
            decoded = [bytes.fromhex(value) for value in hashes]
        except ValueError:
            raise ValueError("a frontier's hashes are a list of hex strings") from None
        return cls(size, decoded)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Frontier):
            return NotImplemented
        return self._size == other._size and self._hashes == other._hashes

    def __repr__(self) -> str:
        return f"Frontier(size={self._size}, root={self.root().hex()})"


class Tree:
    """A tree built once from all its leaf hashes, every level kept (about 2n hashes of memory).

    A perfect subtree's hash is read from its level; only the right edge of a past size (at most
    one hash per level) is computed, once per size, so a proof costs slicing, not hashing.
    """

    __slots__ = ("_edges", "_levels", "_size")

    _EDGES_KEPT = 64

    def __init__(self, leaf_hashes: Iterable[bytes]) -> None:
        leaves = list(leaf_hashes)
        for index, value in enumerate(leaves):
            _check_hash(value, f"leaf hash {index}")
        self._size = len(leaves)
        # One bytes object per level, 32 bytes a node: a million leaves take 64 MB, where as many
        # separate bytes objects would take some 160.
        level = b"".join(leaves)
        self._levels = [level]
        sha256, node = hashlib.sha256, _NODE
        while len(level) >= 2 * HASH_SIZE:
            level = b"".join(
                [
                    sha256(node + level[at : at + 2 * HASH_SIZE]).digest()
                    for at in range(0, len(level) - 2 * HASH_SIZE + 1, 2 * HASH_SIZE)
                ]
            )
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
        return Frontier(size, [self._node(height, start >> height) for start, height in _perfect_parts(size)])

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
                + _why_not_consistent(old_size, new_size)
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
            for start, height in reversed(_perfect_parts(size)):
                node = self._node(height, start >> height)
                value = node_hash(node, value) if value else node
                edge[start] = value
            if len(self._edges) >= self._EDGES_KEPT:
                self._edges.clear()
            self._edges[size] = edge
        return edge


def _why_not_consistent(old_size: int, new_size: int) -> str:
    if old_size < 0 or new_size < 0:
        return "sizes cannot be negative"
    if old_size > new_size:
        return "the old size is larger than the new one"
    return "an old size of 0 is not provable (RFC 9162 2.1.4 proves from one leaf up)"


def _steps(first: int, second: int) -> int:
    """How many hashes the RFC 9162 walk from node ``first`` up to the root at ``second`` consumes."""
    steps = 0
    while second:
        if first == second and not first & 1:
            while first and not first & 1:
                first >>= 1
                second >>= 1
        first >>= 1
        second >>= 1
        steps += 1
    return steps


def _check_hashes(named: str, proof: Sequence[bytes], *hashes: tuple[str, bytes]) -> None:
    for what, value in hashes:
        if len(value) != HASH_SIZE:
            raise ProofError(f"{named}: the {what} is {len(value)} bytes, expected {HASH_SIZE}")
    for position, value in enumerate(proof):
        if len(value) != HASH_SIZE:
            raise ProofError(f"{named}: hash {position} is {len(value)} bytes, expected {HASH_SIZE}")


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes], root_hash: bytes) -> None:
    """Check that ``leaf`` is the leaf hash at ``index`` of the tree of ``size`` with ``root_hash``
    (RFC 9162 2.1.3.2); raise ``ProofError`` saying what failed."""
    named = f"inclusion proof for leaf {index} of {size}"
    if size <= 0:
        raise ProofError(f"{named}: a tree of size {size} has no leaves")
    if not 0 <= index < size:
        raise ProofError(f"{named}: index out of range, the leaves are 0 to {size - 1}")
    _check_hashes(named, proof, ("leaf hash", leaf), ("root", root_hash))
    expected = _steps(index, size - 1)
    if len(proof) != expected:
        raise ProofError(f"{named} has {len(proof)} hashes, expected {expected}")
    first, second, value = index, size - 1, leaf
    for sibling in proof:
        if first & 1 or first == second:
            value = node_hash(sibling, value)
            while first and not first & 1:
                first >>= 1
                second >>= 1
        else:
            value = node_hash(value, sibling)
        first >>= 1
        second >>= 1
    if value != root_hash:
        raise ProofError(f"{named} does not lead to the root")


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Check that the tree of ``new_size`` with ``new_root`` extends the tree of ``old_size`` with
    ``old_root`` (RFC 9162 2.1.4.2); raise ``ProofError`` saying what failed."""
    named = f"consistency proof from {old_size} to {new_size}"
    if not 0 < old_size <= new_size:
        raise ProofError(f"{named}: {_why_not_consistent(old_size, new_size)}")
    _check_hashes(named, proof, ("old root", old_root), ("new root", new_root))
    if old_size == new_size:
        if proof:
            raise ProofError(f"{named} has {len(proof)} hashes, expected 0")
        if old_root != new_root:
            raise ProofError(f"{named}: the same size has two different roots")
        return
    # The old tree's root is a node of the new tree when its size is a power of two: the proof
    # leaves it out and the verifier starts from it.
    first, second = old_size - 1, new_size - 1
    while first & 1:
        first >>= 1
        second >>= 1
    seeded = old_size & (old_size - 1) == 0
    expected = _steps(first, second) + (0 if seeded else 1)
    if len(proof) != expected:
        raise ProofError(f"{named} has {len(proof)} hashes, expected {expected}")
    path = [old_root, *proof] if seeded else list(proof)
    old_value = new_value = path[0]
    for sibling in path[1:]:
        if first & 1 or first == second:
            old_value = node_hash(sibling, old_value)
            new_value = node_hash(sibling, new_value)
            while first and not first & 1:
                first >>= 1
                second >>= 1
        else:
            new_value = node_hash(new_value, sibling)
        first >>= 1
        second >>= 1
    if old_value != old_root:
        raise ProofError(f"{named} does not lead to the old root")
    if new_value != new_root:
        raise ProofError(f"{named} does not lead to the new root")
