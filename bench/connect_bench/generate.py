"""The bench's Connect file: N rows of a Human Assurance file for the Sandbox US stack, in the mix
bench/connect.py describes, with what each row is expected to come to."""

from __future__ import annotations

import csv
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench.connect_bench.names import first_and_last_names

CLIENT = "bench"
KIND = "humanAssurance"  # a passing row is enrolled whatever its name: the most writes a file can ask

_AREA_CODES = (
    201,
    206,
    212,
    213,
    214,
    305,
    312,
    313,
    401,
    415,
    503,
    512,
    602,
    614,
    617,
    702,
    713,
    718,
    801,
    919,
)
_FOREIGN = ("+442079460958", "+4915123456789", "+33612345678", "+61491570149", "+34612345678")
_BAD_FORMAT = ("2025550123", "+1202555", "+12021234567", "+1 (999) 555-0100", "0044 20 7946 0958", "+abc")
_LONG = "X" * 129


@dataclass
class GeneratedFile:
    path: Path
    rows: int
    expected: Counter[str] = field(default_factory=Counter)


def generate(
    directory: Path,
    rows: int,
    enroll_key: str,
    seed: int = 20260301,
    stamp: str | None = None,
    customers: str = "C",
) -> GeneratedFile:
    """The file ``{CLIENT}_US_{KIND}_{stamp}.csv``: H, ``rows`` D records, T (CRLF)."""
    import phonenumbers

    from phoneid.domain.sandbox import Catalogue

    rng = random.Random(seed)
    users = list(Catalogue.load("US"))
    nanp = [u for u in users if u.phone_number.startswith("+1")]  # a US file's numbers
    served = [u for u in nanp if u.solution_name in ("any", "verified-user")]
    refused = [u for u in nanp if u not in served]  # identity solution: 8009 for this client
    firsts, lasts = first_and_last_names()
    assert len(firsts) * len(lasts) >= rows, "too few names for unique names per row"

    def unique_name(i: int) -> tuple[str, str]:
        return firsts[i % len(firsts)], lasts[(i // len(firsts)) % len(lasts)]

    def nobody() -> str:
        while True:
            number = f"+1{rng.choice(_AREA_CODES)}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"
            if phonenumbers.is_valid_number(phonenumbers.parse(number)) and number[5:8] != "555":
                return number

    stamp = stamp or datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    path = directory / f"{CLIENT}_US_{KIND}_{stamp}.csv"
    generated = GeneratedFile(path, rows)
    expected = generated.expected
    kept: list[list[str]] = []  # earlier valid rows, for duplicates
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(["H", enroll_key, KIND])
        for i in range(rows):
            customer = f"{customers}{i:09d}" if rng.random() < 0.6 else ""
            first, last = unique_name(i)
            if i < len(users):  # each test user once, under their own name
                user = users[i]
                row = ["D", user.phone_number, user.identity.first_name, user.identity.last_name, customer]
                expected[
                    "own name"
                    if user in served
                    else "8009"
                    if user in refused
                    else "ERR_PHONE_COUNTRY_NOTSUPPORTED"
                ] += 1
                kept.append(row)
                writer.writerow(row)
                continue
            draw = rng.random() * 100
            if draw < 74:
                user = rng.choice(served) if rng.random() < 0.9 else rng.choice(refused)
                row = ["D", user.phone_number, first, last, customer]
                expected["test user, other name" if user in served else "8009"] += 1
            elif draw < 86:
                row = ["D", nobody(), first, last, customer]
                expected["8007"] += 1
            elif draw < 88:
                user = rng.choice(served)
                row = ["D", user.phone_number, first, last, customer, "loyaltyId", "issuer-7", f"L{i:08d}"]
                expected["partner row"] += 1
            elif draw < 98.5:
                code = int((draw - 88) // 1.5)
                phone = rng.choice(served).phone_number
                row = [
                    ["D", phone, "", last, customer],
                    ["D", phone, first, "", customer],
                    ["D", "", first, last, customer],
                    ["D", phone, _LONG, last, customer],
                    ["D", rng.choice(_BAD_FORMAT), first, last, customer],
                    ["D", rng.choice(_FOREIGN), first, last, customer],
                    ["D", phone, first, last, customer, "loyaltyId", "", ""],
                ][code]
                expected[
                    (
                        "ERR_MISSING_FNAME",
                        "ERR_MISSING_LNAME",
                        "ERR_MISSING_PHONE",
                        "ERR_FIELD_TOO_LONG",
                        "ERR_FORMAT_PHONE",
                        "ERR_PHONE_COUNTRY_NOTSUPPORTED",
                        "ERR_MISSING_ATTRIBUTE",
                    )[code]
                ] += 1
                writer.writerow(row)
                continue
            else:  # a duplicate: the same row again, or another row with an earlier Client Customer ID
                original = rng.choice(kept[-5000:])
                if original[4] and rng.random() < 0.5:
                    row = ["D", nobody(), first, last, original[4]]
                else:
                    row = list(original)
                expected["ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"] += 1
                writer.writerow(row)
                continue
            kept.append(row)
            if len(kept) > 10_000:
                del kept[:5000]
            writer.writerow(row)
        writer.writerow(["T", rows])
    return generated
