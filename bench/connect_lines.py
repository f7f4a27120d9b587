"""Connect's reader against long lines: seconds and peak traced memory to read a file whose second
row is one line of N MiB, for lines of each hostile shape, and a plain file of short rows for
comparison. The bytes are made as they are read (64 KiB chunks decoded as the S3 adapter decodes
them), so nothing here holds the file. Memory is traced, which slows the reading: the times
compare shapes and sizes with one another. Prints; asserts nothing.

    python bench/connect_lines.py [--mib 16 64 160] [--rows 200000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Iterator

import _setup  # noqa: F401 - the import path first

from phoneid.adapters.s3 import iter_text
from phoneid.domain.connect.records import read_records

CHUNK = 64 * 1024
SHAPES = {
    "one long cell": (b"D,+12025550142,Lena,", b"x", b"\r\n"),
    "commas": (b"D,+12025550142,Lena,Ortiz", b",", b"\r\n"),
    'quoted cells ("",)': (b"D,+12025550142,Lena,Ortiz,", b'"",', b"\r\n"),
    "line breaks in a quoted cell": (b'D,+12025550142,Lena,Ortiz,,,,,"', b"\n", b'"\r\n'),
}


def long_line(head: bytes, unit: bytes, tail: bytes, mib: int) -> Iterator[bytes]:
    yield b"H,key,verifiedUser\r\n" + head
    block = unit * (CHUNK // len(unit))
    for _ in range((mib << 20) // len(block)):
        yield block
    yield tail + b"D,+12025550143,Ada,Lovelace\r\nT,2\r\n"


def short_rows(rows: int) -> Iterator[bytes]:
    yield b"H,key,verifiedUser\r\n"
    for start in range(0, rows, 1000):
        yield "".join(
            f"D,+1202{n:07d},Given{n},Family{n},c{n},,,\r\n" for n in range(start, start + 1000)
        ).encode()
    yield f"T,{rows}\r\n".encode()


def measure(chunks: Iterator[bytes]) -> tuple[float, int, int, int]:
    """(seconds, records, records too long, peak traced bytes)."""
    tracemalloc.start()
    started = time.perf_counter()
    records = too_long = 0
    for record in read_records(iter_text(chunks)):
        records += 1
        too_long += record.too_long
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, records, too_long, peak


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mib", type=int, nargs="+", default=[16, 64, 160])
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args()
    seconds, records, _, peak = measure(short_rows(args.rows))
    print(f"{args.rows:,} short rows: {seconds:.2f} s, {records:,} records, peak {peak / 2**20:.1f} MiB")
    for mib in args.mib:
        for name, (head, unit, tail) in SHAPES.items():
            seconds, records, too_long, peak = measure(long_line(head, unit, tail, mib))
            print(
                f"{mib} MiB line, {name}: {seconds:.2f} s ({mib / seconds:.0f} MiB/s), "
                f"{records} records ({too_long} too long), peak {peak / 2**20:.1f} MiB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
