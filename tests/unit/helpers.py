"""Small builders shared by the unit tests: callers, identities, a staged flow wired to fakes, and
hand-made JWTs. Everything here runs in memory; nothing opens a socket."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from jwt.utils import base64url_encode

from phoneid.adapters.sandbox import CatalogueIdentitySource
from phoneid.domain import tokens
from phoneid.domain.clients import ALL_COUNTRIES, Caller, Solution, Tier
from phoneid.domain.identity import Address, Identity
from phoneid.domain.offer import MethodOffer
from phoneid.domain.phone import Region
from phoneid.domain.possession import Method, passed
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import Session
from phoneid.domain.signals import NumberHistory
from phoneid.domain.tokens import Audience
from phoneid.ports import IdentitySource
from phoneid.services.decision_log import DecisionLog
from phoneid.services.policies import PolicyBook
from phoneid.services.sessions import SessionSteps
from phoneid.services.signals import ScriptedSignals, SignalGatherer, SignalSources
from phoneid.services.staged import StagedFlow
from tests.fakes import (
    FakeClock,
    InMemoryClientStore,
    InMemoryDecisionStore,
    InMemoryIdentityStore,
    InMemorySessionStore,
    LocalSigner,
)

API_BASE = "https://api.phoneid.test"


def caller(
    client_id: str = "client-a",
    solution: Solution = Solution.IDENTITY,
    countries: Iterable[str] = (ALL_COUNTRIES,),
) -> Caller:
    return Caller(client_id=client_id, solution=solution, allowed_countries=frozenset(countries))


def identity(phone_number: str = "+12025550142", **fields: Any) -> Identity:
    """A production identity; override any field by keyword."""
    values: dict[str, Any] = {
        "first_name": "Noor",
        "last_name": "Haddad",
        "dob": "1987-06-15",
        "ssn": "123456789",
        "addresses": (Address(address="42 Quarry Road", city="Albany", region="NY", postal_code="12207"),),
        "email_addresses": ("noor.haddad@example.com",),
    }
    values.update(fields)
    return Identity(phone_number=phone_number, **values)


def identity_record(phone: str = "+12025550142", **fields: Any) -> dict[str, Any]:
    """A record of the identity file an operator imports (JSON Lines); override any field by keyword."""
    values: dict[str, Any] = {
        "phoneNumber": phone,
        "firstName": "Noor",
        "lastName": "Haddad",
        "dob": "1987-06-15",
        "ssn": "123-45-6789",
        "addresses": [{"address": "42 Quarry Road", "city": "Albany", "region": "NY", "postalCode": "12207"}],
        "emailAddresses": ["noor.haddad@example.com"],
    }
    values.update(fields)
    return values


@dataclass
class StagedWorld:
    """A staged flow wired to in-memory fakes, with the pieces a test inspects."""

    flow: StagedFlow
    sessions: InMemorySessionStore
    clock: FakeClock
    signer: LocalSigner
    audience: Audience

    def stored(self, who: Caller, correlation_id: str) -> Session:
        session = self.sessions.get(who.client_id, correlation_id)
        assert session is not None
        return session

    def pass_possession(self, who: Caller, correlation_id: str) -> None:
        """What the customer's device does between start and validate: possession passes by OTP."""
        session = self.stored(who, correlation_id)
        self.sessions.items[(who.client_id, correlation_id)] = replace(
            session, possession=passed(session.possession, Method.OTP)
        )


def staged_world(
    tier: Tier = "sandbox", region: Region = "US", identities: Iterable[Identity] = ()
) -> StagedWorld:
    """Sandbox: the region's test users. Production: no catalogue, an identity table with ``identities``."""
    clock = FakeClock()
    sessions = InMemorySessionStore()
    signer = LocalSigner()
    audience = Audience(tier, region)
    catalogue = Catalogue.load(region) if tier == "sandbox" else None
    source: IdentitySource = (
        CatalogueIdentitySource(catalogue) if catalogue is not None else InMemoryIdentityStore(identities)
    )
    flow = StagedFlow(
        steps=SessionSteps(sessions, clock),
        sessions=sessions,
        identities=source,
        catalogue=catalogue,
        signer=signer,
        clock=clock,
        audience=audience,
        signals=ScriptedSignals(catalogue) if catalogue is not None else production_signals(source, clock),
        policies=PolicyBook(InMemoryClientStore(), clock),
        offer=MethodOffer(catalogue, mobile_auth_runs=catalogue is not None, region=region),
        decisions=DecisionLog(InMemoryDecisionStore(), LocalMac(), tier=tier, region=region),
    )
    return StagedWorld(flow=flow, sessions=sessions, clock=clock, signer=signer, audience=audience)


class LocalMac:
    """A keyed MAC held in memory, as KMS would compute it."""

    def __init__(self) -> None:
        self._key = b"unit-test-mac-key"

    def digest(self, message: str) -> str:
        return hmac.new(self._key, message.encode(), hashlib.sha256).hexdigest()

    def matches(self, message: str, digest: str) -> bool:
        return hmac.compare_digest(self.digest(message), digest)


class NoHistory:
    """Identity Manager with nothing enrolled."""

    def history(self, client_id: str, phone_number: str, short_tenure_since: datetime) -> NumberHistory:
        return NumberHistory(
            identities=0, short_tenure_identities=0, first_associated=None, last_associated=None
        )


def production_signals(identities: IdentitySource, clock: FakeClock, **ports: Any) -> SignalGatherer:
    """The production gatherer on in-memory sources; carrier ports (``sim_swap=...``) by keyword."""
    from tests.fakes import InMemoryActivityLog, InMemoryChangeEventLog, InMemorySignalLists

    sources = SignalSources(
        lists=ports.pop("lists", None) or InMemorySignalLists(),
        activity=ports.pop("activity", None) or InMemoryActivityLog(),
        change_events=ports.pop("change_events", None) or InMemoryChangeEventLog(),
        history=ports.pop("history", None) or NoHistory(),
        identities=identities,
        mac=LocalMac(),
        **ports,
    )
    return SignalGatherer(sources, clock)


# --- hand-made JWTs ------------------------------------------------------------------------------


def claims(audience: Audience, now: datetime, **overrides: Any) -> dict[str, Any]:
    """Valid access-token claims for ``audience`` issued at ``now``; ``None`` overrides drop a claim."""
    values = tokens.claims_for(
        audience=audience.api,
        issuer=audience.issuer,
        subject="client-a",
        token_use="access",
        now=now,
        lifetime=tokens.ACCESS_TOKEN_LIFETIME,
    )
    values.update(overrides)
    return {name: value for name, value in values.items() if value is not None}


def segment(part: Mapping[str, Any]) -> bytes:
    return base64url_encode(json.dumps(part, separators=(",", ":")).encode())


def compact(header: Mapping[str, Any], payload: Mapping[str, Any], signature: bytes) -> str:
    return b".".join([segment(header), segment(payload), base64url_encode(signature)]).decode()
