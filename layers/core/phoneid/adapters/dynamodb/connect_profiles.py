"""Connect profiles in ConnectProfilesTable: the profile under ``name#{clientName}`` (the file-name
prefix the workflow looks up) and a pointer ``client#{clientId}`` → clientName (the operator's
commands name the client). Both are written in one transaction, so a name can never be held by two
clients, and a client never holds two names."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import error_code, internal_error, provider_errors
from phoneid.adapters.dynamodb.items import plain, to_item
from phoneid.domain.connect import ConnectProfile


def _name_key(client_name: str) -> dict[str, Any]:
    return {"pk": {"S": f"name#{client_name}"}}


def _client_key(client_id: str) -> dict[str, Any]:
    return {"pk": {"S": f"client#{client_id}"}}


class ClientNameTaken(ValueError):
    """The client name (file-name prefix, SFTP user) belongs to another client."""


class ProfileChanged(ValueError):
    """Another write changed the client's profile between its read and this write; nothing was written."""


class DynamoConnectProfiles:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    # --- reads -----------------------------------------------------------------------------------

    def get_by_name(self, client_name: str) -> ConnectProfile | None:
        with provider_errors("Connect profile read"):
            item = self._db.get_item(TableName=self._table, Key=_name_key(client_name), ConsistentRead=True)
        found = item.get("Item")
        return self._profile(plain(found)) if found else None

    def get_by_client(self, client_id: str) -> ConnectProfile | None:
        name = self._name_of(client_id)
        if name is None:
            return None
        profile = self.get_by_name(name)
        # A pointer outliving its profile (or a name reused since) is no profile of this client.
        return profile if profile is not None and profile.client_id == client_id else None

    def _name_of(self, client_id: str) -> str | None:
        with provider_errors("Connect profile read"):
            item = self._db.get_item(TableName=self._table, Key=_client_key(client_id), ConsistentRead=True)
        found = item.get("Item")
        return str(found["clientName"]["S"]) if found else None

    # --- writes ----------------------------------------------------------------------------------

    def put(self, profile: ConnectProfile) -> None:
        """Create or replace the client's profile; a name another client holds is refused with
        ``ClientNameTaken`` (a ValueError), writing nothing. A client renamed gives its old name up."""
        previous = self._name_of(profile.client_id)
        client_id = {":client": {"S": profile.client_id}}
        actions: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": {**_name_key(profile.client_name), **to_item(self._values(profile))},
                    "ConditionExpression": "attribute_not_exists(pk) OR clientId = :client",
                    "ExpressionAttributeValues": client_id,
                }
            },
            {
                "Put": {
                    "TableName": self._table,
                    "Item": {
                        **_client_key(profile.client_id),
                        **to_item({"clientId": profile.client_id, "clientName": profile.client_name}),
                    },
                    # Nobody changed the pointer since it was read: two renames cannot both win.
                    **(
                        {
                            "ConditionExpression": "clientName = :previous",
                            "ExpressionAttributeValues": {":previous": {"S": previous}},
                        }
                        if previous is not None
                        else {"ConditionExpression": "attribute_not_exists(pk)"}
                    ),
                }
            },
        ]
        if previous is not None and previous != profile.client_name:
            actions.append(
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": _name_key(previous),
                        "ConditionExpression": "attribute_not_exists(pk) OR clientId = :client",
                        "ExpressionAttributeValues": client_id,
                    }
                }
            )
        self._transact(actions, f"the client name {profile.client_name!r} belongs to another client")

    def delete(self, client_id: str) -> bool:
        """Remove the client's profile and pointer; False when the client has none."""
        name = self._name_of(client_id)
        if name is None:
            return False
        self._transact(
            [
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": _name_key(name),
                        "ConditionExpression": "attribute_not_exists(pk) OR clientId = :client",
                        "ExpressionAttributeValues": {":client": {"S": client_id}},
                    }
                },
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": _client_key(client_id),
                        "ConditionExpression": "clientName = :name",
                        "ExpressionAttributeValues": {":name": {"S": name}},
                    }
                },
            ],
            "",
        )
        return True

    def _transact(self, actions: list[dict[str, Any]], name_taken: str) -> None:
        """Write ``actions`` at once. The first action's failed condition means ``name_taken`` (when
        given); any other failed condition means a concurrent change."""
        try:
            self._db.transact_write_items(TransactItems=actions)
        except ClientError as error:
            if error_code(error) != "TransactionCanceledException":
                raise internal_error("Connect profile write", error) from error
            reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
            if name_taken and reasons[:1] == ["ConditionalCheckFailed"]:
                raise ClientNameTaken(name_taken) from error
            raise ProfileChanged(
                "the Connect profile changed meanwhile; nothing was written, try again"
            ) from error
        except BotoCoreError as error:
            raise internal_error("Connect profile write", error) from error

    # --- mapping ---------------------------------------------------------------------------------

    @staticmethod
    def _values(profile: ConnectProfile) -> dict[str, Any]:
        return {
            "clientId": profile.client_id,
            "clientName": profile.client_name,
            "types": sorted(profile.types),
            "enrollKeyHash": profile.enroll_key_hash,
            "emails": list(profile.emails),
            "sshPublicKeys": list(profile.ssh_public_keys),
            "createdAt": profile.created_at.isoformat() if profile.created_at else None,
        }

    @staticmethod
    def _profile(values: Mapping[str, Any]) -> ConnectProfile:
        created = values.get("createdAt")
        return ConnectProfile(
            client_id=str(values["clientId"]),
            client_name=str(values["clientName"]),
            types=frozenset(str(t) for t in values.get("types", ())),
            enroll_key_hash=str(values["enrollKeyHash"]),
            emails=tuple(str(e) for e in values.get("emails", ())),
            ssh_public_keys=tuple(str(k) for k in values.get("sshPublicKeys", ())),
            created_at=datetime.fromisoformat(created) if created else None,
        )
