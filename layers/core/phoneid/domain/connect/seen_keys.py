"""The duplicate keys a file's valid rows have used: 64-bit hashes in an open-addressing table of
8-byte slots kept at most half full (docs/connect.md#duplicates)."""

from __future__ import annotations

from array import array
from hashlib import blake2b


class SeenKeys:
    """A set of 64-bit key hashes in one flat array: 16-32 bytes a key instead of a Python set's ~100."""

    _INITIAL_SLOTS = 1 << 12

    def __init__(self) -> None:
        self._slots = array("Q", bytes(8 * self._INITIAL_SLOTS))
        self._mask = self._INITIAL_SLOTS - 1
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @property
    def table_bytes(self) -> int:
        return len(self._slots) * self._slots.itemsize

    @staticmethod
    def _hash(key: str) -> int:
        value = int.from_bytes(blake2b(key.encode(), digest_size=8).digest(), "little")
        return value or 1  # 0 marks an empty slot

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        value = self._hash(key)
        slots, index = self._slots, value & self._mask
        while slots[index]:
            if slots[index] == value:
                return True
            index = (index + 1) & self._mask
        return False

    def add(self, key: str) -> None:
        self._insert(self._hash(key))
        if self._count * 2 > len(self._slots):
            self._grow()

    def _insert(self, value: int) -> None:
        slots, index = self._slots, value & self._mask
        while slots[index]:
            if slots[index] == value:
                return
            index = (index + 1) & self._mask
        slots[index] = value
        self._count += 1

    def _grow(self) -> None:
        old = self._slots
        self._slots = array("Q", bytes(16 * len(old)))
        self._mask = len(self._slots) - 1
        self._count = 0
        for value in old:
            if value:
                self._insert(value)
