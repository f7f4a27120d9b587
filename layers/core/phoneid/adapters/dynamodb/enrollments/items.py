"""The enrollment table's items mapped both ways, and the reads and transactions its store shares."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.batch_io import read_keys
from phoneid.adapters.dynamodb.items import from_ms, ms, plain, to_item
from phoneid.domain.enrollment import (
    ROSTER_LIMIT,
    Enrollment,
    IdentityAttribute,
    Pii,
    Status,
    keeps_place,
)
from phoneid.ports import PiiCipher

BY_PHONE = "byPhone"
BY_CLIENT = "byClient"
IDENTITY = "identity"
PLACE = "place"
ROSTER = "roster"
# An identity's attributes but its sealed PII: what a read that opens none asks for.
WITHOUT_PII = (
    "kind",
    "clientId",
    "serviceId",
    "phoneNumber",
    "country",
    "status",
    "createdAtMs",
    "updatedAtMs",
    "clientCustomerId",
)
ATTEMPTS = 4  # a write that meets a concurrent change looks again, this many times in all


class Cancelled(Exception):
    """A transaction was cancelled: ``codes`` has one reason code per item, in order."""

    def __init__(self, codes: list[str]) -> None:
        super().__init__(",".join(codes))
        self.codes = codes


class Conflict(Exception):
    """A conditional single-item write whose condition did not hold."""


def key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}}


def place_of(enrollment: Enrollment) -> str:
    if enrollment.client_customer_id is not None:
        return f"{enrollment.client_id}#customer#{enrollment.client_customer_id}"
    return f"{enrollment.client_id}#number#{enrollment.phone_number}"


def roster_of(client_id: str, phone_number: str) -> str:
    """The pk of the roster of the client's identities on a number, in clear as ``phoneKey`` and the
    number's place are."""
    return f"{client_id}#roster#{phone_number}"


def created_sk(enrollment: Enrollment) -> str:
    return f"{ms(enrollment.created_at):013d}#{enrollment.service_id}"


def held(values: Mapping[str, Any] | None, client_id: str) -> bool:
    """An identity of this client that the API still knows (not a tombstone, not a place)."""
    return (
        values is not None
        and values.get("kind") == IDENTITY
        and values.get("clientId") == client_id
        and values.get("status") != Status.DISENROLLED.value
    )


def enrollment_of(values: Mapping[str, Any], pii: Pii | None) -> Enrollment:
    return Enrollment(
        client_id=values["clientId"],
        service_id=values["serviceId"],
        phone_number=values["phoneNumber"],
        country=values["country"],
        created_at=from_ms(values["createdAtMs"]),
        status=Status(values["status"]),
        client_customer_id=values.get("clientCustomerId"),
        pii=pii,
        updated_at=from_ms(values["updatedAtMs"]) if values.get("updatedAtMs") else None,
    )


def holder_keeps_place(holder: Mapping[str, Any], newcomer: Enrollment) -> bool:
    """Whether the identity item holding ``newcomer``'s place stays its identity (one this client
    still holds, by the domain's rule)."""
    return held(holder, newcomer.client_id) and keeps_place(enrollment_of(holder, None), newcomer)


class EnrollmentTable:
    """The table (``db``, ``name``) with its items' mapping: PII sealed by KMS under the identity's
    context, opened only when asked for."""

    def __init__(self, dynamodb: Any, table: str, cipher: PiiCipher) -> None:
        self.db = dynamodb
        self.name = table
        self._cipher = cipher

    # --- mapping -----------------------------------------------------------------------------

    @staticmethod
    def _context(client_id: str, service_id: str) -> dict[str, str]:
        return {"clientId": client_id, "serviceId": service_id, "use": "enrollment"}

    def _open(self, values: Mapping[str, Any]) -> Pii:
        sealed = values.get("pii")
        if sealed is None:
            return Pii()
        opened = json.loads(
            self._cipher.decrypt(bytes(sealed), self._context(values["clientId"], values["serviceId"]))
        )
        return Pii(
            first_name=opened.get("firstName"),
            last_name=opened.get("lastName"),
            client_human_id=opened.get("clientHumanId"),
            device_id=opened.get("deviceId"),
            attributes=tuple(IdentityAttribute(t, v) for t, v in opened.get("attributes", ())),
        )

    @staticmethod
    def _plain_pii(enrollment: Enrollment) -> bytes | None:
        pii = enrollment.pii
        if pii is None or pii.empty:
            return None
        values = {
            "firstName": pii.first_name,
            "lastName": pii.last_name,
            "clientHumanId": pii.client_human_id,
            "deviceId": pii.device_id,
            "attributes": [[a.attribute_type, a.attribute_value] for a in pii.attributes] or None,
        }
        return json.dumps({k: v for k, v in values.items() if v is not None}).encode()

    def seal_many(self, enrollments: Sequence[Enrollment]) -> list[bytes | None]:
        """Each enrollment's PII sealed (None when it has none), for one KMS call in all."""
        plain_pii = [self._plain_pii(e) for e in enrollments]
        records = [
            (text, self._context(e.client_id, e.service_id))
            for e, text in zip(enrollments, plain_pii, strict=True)
            if text is not None
        ]
        sealed = iter(self._cipher.encrypt_many(records))
        return [None if text is None else next(sealed) for text in plain_pii]

    def _item(self, enrollment: Enrollment, sealed_pii: bytes | None) -> dict[str, Any]:
        values = {
            "pk": f"{enrollment.client_id}#{enrollment.service_id}",
            "kind": IDENTITY,
            "clientId": enrollment.client_id,
            "serviceId": enrollment.service_id,
            "phoneNumber": enrollment.phone_number,
            "phoneKey": f"{enrollment.client_id}#{enrollment.phone_number}",
            "country": enrollment.country,
            "status": enrollment.status.value,
            "createdAtMs": ms(enrollment.created_at),
            "createdSk": created_sk(enrollment),
            "clientCustomerId": enrollment.client_customer_id,
            "place": place_of(enrollment),
            "pii": sealed_pii,
        }
        return to_item(values)

    def enrollment(self, values: Mapping[str, Any], *, with_pii: bool) -> Enrollment:
        return enrollment_of(values, self._open(values) if with_pii else None)

    # --- reads -------------------------------------------------------------------------------

    def read(self, pk: str) -> dict[str, Any] | None:
        with provider_errors("enrollment read"):
            response = self.db.get_item(TableName=self.name, Key=key(pk), ConsistentRead=True)
        item = response.get("Item")
        return plain(item) if item else None

    def read_many(
        self, pks: Sequence[str], attributes: Sequence[str] = ()
    ) -> tuple[dict[str, dict[str, Any]], set[str]]:
        """Consistent reads of ``pks`` (only ``attributes`` and ``pk`` when given): (items found by pk,
        pks left unread)."""
        keys = [key(pk) for pk in pks]
        wanted = ("pk", *attributes) if attributes else ()
        items, unread = read_keys(
            self.db, self.name, keys, "enrollment read", provider_errors, consistent=True, attributes=wanted
        )
        found = {values["pk"]: values for values in map(plain, items)}
        return found, {str(unread_key["pk"]["S"]) for unread_key in unread}

    # --- writes ------------------------------------------------------------------------------

    def transact(self, items: list[dict[str, Any]], what: str) -> None:
        try:
            self.db.transact_write_items(TransactItems=items)
        except self.db.exceptions.TransactionCanceledException as error:
            reasons = error.response.get("CancellationReasons", [])
            raise Cancelled([str(reason.get("Code", "None")) for reason in reasons]) from error
        except (ClientError, BotoCoreError) as error:
            raise internal_error(what, error) from error

    def new_identity(self, enrollment: Enrollment) -> dict[str, Any]:
        """Built (PII sealed) only when it is written: a customer already enrolled costs no KMS call."""
        [sealed_pii] = self.seal_many([enrollment])
        return self.identity_put(enrollment, sealed_pii)

    def identity_put(self, enrollment: Enrollment, sealed_pii: bytes | None) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self.name,
                "Item": self._item(enrollment, sealed_pii),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }

    def take_place(self, place: str, service_id: str, previous: str | None) -> dict[str, Any]:
        put: dict[str, Any] = {
            "TableName": self.name,
            "Item": to_item({"pk": place, "kind": PLACE, "serviceId": service_id}),
        }
        if previous is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "serviceId = :previous"
            put["ExpressionAttributeValues"] = {":previous": {"S": previous}}
        return {"Put": put}

    def leave_place(self, pk: str, place: str) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self.name,
                "Key": key(pk),
                "UpdateExpression": "REMOVE #place",
                "ConditionExpression": "#place = :place",
                "ExpressionAttributeNames": {"#place": "place"},
                "ExpressionAttributeValues": {":place": {"S": place}},
            }
        }

    def join_roster(self, client_id: str, phone_number: str, service_ids: Sequence[str]) -> dict[str, Any]:
        """``service_ids`` added to the roster of the client's identities on the number (made if
        none); refused (ConditionalCheckFailed) when it has no room for them all."""
        return {
            "Update": {
                "TableName": self.name,
                "Key": key(roster_of(client_id, phone_number)),
                "UpdateExpression": "SET kind = :roster ADD serviceIds :ids",
                "ConditionExpression": "attribute_not_exists(serviceIds) OR size(serviceIds) <= :room",
                "ExpressionAttributeValues": {
                    ":roster": {"S": ROSTER},
                    ":ids": {"SS": list(service_ids)},
                    ":room": {"N": str(ROSTER_LIMIT - len(service_ids))},
                },
            }
        }

    def leave_roster(self, roster: Mapping[str, Any], service_id: str) -> dict[str, Any]:
        """``service_id`` taken off ``roster`` (as read): the roster deleted with its last identity,
        so no item keeps a number the client no longer holds."""
        values = {":service": {"S": service_id}, ":one": {"N": "1"}}
        if set(roster["serviceIds"]) == {service_id}:
            return {
                "Delete": {
                    "TableName": self.name,
                    "Key": key(roster["pk"]),
                    "ConditionExpression": "contains(serviceIds, :service) AND size(serviceIds) = :one",
                    "ExpressionAttributeValues": values,
                }
            }
        return {
            "Update": {
                "TableName": self.name,
                "Key": key(roster["pk"]),
                "UpdateExpression": "DELETE serviceIds :ids",
                "ConditionExpression": "contains(serviceIds, :service) AND size(serviceIds) > :one",
                "ExpressionAttributeValues": values | {":ids": {"SS": [service_id]}},
            }
        }
