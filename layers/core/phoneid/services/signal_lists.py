"""Loading the operator's signal lists from JSON Lines or CSV (``phoneid signals import KIND FILE``).

Each kind of list has one record shape. Every record is validated first and, unless told to skip
invalid ones, one bad record means nothing is written. Rejections name the line and the fields,
never their values. Entries are stored under the keys of ``phoneid.domain.lists``, so lookups of
the fraud policy find them however the operator spelled them; an SSN is stored only as its keyed
MAC.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from phoneid.domain import lists
from phoneid.domain.phone import InvalidPhoneNumber, Region, parse_phone
from phoneid.domain.signals import ListEntry, ListKind
from phoneid.ports import CodeMac, SignalLists
from phoneid.services.operator_files import jsonl_records

FORMATS = ("jsonl", "csv")


def _full_date(text: str) -> str:
    date.fromisoformat(text)  # a ValueError names no value: "month must be in 1..12"
    return text


def _iso_datetime(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 date and time")
    return datetime.fromisoformat(value.strip())


def _with_offset(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("must give its UTC offset (e.g. Z or +02:00)")
    return moment.astimezone(UTC)


def _line_type(text: str) -> str:
    if text not in lists.LINE_TYPES:
        raise ValueError(f"must be one of {', '.join(lists.LINE_TYPES)}")
    return text


Phone = Annotated[str, Field(min_length=1, max_length=32)]
Text = Annotated[str, Field(min_length=1, max_length=256)]
FullDate = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$"), AfterValidator(_full_date)]
Moment = Annotated[datetime, BeforeValidator(_iso_datetime), AfterValidator(_with_offset)]
FullSsn = Annotated[str, Field(pattern=r"^(\d{9}|\d{3}-\d{2}-\d{4})$")]


class ListRecord(BaseModel):
    """One record of a list file; subclasses give each kind's fields and its entries."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)
    kind: ClassVar[ListKind]

    def phone_text(self) -> str | None:
        return None

    def entries(self, phone: str | None, mac: CodeMac) -> list[ListEntry]:
        """The entries this record adds, under their keys (``phone``: the number in E.164)."""
        raise NotImplementedError


class _NumberRecord(ListRecord):
    phoneNumber: Phone

    def phone_text(self) -> str | None:
        return self.phoneNumber

    def entry_values(self) -> dict[str, Any]:
        return {}

    def entries(self, phone: str | None, mac: CodeMac) -> list[ListEntry]:
        assert phone is not None
        return [ListEntry(self.kind, lists.phone_key(phone), self.entry_values())]


class PublicSmsRecord(_NumberRecord):
    """Numbers whose text messages are posted publicly (receive-SMS-online sites)."""

    kind = ListKind.PUBLIC_SMS


class LineTypeRecord(_NumberRecord):
    """The operator's line-type registry; overrides what the numbering plan says."""

    kind = ListKind.LINE_TYPES
    lineType: Annotated[str, AfterValidator(_line_type)]

    def entry_values(self) -> dict[str, Any]:
        return {"lineType": self.lineType}


class SimTrustRecord(_NumberRecord):
    """A trust score of the number's SIM, 0 (untrusted) to 100."""

    kind = ListKind.SIM_TRUST
    score: Annotated[int, Field(ge=0, le=100)]

    def entry_values(self) -> dict[str, Any]:
        return {"score": self.score}


class BotNumberRecord(_NumberRecord):
    """Numbers linked to bot activity."""

    kind = ListKind.BOT_NUMBERS


class PortEventRecord(_NumberRecord):
    """When the number was last ported to another carrier (ISO 8601 with offset)."""

    kind = ListKind.PORT_EVENTS
    portedAt: Moment

    def entry_values(self) -> dict[str, Any]:
        return {"portedAt": self.portedAt.isoformat()}


class AmlRecord(ListRecord):
    """A watch-list person: name, and birth date when the list gives one (YYYY-MM-DD)."""

    kind = ListKind.AML
    firstName: Text
    lastName: Text
    dob: FullDate | None = None
    listName: Text | None = None

    def entries(self, phone: str | None, mac: CodeMac) -> list[ListEntry]:
        # Stored under the most specific key: a listed birth date must match the claimed one.
        key = lists.name_key(self.firstName, self.lastName, self.dob)[-1]
        return [ListEntry(self.kind, key, {"listNames": [self.listName] if self.listName else []})]


class CorrectionalAddressRecord(ListRecord):
    """The street address of a correctional facility, with a postal code or city and region."""

    kind = ListKind.CORRECTIONAL_ADDRESSES
    address: Text
    postalCode: Annotated[str, Field(min_length=1, max_length=32)] | None = None
    city: Text | None = None
    region: Text | None = None
    facility: Text | None = None

    def keys(self) -> tuple[str, ...]:
        return lists.address_keys(self.address, self.postalCode, self.city, self.region)

    def entries(self, phone: str | None, mac: CodeMac) -> list[ListEntry]:
        values = {"facility": self.facility} if self.facility else {}
        return [ListEntry(self.kind, self.keys()[-1], values)]


class DeceasedRecord(ListRecord):
    """A deceased person's number, SSN, or both."""

    kind = ListKind.DECEASED
    phoneNumber: Phone | None = None
    ssn: FullSsn | None = None

    def phone_text(self) -> str | None:
        return self.phoneNumber

    def entries(self, phone: str | None, mac: CodeMac) -> list[ListEntry]:
        found: list[ListEntry] = []
        if phone is not None:
            found.append(ListEntry(self.kind, lists.phone_key(phone)))
        if self.ssn is not None:
            found.append(ListEntry(self.kind, mac.digest(lists.ssn_mac_input(self.ssn))))
        return found


class SsnIssuanceRecord(ListRecord):
    """When SSNs of an area and group (their first five digits) were issued: from, and optionally to."""

    kind = ListKind.SSN_ISSUANCE
    areaGroup: Annotated[str, Field(pattern=r"^\d{3}-?\d{2}$")]
    issuedFrom: FullDate
    issuedTo: FullDate | None = None

    def entries(self, phone: str | None, mac: CodeMac) -> list[ListEntry]:
        values = {"issuedFrom": self.issuedFrom, "issuedTo": self.issuedTo}
        group = self.areaGroup.replace("-", "")
        return [ListEntry(self.kind, group, {k: v for k, v in values.items() if v is not None})]


RECORDS: dict[ListKind, type[ListRecord]] = {
    record.kind: record
    for record in (
        PublicSmsRecord,
        LineTypeRecord,
        SimTrustRecord,
        BotNumberRecord,
        PortEventRecord,
        AmlRecord,
        CorrectionalAddressRecord,
        DeceasedRecord,
        SsnIssuanceRecord,
    )
}


@dataclass(frozen=True)
class RecordField:
    name: str
    required: bool


def record_fields(kind: ListKind) -> list[RecordField]:
    """The fields of a kind's records, in file order (CSV header order)."""
    return [RecordField(name, info.is_required()) for name, info in RECORDS[kind].model_fields.items()]


def describe(kind: ListKind) -> str:
    text = (RECORDS[kind].__doc__ or "").strip()
    if kind == ListKind.LINE_TYPES:
        text += f" lineType: {', '.join(lists.LINE_TYPES)}."
    return text


def _problems(record: ListRecord) -> str | None:
    """What makes a record of valid fields unusable; None when it is usable."""
    if isinstance(record, CorrectionalAddressRecord):
        if not record.postalCode and not (record.city and record.region):
            return "needs postalCode, or city and region"
        if not record.keys():
            return "invalid fields: address"
    if isinstance(record, DeceasedRecord) and not (record.phoneNumber or record.ssn):
        return "needs phoneNumber or ssn"
    return None


def _merge(old: ListEntry, new: ListEntry) -> ListEntry:
    """Two records of one file under the same key: watch-list names add up, the latest port
    counts, otherwise the later record wins."""
    if new.kind == ListKind.AML:
        names = sorted({*old.values.get("listNames", ()), *new.values.get("listNames", ())})
        return replace(new, values={"listNames": names})
    if new.kind == ListKind.PORT_EVENTS:
        return max(old, new, key=lambda e: datetime.fromisoformat(str(e.values["portedAt"])))
    return new


@dataclass(frozen=True)
class ImportReport:
    imported: int  # records imported
    entries: int  # entries written (a deceased record with number and SSN gives two)
    # (line number, reason) for each rejected record; reasons never contain the values.
    rejected: list[tuple[int, str]]


def _csv_records(text: str, kind: ListKind) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or ()]
    fields = record_fields(kind)
    missing = [f.name for f in fields if f.required and f.name not in header]
    if missing:
        raise ValueError(f"CSV header lacks columns: {', '.join(missing)}")
    unknown = [name for name in header if name not in {f.name for f in fields}]
    if unknown:
        raise ValueError(f"CSV header has columns {kind.value} records do not: {', '.join(unknown)}")
    reader.fieldnames = header
    for row in reader:
        # An empty cell is an absent field.
        yield reader.line_num, {k: v for k, v in row.items() if k is not None and v not in (None, "")}


def _reason(error: ValidationError) -> str:
    fields: set[str] = set()
    messages: list[str] = []
    for each in error.errors():
        location = ".".join(str(part) for part in each["loc"])
        if location:
            fields.add(location)
        elif each["type"] == "value_error":  # our own record-level rules; they name fields only
            messages.append(str(each["msg"]).removeprefix("Value error, "))
        else:
            fields.add("record")
    parts = ([f"invalid fields: {', '.join(sorted(fields))}"] if fields else []) + messages
    return "; ".join(parts)


class SignalListImport:
    """Imports one list file through the ``SignalLists`` port; SSNs are keyed by ``mac``."""

    def __init__(self, lists_store: SignalLists, mac: CodeMac, region: Region) -> None:
        self._store = lists_store
        self._mac = mac
        self._region = region

    def run(self, kind: ListKind, text: str, fmt: str, *, skip_invalid: bool = False) -> ImportReport:
        """Validate every record first; unless ``skip_invalid``, one bad record means nothing is written.

        Raises ``ValueError`` (naming columns, never values) for a CSV header that does not fit the kind.
        """
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}")
        model = RECORDS[kind]
        rows = _csv_records(text, kind) if fmt == "csv" else jsonl_records(text)
        accepted: list[tuple[ListRecord, str | None]] = []
        rejected: list[tuple[int, str]] = []
        for line, raw in rows:
            try:
                record = model.model_validate(raw)
            except ValidationError as error:
                rejected.append((line, _reason(error)))
                continue
            problem = _problems(record)
            if problem:
                rejected.append((line, problem))
                continue
            phone_text = record.phone_text()
            try:
                phone = parse_phone(phone_text, self._region).e164 if phone_text else None
            except InvalidPhoneNumber as error:
                rejected.append((line, f"phoneNumber {error}"))
                continue
            accepted.append((record, phone))
        if rejected and not skip_invalid:
            return ImportReport(imported=0, entries=0, rejected=rejected)
        entries: dict[str, ListEntry] = {}
        for record, phone in accepted:
            for entry in record.entries(phone, self._mac):
                earlier = entries.get(entry.key)
                entries[entry.key] = _merge(earlier, entry) if earlier else entry
        written = self._store.put_many(entries.values()) if entries else 0
        return ImportReport(imported=len(accepted), entries=written, rejected=rejected)


def field_summary(fields: list[RecordField]) -> str:
    """``firstName lastName [dob] [listName]``: optional fields in brackets."""
    return " ".join(f.name if f.required else f"[{f.name}]" for f in fields)


def as_mapping(kind: ListKind) -> Mapping[str, Any]:
    """A kind's shape as data, for ``phoneid signals kinds --json``."""
    return {
        "kind": kind.value,
        "description": describe(kind),
        "fields": [{"name": f.name, "required": f.required} for f in record_fields(kind)],
    }
