"""Identity Manager's table: identities per client, their places, and the indexes that find them.

Items (one table, ``pk`` the only key):

- identity ``{clientId}#{serviceId}``: the number in clear (``phoneKey`` = ``{clientId}#{phone}``
  feeds the ``byPhone`` index), ``createdSk`` feeds the ``byClient`` index (listing pages), and
  ``pii``: names, attributes, clientHumanId and deviceId sealed by KMS with the context
  {clientId, serviceId, use: enrollment}. ``place`` names the place item it holds, if any.
- place ``{clientId}#customer#{clientCustomerId}`` or ``{clientId}#number#{phone}`` (identities
  without a clientCustomerId): which identity holds it. Creating an identity and taking its place is
  one transaction, so two concurrent enrollments of one customer cannot both create an identity.

Disenrolling keeps a tombstone (ids, status, times, ``ttl``) and removes everything else, the index
keys included, so the indexes never hold a disenrolled identity.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.batch import read_keys
from phoneid.adapters.dynamodb.items import from_ms, ms, plain, to_item
from phoneid.domain.enrollment import (
    Action,
    Enrollment,
    EnrollmentPage,
    IdentityAttribute,
    Pii,
    Status,
    is_service_id,
)
from phoneid.domain.errors import MalformedRequest, PhoneIdError
from phoneid.domain.monitor import MonitorState
from phoneid.domain.signals import NumberHistory
from phoneid.ports import PiiCipher

BY_PHONE = "byPhone"
BY_CLIENT = "byClient"
_IDENTITY = "identity"
_PLACE = "place"
_ATTEMPTS = 4
_T = TypeVar("_T")
_GROUP = 50  # new identities a transaction creates: 2 items each, DynamoDB's limit is 100
_CREATED_SK = re.compile(r"^\d{13}#[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class _Cancelled(Exception):
    """A transaction was cancelled: ``codes`` has one reason code per item, in order."""

    def __init__(self, codes: list[str]) -> None:
        super().__init__(",".join(codes))
        self.codes = codes


class _Conflict(Exception):
    """A conditional single-item write whose condition did not hold."""


def _groups(items: Sequence[_T], size: int) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}}


def _place(enrollment: Enrollment) -> str:
    if enrollment.client_customer_id is not None:
        return f"{enrollment.client_id}#customer#{enrollment.client_customer_id}"
    return f"{enrollment.client_id}#number#{enrollment.phone_number}"


def _created_sk(enrollment: Enrollment) -> str:
    return f"{ms(enrollment.created_at):013d}#{enrollment.service_id}"


class DynamoEnrollmentStore:
    def __init__(self, dynamodb: Any, table: str, cipher: PiiCipher) -> None:
        self._db = dynamodb
        self._table = table
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

    def _plain_pii(self, enrollment: Enrollment) -> bytes | None:
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

    def _seal_many(self, enrollments: Sequence[Enrollment]) -> list[bytes | None]:
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
            "kind": _IDENTITY,
            "clientId": enrollment.client_id,
            "serviceId": enrollment.service_id,
            "phoneNumber": enrollment.phone_number,
            "phoneKey": f"{enrollment.client_id}#{enrollment.phone_number}",
            "country": enrollment.country,
            "status": enrollment.status.value,
            "createdAtMs": ms(enrollment.created_at),
            "createdSk": _created_sk(enrollment),
            "clientCustomerId": enrollment.client_customer_id,
            "place": _place(enrollment),
            "pii": sealed_pii,
        }
        return to_item(values)

    def _enrollment(self, values: Mapping[str, Any], *, with_pii: bool) -> Enrollment:
        return Enrollment(
            client_id=values["clientId"],
            service_id=values["serviceId"],
            phone_number=values["phoneNumber"],
            country=values["country"],
            created_at=from_ms(values["createdAtMs"]),
            status=Status(values["status"]),
            client_customer_id=values.get("clientCustomerId"),
            pii=self._open(values) if with_pii else None,
            updated_at=from_ms(values["updatedAtMs"]) if values.get("updatedAtMs") else None,
        )

    @staticmethod
    def _held(values: Mapping[str, Any] | None, client_id: str) -> bool:
        """An identity of this client that the API still knows (not a tombstone, not a place)."""
        return (
            values is not None
            and values.get("kind") == _IDENTITY
            and values.get("clientId") == client_id
            and values.get("status") != Status.DISENROLLED.value
        )

    def _keeps_place(self, holder: Mapping[str, Any], enrollment: Enrollment) -> bool:
        """Whether the identity holding ``enrollment``'s place stays its identity: one this client
        still holds, unless it is inactive without a clientCustomerId (then a new one takes over)."""
        return self._held(holder, enrollment.client_id) and (
            enrollment.client_customer_id is not None or holder["status"] == Status.ACTIVE.value
        )

    # --- reads -------------------------------------------------------------------------------

    def _read(self, pk: str) -> dict[str, Any] | None:
        with provider_errors("enrollment read"):
            response = self._db.get_item(TableName=self._table, Key=_key(pk), ConsistentRead=True)
        item = response.get("Item")
        return plain(item) if item else None

    def get(self, client_id: str, service_id: str) -> Enrollment | None:
        if not is_service_id(service_id):
            return None
        values = self._read(f"{client_id}#{service_id}")
        if values is None or not self._held(values, client_id):
            return None
        return self._enrollment(values, with_pii=True)

    def _on_number(self, client_id: str, phone_number: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        with provider_errors("enrollment lookup"):
            pages = self._db.get_paginator("query").paginate(
                TableName=self._table,
                IndexName=BY_PHONE,
                KeyConditionExpression="phoneKey = :key",
                ExpressionAttributeValues={":key": {"S": f"{client_id}#{phone_number}"}},
            )
            for page in pages:
                items.extend(plain(item) for item in page["Items"])
        held = [values for values in items if self._held(values, client_id)]
        return sorted(held, key=lambda values: (int(values["createdAtMs"]), values["serviceId"]))

    def by_phone(self, client_id: str, phone_number: str) -> list[Enrollment]:
        return [self._enrollment(v, with_pii=True) for v in self._on_number(client_id, phone_number)]

    def history(self, client_id: str, phone_number: str, short_tenure_since: datetime) -> NumberHistory:
        """Counts are of active identities; the dates are of every identity still held (active or not)."""
        held = [self._enrollment(v, with_pii=False) for v in self._on_number(client_id, phone_number)]
        active = [e for e in held if e.active]
        return NumberHistory(
            identities=len(active),
            short_tenure_identities=sum(1 for e in active if e.created_at >= short_tenure_since),
            first_associated=min(e.created_at for e in held).date() if held else None,
            last_associated=max(e.created_at for e in held) if held else None,
        )

    # --- pages -------------------------------------------------------------------------------

    @staticmethod
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

    def page(
        self, client_id: str, *, limit: int, after: str | None, include_inactive: bool
    ) -> EnrollmentPage:
        start = self._start(client_id, after) if after else None
        query: dict[str, Any] = {
            "TableName": self._table,
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
                response = self._db.query(**request)
            found.extend(plain(item) for item in response["Items"])
            start = response.get("LastEvaluatedKey")
            if start is None:
                break
        items = [self._enrollment(v, with_pii=False) for v in found[:limit] if self._held(v, client_id)]
        last = found[limit - 1]["createdSk"] if len(found) > limit else None
        return EnrollmentPage(items=items, last_position=last)

    def active_pages(self, page_size: int = 100) -> Iterator[list[Enrollment]]:
        request: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": "kind = :identity AND #status = :active",
            # Everything but the sealed PII: the monitor never needs it.
            "ProjectionExpression": "clientId, serviceId, phoneNumber, country, #status, createdAtMs, "
            "updatedAtMs, clientCustomerId",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {
                ":identity": {"S": _IDENTITY},
                ":active": {"S": Status.ACTIVE.value},
            },
            "Limit": page_size,
        }
        while True:
            with provider_errors("enrollment scan"):
                response = self._db.scan(**request)
            page = [self._enrollment(plain(item), with_pii=False) for item in response["Items"]]
            if page:
                yield page
            if not response.get("LastEvaluatedKey"):
                return
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    # --- the change monitor's state (attribute ``monitorState``; removed on disenroll) -----------

    def monitor_state(self, client_id: str, service_id: str) -> MonitorState | None:
        with provider_errors("monitor state read"):
            response = self._db.get_item(
                TableName=self._table,
                Key=_key(f"{client_id}#{service_id}"),
                ProjectionExpression="monitorState",
            )
        stored = plain(response.get("Item") or {}).get("monitorState")
        if not stored:
            return None
        decoded = json.loads(stored)
        return MonitorState(facts=decoded.get("facts", {}), checked_at=from_ms(decoded["checkedAtMs"]))

    def save_monitor_state(self, client_id: str, service_id: str, state: MonitorState) -> bool:
        assert state.checked_at is not None
        text = json.dumps({"facts": dict(state.facts), "checkedAtMs": ms(state.checked_at)})
        try:
            with provider_errors("monitor state write", condition_failed=_Conflict):
                self._db.update_item(
                    TableName=self._table,
                    Key=_key(f"{client_id}#{service_id}"),
                    UpdateExpression="SET monitorState = :state",
                    ConditionExpression="kind = :identity AND clientId = :client AND #status = :active",
                    ExpressionAttributeNames={"#status": "status"},
                    ExpressionAttributeValues=to_item(
                        {
                            ":state": text,
                            ":identity": _IDENTITY,
                            ":client": client_id,
                            ":active": Status.ACTIVE.value,
                        }
                    ),
                )
        except _Conflict:
            return False  # deactivated or disenrolled meanwhile
        return True

    # --- writes ------------------------------------------------------------------------------

    def _transact(self, items: list[dict[str, Any]], what: str) -> None:
        try:
            self._db.transact_write_items(TransactItems=items)
        except self._db.exceptions.TransactionCanceledException as error:
            reasons = error.response.get("CancellationReasons", [])
            raise _Cancelled([str(reason.get("Code", "None")) for reason in reasons]) from error
        except (ClientError, BotoCoreError) as error:
            raise internal_error(what, error) from error

    def enroll(self, enrollment: Enrollment) -> tuple[Enrollment, bool]:
        place = _place(enrollment)
        for _ in range(_ATTEMPTS):
            holder = self._read(place)
            if holder is None:
                items = [self._new_identity(enrollment), self._take_place(place, enrollment.service_id, None)]
            else:
                current = self._read(f"{enrollment.client_id}#{holder['serviceId']}")
                if current is not None and self._keeps_place(current, enrollment):
                    return self._enrollment(current, with_pii=False), False
                # An inactive identity without a clientCustomerId gives its place to the new one.
                items = [
                    self._new_identity(enrollment),
                    self._take_place(place, enrollment.service_id, holder["serviceId"]),
                ]
                if current is not None and current.get("place") == place:
                    items.append(self._leave_place(current["pk"], place))
            try:
                self._transact(items, "enrollment")
            except _Cancelled:
                continue  # the place changed hands meanwhile: look again
            return enrollment, True
        raise internal_error("enrollment: too many concurrent changes")

    def enroll_many(self, enrollments: Sequence[Enrollment]) -> list[tuple[Enrollment, bool] | PhoneIdError]:
        """``enroll`` of each, in order, as if one after another, in a few calls for all.

        The first enrollment of each place decides it; a later one of the same place gets that
        identity (``created`` False). Places are read with BatchGetItem; identities for free places
        are created in transactions of up to ``_GROUP`` (each identity with its place, so each stays
        atomic); a place about to change hands, a group whose transaction is cancelled (a place
        taken meanwhile: nothing of the group was written) and anything the bulk calls could not do
        go through ``enroll`` one by one, which looks again. An enrollment's own failure is its
        result; the others go on.
        """
        results: list[tuple[Enrollment, bool] | PhoneIdError | None] = [None] * len(enrollments)
        first_of: dict[str, int] = {}
        for index, enrollment in enumerate(enrollments):
            first_of.setdefault(_place(enrollment), index)
        one_by_one: list[int] = []
        try:
            free = self._settle_known(enrollments, first_of, results, one_by_one)
            sealed = dict(zip(free, self._seal_many([enrollments[i] for i in free]), strict=True))
            for group in _groups(free, _GROUP):
                pending = list(group)
                for _ in range(_ATTEMPTS):
                    refused = self._create_group([(enrollments[i], sealed[i]) for i in pending])
                    if refused is None:
                        for index in pending:
                            results[index] = (enrollments[index], True)
                        pending = []
                        break
                    # Those whose place was taken meanwhile look again one by one; the rest retry.
                    one_by_one.extend(pending[n] for n in refused)
                    pending = [index for n, index in enumerate(pending) if n not in refused]
                    if not pending:
                        break
                one_by_one.extend(pending)
        except PhoneIdError:
            one_by_one = [i for i in first_of.values() if results[i] is None]
        for index in sorted(one_by_one):
            results[index] = self._enroll_or_error(enrollments[index])
        for index, enrollment in enumerate(enrollments):
            if results[index] is not None:
                continue
            decided = results[first_of[_place(enrollment)]]
            if isinstance(decided, tuple):
                results[index] = (replace(decided[0], pii=None), False)
            else:  # the place's first enrollment failed: this one tries on its own
                results[index] = self._enroll_or_error(enrollment)
        settled = [result for result in results if result is not None]
        assert len(settled) == len(enrollments), "every enrollment has its result"
        return settled

    def _settle_known(
        self,
        enrollments: Sequence[Enrollment],
        first_of: Mapping[str, int],
        results: list[tuple[Enrollment, bool] | PhoneIdError | None],
        one_by_one: list[int],
    ) -> list[int]:
        """Read the places and their holders: a place held stays with its identity (its result is
        set), a place changing hands goes to ``one_by_one``; returns the firsts of free places."""
        holders, unread = self._read_many(list(first_of))
        holding = {
            f"{enrollments[first_of[place]].client_id}#{holder['serviceId']}"
            for place, holder in holders.items()
        }
        identities, unread_identities = self._read_many(sorted(holding))
        free: list[int] = []
        for place, index in first_of.items():
            enrollment = enrollments[index]
            holder = holders.get(place)
            if place in unread:
                one_by_one.append(index)
            elif holder is None:
                free.append(index)
            else:
                pk = f"{enrollment.client_id}#{holder['serviceId']}"
                current = identities.get(pk)
                if (
                    pk not in unread_identities
                    and current is not None
                    and self._keeps_place(current, enrollment)
                ):
                    results[index] = (self._enrollment(current, with_pii=False), False)
                else:
                    one_by_one.append(index)
        return free

    def _create_group(self, group: Sequence[tuple[Enrollment, bytes | None]]) -> set[int] | None:
        """Each identity with its free place, in one transaction. None when it was written; when it
        was cancelled, the positions in ``group`` whose items were refused (all when DynamoDB does
        not say which)."""
        items: list[dict[str, Any]] = []
        for enrollment, sealed_pii in group:
            items.append(self._identity_put(enrollment, sealed_pii))
            items.append(self._take_place(_place(enrollment), enrollment.service_id, None))
        try:
            self._transact(items, "enrollment")
        except _Cancelled as cancelled:
            refused = {n // 2 for n, code in enumerate(cancelled.codes) if code not in ("None", "")}
            return refused or set(range(len(group)))
        return None

    def _enroll_or_error(self, enrollment: Enrollment) -> tuple[Enrollment, bool] | PhoneIdError:
        try:
            return self.enroll(enrollment)
        except PhoneIdError as error:
            return error

    def _read_many(self, pks: Sequence[str]) -> tuple[dict[str, dict[str, Any]], set[str]]:
        """Consistent reads of ``pks``: (items found by pk, pks left unread)."""
        keys = [_key(pk) for pk in pks]
        items, unread = read_keys(
            self._db, self._table, keys, "enrollment read", provider_errors, consistent=True
        )
        found = {values["pk"]: values for values in map(plain, items)}
        return found, {str(key["pk"]["S"]) for key in unread}

    def _new_identity(self, enrollment: Enrollment) -> dict[str, Any]:
        """Built (PII sealed) only when it is written: a customer already enrolled costs no KMS call."""
        [sealed_pii] = self._seal_many([enrollment])
        return self._identity_put(enrollment, sealed_pii)

    def _identity_put(self, enrollment: Enrollment, sealed_pii: bytes | None) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self._table,
                "Item": self._item(enrollment, sealed_pii),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }

    def _take_place(self, place: str, service_id: str, previous: str | None) -> dict[str, Any]:
        put: dict[str, Any] = {
            "TableName": self._table,
            "Item": to_item({"pk": place, "kind": _PLACE, "serviceId": service_id}),
        }
        if previous is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "serviceId = :previous"
            put["ExpressionAttributeValues"] = {":previous": {"S": previous}}
        return {"Put": put}

    def _leave_place(self, pk: str, place: str) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._table,
                "Key": _key(pk),
                "UpdateExpression": "REMOVE #place",
                "ConditionExpression": "#place = :place",
                "ExpressionAttributeNames": {"#place": "place"},
                "ExpressionAttributeValues": {":place": {"S": place}},
            }
        }

    def apply(self, client_id: str, service_id: str, action: Action, now: datetime) -> Enrollment | None:
        if not is_service_id(service_id):
            return None
        if action == Action.DISENROLL:
            return self._disenroll(client_id, service_id, now)
        status = Status.ACTIVE if action == Action.ACTIVATE else Status.INACTIVE
        try:
            with provider_errors(f"enrollment {action.value}", condition_failed=_Conflict):
                response = self._db.update_item(
                    TableName=self._table,
                    Key=_key(f"{client_id}#{service_id}"),
                    UpdateExpression="SET #status = :status, updatedAtMs = :now",
                    ConditionExpression=(
                        "kind = :identity AND clientId = :client AND #status <> :disenrolled"
                    ),
                    ExpressionAttributeNames={"#status": "status"},
                    ExpressionAttributeValues=to_item(
                        {
                            ":status": status.value,
                            ":now": ms(now),
                            ":identity": _IDENTITY,
                            ":client": client_id,
                            ":disenrolled": Status.DISENROLLED.value,
                        }
                    ),
                    ReturnValues="ALL_NEW",
                )
        except _Conflict:
            return None
        return self._enrollment(plain(response["Attributes"]), with_pii=False)

    def _disenroll(self, client_id: str, service_id: str, now: datetime) -> Enrollment | None:
        pk = f"{client_id}#{service_id}"
        for _ in range(_ATTEMPTS):
            values = self._read(pk)
            if values is None or not self._held(values, client_id):
                return None
            place = values.get("place")
            enrollment = self._enrollment(values, with_pii=False).apply(Action.DISENROLL, now)
            assert enrollment.expires_at is not None
            tombstone = {
                "Update": {
                    "TableName": self._table,
                    "Key": _key(pk),
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
                            "TableName": self._table,
                            "Key": _key(place),
                            "ConditionExpression": "serviceId = :service",
                            "ExpressionAttributeValues": {":service": {"S": service_id}},
                        }
                    }
                )
            try:
                self._transact(items, "disenrollment")
            except _Cancelled:
                continue  # changed meanwhile (disenrolled, or its place taken): look again
            return enrollment
        raise internal_error("disenrollment: too many concurrent changes")
