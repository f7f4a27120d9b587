"""Operator tasks on API clients: create (the secret is shown once, stored only as a hash) and list."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from phoneid.domain.clients import ALL_COUNTRIES, DEFAULT_FLAGS, Client, Flag, Solution, Tier
from phoneid.domain.credentials import hash_secret, new_client_id, new_client_secret
from phoneid.domain.phone import EUROPE, Region
from phoneid.domain.policy import parse_policy
from phoneid.domain.webhooks import InvalidWebhookUrl, Webhook, check_url, new_secret, secret_context
from phoneid.ports import ClientStore, Clock, PiiCipher

# A secret set by hand must resist guessing like a generated one (43 random characters).
MIN_CLIENT_SECRET_LENGTH = 32
CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class NewClient:
    client: Client
    client_secret: str  # shown once; only its hash is stored


# The "what to do" half of an unknown client id (only the operator's command line meets it).
_LIST_THEM = "list them with phoneid clients list"


class InvalidClientSpec(ValueError):
    pass


@dataclass(frozen=True)
class RegisteredWebhook:
    client: Client
    secret: str  # shown once; stored only sealed by KMS


class ClientAdmin:
    def __init__(
        self,
        clients: ClientStore,
        clock: Clock,
        tier: Tier,
        region: Region,
        *,
        cipher: PiiCipher | None = None,
        loopback_webhooks: bool = False,
    ) -> None:
        self._clients = clients
        self._clock = clock
        self._tier = tier
        self._region = region
        self._cipher = cipher  # seals webhook secrets
        self._loopback_webhooks = loopback_webhooks  # the local stack's receivers on this machine

    def create(
        self,
        *,
        solution: Solution = Solution.IDENTITY,
        name: str = "",
        countries: Iterable[str] = (ALL_COUNTRIES,),
        flags: Iterable[Flag] = DEFAULT_FLAGS,
        client_id: str | None = None,
        client_secret: str | None = None,
        tier: Tier | None = None,
        region: Region | None = None,
    ) -> NewClient:
        """A client of this stack's tier and region unless told otherwise (such credentials get 401 here)."""
        tier = tier or self._tier
        region = region or self._region
        allowed = frozenset(c.strip().upper() for c in countries if c.strip())
        foreign = {c for c in allowed - {ALL_COUNTRIES} if (c in EUROPE) != (region == "EU")}
        if not allowed or (foreign and ALL_COUNTRIES not in allowed):
            raise InvalidClientSpec(
                f"countries must be '*' or ISO codes served by the {region} region; not {sorted(foreign)}"
            )
        if client_id is not None and not CLIENT_ID.fullmatch(client_id):
            # Keys across the tables are "{clientId}#...": a "#" would let one client's keys be another's.
            raise InvalidClientSpec("a client id is 1 to 64 letters, digits, '-' or '_'")
        if client_secret is not None and len(client_secret) < MIN_CLIENT_SECRET_LENGTH:
            raise InvalidClientSpec(
                f"a client secret must have at least {MIN_CLIENT_SECRET_LENGTH} characters"
            )
        secret = client_secret or new_client_secret()
        client = Client(
            client_id=client_id or new_client_id(),
            tier=tier,
            region=region,
            solution=solution,
            secret_hash=hash_secret(secret),
            created_at=self._clock.now(),
            name=name,
            allowed_countries=allowed,
            flags=frozenset(Flag(flag) for flag in flags),
            public_api_key=f"pk_{secrets.token_urlsafe(18)}",
        )
        self._clients.put(client)
        return NewClient(client=client, client_secret=secret)

    def list(self) -> list[Client]:
        return self._clients.list()

    def update(
        self, client_id: str, *, policy: Mapping[str, Any] | None = None, default_policy: bool = False
    ) -> Client:
        """Give the client its own fraud policy (validated by the caller), or back to the default.

        Requests use it within a minute (each container rereads a client's policy once a minute)."""
        client = self._clients.get(client_id)
        if client is None:
            raise InvalidClientSpec(f"no client {client_id}: {_LIST_THEM}")
        if default_policy:
            updated = replace(client, policy=None)
        elif policy is not None:
            parse_policy(dict(policy))
            updated = replace(client, policy=dict(policy))
        else:
            return client
        self._clients.put(updated)
        return updated

    def set_webhook(self, client_id: str, url: str) -> RegisteredWebhook:
        """Register (or replace) the client's webhook with a new signing secret, returned once.

        The URL must be https to a public host (``check_url``; loopback too on the local stack). The
        secret must sign every delivery later, so it cannot be hashed: it is sealed by the PII key
        with the context {clientId, use: webhook}. Registering again replaces URL and secret."""
        client = self._clients.get(client_id)
        if client is None:
            raise InvalidClientSpec(f"no client {client_id}: {_LIST_THEM}")
        if self._cipher is None:
            raise InvalidClientSpec("this stack cannot seal webhook secrets (no PII key)")
        try:
            checked = check_url(url, allow_loopback=self._loopback_webhooks)
        except InvalidWebhookUrl as error:
            raise InvalidClientSpec(str(error)) from None
        secret = new_secret()
        sealed = self._cipher.encrypt(secret.encode(), secret_context(client_id))
        updated = replace(client, webhook=Webhook(url=checked, secret_sealed=sealed))
        self._clients.put(updated)
        return RegisteredWebhook(client=updated, secret=secret)

    def remove_webhook(self, client_id: str) -> Client:
        """No more deliveries to the client (its change events are still recorded)."""
        client = self._clients.get(client_id)
        if client is None:
            raise InvalidClientSpec(f"no client {client_id}: {_LIST_THEM}")
        updated = replace(client, webhook=None)
        self._clients.put(updated)
        return updated

    def set_enabled(self, client_id: str, enabled: bool) -> Client:
        """Disable (or re-enable) a client: /token refuses it at once, /v3 once cached decisions expire."""
        client = self._clients.get(client_id)
        if client is None:
            raise InvalidClientSpec(f"no client {client_id}: {_LIST_THEM}")
        updated = replace(client, enabled=enabled)
        self._clients.put(updated)
        return updated
