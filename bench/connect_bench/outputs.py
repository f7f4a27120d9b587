"""What a run leaves behind: the rows of a delivered file, the bytes a step stored in moto's S3."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any


def count_records(path: Path) -> tuple[int, int]:
    """(D records, the trailer's count) of a delivered file."""
    details, trailer = 0, -1
    with path.open(newline="", encoding="utf-8") as text:
        for record in csv.reader(text):
            if record and record[0] == "D":
                details += 1
            elif record and record[0] == "T":
                trailer = int(record[1])
    return details, trailer


def stored_bytes(s3: Any, bucket: str, prefix: str) -> int:
    """Bytes of every version of every object under ``prefix`` (deleted ones included)."""
    total = 0
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
        total += sum(int(version["Size"]) for version in page.get("Versions", []))
    return total
