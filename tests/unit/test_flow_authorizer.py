"""The client API's authorizer: an SDK's ``Bearer <authToken>`` gives its flow, for a usable client
only, and an authToken lives at most a session's 15 minutes (``exp - iat``), not a second more."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from phoneid.domain import tokens
from phoneid.domain.errors import Unauthorized
from phoneid.domain.tokens import Audience
from phoneid.services.clients import ClientAdmin, NewClient
from phoneid.services.tokens import TokenService
from tests.fakes import FakeClock, InMemoryClientStore, InMemoryRefreshTokenStore, LocalSigner
from tests.unit.helpers import claims

CORRELATION_ID = "0b6c3c8e-7d1a-4f4e-9a43-1f0d2c3b4a55"


@dataclass
class World:
    service: TokenService
    admin: ClientAdmin
    clock: FakeClock
    signer: LocalSigner
    audience: Audience

    def auth_token(self, new: NewClient, **overrides: Any) -> str:
        """An authToken of a flow of ``new``'s, as /v3/start issues it (15 minutes)."""
        made = claims(
            self.audience,
            self.clock.now(),
            aud=self.audience.client_sdk,
            token_use="client",
            sub=CORRELATION_ID,
            cid=new.client.client_id,
        )
        made["exp"] = made["iat"] + 900
        made.update(overrides)
        return tokens.encode({name: value for name, value in made.items() if value is not None}, self.signer)


@pytest.fixture
def world() -> World:
    clock, signer, audience = FakeClock(), LocalSigner(), Audience("sandbox", "US")
    clients = InMemoryClientStore()
    service = TokenService(
        clients=clients,
        refresh_tokens=InMemoryRefreshTokenStore(),
        signer=signer,
        keys=signer,
        clock=clock,
        audience=audience,
    )
    return World(
        service, ClientAdmin(clients, clock, audience.tier, audience.region), clock, signer, audience
    )


def refused(world: World, header: str | None) -> None:
    with pytest.raises(Unauthorized) as raised:
        world.service.authorize_flow(header)
    assert (raised.value.code, raised.value.http_status) == (8002, 401)


def test_an_auth_token_gives_its_flow_and_its_clients_facts(world: World) -> None:
    new = world.admin.create()
    flow = world.service.authorize_flow(f"Bearer {world.auth_token(new)}")
    assert flow.correlation_id == CORRELATION_ID
    assert flow.client_id == new.client.client_id
    assert flow.caller == new.client.as_caller()
    assert flow.public_api_key == new.client.public_api_key


@pytest.mark.parametrize("header", [None, "", "Bearer", "bearer x.y.z", "Basic abc"])
def test_no_bearer_auth_token_is_unauthorized(world: World, header: str | None) -> None:
    refused(world, header)


def test_an_auth_token_of_a_disabled_client_is_unauthorized(world: World) -> None:
    new = world.admin.create()
    token = world.auth_token(new)
    world.admin.set_enabled(new.client.client_id, False)
    refused(world, f"Bearer {token}")


@pytest.mark.parametrize("cid", [None, 42, "no-such-client"])
def test_an_auth_token_naming_no_known_client_is_unauthorized(world: World, cid: object) -> None:
    refused(world, f"Bearer {world.auth_token(world.admin.create(), cid=cid)}")


def test_an_access_token_is_not_an_auth_token(world: World) -> None:
    new = world.admin.create()
    access = tokens.encode(claims(world.audience, world.clock.now(), sub=new.client.client_id), world.signer)
    refused(world, f"Bearer {access}")


def test_an_auth_token_lives_15_minutes_and_not_a_second_more(world: World) -> None:
    new = world.admin.create()
    iat = int(world.clock.now().timestamp())
    assert world.service.authorize_flow(f"Bearer {world.auth_token(new, exp=iat + 900)}").client_id
    refused(world, f"Bearer {world.auth_token(new, exp=iat + 901)}")


def test_an_auth_token_works_until_its_15th_minute(world: World) -> None:
    new = world.admin.create()
    token = world.auth_token(new)
    world.clock.advance(minutes=14, seconds=59)
    assert world.service.authorize_flow(f"Bearer {token}").correlation_id == CORRELATION_ID
    world.clock.advance(seconds=1)
    refused(world, f"Bearer {token}")
