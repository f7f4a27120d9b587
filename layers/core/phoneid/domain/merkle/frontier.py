"""The right edge of a tree: appending leaves and giving the root without holding them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from phoneid.domain.merkle.hashing import EMPTY_ROOT, check_hash, node_hash


def root(leaf_hashes: Iterable[bytes]) -> bytes:
    """MTH (RFC 9162 2.1.1) of a list of leaf hashes; ``EMPTY_ROOT`` for none."""
    frontier = Frontier()
    frontier.extend(leaf_hashes)
    return frontier.root()


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
            check_hash(value, f"frontier hash {position}")
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
        check_hash(leaf, "a leaf hash")
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
