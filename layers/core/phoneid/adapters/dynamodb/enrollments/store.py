"""Identity Manager's identities (``phoneid.ports.EnrollmentStore``): one enrolled, read, changed or
disenrolled at a time here; many at once in ``bulk``, listed in ``pages``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.enrollments.bulk import BulkEnrollment
from phoneid.adapters.dynamodb.enrollments.items import (
    ATTEMPTS,
    BY_PHONE,
    IDENTITY,
    WITHOUT_PII,
    Cancelled,
    Conflict,
    EnrollmentTable,
    held,
    holder_keeps_place,
    key,
    place_of,
    roster_of,
)
from phoneid.adapters.dynamodb.enrollments.pages import EnrollmentPages
from phoneid.adapters.dynamodb.items import ms, plain, to_item
from phoneid.domain.enrollment import (
    Action,
    Enrollment,
    EnrollmentPage,
    Status,
    is_service_id,
    number_history,
    oldest_first,
)
from phoneid.domain.errors import PhoneIdError
from phoneid.domain.signals import NumberHistory
from phoneid.ports import PiiCipher


class DynamoEnrollmentStore:
    def __init__(self, dynamodb: Any, table: str, cipher: PiiCipher) -> None:
        self._table = EnrollmentTable(dynamodb, table, cipher)
        self._bulk = BulkEnrollment(self._table, self.enroll)
        self._pages = EnrollmentPages(self._table)

    # --- reads -------------------------------------------------------------------------------

    def get(self, client_id: str, service_id: str, *, with_pii: bool = True) -> Enrollment | None:
        if not is_service_id(service_id):
            return None
        values = self._table.read(f"{client_id}#{service_id}")
        if values is None or not held(values, client_id):
            return None
        return self._table.enrollment(values, with_pii=with_pii)

    def _on_number(self, client_id: str, phone_number: str, *, with_pii: bool) -> list[Enrollment]:
        """The client's identities of the number as they are now: those its roster lists (written
        with each enrollment) and those the index holds (it may lag, and it alone knows identities
        enrolled before rosters or past a full one), each read again from the table, consistently."""
        roster = roster_of(client_id, phone_number)
        rosters, unread = self._table.read_many([roster])
        ids = set(rosters.get(roster, {}).get("serviceIds", ()))
        with provider_errors("enrollment lookup"):
            pages = self._table.db.get_paginator("query").paginate(
                TableName=self._table.name,
                IndexName=BY_PHONE,
                KeyConditionExpression="phoneKey = :key",
                ExpressionAttributeValues={":key": {"S": f"{client_id}#{phone_number}"}},
                ProjectionExpression="serviceId",
            )
            for page in pages:
                ids.update(str(item["serviceId"]["S"]) for item in page["Items"])
        found, unread_identities = self._table.read_many(
            sorted(f"{client_id}#{service_id}" for service_id in ids),
            () if with_pii else WITHOUT_PII,
        )
        if unread or unread_identities:
            raise internal_error("enrollment lookup: reads left unprocessed")
        return oldest_first(
            self._table.enrollment(values, with_pii=with_pii)
            for values in found.values()
            if held(values, client_id) and values.get("phoneNumber") == phone_number
        )

    def by_phone(self, client_id: str, phone_number: str) -> list[Enrollment]:
        return self._on_number(client_id, phone_number, with_pii=True)

    def history(self, client_id: str, phone_number: str, short_tenure_since: datetime) -> NumberHistory:
        return number_history(self._on_number(client_id, phone_number, with_pii=False), short_tenure_since)

    def page(
        self, client_id: str, *, limit: int, after: str | None, include_inactive: bool
    ) -> EnrollmentPage:
        return self._pages.page(client_id, limit=limit, after=after, include_inactive=include_inactive)

    def active_segment_page(
        self, segment: int, total_segments: int, position: str | None, page_size: int = 100
    ) -> tuple[list[Enrollment], str | None]:
        return self._pages.active_segment_page(segment, total_segments, position, page_size)

    def approximate_count(self) -> int:
        return self._pages.approximate_count()

    # --- writes ------------------------------------------------------------------------------

    def enroll(self, enrollment: Enrollment) -> tuple[Enrollment, bool]:
        place = place_of(enrollment)
        rostered = True  # until the number's roster turns out full
        for _ in range(ATTEMPTS):
            holder = self._table.read(place)
            if holder is None:
                items = [
                    self._table.new_identity(enrollment),
                    self._table.take_place(place, enrollment.service_id, None),
                ]
            else:
                current = self._table.read(f"{enrollment.client_id}#{holder['serviceId']}")
                if current is not None and holder_keeps_place(current, enrollment):
                    return self._table.enrollment(current, with_pii=False), False
                # An inactive identity without a clientCustomerId gives its place to the new one.
                items = [
                    self._table.new_identity(enrollment),
                    self._table.take_place(place, enrollment.service_id, holder["serviceId"]),
                ]
                if current is not None and current.get("place") == place:
                    items.append(self._table.leave_place(current["pk"], place))
            if rostered:
                items.append(
                    self._table.join_roster(
                        enrollment.client_id, enrollment.phone_number, [enrollment.service_id]
                    )
                )
            try:
                self._table.transact(items, "enrollment")
            except Cancelled as cancelled:
                if rostered and cancelled.codes[-1:] == ["ConditionalCheckFailed"]:
                    rostered = False  # the roster is full: the index alone will find this one
                continue  # or the place changed hands meanwhile: look again
            return enrollment, True
        raise internal_error("enrollment: too many concurrent changes")

    def enroll_many(self, enrollments: Sequence[Enrollment]) -> list[tuple[Enrollment, bool] | PhoneIdError]:
        return self._bulk.enroll_many(enrollments)

    def apply(self, client_id: str, service_id: str, action: Action, now: datetime) -> Enrollment | None:
        if not is_service_id(service_id):
            return None
        if action == Action.DISENROLL:
            return self._disenroll(client_id, service_id, now)
        status = Status.ACTIVE if action == Action.ACTIVATE else Status.INACTIVE
        try:
            with provider_errors(f"enrollment {action.value}", condition_failed=Conflict):
                response = self._table.db.update_item(
                    TableName=self._table.name,
                    Key=key(f"{client_id}#{service_id}"),
                    UpdateExpression="SET #status = :status, updatedAtMs = :now",
                    ConditionExpression=(
                        "kind = :identity AND clientId = :client AND #status <> :disenrolled"
                    ),
                    ExpressionAttributeNames={"#status": "status"},
                    ExpressionAttributeValues=to_item(
                        {
                            ":status": status.value,
                            ":now": ms(now),
                            ":identity": IDENTITY,
                            ":client": client_id,
                            ":disenrolled": Status.DISENROLLED.value,
                        }
                    ),
                    ReturnValues="ALL_NEW",
                )
        except Conflict:
            return None
        return self._table.enrollment(plain(response["Attributes"]), with_pii=False)

    def _disenroll(self, client_id: str, service_id: str, now: datetime) -> Enrollment | None:
        pk = f"{client_id}#{service_id}"
        for _ in range(ATTEMPTS):
            values = self._table.read(pk)
            if values is None or not held(values, client_id):
                return None
            place = values.get("place")
            roster = self._table.read(roster_of(client_id, values["phoneNumber"]))
            enrollment = self._table.enrollment(values, with_pii=False).apply(Action.DISENROLL, now)
            assert enrollment.expires_at is not None
            tombstone = {
                "Update": {
                    "TableName": self._table.name,
                    "Key": key(pk),
                    "UpdateExpression": (
                        "SET #status = :disenrolled, updatedAtMs = :now, #ttl = :ttl REMOVE "
                        "pii, phoneNumber, phoneKey, country, clientCustomerId, createdSk, #place, "
                        "monitorState"
                    ),
                    # Unchanged since read: still held, and holding the place read (or none).
                    "ConditionExpression": "#status <> :disenrolled AND "
                    + ("#place = :place" if place else "attribute_not_exists(#place)"),
                    "ExpressionAttributeNames": {"#status": "status", "#ttl": "ttl", "#place": "place"},
                    "ExpressionAttributeValues": to_item(
                        {
                            ":disenrolled": Status.DISENROLLED.value,
                            ":now": ms(now),
                            ":place": place,
                            ":ttl": int(enrollment.expires_at.timestamp()),
                        }
                    ),
                }
            }
            items = [tombstone]
            if place:
                items.append(
                    {
                        "Delete": {
                            "TableName": self._table.name,
                            "Key": key(place),
                            "ConditionExpression": "serviceId = :service",
                            "ExpressionAttributeValues": {":service": {"S": service_id}},
                        }
                    }
                )
            if roster is not None and service_id in roster.get("serviceIds", ()):
                items.append(self._table.leave_roster(roster, service_id))
            try:
                self._table.transact(items, "disenrollment")
            except Cancelled:
                continue  # changed meanwhile (disenrolled, its place taken, its roster changed): look again
            return enrollment
        raise internal_error("disenrollment: too many concurrent changes")
