"""Connect's file rules, pure: names, records, the authorization and row checks, the writers, stats
(``phoneid.domain.connect``; the format in docs/connect.md)."""

from __future__ import annotations

import csv
import io
import re
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import pytest

from phoneid.domain.connect.names import batch_id_of, parse_file_name, parse_upload_key, valid_client_name
from phoneid.domain.connect.reader import BatchFileReader
from phoneid.domain.connect.records import MAX_CELL_CHARS, MAX_RECORD_CHARS, Record, read_records
from phoneid.domain.connect.rejection import FileRejected, Rejection
from phoneid.domain.connect.rows import DetailRow, RowChecks, RowError
from phoneid.domain.connect.seen_keys import SeenKeys
from phoneid.domain.connect.stats import BatchStats
from phoneid.domain.connect.writer import (
    ERROR_COLUMNS,
    OUTPUT_COLUMNS,
    CsvLines,
    error_header_record,
    error_outcome,
    gfp_result,
    header_record,
    neutralise,
    rejected_file,
    verified_outcome,
)
from phoneid.domain.credentials import hash_secret
from phoneid.domain.evaluation import Category, Evaluation
from phoneid.domain.verification import VerificationType

ENROLL_KEY = "unit-enroll-key-0001"
FILE = "acme_US_verifiedUser_20261122120000.csv"


@cache
def enroll_key_hash() -> str:
    return hash_secret(ENROLL_KEY)


def read(text: str, file: str = FILE) -> tuple[list[DetailRow], BatchFileReader]:
    name = parse_file_name(file)
    assert name is not None
    reader = BatchFileReader(io.StringIO(text), file=name, enroll_key_hash=enroll_key_hash())
    return list(reader.rows()), reader


def rejection(text: str, file: str = FILE) -> FileRejected:
    with pytest.raises(FileRejected) as caught:
        read(text, file)
    return caught.value


# --- names and keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("acme", True),
        ("ab", True),
        ("a1-b2", True),
        ("x" * 40, True),
        ("x" * 41, False),
        ("a", False),
        ("Acme", False),
        ("acme_corp", False),
        ("1acme", False),
        ("acme-", False),
        ("ac.me", False),
        ("", False),
    ],
)
def test_client_names_follow_one_rule(name: str, valid: bool) -> None:
    # Given a candidate client name / When it is checked / Then the documented rule decides
    assert valid_client_name(name) is valid


def test_transfer_family_users_need_three_characters() -> None:
    # Given a two-character name / When it is to be an AWS Transfer Family user / Then it is refused
    assert valid_client_name("ab") is True
    assert valid_client_name("ab", transfer_user=True) is False
    assert valid_client_name("abc", transfer_user=True) is True


def test_a_file_name_that_follows_the_rule_is_parsed() -> None:
    # Given a well-formed name / When parsed / Then every part is read
    name = parse_file_name("acme-co_INTL_humanAssurance_20261231235959.csv")

    assert name is not None
    assert name.client_name == "acme-co"
    assert name.region == "INTL"
    assert name.verification_type == VerificationType.HUMAN_ASSURANCE
    assert name.timestamp == datetime(2026, 12, 31, 23, 59, 59)
    assert name.stem == "acme-co_INTL_humanAssurance_20261231235959"


@pytest.mark.parametrize(
    "name",
    [
        "acme_US_verifiedUser_20261122120000.CSV",
        "acme_US_verifiedUser_20261122120000.txt",
        "acme_us_verifiedUser_20261122120000.csv",
        "acme_EU_verifiedUser_20261122120000.csv",
        "acme_US_verifieduser_20261122120000.csv",
        "acme_US_prefill_20261122120000.csv",
        "acme_US_verifiedUser_2026112212000.csv",
        "acme_US_verifiedUser_20261322120000.csv",  # month 13
        "acme_US_verifiedUser_20260230120000.csv",  # 30 February
        "acme_US_verifiedUser_20261122246000.csv",
        "acme_US_verifiedUser_00011122120000.csv",
        "Acme_US_verifiedUser_20261122120000.csv",
        "acme_US_verifiedUser_20261122120000.csv.gz",
        "acme_US_verifiedUser_20261122120000_output.csv",
        "acme_US_verifiedUser.csv",
        "",
    ],
)
def test_file_names_outside_the_rule_are_refused(name: str) -> None:
    # Given a name that breaks the rule / When parsed / Then it is refused
    assert parse_file_name(name) is None


def test_upload_keys_name_the_client_and_the_file() -> None:
    # Given keys under and outside an upload directory / When parsed / Then only direct children count
    assert parse_upload_key("clients/acme/upload/x.csv") == ("acme", "x.csv")
    assert parse_upload_key("clients/acme/upload/sub/x.csv") is None
    assert parse_upload_key("clients/acme/download/x.csv") is None
    assert parse_upload_key("elsewhere/x.csv") is None


def test_one_object_version_is_one_batch() -> None:
    # Given one key in two versions / When batch ids are derived / Then they are stable and distinct
    first = batch_id_of("clients/acme/upload/x.csv", "v1")

    assert first == batch_id_of("clients/acme/upload/x.csv", "v1")
    assert first != batch_id_of("clients/acme/upload/x.csv", "v2")
    assert len(first) == 32
    assert int(first, 16) >= 0


# --- records -------------------------------------------------------------------------------------


def good_file(*details: str, count: int | None = None, newline: str = "\n") -> str:
    lines = [f"H,{ENROLL_KEY},verifiedUser", *details, f"T,{len(details) if count is None else count}"]
    return newline.join(lines) + newline


def test_a_well_formed_file_yields_its_detail_rows_with_line_numbers() -> None:
    # Given a header, two details and a trailer / When read / Then the rows come with their lines
    rows, reader = read(good_file("D,+12025550142,Noor,Haddad,c-1", "D,+12025550143,Ada,Lovelace"))

    assert reader.detail_rows == 2
    assert rows[0] == DetailRow(2, "+12025550142", "Noor", "Haddad", "c-1")
    assert rows[1].line == 3
    assert rows[1].client_customer_id == ""


def test_bom_crlf_quoted_fields_and_blank_lines_are_read() -> None:
    # Given a BOM, CRLF line ends, quoted fields (a comma, a quote, a line break) and blank lines
    text = (
        "\ufeffH,"
        + ENROLL_KEY
        + ",verifiedUser\r\n\r\n"
        + 'D,+12025550142,"Noor, Jr","O""Hara"\r\n'
        + 'D,+12025550143,"Ada\r\nMarie",Lovelace\r\n'
        + ",,,\r\nT,2\r\n\r\n"
    )

    # When read
    rows, _ = read(text)

    # Then the fields are as written and the lines are physical lines
    assert [(r.line, r.first_name, r.last_name) for r in rows] == [
        (3, "Noor, Jr", 'O"Hara'),
        (4, "Ada\nMarie", "Lovelace"),
    ]


def test_surrounding_whitespace_and_lowercase_record_types_are_accepted() -> None:
    # Given padded fields and lowercase record types / When read / Then the values are stripped
    rows, _ = read(f" h , {ENROLL_KEY} , verifiedUser\nd, +12025550142 , Noor , Haddad \nt, 1\n")

    assert rows == [DetailRow(2, "+12025550142", "Noor", "Haddad")]


def test_missing_trailing_fields_are_empty_and_extra_fields_ignored() -> None:
    # Given a short row and a long row / When read / Then missing fields are "" and extras dropped
    rows, _ = read(good_file("D,+12025550142", "D,+12025550143,A,B,c,t,i,v,extra,more"))

    assert rows[0] == DetailRow(2, "+12025550142")
    assert rows[1] == DetailRow(3, "+12025550143", "A", "B", "c", "t", "i", "v")


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ("", Rejection.FILE_EMPTY, None),
        ("\n\r\n,,\n", Rejection.FILE_EMPTY, None),
        ("H,wrong-key,verifiedUser\nD,+12025550142,A,B\nT,1\n", Rejection.ENROLL_KEY_INVALID, 1),
        ("H,,verifiedUser\nD,+12025550142,A,B\nT,1\n", Rejection.ENROLL_KEY_INVALID, 1),
        ("H\nD,+12025550142,A,B\nT,1\n", Rejection.ENROLL_KEY_INVALID, 1),
        (f"H,{ENROLL_KEY},humanAssurance\nD,+12025550142,A,B\nT,1\n", Rejection.TYPE_MISMATCH, 1),
        (f"H,{ENROLL_KEY}\nD,+12025550142,A,B\nT,1\n", Rejection.TYPE_MISMATCH, 1),
        ("D,+12025550142,A,B\nT,1\n", Rejection.HEADER_MISSING, 1),
        ("T,0\n", Rejection.HEADER_MISSING, 1),
        (f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\n", Rejection.TRAILER_MISSING, None),
        (f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT,2\n", Rejection.TRAILER_COUNT_MISMATCH, 3),
        (f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT,0\n", Rejection.TRAILER_COUNT_MISMATCH, 3),
        (
            f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT,{'9' * 5000}\n",
            Rejection.TRAILER_COUNT_MISMATCH,
            3,
        ),
        (f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT,one\n", Rejection.TRAILER_INVALID, 3),
        (f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT\n", Rejection.TRAILER_INVALID, 3),
        (f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT,1\nD,+1,A,B\n", Rejection.TRAILER_NOT_LAST, 4),
        (f"H,{ENROLL_KEY},verifiedUser\nT,1\nT,1\n", Rejection.TRAILER_NOT_LAST, 3),
        (f"H,{ENROLL_KEY},verifiedUser\n", Rejection.NO_DETAIL_ROWS, None),
        (f"H,{ENROLL_KEY},verifiedUser\nT,0\n", Rejection.NO_DETAIL_ROWS, None),
        (
            f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nH,{ENROLL_KEY},verifiedUser\nT,1\n",
            Rejection.HEADER_NOT_FIRST,
            3,
        ),
        (f"H,{ENROLL_KEY},verifiedUser\nX,+12025550142,A,B\nT,1\n", Rejection.RECORD_TYPE_UNKNOWN, 2),
        ('{"records": [1, 2, 3]}\n', Rejection.NOT_CSV, 1),
        ("<html><body>hello</body></html>\n", Rejection.NOT_CSV, 1),
        (f'H,{ENROLL_KEY},verifiedUser\nD,+12025550142,"A,B\nT,1\n', Rejection.NOT_CSV, 2),
        (f'H,{ENROLL_KEY},verifiedUser\nD,+12025550142,"A"x,B\nT,1\n', Rejection.NOT_CSV, 2),
        (f"H,{ENROLL_KEY},verifiedUser\nD,+1202\x005550142,A,B\nT,1\n", Rejection.CONTENT_UNREADABLE, None),
    ],
)
def test_each_broken_file_is_rejected_with_its_reason(text: str, reason: Rejection, line: int | None) -> None:
    # Given a file that breaks one structural rule / When read / Then the whole file is rejected
    rejected = rejection(text)

    assert rejected.reason == reason
    assert rejected.line == line
    assert rejected.message.startswith(reason.message)
    assert ENROLL_KEY not in rejected.message


def test_a_trailer_count_of_thousands_of_digits_is_a_mismatch_said_in_a_short_message() -> None:
    # Given a trailer whose count has more digits than Python's int() reads (4,300)
    text = f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT,{'12345' * 1000}\n"

    # When read / Then the file is rejected as a count that differs, its count described, not repeated
    rejected = rejection(text)
    assert rejected.reason == Rejection.TRAILER_COUNT_MISMATCH
    assert "The trailer says a number of 5000 digits; the file has 1." in rejected.message


def test_a_trailer_count_with_thousands_of_leading_zeros_is_still_its_count() -> None:
    # Given a trailer of 1 written with 5,000 leading zeros / When read / Then the file is read
    rows, _ = read(f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT,{'0' * 5000}1\n")
    assert rows == [DetailRow(2, "+12025550142", "A", "B")]


def test_bytes_that_are_not_utf8_are_unreadable() -> None:
    # Given bytes that do not decode / When read through a strict UTF-8 decoder / Then rejected
    name = parse_file_name(FILE)
    assert name is not None
    binary = io.TextIOWrapper(io.BytesIO(b"\x89PNG\r\n\x1a\n\x00\xff\xfe" * 50), encoding="utf-8", newline="")
    reader = BatchFileReader(binary, file=name, enroll_key_hash=enroll_key_hash())

    with pytest.raises(FileRejected) as caught:
        list(reader.rows())

    assert caught.value.reason == Rejection.CONTENT_UNREADABLE


def test_the_enroll_key_is_checked_before_the_type() -> None:
    # Given a header with a wrong key and a wrong type / When read / Then the key is what is reported
    assert (
        rejection("H,nope,humanAssurance\nD,+12025550142,A,B\nT,1\n").reason == Rejection.ENROLL_KEY_INVALID
    )


def test_a_malformed_stored_hash_matches_no_key() -> None:
    # Given a profile whose stored hash is damaged / When a file is read / Then the key does not match
    name = parse_file_name(FILE)
    assert name is not None
    reader = BatchFileReader(io.StringIO(good_file("D,+12025550142,A,B")), file=name, enroll_key_hash="junk")

    with pytest.raises(FileRejected) as caught:
        list(reader.rows())

    assert caught.value.reason == Rejection.ENROLL_KEY_INVALID


def test_records_are_read_lazily() -> None:
    # Given an endless supply of lines / When the first two records are taken / Then reading stops there
    def endless() -> object:
        yield f"H,{ENROLL_KEY},verifiedUser\n"
        n = 0
        while True:
            n += 1
            yield f"D,+1202555{n:04d},A,B\n"

    records = read_records(endless())  # type: ignore[arg-type]

    assert next(records)[0] == 1
    assert next(records) == Record(2, ["D", "+12025550001", "A", "B"])


TRICKY = (
    "\ufeffH,key,verifiedUser\r\n\r\n"
    'D,+12025550142,"Noor, Jr","O""Hara",,,,,extra,"more\r\nlines",x\r\n'
    'D,+12025550143,"Ada\r\nMarie\rAnn\nLee",Lovelace\r'
    '  ,\t, \r\n,,,,,,,,,"past the eighth cell"\n'
    'D,+12025550144,A,"B"\r\n'
    "T,3"
)


def reference_records(text: str) -> list[Record]:
    """What the stdlib csv reader (strict) makes of the text, read as lines: the reading rules."""
    lines = [line + "\n" for line in re.split("\r\n|\r|\n", text.removeprefix("\ufeff"))]
    reader = csv.reader(lines, strict=True)
    records, start = [], 1
    for fields in reader:
        line, start = start, reader.line_num + 1
        if any(field.strip() for field in fields[:8]):
            records.append(Record(line, fields[:8]))
    return records


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 64, 10_000])
def test_records_are_the_same_whatever_pieces_the_text_comes_in(size: int) -> None:
    # Given a text with a BOM, CR, LF and CRLF line ends, quoted cells over several lines, blank
    # records and cells past the eighth, cut into pieces of one size (CRLFs and quotes split too)
    pieces = [TRICKY[n : n + size] for n in range(0, len(TRICKY), size)]

    # When read / Then the records are the csv module's, cells past the eighth dropped
    assert list(read_records(pieces)) == reference_records(TRICKY)
    assert [record.line for record in read_records(pieces)] == [1, 3, 5, 11, 12]


def test_a_cell_over_the_limit_is_its_rows_error_and_the_file_goes_on() -> None:
    # Given a file whose second row has a last name of 131,073 characters (one over the limit)
    long_name = "x" * (MAX_CELL_CHARS + 1)
    text = good_file(
        "D,+12025550142,Noor,Haddad", f"D,+12025550143,Ada,{long_name},c-2", "D,+12025550144,Al,Tu"
    )

    # When read and checked
    rows, reader = read(text)

    # Then that row is ERR_FIELD_TOO_LONG with its cell cut to the limit; the others are read on
    assert reader.detail_rows == 3
    assert [(r.line, r.too_long) for r in rows] == [(2, False), (3, True), (4, False)]
    assert len(rows[1].last_name) == MAX_CELL_CHARS
    assert rows[1].client_customer_id == "c-2"
    assert check(*rows) == [None, RowError.ERR_FIELD_TOO_LONG, None]


def test_a_cell_at_the_limit_is_read_whole() -> None:
    # Given a cell of exactly 131,072 characters past the columns Connect reads
    rows, _ = read(good_file(f"D,+12025550142,Noor,Haddad,,,,,{'y' * MAX_CELL_CHARS}"))

    # Then the row is within the limits
    assert rows[0].too_long is False
    assert check(*rows) == [None]


def test_a_quoted_cell_over_many_lines_over_the_limit_is_one_rows_error() -> None:
    # Given a quoted first name of 70,000 short lines (140,000 characters), then a good row
    name = "a\r\n" * 70_000
    text = good_file(f'D,+12025550142,"{name}",Haddad', "D,+12025550143,Ada,Lovelace")

    rows, _ = read(text)

    # Then the long row is cut and flagged; the next row starts where the quote closed
    assert [(r.line, r.too_long) for r in rows] == [(2, True), (70_003, False)]
    assert check(*rows) == [RowError.ERR_FIELD_TOO_LONG, None]


def test_a_record_over_the_record_limit_is_its_rows_error() -> None:
    # Given a row whose cells are each short but which runs past 1 MiB characters in all
    rest = ",z" * (MAX_RECORD_CHARS // 2)
    rows, _ = read(good_file(f"D,+12025550142,Noor,Haddad{rest}", "D,+12025550143,Ada,Lovelace"))

    assert [(r.line, r.too_long) for r in rows] == [(2, True), (3, False)]
    assert rows[0].last_name == "Haddad"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (f"H,{ENROLL_KEY},verifiedUser,{'x' * (MAX_CELL_CHARS + 1)}\nD,+12025550142,A,B\nT,1\n", 1),
        (f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,A,B\nT,{'1' * (MAX_CELL_CHARS + 1)}\n", 3),
        ("x" * (MAX_CELL_CHARS * 3), 1),  # a file that is one long line
    ],
)
def test_a_header_or_trailer_over_the_limits_is_not_a_connect_file(text: str, line: int) -> None:
    rejected = rejection(text)

    assert (rejected.reason, rejected.line) == (Rejection.NOT_CSV, line)


def test_a_record_blank_in_the_eight_columns_is_skipped() -> None:
    # Given a record with text only past its eighth cell / When read / Then it is blank, as ",,," is
    rows, _ = read(good_file("D,+12025550142,A,B", ",,,,,,,,,text past the columns", count=1))

    assert [r.line for r in rows] == [2]


def test_a_long_line_is_read_in_pieces_without_being_held() -> None:
    # Given a 32 MiB line that arrives in 64 KiB pieces (as the S3 adapter reads it)
    piece = "x" * 65_536

    def text() -> Iterator[str]:
        yield f"H,{ENROLL_KEY},verifiedUser\nD,+12025550142,Noor,"
        for _ in range(512):
            yield piece
        yield "\nD,+12025550143,Ada,Lovelace\nT,2\n"

    # When it is read, memory traced
    tracemalloc.start()
    try:
        name = parse_file_name(FILE)
        assert name is not None
        rows = list(BatchFileReader(text(), file=name, enroll_key_hash=enroll_key_hash()).rows())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    # Then the row is too long, the next is read, and no more than the kept cell (and a piece) was held
    assert [(r.line, r.too_long) for r in rows] == [(2, True), (3, False)]
    assert peak < 4 * 1024 * 1024


# --- row checks ----------------------------------------------------------------------------------


def check(
    *rows: DetailRow, region: str = "US", allowed: frozenset[str] | None = None
) -> list[RowError | None]:
    checks = RowChecks(
        "US" if region == "US" else "INTL",
        "US",
        (lambda country: country in allowed) if allowed is not None else None,
    )
    return [checks.check(row) for row in rows]


def row(phone: str = "+12025550142", first: str = "Noor", last: str = "Haddad", *rest: str) -> DetailRow:
    return DetailRow.of(2, ["D", phone, first, last, *rest])


@pytest.mark.parametrize(
    ("detail", "region", "code"),
    [
        (row(first=""), "US", RowError.ERR_MISSING_FNAME),
        (row(last=""), "US", RowError.ERR_MISSING_LNAME),
        (row(phone=""), "US", RowError.ERR_MISSING_PHONE),
        (row(phone="", first=""), "US", RowError.ERR_MISSING_FNAME),
        (row(phone="2025550142"), "US", RowError.ERR_FORMAT_PHONE),
        (row(phone="+1202555014"), "US", RowError.ERR_FORMAT_PHONE),
        (row(phone="+15551234567"), "US", RowError.ERR_FORMAT_PHONE),
        (row(phone="+1 202 555 0142 ext 99999999999999"), "US", RowError.ERR_FORMAT_PHONE),
        (row(phone="call me"), "US", RowError.ERR_FORMAT_PHONE),
        (row(phone="+61412345678"), "US", RowError.ERR_PHONE_COUNTRY_NOTSUPPORTED),
        (row(phone="+12025550142"), "INTL", RowError.ERR_PHONE_COUNTRY_NOTSUPPORTED),
        (row(phone="+14165550123"), "INTL", RowError.ERR_PHONE_COUNTRY_NOTSUPPORTED),
        (row(phone="+4915112345678"), "INTL", RowError.ERR_PHONE_COUNTRY_NOTSUPPORTED),  # an EU-stack number
        (row("+12025550142", "Noor", "Haddad", "c-1", "loyalty"), "US", RowError.ERR_MISSING_ATTRIBUTE),
        (row("+12025550142", "Noor", "Haddad", "c-1", "", "issuer"), "US", RowError.ERR_MISSING_ATTRIBUTE),
        (row("+12025550142", "Noor", "Haddad", "", "loyalty", "", "v"), "US", RowError.ERR_MISSING_ATTRIBUTE),
        (row(first="N" * 129), "US", RowError.ERR_FIELD_TOO_LONG),
        (row("+12025550142", "Noor", "Haddad", "c" * 129), "US", RowError.ERR_FIELD_TOO_LONG),
        (row("+12025550142", "Noor", "Haddad", "", "t" * 65, "i", "v"), "US", RowError.ERR_FIELD_TOO_LONG),
        (row("+12025550142", "Noor", "Haddad", "", "t", "i", "v" * 257), "US", RowError.ERR_FIELD_TOO_LONG),
    ],
)
def test_each_row_error_has_its_code(detail: DetailRow, region: str, code: RowError) -> None:
    # Given a row that breaks one row rule / When checked / Then it gets that rule's code
    assert check(detail, region=region) == [code]


@pytest.mark.parametrize(
    ("phone", "region"),
    [
        ("+12025550142", "US"),
        ("+14165550123", "US"),  # Canada
        ("+18765550123", "US"),  # Jamaica: NANP, served by the US region
        ("+1 (202) 555-0143", "US"),
        ("+61412345678", "INTL"),
        ("+819012345678", "INTL"),
    ],
)
def test_numbers_of_the_files_region_are_valid(phone: str, region: str) -> None:
    # Given a number of the file's region / When checked / Then the row is valid
    assert check(row(phone=phone), region=region) == [None]


def test_partner_rows_with_all_three_attributes_are_valid() -> None:
    # Given a partner row with Attribute Type, Issuer ID and Attribute Value / When checked / Then valid
    assert check(row("+12025550142", "Noor", "Haddad", "c-1", "loyalty", "issuer-9", "L-123")) == [None]


def test_countries_the_client_may_not_use_are_not_supported() -> None:
    # Given a client allowed only the US / When a Canadian number is checked / Then not supported
    assert check(row(phone="+14165550123"), allowed=frozenset({"US"})) == [
        RowError.ERR_PHONE_COUNTRY_NOTSUPPORTED
    ]


def test_duplicates_by_number_and_names_keep_the_first() -> None:
    # Given the same person on the same number twice, spelled differently, and another person there
    rows = [
        row("+12025550142", "Noor", "Haddad"),
        row("+1 202-555-0142", " NOOR ", "haddad"),
        row("+12025550142", "Noór", "Haddad."),
        row("+12025550142", "Sami", "Haddad"),
    ]

    # When checked in order / Then the later copies are duplicates; another person is not
    assert check(*rows) == [
        None,
        RowError.ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED,
        RowError.ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED,
        None,
    ]


def test_duplicates_by_client_customer_id_keep_the_first() -> None:
    # Given two people under one Client Customer ID / When checked / Then the second is a duplicate
    assert check(
        row("+12025550142", "Noor", "Haddad", "cust-1"),
        row("+12025550143", "Ada", "Lovelace", "cust-1"),
        row("+12025550144", "Alan", "Turing", "cust-2"),
    ) == [None, RowError.ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED, None]


def test_an_invalid_row_is_no_original() -> None:
    # Given an invalid row, then the same data made valid / When checked / Then the valid one is kept
    assert check(
        row("+12025550142", "Noor", "Haddad", "cust-1", "loyalty"),
        row("+12025550142", "Noor", "Haddad", "cust-1"),
    ) == [RowError.ERR_MISSING_ATTRIBUTE, None]


def test_seen_keys_grow_and_stay_compact() -> None:
    # Given 100,000 distinct keys / When added / Then all are members, no other is, and the table is small
    seen = SeenKeys()
    for n in range(100_000):
        seen.add(f"k{n}")

    assert len(seen) == 100_000
    assert all(f"k{n}" in seen for n in range(0, 100_000, 997))
    assert "k100000" not in seen
    assert seen.table_bytes <= 32 * 100_000
    seen.add("k5")
    assert len(seen) == 100_000


# --- writing -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("+12025550142", "+12025550142"),
        ("+1 (202) 555-0142", "+1 (202) 555-0142"),
        ("-42.5", "-42.5"),
        ("Noor", "Noor"),
        ("", ""),
    ],
)
def test_cells_that_a_spreadsheet_would_run_are_neutralised(cell: str, written: str) -> None:
    # Given a cell / When written / Then formulas get a leading apostrophe and phone numbers stay
    assert neutralise(cell) == written


def test_csv_lines_quote_and_neutralise() -> None:
    # Given cells with a comma, a quote and a formula / When written as a line / Then csv reads them back
    line = CsvLines().line(["D", "Noor, Jr", 'O"Hara', "=1+1"])

    assert line.endswith("\r\n")
    assert next(csv.reader([line])) == ["D", "Noor, Jr", 'O"Hara', "'=1+1"]


def test_output_cells_of_a_verified_and_a_failed_row() -> None:
    # Given a partner row verified with a pass, and one that failed two authentication rules
    detail = row("+12025550142", "Noor", "Haddad", "c-1", "loyalty", "issuer-9", "L-123")
    passed = verified_outcome(
        detail,
        passed=True,
        evaluation=Evaluation({Category.AUTHENTICATION: (), Category.RISK: ()}),
        assurance_level="AL-3",
        assurance_reasons=("CE", "SC"),
        phone_alias="ALIAS",
        service_id="svc-1",
    )
    failed = verified_outcome(
        detail,
        passed=False,
        evaluation=Evaluation({Category.AUTHENTICATION: (9135, 9137), Category.IDENTIFICATION: ()}),
        assurance_level="AL-1",
        assurance_reasons=(),
        phone_alias="ALIAS",
        service_id=None,
    )

    # When turned into output columns / Then the columns follow the documented order
    assert dict(zip(OUTPUT_COLUMNS, passed.cells, strict=True)) == {
        "Record Type": "D",
        "Phone Number": "+12025550142",
        "First Name": "Noor",
        "Last Name": "Haddad",
        "Client Customer ID": "c-1",
        "Attribute Type": "loyalty",
        "Issuer ID": "issuer-9",
        "Attribute Value": "L-123",
        "Assurance Level": "AL-3",
        "Assurance Level Reason Codes": "CE;SC",
        "Service Phone Alias": "ALIAS",
        "ServiceID": "svc-1",
        "Error": "",
        "Error Message": "",
        "GFP Authentication Result": "pass",
        "GFP Risk Result": "pass",
    }
    assert passed.enrolled
    assert passed.passed
    assert passed.reasons == ()
    assert failed.cells[OUTPUT_COLUMNS.index("GFP Authentication Result")] == "fail:9135;9137"
    assert failed.cells[OUTPUT_COLUMNS.index("GFP Risk Result")] == ""
    assert failed.reasons == (9135, 9137)
    assert not failed.enrolled


def test_an_error_row_carries_the_code_and_message_only() -> None:
    # Given a row the verification refused / When its outcome is made / Then only Error columns are filled
    outcome = error_outcome(row(), "8010", "Unauthorized for country")
    columns = dict(zip(OUTPUT_COLUMNS, outcome.cells, strict=True))

    assert (columns["Error"], columns["Error Message"]) == ("8010", "Unauthorized for country")
    assert columns["Assurance Level"] == columns["ServiceID"] == columns["GFP Risk Result"] == ""
    assert outcome.error == "8010"
    assert type(outcome).from_json(outcome.to_json()) == outcome


def test_gfp_result_of_an_unevaluated_category_is_empty() -> None:
    # Given an evaluation without a risk category / When shown / Then the risk result is empty
    assert gfp_result(Evaluation({}), Category.RISK) == ""


def test_the_rejected_file_explains_why() -> None:
    # Given a rejection at line 3 / When the rejected file is written / Then it names file, code and reason
    text = rejected_file(
        "=evil.csv", FileRejected(Rejection.TRAILER_COUNT_MISMATCH, "The trailer says 2.", 3)
    )

    assert list(csv.reader(io.StringIO(text))) == [
        ["File", "'=evil.csv"],
        ["Reason Code", "TRAILER_COUNT_MISMATCH"],
        ["Reason", f"{Rejection.TRAILER_COUNT_MISMATCH.message} The trailer says 2. (line 3)"],
        ["Line", "3"],
    ]


def test_detail_rows_survive_their_chunk_json() -> None:
    # Given a row with every field / When written to a chunk and read back / Then nothing changes
    detail = DetailRow(7, "+12025550142", "Noor", "Haddad", "c", "t", "i", "v")

    assert DetailRow.from_json(detail.to_json()) == detail
    assert DetailRow.from_json(DetailRow(8, "+1", "A", "B").to_json()) == DetailRow(8, "+1", "A", "B")


# --- statistics ----------------------------------------------------------------------------------


def test_stats_round_trip_through_the_batch_counts_and_read_as_text() -> None:
    # Given statistics of a batch that took 75 seconds
    start = datetime(2026, 11, 22, 12, tzinfo=UTC)
    stats = BatchStats(
        rows_read=10,
        valid=7,
        rejected_by_code={"ERR_FORMAT_PHONE": 2, "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED": 1},
        verified=4,
        not_verified=2,
        enrolled=4,
        failed_by_reason={"9135": 2},
        errors_by_code={"8010": 1},
        started_at=start,
        finished_at=start + timedelta(seconds=75),
    )

    # When stored as counts and read back, and shown
    again = BatchStats.from_counts(stats.counts(), stats.started_at, stats.finished_at)
    text = stats.text()

    # Then nothing is lost and the email text lists every figure
    assert again == stats
    assert stats.duplicates == 1
    assert stats.rejected == 3
    assert stats.to_json()["processingSeconds"] == 75.0
    for expected in (
        "Rows read: 10",
        "Valid rows: 7",
        "Rejected rows: 3",
        "  ERR_FORMAT_PHONE: 2",
        "Duplicates: 1",
        "Verified (passed): 4",
        "Enrolled: 4",
        "  9135 (Possible takeover: SIM swap under 24 hours): 2",
        "  8010: 1",
        "Processing time: 1 min 15 s",
    ):
        assert expected in text


def test_the_header_records_carry_no_column_names_and_the_docs_name_the_columns_in_order() -> None:
    # The file specification fixes the header records (docs/connect.md#writing-the-files): the output
    # header is H alone, the error header H and the type; the column names are the documentation's.
    lines = CsvLines()
    document = " ".join((Path(__file__).resolve().parents[2] / "docs/connect.md").read_text().split())

    assert lines.line(header_record()) == "H\r\n"
    assert lines.line(error_header_record("verifiedUser")) == "H,verifiedUser\r\n"
    assert "output `D` records: " + ", ".join(f"`{name}`" for name in OUTPUT_COLUMNS) + ";" in document
    assert "error `D` records: " + ", ".join(f"`{name}`" for name in ERROR_COLUMNS) + "." in document
