"""DynamoDB adapters. Items are mapped explicitly; every state change is one conditional write."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from phoneid.adapters.aws import provider_errors
from phoneid.domain.clients import Client, Flag, Solution
from phoneid.domain.flow import Step
from phoneid.domain.identity import Address, Identity
from phoneid.domain.session import Challenge, Possession, Session, Transition, TransitionRejected
from phoneid.ports import PiiCipher

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

# Expired items are deleted by TTL some time after expiry; code never relies on it.
_TTL_GRACE_SECONDS = 24 * 3600


def _item(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(v) for k, v in values.items() if v is not None}


def _plain(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _from_ms(value: Any) -> datetime:
    return datetime.fromtimestamp(int(value) / 1000, UTC)


class _Spent(Exception):
    """A refresh token that is unknown, already used or expired."""


class DynamoSessionStore:
    """Sessions keyed by client and correlationId, so one client can never address another's."""

    def __init__(self, dynamodb: Any, table: str, cipher: PiiCipher) -> None:
        self._db = dynamodb
        self._table = table
        self._cipher = cipher

    @staticmethod
    def _key(client_id: str, correlation_id: str) -> dict[str, Any]:
        return {"pk": {"S": f"{client_id}#{correlation_id}"}}

    @staticmethod
    def _context(session: Session) -> dict[str, str]:
        return {"clientId": session.client_id, "correlationId": session.correlation_id, "use": "challenge"}

    def _seal(self, session: Session, challenge: Challenge) -> bytes | None:
        if challenge.missing:
            return None
        plaintext = json.dumps({"ssn": challenge.ssn, "dob": challenge.dob}).encode()
        return self._cipher.encrypt(plaintext, self._context(session))

    def _to_session(self, values: Mapping[str, Any]) -> Session:
        session = Session(
            client_id=values["clientId"],
            correlation_id=values["correlationId"],
            flow_type=values["flowType"],
            created_at=_from_ms(values["createdAtMs"]),
            next_step=Step(values["nextStep"]),
            answered=frozenset(Step(s) for s in values.get("answered", ())),
            phone_number=values.get("phoneNumber"),
            possession=Possession(values["possession"]),
            allow_otp_retry=bool(values.get("allowOtpRetry", False)),
            final_target_url=values.get("finalTargetUrl"),
            sandbox_scenario=values.get("sandboxScenario"),
        )
        sealed = values.get("pii")
        if sealed is None:
            return session
        opened = json.loads(self._cipher.decrypt(bytes(sealed), self._context(session)))
        return Session(**{**session.__dict__, "challenge": Challenge(ssn=opened["ssn"], dob=opened["dob"])})

    def create(self, session: Session) -> None:
        expires_ms = _ms(session.expires_at)
        values = {
            "clientId": session.client_id,
            "correlationId": session.correlation_id,
            "flowType": session.flow_type,
            "createdAtMs": _ms(session.created_at),
            "expiresAtMs": expires_ms,
            "ttl": expires_ms // 1000 + _TTL_GRACE_SECONDS,
            "nextStep": session.next_step.value,
            "answered": {s.value for s in session.answered},
            "phoneNumber": session.phone_number,
            "possession": session.possession.value,
            "allowOtpRetry": session.allow_otp_retry,
            "finalTargetUrl": session.final_target_url,
            "sandboxScenario": session.sandbox_scenario,
            "pii": self._seal(session, session.challenge),
        }
        item = {**self._key(session.client_id, session.correlation_id), **_item(values)}
        with provider_errors("session create"):
            self._db.put_item(
                TableName=self._table, Item=item, ConditionExpression="attribute_not_exists(pk)"
            )

    def get(self, client_id: str, correlation_id: str) -> Session | None:
        with provider_errors("session read"):
            response = self._db.get_item(
                TableName=self._table, Key=self._key(client_id, correlation_id), ConsistentRead=True
            )
        item = response.get("Item")
        return self._to_session(_plain(item)) if item else None

    def apply(self, session: Session, transition: Transition, now: datetime) -> Session:
        sets = ["nextStep = :next"]
        values: dict[str, Any] = {
            ":next": transition.next_step.value,
            ":called": transition.called.value,
            ":answered": {transition.called.value},
            ":now": _ms(now),
        }
        if transition.possession is not None:
            sets.append("possession = :possession")
            values[":possession"] = transition.possession.value
        if transition.challenge is not None and not transition.challenge.missing:
            sets.append("pii = :pii")
            values[":pii"] = self._seal(session, transition.challenge)
        with provider_errors("session update", condition_failed=TransitionRejected):
            response = self._db.update_item(
                TableName=self._table,
                Key=self._key(session.client_id, session.correlation_id),
                UpdateExpression=f"SET {', '.join(sets)} ADD answered :answered",
                ConditionExpression="nextStep = :called AND expiresAtMs > :now",
                ExpressionAttributeValues=_item(values),
                ReturnValues="ALL_NEW",
            )
        return self._to_session(_plain(response["Attributes"]))


class DynamoClientStore:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def put(self, client: Client) -> None:
        values = {
            "clientId": client.client_id,
            "tier": client.tier,
            "region": client.region,
            "solution": client.solution.value,
            "secretHash": client.secret_hash,
            "createdAt": client.created_at.isoformat(),
            "name": client.name,
            "allowedCountries": sorted(client.allowed_countries),
            "flags": sorted(f.value for f in client.flags),
            "enabled": client.enabled,
        }
        with provider_errors("client write"):
            self._db.put_item(TableName=self._table, Item=_item(values))

    @staticmethod
    def _to_client(values: Mapping[str, Any]) -> Client:
        return Client(
            client_id=values["clientId"],
            tier=values["tier"],
            region=values["region"],
            solution=Solution(values["solution"]),
            secret_hash=values["secretHash"],
            created_at=datetime.fromisoformat(values["createdAt"]),
            name=values.get("name", ""),
            allowed_countries=frozenset(values.get("allowedCountries", ())),
            flags=frozenset(Flag(f) for f in values.get("flags", ())),
            enabled=bool(values.get("enabled", True)),
        )

    def get(self, client_id: str) -> Client | None:
        with provider_errors("client read"):
            response = self._db.get_item(TableName=self._table, Key={"clientId": {"S": client_id}})
        item = response.get("Item")
        return self._to_client(_plain(item)) if item else None

    def list(self) -> list[Client]:
        clients: list[Client] = []
        with provider_errors("client list"):
            for page in self._db.get_paginator("scan").paginate(TableName=self._table):
                clients.extend(self._to_client(_plain(item)) for item in page["Items"])
        return sorted(clients, key=lambda c: c.created_at)


class DynamoRefreshTokenStore:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def put(self, token_hash: str, client_id: str, expires_at: datetime) -> None:
        values = {
            "tokenHash": token_hash,
            "clientId": client_id,
            "expiresAtMs": _ms(expires_at),
            "ttl": int(expires_at.timestamp()) + _TTL_GRACE_SECONDS,
        }
        with provider_errors("refresh token write"):
            self._db.put_item(TableName=self._table, Item=_item(values))

    def consume(self, token_hash: str, client_id: str, now: datetime) -> bool:
        try:
            with provider_errors("refresh token use", condition_failed=_Spent):
                self._db.delete_item(
                    TableName=self._table,
                    Key={"tokenHash": {"S": token_hash}},
                    ConditionExpression="clientId = :client AND expiresAtMs > :now",
                    ExpressionAttributeValues={":client": {"S": client_id}, ":now": {"N": str(_ms(now))}},
                )
        except _Spent:
            return False
        return True


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
        return _item(
            {
                "phoneNumber": identity.phone_number,
                "firstName": identity.first_name,
                "lastName": identity.last_name,
                "addresses": [
                    {k: v for k, v in a.__dict__.items() if v is not None} for a in identity.addresses
                ],
                "emailAddresses": list(identity.email_addresses),
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
        values = _plain(item)
        opened = json.loads(self._cipher.decrypt(bytes(values["pii"]), self._context(phone_number)))
        return Identity(
            phone_number=phone_number,
            first_name=values["firstName"],
            last_name=values["lastName"],
            dob=opened["dob"],
            ssn=opened["ssn"],
            addresses=tuple(
                Address(
                    address=a.get("address"),
                    city=a.get("city"),
                    region=a.get("region"),
                    postal_code=a.get("postal_code"),
                )
                for a in values.get("addresses", ())
            ),
            email_addresses=tuple(values.get("emailAddresses", ())),
        )


class DynamoRateLimiter:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def hit(self, key: str, window_start: int, ttl_seconds: int) -> int:
        with provider_errors("rate limit"):
            response = self._db.update_item(
                TableName=self._table,
                Key={"pk": {"S": f"{key}#{window_start}"}},
                UpdateExpression="ADD hits :one SET #ttl = if_not_exists(#ttl, :ttl)",
                ExpressionAttributeNames={"#ttl": "ttl"},
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":ttl": {"N": str(window_start + ttl_seconds)},
                },
                ReturnValues="UPDATED_NEW",
            )
        return int(response["Attributes"]["hits"]["N"])
