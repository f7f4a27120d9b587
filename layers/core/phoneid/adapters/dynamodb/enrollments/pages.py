"""Identities listed: a client's pages (index ``byClient``, oldest first), and the active identities
of one segment of a parallel scan (the change monitor's pass)."""

from __future__ import annotations

import json
import re
from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.enrollments.items import BY_CLIENT, IDENTITY, EnrollmentTable, held
from phoneid.adapters.dynamodb.items import plain
from phoneid.domain.enrollment import Enrollment, EnrollmentPage, Status
from phoneid.domain.errors import MalformedRequest

_CREATED_SK = re.compile(r"^\d{13}#[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _start(client_id: str, position: str) -> dict[str, Any]:
    """The ExclusiveStartKey of ``position`` (a page's ``last_position``) in the client's list.

    The service authenticated the position before (its page key's MAC); its form is checked
    again here, since it becomes a key of this table."""
    if not _CREATED_SK.match(position):
        raise MalformedRequest(problems={"startKey": "is not the lastKey of a page of these credentials"})
    service_id = position.split("#", 1)[1]
    return {
        "pk": {"S": f"{client_id}#{service_id}"},
        "clientId": {"S": client_id},
        "createdSk": {"S": position},
    }


class EnrollmentPages:
    def __init__(self, table: EnrollmentTable) -> None:
        self._table = table

    def page(
        self, client_id: str, *, limit: int, after: str | None, include_inactive: bool
    ) -> EnrollmentPage:
        start = _start(client_id, after) if after else None
        query: dict[str, Any] = {
            "TableName": self._table.name,
            "IndexName": BY_CLIENT,
            "KeyConditionExpression": "clientId = :client",
            "ExpressionAttributeValues": {":client": {"S": client_id}},
        }
        if not include_inactive:
            query["FilterExpression"] = "#status = :active"
            query["ExpressionAttributeNames"] = {"#status": "status"}
            query["ExpressionAttributeValues"][":active"] = {"S": Status.ACTIVE.value}
        found: list[dict[str, Any]] = []
        # One more than asked for tells whether another page exists, so the last page has no lastKey.
        while len(found) <= limit:
            request = {**query, "Limit": limit + 1 - len(found)}
            if start is not None:
                request["ExclusiveStartKey"] = start
            with provider_errors("enrollment list"):
                response = self._table.db.query(**request)
            found.extend(plain(item) for item in response["Items"])
            start = response.get("LastEvaluatedKey")
            if start is None:
                break
        items = [self._table.enrollment(v, with_pii=False) for v in found[:limit] if held(v, client_id)]
        last = found[limit - 1]["createdSk"] if len(found) > limit else None
        return EnrollmentPage(items=items, last_position=last)

    def active_segment_page(
        self, segment: int, total_segments: int, position: str | None, page_size: int
    ) -> tuple[list[Enrollment], str | None]:
        """One page of one segment of a parallel scan over the active identities, from
        ``position`` (a previous page's, None: the segment's start), and the position after it
        (None: the segment is done). A page may hold no identity while the scan goes on."""
        request = self._active_scan(page_size) | {"Segment": segment, "TotalSegments": total_segments}
        if position is not None:
            request["ExclusiveStartKey"] = json.loads(position)
        with provider_errors("enrollment scan"):
            response = self._table.db.scan(**request)
        page = [self._table.enrollment(plain(item), with_pii=False) for item in response["Items"]]
        last = response.get("LastEvaluatedKey")
        return page, json.dumps(last, sort_keys=True) if last else None

    def approximate_count(self) -> int:
        """The table's item count as DynamoDB last computed it (about every six hours)."""
        with provider_errors("enrollment table size"):
            described = self._table.db.describe_table(TableName=self._table.name)
        return int(described["Table"].get("ItemCount", 0))

    def _active_scan(self, page_size: int) -> dict[str, Any]:
        return {
            "TableName": self._table.name,
            "FilterExpression": "kind = :identity AND #status = :active",
            # Everything but the sealed PII: the monitor never needs it.
            "ProjectionExpression": "clientId, serviceId, phoneNumber, country, #status, createdAtMs, "
            "updatedAtMs, clientCustomerId",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {
                ":identity": {"S": IDENTITY},
                ":active": {"S": Status.ACTIVE.value},
            },
            "Limit": page_size,
        }
