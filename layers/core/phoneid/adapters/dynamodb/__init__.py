"""DynamoDB adapters. Items are mapped explicitly; every state change is one conditional write."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.batch import read_keys
from phoneid.adapters.dynamodb.items import TTL_GRACE_SECONDS, from_ms, ms, plain, to_item
from phoneid.domain.clients import Client, Flag, Solution
from phoneid.domain.devicekeys import DeviceKey, KeyStatus
from phoneid.domain.flow import Step
from phoneid.domain.identity import Address, Business, Identity
from phoneid.domain.possession import Method, MobileAuth, PossessionState
from phoneid.domain.possession import Status as PossessionStatus
from phoneid.domain.session import Challenge, SealedChallenge, Session, Socket, TransitionRejected, Unify
from phoneid.domain.webhooks import Webhook
from phoneid.ports import PiiCipher

_item, _plain, _ms, _from_ms, _TTL_GRACE_SECONDS = to_item, plain, ms, from_ms, TTL_GRACE_SECONDS


class _Spent(Exception):
    """A refresh token that is unknown, already used or expired."""


def _possession_map(state: PossessionState) -> dict[str, Any]:
    return {
        "status": state.status.value,
        "method": state.method.value if state.method else None,
        "mobileAuth": state.mobile_auth.value,
        "mobileAuthState": state.mobile_auth_state,
        "sends": state.sends,
        "entries": state.entries,
        "numbers": state.numbers,
        "codeDigest": state.code_digest,
        "codeSentAtMs": _ms(state.code_sent_at) if state.code_sent_at else None,
        "linkDigest": state.link_digest,
        "linkSentAtMs": _ms(state.link_sent_at) if state.link_sent_at else None,
        "lastError": state.last_error,
    }


def _possession_state(values: Mapping[str, Any]) -> PossessionState:
    return PossessionState(
        status=PossessionStatus(values["status"]),
        method=Method(values["method"]) if values.get("method") else None,
        mobile_auth=MobileAuth(values.get("mobileAuth", MobileAuth.NOT_TRIED.value)),
        mobile_auth_state=values.get("mobileAuthState"),
        sends=int(values.get("sends", 0)),
        entries=int(values.get("entries", 0)),
        numbers=int(values.get("numbers", 0)),
        code_digest=values.get("codeDigest"),
        code_sent_at=_from_ms(values["codeSentAtMs"]) if values.get("codeSentAtMs") else None,
        link_digest=values.get("linkDigest"),
        link_sent_at=_from_ms(values["linkSentAtMs"]) if values.get("linkSentAtMs") else None,
        last_error=values.get("lastError"),
    )


def _unify_map(unify: Unify) -> dict[str, Any]:
    values = {
        "possessionType": unify.possession_type,
        "nonce": unify.nonce,
        "rebind": unify.rebind,
        "checkReputation": unify.check_reputation,
        "requestedDeviceId": unify.requested_device_id,
        "clientCustomerId": unify.client_customer_id,
        "provenDeviceId": unify.proven_device_id,
        "rebindDeviceId": unify.rebind_device_id,
        "registeredDeviceId": unify.registered_device_id,
        "registeredJwk": dict(unify.registered_jwk) if unify.registered_jwk else None,
        "keyMismatch": unify.key_mismatch,
        "keyRevoked": unify.key_revoked,
    }
    return {k: v for k, v in values.items() if v is not None}


def _unify(values: Mapping[str, Any]) -> Unify:
    jwk = values.get("registeredJwk")
    return Unify(
        possession_type=values["possessionType"],
        nonce=values["nonce"],
        rebind=bool(values.get("rebind", False)),
        check_reputation=bool(values.get("checkReputation", False)),
        requested_device_id=values.get("requestedDeviceId"),
        client_customer_id=values.get("clientCustomerId"),
        proven_device_id=values.get("provenDeviceId"),
        rebind_device_id=values.get("rebindDeviceId"),
        registered_device_id=values.get("registeredDeviceId"),
        registered_jwk=tuple(sorted((str(k), str(v)) for k, v in jwk.items())) if jwk else None,
        key_mismatch=bool(values.get("keyMismatch", False)),
        key_revoked=bool(values.get("keyRevoked", False)),
    )


class DynamoDeviceKeyStore:
    """Device keys keyed by client and deviceId: no client can see, use or revoke another's."""

    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    @staticmethod
    def _key(client_id: str, device_id: str) -> dict[str, Any]:
        return {"pk": {"S": f"{client_id}#{device_id}"}}

    def put_request(self, key: DeviceKey) -> dict[str, Any]:
        values = {
            "clientId": key.client_id,
            "deviceId": key.device_id,
            "publicKey": dict(key.public_jwk),
            "phoneNumber": key.phone_number,
            "status": key.status.value,
            "createdAtMs": _ms(key.created_at),
            "lastUsedAtMs": _ms(key.last_used_at),
        }
        return {
            "TableName": self._table,
            "Item": {**self._key(key.client_id, key.device_id), **_item(values)},
            # A deviceId is never taken over by another client.
            "ConditionExpression": "attribute_not_exists(pk) OR clientId = :client",
            "ExpressionAttributeValues": {":client": {"S": key.client_id}},
        }

    def get(self, client_id: str, device_id: str) -> DeviceKey | None:
        with provider_errors("device key read"):
            response = self._db.get_item(
                TableName=self._table, Key=self._key(client_id, device_id), ConsistentRead=True
            )
        item = response.get("Item")
        if not item:
            return None
        values = _plain(item)
        return DeviceKey(
            client_id=values["clientId"],
            device_id=values["deviceId"],
            public_jwk={str(k): str(v) for k, v in values["publicKey"].items()},
            phone_number=values.get("phoneNumber"),
            status=KeyStatus(values["status"]),
            created_at=_from_ms(values["createdAtMs"]),
            last_used_at=_from_ms(values["lastUsedAtMs"]),
        )

    def revoke(self, client_id: str, device_id: str) -> bool:
        """Revoke the client's key; False when the client has no such key."""
        try:
            with provider_errors("device key revoke", condition_failed=_Spent):
                self._db.update_item(
                    TableName=self._table,
                    Key=self._key(client_id, device_id),
                    UpdateExpression="SET #status = :revoked",
                    ConditionExpression="attribute_exists(pk) AND clientId = :client",
                    ExpressionAttributeNames={"#status": "status"},
                    ExpressionAttributeValues={
                        ":revoked": {"S": KeyStatus.REVOKED.value},
                        ":client": {"S": client_id},
                    },
                )
        except _Spent:
            return False
        return True


class DynamoSessionStore:
    """Sessions keyed by client and correlationId, so one client can never address another's.

    Every write is conditional on the version read and on the session not having expired.
    """

    def __init__(self, dynamodb: Any, table: str, cipher: PiiCipher, keys: DynamoDeviceKeyStore) -> None:
        self._db = dynamodb
        self._table = table
        self._cipher = cipher
        self._keys = keys

    @staticmethod
    def _key(client_id: str, correlation_id: str) -> dict[str, Any]:
        return {"pk": {"S": f"{client_id}#{correlation_id}"}}

    @staticmethod
    def _context(session: Session) -> dict[str, str]:
        return {"clientId": session.client_id, "correlationId": session.correlation_id, "use": "challenge"}

    def _seal(self, session: Session) -> bytes | None:
        challenge = session.challenge
        if challenge.missing:
            return None
        plaintext = json.dumps({"ssn": challenge.ssn, "dob": challenge.dob}).encode()
        return self._cipher.encrypt(plaintext, self._context(session))

    @staticmethod
    def _values(session: Session) -> dict[str, Any]:
        """Every attribute but the key and the sealed PII, as plain values (None: absent)."""
        expires_ms = _ms(session.expires_at)
        return {
            "clientId": session.client_id,
            "correlationId": session.correlation_id,
            "flowType": session.flow_type,
            "createdAtMs": _ms(session.created_at),
            "expiresAtMs": expires_ms,
            "ttl": expires_ms // 1000 + _TTL_GRACE_SECONDS,
            "nextStep": session.next_step.value,
            "answered": sorted(s.value for s in session.answered),
            "phoneNumber": session.phone_number,
            "possession": {k: v for k, v in _possession_map(session.possession).items() if v is not None},
            "allowOtpRetry": session.allow_otp_retry,
            "finalTargetUrl": session.final_target_url,
            "sandboxScenario": session.sandbox_scenario,
            "smsMessage": session.sms_message,
            "otpLength": session.otp_length,
            "socketEndpoint": session.socket.endpoint if session.socket else None,
            "socketConnection": session.socket.connection_id if session.socket else None,
            "unify": _unify_map(session.unify) if session.unify else None,
            "version": session.version,
        }

    def _to_session(self, values: Mapping[str, Any]) -> Session:
        session = Session(
            client_id=values["clientId"],
            correlation_id=values["correlationId"],
            flow_type=values["flowType"],
            created_at=_from_ms(values["createdAtMs"]),
            next_step=Step(values["nextStep"]),
            answered=frozenset(Step(s) for s in values.get("answered", ())),
            phone_number=values.get("phoneNumber"),
            possession=_possession_state(values["possession"]),
            allow_otp_retry=bool(values.get("allowOtpRetry", False)),
            final_target_url=values.get("finalTargetUrl"),
            sandbox_scenario=values.get("sandboxScenario"),
            sms_message=values.get("smsMessage"),
            otp_length=int(values.get("otpLength", 6)),
            socket=Socket(values["socketEndpoint"], values["socketConnection"])
            if values.get("socketConnection")
            else None,
            unify=_unify(values["unify"]) if values.get("unify") else None,
            version=int(values.get("version", 0)),
        )
        sealed = values.get("pii")
        if sealed is None:
            return session

        def opened() -> Challenge:
            plain = json.loads(self._cipher.decrypt(bytes(sealed), self._context(session)))
            return Challenge(ssn=plain["ssn"], dob=plain["dob"])

        return replace(session, challenge=SealedChallenge(opened))

    def create(self, session: Session) -> None:
        item = {
            **self._key(session.client_id, session.correlation_id),
            **_item({**self._values(session), "pii": self._seal(session)}),
        }
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

    def save(self, old: Session, new: Session, now: datetime, keys: Sequence[DeviceKey] = ()) -> Session:
        saved = replace(new, version=old.version + 1)
        update = self._update(old, saved, now)
        if not keys:
            with provider_errors("session update", condition_failed=TransitionRejected):
                self._db.update_item(**update)
            return saved
        # The session's change and the device keys it binds are written together or not at all.
        items = [{"Update": update}] + [{"Put": self._keys.put_request(key)} for key in keys]
        try:
            self._db.transact_write_items(TransactItems=items)
        except self._db.exceptions.TransactionCanceledException as error:
            reasons = error.response.get("CancellationReasons", [])
            if reasons and reasons[0].get("Code") == "ConditionalCheckFailed":
                raise TransitionRejected() from error
            raise internal_error("key binding", error) from error
        except (ClientError, BotoCoreError) as error:
            raise internal_error("key binding", error) from error
        return saved

    def _update(self, old: Session, saved: Session, now: datetime) -> dict[str, Any]:
        """One UpdateItem of the changed attributes, conditional on the version read and on expiry."""
        before, after = self._values(old), self._values(saved)
        names: dict[str, str] = {}
        values: dict[str, Any] = {":read": old.version, ":now": _ms(now)}
        sets: list[str] = []
        removes: list[str] = []
        for index, (attribute, value) in enumerate(after.items()):
            if value == before.get(attribute):
                continue
            names[f"#a{index}"] = attribute
            if value is None:
                removes.append(f"#a{index}")
            else:
                sets.append(f"#a{index} = :v{index}")
                values[f":v{index}"] = value
        if saved.challenge is not old.challenge and saved.challenge != old.challenge:
            names["#pii"] = "pii"
            sealed = self._seal(saved)
            if sealed is None:
                removes.append("#pii")
            else:
                sets.append("#pii = :pii")
                values[":pii"] = sealed
        names["#version"] = "version"
        names["#expires"] = "expiresAtMs"
        expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
        return {
            "TableName": self._table,
            "Key": self._key(old.client_id, old.correlation_id),
            "UpdateExpression": expression,
            "ConditionExpression": "#version = :read AND #expires > :now",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": _item(values),
        }

    def put_pointer(self, kind: str, secret_hash: str, session: Session) -> None:
        expires_ms = _ms(session.expires_at)
        item = _item(
            {
                "pk": f"{kind}#{secret_hash}",
                "clientId": session.client_id,
                "correlationId": session.correlation_id,
                "expiresAtMs": expires_ms,
                "ttl": expires_ms // 1000 + _TTL_GRACE_SECONDS,
            }
        )
        with provider_errors("session pointer write"):
            self._db.put_item(TableName=self._table, Item=item)

    def find_pointer(self, kind: str, secret_hash: str, now: datetime) -> tuple[str, str] | None:
        with provider_errors("session pointer read"):
            response = self._db.get_item(
                TableName=self._table, Key={"pk": {"S": f"{kind}#{secret_hash}"}}, ConsistentRead=True
            )
        item = response.get("Item")
        if not item:
            return None
        values = _plain(item)
        if int(values["expiresAtMs"]) <= _ms(now):
            return None
        return str(values["clientId"]), str(values["correlationId"])


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
            "publicApiKey": client.public_api_key,
            "policy": json.dumps(client.policy, separators=(",", ":")) if client.policy else None,
            "webhookUrl": client.webhook.url if client.webhook else None,
            "webhookSecret": client.webhook.secret_sealed if client.webhook else None,  # sealed by KMS
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
            public_api_key=values.get("publicApiKey", ""),
            policy=json.loads(values["policy"]) if values.get("policy") else None,
            webhook=Webhook(url=values["webhookUrl"], secret_sealed=bytes(values["webhookSecret"]))
            if values.get("webhookUrl") and values.get("webhookSecret")
            else None,
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
        return _item(
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
        values = _plain(item)
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


class _NothingToRelease(Exception):
    pass


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

    def release(self, key: str, window_start: int) -> None:
        try:
            with provider_errors("rate limit", condition_failed=_NothingToRelease):
                self._db.update_item(
                    TableName=self._table,
                    Key={"pk": {"S": f"{key}#{window_start}"}},
                    UpdateExpression="ADD hits :minus_one",
                    ConditionExpression="hits > :zero",
                    ExpressionAttributeValues={":minus_one": {"N": "-1"}, ":zero": {"N": "0"}},
                )
        except _NothingToRelease:
            pass  # never below zero: a window that expired meanwhile has nothing to give back

    def counts(self, keys: Sequence[tuple[str, int]]) -> list[int]:
        names = [f"{key}#{window_start}" for key, window_start in keys]
        items, unread = read_keys(
            self._db,
            self._table,
            [{"pk": {"S": name}} for name in dict.fromkeys(names)],
            "rate limit",
            provider_errors,
            consistent=True,
        )
        if unread:
            raise internal_error("rate limit")
        found = {item["pk"]["S"]: int(item["hits"]["N"]) for item in items}
        return [found.get(name, 0) for name in names]
