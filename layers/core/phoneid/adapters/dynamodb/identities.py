"""The identities table: the operator's identity records, one item per phone number (pk
``phoneNumber``), SSN and date of birth sealed by KMS."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.items import plain, to_item
from phoneid.domain.identity import Address, Business, Identity
from phoneid.ports import PiiCipher


def _address(values: Mapping[str, Any]) -> Address:
    return Address(
        address=values.get("address"),
        city=values.get("city"),
        region=values.get("region"),
        postal_code=values.get("postal_code"),
        extended_address=values.get("extended_address"),
    )


def _business_map(business: Business) -> dict[str, Any]:
    values = {
        "name": business.name,
        "tradeName": business.trade_name,
        "taxId": business.tax_id,
        "address": {k: v for k, v in business.address.__dict__.items() if v is not None}
        if business.address
        else None,
        "registration": dict(business.registration) or None,
        "relatedPersons": [list(person) for person in business.related_persons] or None,
    }
    return {k: v for k, v in values.items() if v is not None}


def _business(values: Mapping[str, Any]) -> Business:
    return Business(
        name=values["name"],
        trade_name=values.get("tradeName"),
        tax_id=values.get("taxId"),
        address=_address(values["address"]) if values.get("address") else None,
        registration=tuple(sorted((str(k), str(v)) for k, v in (values.get("registration") or {}).items())),
        related_persons=tuple((str(p[0]), str(p[1])) for p in values.get("relatedPersons", ())),
    )


class DynamoIdentityStore:
    """Identity records loaded by the operator; SSN and date of birth are stored encrypted."""

    def __init__(self, dynamodb: Any, table: str, cipher: PiiCipher) -> None:
        self._db = dynamodb
        self._table = table
        self._cipher = cipher

    @staticmethod
    def _context(phone_number: str) -> dict[str, str]:
        return {"phoneNumber": phone_number, "use": "identity"}

    def _item(self, identity: Identity) -> dict[str, Any]:
        sealed = self._cipher.encrypt(
            json.dumps({"ssn": identity.ssn, "dob": identity.dob}).encode(),
            self._context(identity.phone_number),
        )
        return to_item(
            {
                "phoneNumber": identity.phone_number,
                "firstName": identity.first_name,
                "lastName": identity.last_name,
                "addresses": [
                    {k: v for k, v in a.__dict__.items() if v is not None} for a in identity.addresses
                ],
                "emailAddresses": list(identity.email_addresses),
                "reputationReasons": list(identity.reputation_reasons) or None,
                "businesses": [_business_map(b) for b in identity.businesses] or None,
                "pii": sealed,
            }
        )

    def put_many(self, identities: Iterable[Identity]) -> int:
        count = 0
        batch: list[dict[str, Any]] = []
        for identity in identities:
            batch.append({"PutRequest": {"Item": self._item(identity)}})
            count += 1
            if len(batch) == 25:
                self._write(batch)
                batch = []
        if batch:
            self._write(batch)
        return count

    def _write(self, batch: list[dict[str, Any]]) -> None:
        pending: dict[str, Any] = {self._table: batch}
        with provider_errors("identity import"):
            while pending:
                response = self._db.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}

    def find(self, phone_number: str) -> Identity | None:
        with provider_errors("identity read"):
            response = self._db.get_item(TableName=self._table, Key={"phoneNumber": {"S": phone_number}})
        item = response.get("Item")
        if not item:
            return None
        values = plain(item)
        opened = json.loads(self._cipher.decrypt(bytes(values["pii"]), self._context(phone_number)))
        return Identity(
            phone_number=phone_number,
            first_name=values["firstName"],
            last_name=values["lastName"],
            dob=opened["dob"],
            ssn=opened["ssn"],
            addresses=tuple(_address(a) for a in values.get("addresses", ())),
            email_addresses=tuple(values.get("emailAddresses", ())),
            reputation_reasons=tuple(int(code) for code in values.get("reputationReasons", ())),
            businesses=tuple(_business(b) for b in values.get("businesses", ())),
        )
