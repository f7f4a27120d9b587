"""What an auditor runs offline: RFC 9162 2.1.3.2 and 2.1.4.2, refusals saying what failed."""

from __future__ import annotations

from collections.abc import Sequence

from phoneid.domain.merkle.hashing import HASH_SIZE, ProofError, node_hash, why_no_consistency


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
        raise ProofError(f"{named}: {why_no_consistency(old_size, new_size)}")
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
