"""RFC 9162 2.1.1 hashing, and what the tree, the frontier and the verifiers share."""

from __future__ import annotations

import hashlib

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()

# Domain separation (RFC 9162 2.1.1): a leaf can never pass for an interior node.
LEAF = b"\x00"
NODE = b"\x01"


class ProofError(ValueError):
    """A proof that does not hold, or one asked for sizes or indexes that cannot have one."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(LEAF + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(NODE + left + right).digest()


def perfect_parts(size: int) -> list[tuple[int, int]]:
    """(start, height) of the perfect subtrees a tree of ``size`` leaves is made of, left to right."""
    parts = []
    start = 0
    for height in range(size.bit_length() - 1, -1, -1):
        if size >> height & 1:
            parts.append((start, height))
            start += 1 << height
    return parts


def check_hash(value: bytes, what: str) -> None:
    if len(value) != HASH_SIZE:
        raise ValueError(f"{what} is {len(value)} bytes, expected {HASH_SIZE}")


def why_no_consistency(old_size: int, new_size: int) -> str:
    if old_size < 0 or new_size < 0:
        return "sizes cannot be negative"
    if old_size > new_size:
        return "the old size is larger than the new one"
    return "an old size of 0 is not provable (RFC 9162 2.1.4 proves from one leaf up)"
