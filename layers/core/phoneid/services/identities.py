"""Loading the production identity table from an operator's file (JSON Lines or CSV)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from phoneid.api.models import FullDob, FullSsn
from phoneid.domain.evaluation import REASONS
from phoneid.domain.identity import Address, Business, Identity, ssn_digits
from phoneid.domain.phone import InvalidPhoneNumber, Region, parse_phone
from phoneid.ports import IdentityStore
from phoneid.services.operator_files import jsonl_records

CSV_COLUMNS = (
    "phoneNumber",
    "firstName",
    "lastName",
    "dob",
    "ssn",
    "address",
    "city",
    "region",
    "postalCode",
    "emailAddress",
)

Text = Annotated[str, Field(min_length=1, max_length=256)]


class AddressRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    address: Text | None = None
    extendedAddress: Text | None = None
    city: Text | None = None
    region: Text | None = None
    postalCode: Annotated[str, Field(max_length=32)] | None = None

    def domain(self) -> Address:
        return Address(
            address=self.address,
            city=self.city,
            region=self.region,
            postal_code=self.postalCode,
            extended_address=self.extendedAddress,
        )


class RegistrationRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    region: Text | None = None
    registrationNumber: Text | None = None
    registrationType: Text | None = None


class PersonRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    firstName: Text
    lastName: Text


class BusinessRecord(BaseModel):
    """A business the person is tied to, shown by /v3/verify when it meets the match bar."""

    model_config = ConfigDict(extra="forbid")
    businessName: Text
    tradeName: Text | None = None
    taxId: Annotated[str, Field(max_length=32)] | None = None
    businessAddress: AddressRecord | None = None
    registrationFiling: RegistrationRecord | None = None
    relatedPersons: list[PersonRecord] = Field(default_factory=list, max_length=20)

    def domain(self) -> Business:
        filing = self.registrationFiling.model_dump(exclude_none=True) if self.registrationFiling else {}
        return Business(
            name=self.businessName,
            trade_name=self.tradeName,
            tax_id=self.taxId,
            address=self.businessAddress.domain() if self.businessAddress else None,
            registration=tuple(sorted(filing.items())),
            related_persons=tuple((p.firstName, p.lastName) for p in self.relatedPersons),
        )


class IdentityRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    phoneNumber: Annotated[str, Field(max_length=32)]
    firstName: Text
    lastName: Text
    dob: FullDob
    ssn: FullSsn
    addresses: list[AddressRecord] = Field(default_factory=list, max_length=10)
    emailAddresses: list[Annotated[str, Field(max_length=320)]] = Field(default_factory=list, max_length=10)
    reputationReasons: list[int] = Field(default_factory=list, max_length=20)
    businesses: list[BusinessRecord] = Field(default_factory=list, max_length=20)

    @field_validator("reputationReasons")
    @classmethod
    def _known_codes(cls, codes: list[int]) -> list[int]:
        unknown = [code for code in codes if code not in REASONS]
        if unknown:
            raise ValueError("must be reason codes of the evaluation")
        return codes


@dataclass(frozen=True)
class ImportReport:
    imported: int
    # (line number, reason) for each rejected record; reasons never contain the values.
    rejected: list[tuple[int, str]]


def _records(text: str, fmt: str) -> Iterator[tuple[int, Any]]:
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = set(CSV_COLUMNS[:5]) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"CSV header lacks columns: {', '.join(sorted(missing))}")
        for row in reader:
            address = {k: row.get(k) or None for k in ("address", "city", "region", "postalCode")}
            yield (
                reader.line_num,
                {
                    **{k: row.get(k, "") for k in CSV_COLUMNS[:5]},
                    "addresses": [address] if any(address.values()) else [],
                    "emailAddresses": [row["emailAddress"]] if row.get("emailAddress") else [],
                },
            )
        return
    yield from jsonl_records(text)


def _identity(record: IdentityRecord, region: Region) -> Identity:
    phone = parse_phone(record.phoneNumber, region)
    if phone.region != region:  # this stack would never be asked about it (phone_access.checked_phone)
        raise InvalidPhoneNumber(
            f"{phone.masked} is served by the {phone.region} stack, not this {region} stack"
        )
    return Identity(
        phone_number=phone.e164,
        first_name=record.firstName,
        last_name=record.lastName,
        dob=record.dob,
        ssn=ssn_digits(record.ssn),
        addresses=tuple(a.domain() for a in record.addresses),
        email_addresses=tuple(record.emailAddresses),
        reputation_reasons=tuple(record.reputationReasons),
        businesses=tuple(b.domain() for b in record.businesses),
    )


class IdentityImport:
    def __init__(self, store: IdentityStore, region: Region) -> None:
        self._store = store
        self._region = region

    def run(self, text: str, fmt: str, *, skip_invalid: bool = False) -> ImportReport:
        """Validate every record first; unless ``skip_invalid``, one bad record means nothing is written."""
        identities: list[Identity] = []
        rejected: list[tuple[int, str]] = []
        for line, raw in _records(text, fmt):
            try:
                identities.append(_identity(IdentityRecord.model_validate(raw), self._region))
            except ValidationError as error:
                fields = sorted({".".join(str(p) for p in e["loc"]) or "record" for e in error.errors()})
                rejected.append((line, f"invalid fields: {', '.join(fields)}"))
            except InvalidPhoneNumber as error:
                rejected.append((line, f"phoneNumber {error}"))
        if rejected and not skip_invalid:
            return ImportReport(imported=0, rejected=rejected)
        return ImportReport(imported=self._store.put_many(identities), rejected=rejected)
