"""Importing identities with their businesses (Pre-Fill for Business) and extended address lines."""

from __future__ import annotations

import json
from typing import Any

from phoneid.domain.identity import Address, Business
from phoneid.services.identities import IdentityImport
from tests.fakes import InMemoryIdentityStore
from tests.unit.helpers import identity_record


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def bakery(**fields: Any) -> dict[str, Any]:
    """A business of the identity file; override any field by keyword."""
    values: dict[str, Any] = {
        "businessName": "Ortiz Bakery LLC",
        "tradeName": "Lena's Loaves",
        "taxId": "12-3456789",
        "businessAddress": {
            "address": "8 Market Square",
            "extendedAddress": "Suite 2",
            "city": "Albany",
            "region": "NY",
            "postalCode": "12207",
        },
        "registrationFiling": {
            "date": "2015-06-01",
            "region": "NY",
            "registrationNumber": "5123456",
            "registrationType": "LLC",
        },
        "relatedPersons": [
            {"firstName": "Lena", "lastName": "Ortiz"},
            {"firstName": "Ana", "lastName": "Ruiz"},
        ],
    }
    values.update(fields)
    return values


def test_businesses_and_extended_address_lines_are_imported() -> None:
    # Given a JSON Lines record with an address that has an extended line, and two businesses
    store = InMemoryIdentityStore()
    record = identity_record(
        "+12025550451",
        firstName="Lena",
        lastName="Ortiz",
        addresses=[
            {
                "address": "12 Orchard Street",
                "extendedAddress": "Apt 4B",
                "city": "Albany",
                "region": "NY",
                "postalCode": "12207",
            }
        ],
        businesses=[bakery(), {"businessName": "Hudson Couriers Inc"}],
    )

    # When imported
    report = IdentityImport(store, "US").run(jsonl(record), "jsonl")

    # Then the identity holds the extended line and both businesses, every field kept
    assert (report.imported, report.rejected) == (1, [])
    lena = store.find("+12025550451")
    assert lena is not None
    assert lena.addresses == (
        Address(
            address="12 Orchard Street",
            city="Albany",
            region="NY",
            postal_code="12207",
            extended_address="Apt 4B",
        ),
    )
    assert lena.businesses == (
        Business(
            name="Ortiz Bakery LLC",
            trade_name="Lena's Loaves",
            tax_id="12-3456789",
            address=Address(
                address="8 Market Square",
                city="Albany",
                region="NY",
                postal_code="12207",
                extended_address="Suite 2",
            ),
            registration=(
                ("date", "2015-06-01"),
                ("region", "NY"),
                ("registrationNumber", "5123456"),
                ("registrationType", "LLC"),
            ),
            related_persons=(("Lena", "Ortiz"), ("Ana", "Ruiz")),
        ),
        Business(name="Hudson Couriers Inc"),
    )


def test_a_partial_registration_filing_keeps_only_what_was_given() -> None:
    # Given a business whose filing has a date and a region only
    store = InMemoryIdentityStore()
    record = identity_record(
        "+12025550452", businesses=[bakery(registrationFiling={"region": "NY", "date": "2015-06-01"})]
    )

    # When imported
    report = IdentityImport(store, "US").run(jsonl(record), "jsonl")

    # Then the filing holds those two, in a stable order
    assert report.imported == 1
    stored = store.find("+12025550452")
    assert stored is not None
    assert stored.businesses[0].registration == (("date", "2015-06-01"), ("region", "NY"))


def test_an_unknown_business_field_is_rejected_by_its_path_without_its_value() -> None:
    # Given a record whose first business has a field the identity file does not know
    store = InMemoryIdentityStore()
    record = identity_record("+12025550453", businesses=[bakery(ownerSsn="987-65-4321")])

    # When imported
    report = IdentityImport(store, "US").run(jsonl(record), "jsonl")

    # Then nothing is stored, and the rejection names businesses.0.ownerSsn but not its value
    assert report.imported == 0
    assert store.items == {}
    assert report.rejected == [(1, "invalid fields: businesses.0.ownerSsn")]
    assert "987-65-4321" not in report.rejected[0][1]


def test_invalid_nested_business_fields_are_named_by_their_path() -> None:
    # Given a second business without a name, with a malformed filing date and an unknown person field
    store = InMemoryIdentityStore()
    broken = {
        "tradeName": "Nameless",
        "registrationFiling": {"date": "June 2015"},
        "relatedPersons": [{"firstName": "Lena", "lastName": "Ortiz", "ssn": "123456789"}],
    }
    record = identity_record("+12025550454", businesses=[bakery(), broken])

    # When imported
    report = IdentityImport(store, "US").run(jsonl(record), "jsonl")

    # Then each problem is named by its path, without the values
    assert report.rejected == [
        (
            1,
            "invalid fields: businesses.1.businessName, businesses.1.registrationFiling.date, "
            "businesses.1.relatedPersons.0.ssn",
        )
    ]
    assert "June 2015" not in report.rejected[0][1]
    assert "123456789" not in report.rejected[0][1]
    assert store.items == {}
