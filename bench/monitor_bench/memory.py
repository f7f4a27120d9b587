"""Peak RSS of a phase: the kernel's high-water mark (VmHWM) reset before it (``/proc/self/clear_refs``
``5``, Linux 4.0 on) and read after it. The bench runs in one process, moto's storage included: the
table's items are in every phase's peak, so ``baseline`` (VmRSS before the phases) is printed too."""

from __future__ import annotations

from pathlib import Path

_STATUS = Path("/proc/self/status")


def _field(name: str) -> int:
    """A /proc/self/status field in MB."""
    for line in _STATUS.read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1]) // 1024
    return 0


def resident_mb() -> int:
    return _field("VmRSS")


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def peak_mb() -> int:
    return _field("VmHWM")
