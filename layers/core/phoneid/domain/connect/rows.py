"""A detail row as read, and the row checks that send a row to the error file
(docs/connect.md#row-checks-in-detail): in input order, a row getting the first code that applies; a
valid row is from then on the original of its duplicate keys."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from phoneid.domain.connect.names import FileRegion
from phoneid.domain.connect.seen_keys import SeenKeys
from phoneid.domain.identity import fold
from phoneid.domain.phone import InvalidPhoneNumber, PhoneNumber, Region, parse_phone

DETAIL_FIELDS = (
    "phone_number",
    "first_name",
    "last_name",
    "client_customer_id",
    "attribute_type",
    "issuer_id",
    "attribute_value",
)
_JSON_NAMES = {
    "phone_number": "phone",
    "first_name": "firstName",
    "last_name": "lastName",
    "client_customer_id": "clientCustomerId",
    "attribute_type": "attributeType",
    "issuer_id": "issuerId",
    "attribute_value": "attributeValue",
}


@dataclass(frozen=True)
class DetailRow:
    """A ``D`` record as read, every field stripped ("" when absent)."""

    line: int
    phone_number: str = ""
    first_name: str = ""
    last_name: str = ""
    client_customer_id: str = ""
    attribute_type: str = ""
    issuer_id: str = ""
    attribute_value: str = ""
    too_long: bool = field(default=False, kw_only=True)  # over the reader's limits: cells cut short

    @classmethod
    def of(cls, line: int, fields: Sequence[str], *, too_long: bool = False) -> DetailRow:
        values = [field.strip() for field in fields[1 : 1 + len(DETAIL_FIELDS)]]
        values += [""] * (len(DETAIL_FIELDS) - len(values))
        return cls(line, *values, too_long=too_long)

    @property
    def partner(self) -> bool:
        return bool(self.attribute_type or self.issuer_id or self.attribute_value)

    def to_json(self) -> dict[str, Any]:
        """One line of a chunk object: the line number and the fields that are not empty."""
        data: dict[str, Any] = {"line": self.line}
        for name in DETAIL_FIELDS:
            value = getattr(self, name)
            if value:
                data[_JSON_NAMES[name]] = value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DetailRow:
        return cls(int(data["line"]), *(str(data.get(_JSON_NAMES[name], "")) for name in DETAIL_FIELDS))


class RowError(StrEnum):
    """Why a detail row went to the error file (its Error Attribution)."""

    ERR_MISSING_FNAME = "ERR_MISSING_FNAME"
    ERR_MISSING_LNAME = "ERR_MISSING_LNAME"
    ERR_MISSING_PHONE = "ERR_MISSING_PHONE"
    ERR_FIELD_TOO_LONG = "ERR_FIELD_TOO_LONG"  # ours
    ERR_FORMAT_PHONE = "ERR_FORMAT_PHONE"
    ERR_PHONE_COUNTRY_NOTSUPPORTED = "ERR_PHONE_COUNTRY_NOTSUPPORTED"
    ERR_MISSING_ATTRIBUTE = "ERR_MISSING_ATTRIBUTE"  # ours: a partner row without all three
    ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED = "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"
    ERR_PROCESSING_FAILED = "ERR_PROCESSING_FAILED"  # ours: the row's chunk never produced results


_LIMITS: Mapping[str, int] = {
    "first_name": 128,
    "last_name": 128,
    "client_customer_id": 128,
    "attribute_type": 64,
    "issuer_id": 128,
    "attribute_value": 256,
}
_MAX_PHONE_LENGTH = 32
_NANP_PREFIX = "+1"


class RowChecks:
    """The row checks of one file, in input order (it remembers the valid rows' duplicate keys)."""

    def __init__(
        self,
        file_region: FileRegion,
        stack_region: Region,
        may_use_country: Callable[[str], bool] | None = None,
    ) -> None:
        self._file_region = file_region
        self._stack_region = stack_region
        self._may_use_country = may_use_country
        self.seen = SeenKeys()

    def check(self, row: DetailRow) -> RowError | None:
        """The row's error, or None when it is valid (and from now on the original of its keys)."""
        checked = self._fields(row)
        if isinstance(checked, RowError):
            return checked
        keys = [f"p\x1f{checked.e164}\x1f{fold(row.first_name)}\x1f{fold(row.last_name)}"]
        if row.client_customer_id:
            keys.append(f"c\x1f{row.client_customer_id}")
        if any(key in self.seen for key in keys):
            return RowError.ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED
        for key in keys:
            self.seen.add(key)
        return None

    def _fields(self, row: DetailRow) -> RowError | PhoneNumber:
        if row.too_long:  # its cells were cut short: no other check could be trusted
            return RowError.ERR_FIELD_TOO_LONG
        if not row.first_name:
            return RowError.ERR_MISSING_FNAME
        if not row.last_name:
            return RowError.ERR_MISSING_LNAME
        if not row.phone_number:
            return RowError.ERR_MISSING_PHONE
        if any(len(getattr(row, name)) > limit for name, limit in _LIMITS.items()):
            return RowError.ERR_FIELD_TOO_LONG
        if len(row.phone_number) > _MAX_PHONE_LENGTH or not row.phone_number.startswith("+"):
            return RowError.ERR_FORMAT_PHONE
        try:
            phone = parse_phone(row.phone_number, self._stack_region)
        except InvalidPhoneNumber:
            return RowError.ERR_FORMAT_PHONE
        nanp = phone.e164.startswith(_NANP_PREFIX)
        if (
            nanp != (self._file_region == "US")
            or phone.region != self._stack_region
            or (self._may_use_country is not None and not self._may_use_country(phone.country))
        ):
            return RowError.ERR_PHONE_COUNTRY_NOTSUPPORTED
        if row.partner and not (row.attribute_type and row.issuer_id and row.attribute_value):
            return RowError.ERR_MISSING_ATTRIBUTE
        return phone
