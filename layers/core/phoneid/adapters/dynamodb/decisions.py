"""DecisionStore on ``DecisionsTable`` (items: ``decision_items``).

Counted once: a single record is put on condition that its id is new, then its day's tallies are
added (an UpdateItem of ADDs); a batch's records are put with BatchWriteItem (a repeat rewrites
them as they were) and their tallies added in one transaction with a marker item under the batch's
key, on condition that the marker is new. A list reads one index newest first, filtering on the
plain attributes; a page reads at most ``_READS_PER_PAGE`` query pages, so a sparse filter answers
a short (even empty) page with a ``lastKey`` rather than reading a whole history in one request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.batch_io import READ_BATCH, put_all, read_keys
from phoneid.adapters.dynamodb.decision_items import (
    BY_NUMBER,
    BY_TIME,
    day_pk,
    expiry,
    from_record_item,
    number_key,
    once_pk,
    record_id,
    record_pk,
    request_context,
    to_record_item,
)
from phoneid.adapters.dynamodb.items import plain
from phoneid.domain.decisions import DecisionPage, DecisionQuery, DecisionRecord, added, stamp
from phoneid.domain.errors import MalformedRequest
from phoneid.ports import PiiCipher

_READS_PER_PAGE = 8
_ERASED_PER_TRANSACTION = 99  # and the day's tallies: a transaction's 100 actions


class _AlreadyCounted(Exception):
    pass


class DynamoDecisionStore:
    def __init__(self, dynamodb: Any, table: str, cipher: PiiCipher, retention: timedelta) -> None:
        self._db = dynamodb
        self._table = table
        self._cipher = cipher
        self.retention = retention

    # --- writing -------------------------------------------------------------------------------

    def add(self, records: Sequence[DecisionRecord], *, once: str | None = None) -> bool:
        if not records:
            return False
        items = self._items(records)
        if once is None and len(records) == 1:
            try:
                with provider_errors("decisions.PutItem", condition_failed=_AlreadyCounted):
                    self._db.put_item(
                        TableName=self._table, Item=items[0], ConditionExpression="attribute_not_exists(pk)"
                    )
            except _AlreadyCounted:
                return False
            self._count(records[0].client_id, added(records), marker=None)
            return True
        if once is None:
            raise ValueError("many records are counted under a key of their batch")
        put_all(self._db, self._table, items, "decisions.BatchWriteItem")
        try:
            self._count(records[0].client_id, added(records), marker=once)
        except _AlreadyCounted:
            return False
        return True

    def _items(self, records: Sequence[DecisionRecord]) -> list[dict[str, Any]]:
        asked = [r for r in records if r.client_request_id is not None]
        sealed = iter(
            self._cipher.encrypt_many(
                [(r.client_request_id.encode(), request_context(r.client_id, r.id)) for r in asked]  # type: ignore[union-attr]
            )
            if asked
            else ()
        )
        return [
            to_record_item(r, self.retention, next(sealed) if r.client_request_id is not None else None)
            for r in records
        ]

    def _count(self, client_id: str, days: Mapping[date, Mapping[str, int]], marker: str | None) -> None:
        updates = [self._tally_update(client_id, day, counts, 1) for day, counts in days.items()]
        if marker is None:
            for update in updates:
                with provider_errors("decisions.UpdateItem"):
                    self._db.update_item(**update)
            return
        last = max(days)
        mark = {
            "TableName": self._table,
            "Item": {"pk": {"S": once_pk(client_id, marker)}, "ttl": {"N": str(self._day_ttl(last))}},
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        actions = [{"Put": mark}, *({"Update": update} for update in updates)]
        try:
            self._db.transact_write_items(TransactItems=actions)
        except ClientError as error:
            if any(
                r.get("Code") == "ConditionalCheckFailed"
                for r in error.response.get("CancellationReasons", [])
            ):
                raise _AlreadyCounted() from error
            raise internal_error("decisions.TransactWriteItems", error) from error
        except BotoCoreError as error:
            raise internal_error("decisions.TransactWriteItems", error) from error

    def _tally_update(
        self, client_id: str, day: date, counts: Mapping[str, int], sign: int
    ) -> dict[str, Any]:
        names = {f"#c{i}": name for i, name in enumerate(counts)}
        values: dict[str, Any] = {f":c{i}": {"N": str(sign * counts[name])} for i, name in enumerate(counts)}
        values[":ttl"] = {"N": str(self._day_ttl(day))}
        adds = ", ".join(f"#c{i} :c{i}" for i in range(len(counts)))
        return {
            "TableName": self._table,
            "Key": {"pk": {"S": day_pk(client_id, day)}},
            "UpdateExpression": f"SET #ttl = if_not_exists(#ttl, :ttl) ADD {adds}",
            "ExpressionAttributeNames": {**names, "#ttl": "ttl"},
            "ExpressionAttributeValues": values,
        }

    def _day_ttl(self, day: date) -> int:
        """A day's tallies expire with its last record: the day's end plus the retention."""
        return expiry(datetime.combine(day + timedelta(days=1), time(), UTC), self.retention)

    # --- reading -------------------------------------------------------------------------------

    def get(self, client_id: str, decision_id: str) -> DecisionRecord | None:
        with provider_errors("decisions.GetItem"):
            found = self._db.get_item(
                TableName=self._table, Key={"pk": {"S": record_pk(client_id, decision_id)}}
            ).get("Item")
        if found is None or found.get("clientId", {}).get("S") != client_id or "data" not in found:
            return None
        return self._record(plain(found))

    def _record(self, values: Mapping[str, Any]) -> DecisionRecord:
        request = None
        if values.get("request") is not None:
            context = request_context(str(values["clientId"]), record_id(values))
            request = self._cipher.decrypt(bytes(values["request"]), context).decode()
        return from_record_item(values, request)

    def page(self, client_id: str, query: DecisionQuery, *, limit: int, after: str | None) -> DecisionPage:
        index, key_name, key_value = (
            (BY_NUMBER, "numberKey", number_key(client_id, query.number_mac))
            if query.number_mac
            else (BY_TIME, "clientId", client_id)
        )
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": index,
            "KeyConditionExpression": "#k = :k AND endedSk BETWEEN :since AND :until",
            "ExpressionAttributeNames": {"#k": key_name},
            "ExpressionAttributeValues": {
                ":k": {"S": key_value},
                ":since": {"S": stamp(query.since)},
                # every id sorts before "~": the last millisecond before `until` is in, `until` is not
                ":until": {"S": stamp(query.until - timedelta(milliseconds=1)) + "#~"},
            },
            "ScanIndexForward": False,
        }
        _add_filters(request, query)
        start = _opened_position(after, index, key_name, key_value) if after else None
        found: list[dict[str, Any]] = []
        for _ in range(_READS_PER_PAGE):
            asked = dict(request, Limit=limit - len(found))
            if start is not None:
                asked["ExclusiveStartKey"] = start
            with provider_errors("decisions.Query"):
                answer = self._db.query(**asked)
            found.extend(answer.get("Items", []))
            start = answer.get("LastEvaluatedKey")
            if start is None or len(found) >= limit:
                break
        if len(found) >= limit and found:
            last = found[-1]
            start = {name: last[name] for name in ("pk", key_name, "endedSk")}
        position = json.dumps([index, start], separators=(",", ":"), sort_keys=True) if start else None
        # A list shows no clientRequestId: nothing is opened for it.
        return DecisionPage(tuple(from_record_item(plain(item), None) for item in found), position)

    def days(self, client_id: str, first: date, last: date) -> dict[date, dict[str, int]]:
        wanted = [first + timedelta(days=n) for n in range((last - first).days + 1)]
        keys = [{"pk": {"S": day_pk(client_id, day)}} for day in wanted]
        found: dict[date, dict[str, int]] = {}
        for offset in range(0, len(keys), READ_BATCH):
            chunk = keys[offset : offset + READ_BATCH]
            items, unread = read_keys(self._db, self._table, chunk, "decisions.BatchGetItem", provider_errors)
            if unread:
                raise internal_error("decisions.BatchGetItem")
            for item in items:
                values = plain(item)
                day = date.fromisoformat(str(values.pop("pk")).rsplit("#", 1)[1])
                values.pop("ttl", None)
                found[day] = {name: int(count) for name, count in values.items()}
        return found

    # --- erasing -------------------------------------------------------------------------------

    def erase(self, client_id: str, number_mac: str) -> int:
        """Each record deleted with its tallies taken off, in transactions of one day's records: a
        failure leaves whole groups undone, and the same request again finishes the rest."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": BY_NUMBER,
            "KeyConditionExpression": "numberKey = :k",
            "ExpressionAttributeValues": {":k": {"S": number_key(client_id, number_mac)}},
        }
        records: list[DecisionRecord] = []
        while True:
            with provider_errors("decisions.Query"):
                answer = self._db.query(**request)
            records.extend(from_record_item(plain(item), None) for item in answer.get("Items", []))
            if "LastEvaluatedKey" not in answer:
                break
            request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
        by_day: dict[date, list[DecisionRecord]] = {}
        for record in records:
            by_day.setdefault(record.day, []).append(record)
        for day_records in by_day.values():
            for offset in range(0, len(day_records), _ERASED_PER_TRANSACTION):
                self._erase_group(client_id, day_records[offset : offset + _ERASED_PER_TRANSACTION])
        return len(records)

    def _erase_group(self, client_id: str, records: Sequence[DecisionRecord]) -> None:
        deletes = [
            {
                "Delete": {
                    "TableName": self._table,
                    "Key": {"pk": {"S": record_pk(client_id, record.id)}},
                    "ConditionExpression": "attribute_exists(pk)",
                }
            }
            for record in records
        ]
        updates = [
            {"Update": self._tally_update(client_id, day, counts, -1)}
            for day, counts in added(records).items()
        ]
        with provider_errors("decisions.TransactWriteItems"):
            self._db.transact_write_items(TransactItems=[*deletes, *updates])


def _add_filters(request: dict[str, Any], query: DecisionQuery) -> None:
    conditions = []
    names = request["ExpressionAttributeNames"]
    values = request["ExpressionAttributeValues"]
    if query.kind is not None:
        conditions.append("#kind = :kind")
        names["#kind"], values[":kind"] = "kind", {"S": query.kind.value}
    if query.outcome is not None:
        conditions.append("#outcome = :outcome")
        names["#outcome"], values[":outcome"] = "outcome", {"S": query.outcome.value}
    if query.reason is not None:
        conditions.append("contains(#reasons, :reason)")
        names["#reasons"], values[":reason"] = "reasons", {"N": str(query.reason)}
    if query.request_mac is not None:
        conditions.append("#requestMac = :requestMac")
        names["#requestMac"], values[":requestMac"] = "requestMac", {"S": query.request_mac}
    if conditions:
        request["FilterExpression"] = " AND ".join(conditions)


def _opened_position(after: str, index: str, key_name: str, key_value: str) -> dict[str, Any]:
    """The start key a page's position stands for, if it belongs to this very index and key (the
    position is authenticated by the service's page key; this only refuses a mix of filters)."""
    try:
        named, start = json.loads(after)
        ok = (
            named == index
            and start[key_name] == {"S": key_value}
            and set(start) == {"pk", key_name, "endedSk"}
        )
    except (ValueError, TypeError, KeyError):
        ok = False
    if not ok:
        raise MalformedRequest(problems={"startKey": "is not the lastKey of a page of this list"})
    return start  # type: ignore[no-any-return]
