"""The sessions table: one item per client and correlationId (pk ``{clientId}#{correlationId}``),
and the pointers that find a session from a link or Mobile Auth state (pk ``{kind}#{secretHash}``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.device_keys import DynamoDeviceKeyStore
from phoneid.adapters.dynamodb.items import TTL_GRACE_SECONDS, from_ms, ms, plain, to_item
from phoneid.domain.devicekeys import DeviceKey
from phoneid.domain.flow import Step
from phoneid.domain.possession import Method, MobileAuth, PossessionState
from phoneid.domain.possession import Status as PossessionStatus
from phoneid.domain.session import Challenge, SealedChallenge, Session, Socket, TransitionRejected, Unify
from phoneid.ports import PiiCipher


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
        "codeSentAtMs": ms(state.code_sent_at) if state.code_sent_at else None,
        "linkDigest": state.link_digest,
        "linkSentAtMs": ms(state.link_sent_at) if state.link_sent_at else None,
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
        code_sent_at=from_ms(values["codeSentAtMs"]) if values.get("codeSentAtMs") else None,
        link_digest=values.get("linkDigest"),
        link_sent_at=from_ms(values["linkSentAtMs"]) if values.get("linkSentAtMs") else None,
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
        expires_ms = ms(session.expires_at)
        return {
            "clientId": session.client_id,
            "correlationId": session.correlation_id,
            "flowType": session.flow_type,
            "createdAtMs": ms(session.created_at),
            "expiresAtMs": expires_ms,
            "ttl": expires_ms // 1000 + TTL_GRACE_SECONDS,
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
            created_at=from_ms(values["createdAtMs"]),
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
            secret = json.loads(self._cipher.decrypt(bytes(sealed), self._context(session)))
            return Challenge(ssn=secret["ssn"], dob=secret["dob"])

        return replace(session, challenge=SealedChallenge(opened))

    def expired(self, image: Mapping[str, Any]) -> Session | None:
        """The session a stream's image of a deleted item held (DynamoDB's attribute values), or
        None for the table's other items (the pointers to sessions)."""
        values = plain(image)
        if "correlationId" not in values or "nextStep" not in values:
            return None
        return self._to_session(values)

    def create(self, session: Session) -> None:
        item = {
            **self._key(session.client_id, session.correlation_id),
            **to_item({**self._values(session), "pii": self._seal(session)}),
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
        return self._to_session(plain(item)) if item else None

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
        values: dict[str, Any] = {":read": old.version, ":now": ms(now)}
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
            "ExpressionAttributeValues": to_item(values),
        }

    def put_pointer(self, kind: str, secret_hash: str, session: Session) -> None:
        expires_ms = ms(session.expires_at)
        item = to_item(
            {
                "pk": f"{kind}#{secret_hash}",
                "clientId": session.client_id,
                "correlationId": session.correlation_id,
                "expiresAtMs": expires_ms,
                "ttl": expires_ms // 1000 + TTL_GRACE_SECONDS,
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
        values = plain(item)
        if int(values["expiresAtMs"]) <= ms(now):
            return None
        return str(values["clientId"]), str(values["correlationId"])
