"""POST /token grants, refresh-token rotation, and the authorizer's access-token check."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest

from phoneid.domain import tokens
from phoneid.domain.clients import Flag, Solution, Tier
from phoneid.domain.errors import MalformedRequest, Unauthorized
from phoneid.domain.phone import Region
from phoneid.domain.token_keys import PublicKey
from phoneid.domain.tokens import Audience
from phoneid.services.clients import ClientAdmin, NewClient
from phoneid.services.tokens import TokenService
from tests.fakes import FakeClock, InMemoryClientStore, InMemoryRefreshTokenStore, LocalSigner
from tests.unit.helpers import claims


@dataclass
class TokenWorld:
    service: TokenService
    admin: ClientAdmin
    clock: FakeClock
    signer: LocalSigner
    audience: Audience

    def client(self, **spec: object) -> NewClient:
        return self.admin.create(**spec)  # type: ignore[arg-type]


@pytest.fixture
def world() -> TokenWorld:
    """The token service of the Sandbox US stack, with in-memory stores."""
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
    admin = ClientAdmin(clients, clock, audience.tier, audience.region)
    return TokenWorld(service=service, admin=admin, clock=clock, signer=signer, audience=audience)


def credentials(new: NewClient) -> dict[str, str]:
    return {
        "grant_type": "client_credentials",
        "client_id": new.client.client_id,
        "client_secret": new.client_secret,
    }


def refresh_form(client_id: str, refresh_token: str) -> dict[str, str]:
    return {"grant_type": "refresh_token", "client_id": client_id, "refresh_token": refresh_token}


def assert_unauthorized(error: pytest.ExceptionInfo[Unauthorized]) -> None:
    assert (error.value.code, error.value.http_status) == (8002, 401)


# --- client_credentials ------------------------------------------------------------------------


def test_client_credentials_grant_returns_a_bearer_token_for_an_hour(world: TokenWorld) -> None:
    # Given a client of this stack
    new = world.client()

    # When it asks for a token with its credentials
    response = world.service.grant(credentials(new))

    # Then it gets a Bearer access token living 3600 s and a refresh token living 86400 s
    assert response.token_type == "Bearer"
    assert (response.expires_in, response.refresh_expires_in) == (3600, 86400)
    assert response.refresh_token
    published = {key["kid"]: key for key in world.service.jwks()["keys"]}
    now = world.clock.now()
    verified = tokens.verify(
        response.access_token,
        # verifiable with the published document alone (issued in the hour around now)
        key_for=lambda kid: PublicKey(published[kid], now - timedelta(hours=1), now + timedelta(hours=1)),
        issuer=world.audience.issuer,
        audience=world.audience.api,
        token_use="access",
        now=world.clock.now(),
    )
    assert verified["sub"] == new.client.client_id
    assert verified["exp"] - verified["iat"] == 3600


def test_a_wrong_secret_is_unauthorized(world: TokenWorld) -> None:
    # Given a client
    new = world.client()

    # When it sends another secret
    with pytest.raises(Unauthorized) as raised:
        world.service.grant({**credentials(new), "client_secret": new.client_secret + "x"})

    # Then it is 8002 / 401
    assert_unauthorized(raised)


@pytest.mark.parametrize(
    "form",
    [
        {"grant_type": "client_credentials", "client_id": "nobody", "client_secret": "s" * 43},
        {"grant_type": "client_credentials", "client_id": "x" * 129, "client_secret": "s" * 43},
        {"grant_type": "client_credentials", "client_id": "nobody"},
        {"grant_type": "client_credentials", "client_secret": "s" * 43},
    ],
    ids=["unknown", "over-long-id", "no-secret", "no-id"],
)
def test_unknown_or_incomplete_credentials_are_unauthorized(world: TokenWorld, form: dict[str, str]) -> None:
    # Given no such client (or credentials missing)
    # When a token is requested
    with pytest.raises(Unauthorized) as raised:
        world.service.grant(form)

    # Then it is 8002 / 401
    assert_unauthorized(raised)


def test_a_disabled_client_is_unauthorized(world: TokenWorld) -> None:
    # Given a client the operator disabled
    new = world.client()
    world.admin.set_enabled(new.client.client_id, False)

    # When it asks for a token with its right credentials
    with pytest.raises(Unauthorized) as raised:
        world.service.grant(credentials(new))

    # Then it is 8002 / 401
    assert_unauthorized(raised)


@pytest.mark.parametrize(("tier", "region"), [("production", "US"), ("sandbox", "EU"), ("production", "EU")])
def test_a_client_of_another_tier_or_region_is_unauthorized(
    world: TokenWorld, tier: Tier, region: Region
) -> None:
    # Given credentials made for another stack
    new = world.client(tier=tier, region=region)

    # When they are used at the Sandbox US stack
    with pytest.raises(Unauthorized) as raised:
        world.service.grant(credentials(new))

    # Then it is 8002 / 401
    assert_unauthorized(raised)


@pytest.mark.parametrize(
    ("grant_type", "reason"),
    [(None, "is required"), ("", "is required"), ("password", "must be"), ("authorization_code", "must be")],
)
def test_a_missing_or_unsupported_grant_type_is_malformed(
    world: TokenWorld, grant_type: str | None, reason: str
) -> None:
    # Given a client's credentials with no or another grant_type
    form = credentials(world.client())
    form.pop("grant_type")
    if grant_type is not None:
        form["grant_type"] = grant_type

    # When a token is requested
    with pytest.raises(MalformedRequest) as raised:
        world.service.grant(form)

    # Then it is 8001 / 400 naming grant_type
    assert (raised.value.code, raised.value.http_status) == (8001, 400)
    assert raised.value.parameters == ["grant_type"]
    assert reason in raised.value.message


# --- refresh_token -----------------------------------------------------------------------------


def test_a_refresh_token_works_once_and_is_rotated(world: TokenWorld) -> None:
    # Given a client holding a refresh token
    new = world.client()
    first = world.service.grant(credentials(new))

    # When it redeems the refresh token
    second = world.service.grant(refresh_form(new.client.client_id, first.refresh_token))

    # Then it gets a new access token and a new refresh token
    assert second.access_token != first.access_token
    assert second.refresh_token != first.refresh_token
    # And the old refresh token is burnt
    with pytest.raises(Unauthorized) as raised:
        world.service.grant(refresh_form(new.client.client_id, first.refresh_token))
    assert_unauthorized(raised)
    # And the new one works
    assert world.service.grant(refresh_form(new.client.client_id, second.refresh_token)).access_token


def test_a_refresh_token_also_works_with_the_clients_secret(world: TokenWorld) -> None:
    # Given a client holding a refresh token
    new = world.client()
    issued = world.service.grant(credentials(new))

    # When it redeems it while also authenticating
    form = {**refresh_form(new.client.client_id, issued.refresh_token), "client_secret": new.client_secret}
    response = world.service.grant(form)

    # Then it gets tokens
    assert response.token_type == "Bearer"


def test_another_clients_refresh_token_is_refused_and_not_burnt(world: TokenWorld) -> None:
    # Given two clients, the owner holding a refresh token
    owner, thief = world.client(), world.client()
    issued = world.service.grant(credentials(owner))

    # When the other client presents it, with or without its own secret
    with pytest.raises(Unauthorized) as bare:
        world.service.grant(refresh_form(thief.client.client_id, issued.refresh_token))
    with pytest.raises(Unauthorized) as authenticated:
        world.service.grant(
            {
                **refresh_form(thief.client.client_id, issued.refresh_token),
                "client_secret": thief.client_secret,
            }
        )

    # Then both are Unauthorized
    assert_unauthorized(bare)
    assert_unauthorized(authenticated)
    # And the owner can still use the token
    assert world.service.grant(refresh_form(owner.client.client_id, issued.refresh_token)).access_token


def test_a_refresh_token_with_a_wrong_secret_is_refused(world: TokenWorld) -> None:
    # Given a client holding a refresh token
    new = world.client()
    issued = world.service.grant(credentials(new))

    # When it redeems it with a wrong secret
    form = {**refresh_form(new.client.client_id, issued.refresh_token), "client_secret": "wrong" * 10}

    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        world.service.grant(form)


def test_an_expired_refresh_token_is_refused(world: TokenWorld) -> None:
    # Given a refresh token issued 24 hours ago
    new = world.client()
    issued = world.service.grant(credentials(new))
    world.clock.advance(hours=24)

    # When it is redeemed
    with pytest.raises(Unauthorized) as raised:
        world.service.grant(refresh_form(new.client.client_id, issued.refresh_token))

    # Then it is Unauthorized
    assert_unauthorized(raised)


def test_a_refresh_token_one_second_before_expiry_works(world: TokenWorld) -> None:
    # Given a refresh token issued 23 h 59 min 59 s ago
    new = world.client()
    issued = world.service.grant(credentials(new))
    world.clock.advance(hours=23, minutes=59, seconds=59)

    # When it is redeemed
    response = world.service.grant(refresh_form(new.client.client_id, issued.refresh_token))

    # Then it works
    assert response.access_token


def test_an_unknown_refresh_token_is_refused(world: TokenWorld) -> None:
    # Given a client
    new = world.client()

    # When it presents a refresh token never issued
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        world.service.grant(refresh_form(new.client.client_id, "never-issued"))


@pytest.mark.parametrize("missing", ["refresh_token", "client_id"])
def test_a_refresh_grant_without_token_or_client_is_malformed(world: TokenWorld, missing: str) -> None:
    # Given a refresh form missing a field
    new = world.client()
    form = refresh_form(new.client.client_id, world.service.grant(credentials(new)).refresh_token)
    del form[missing]

    # When a token is requested
    with pytest.raises(MalformedRequest) as raised:
        world.service.grant(form)

    # Then it is 8001 / 400
    assert (raised.value.code, raised.value.http_status) == (8001, 400)


# --- authorize ---------------------------------------------------------------------------------


def access_token(world: TokenWorld, new: NewClient) -> str:
    return world.service.grant(credentials(new)).access_token


def test_a_valid_access_token_gives_the_caller_of_the_client(world: TokenWorld) -> None:
    # Given a client with a solution, countries and flags
    new = world.client(
        solution=Solution.VERIFIED_USER,
        countries=["US", "ca"],
        flags=[Flag.PHONE_NUMBER_CHANGE, Flag.KEY_PERSISTENCE],
    )

    # When its access token is presented
    caller = world.service.authorize(f"Bearer {access_token(world, new)}")

    # Then the caller carries the client's settings
    assert caller.client_id == new.client.client_id
    assert caller.solution == Solution.VERIFIED_USER
    assert caller.allowed_countries == {"US", "CA"}
    assert caller.flags == {Flag.PHONE_NUMBER_CHANGE, Flag.KEY_PERSISTENCE}


@pytest.mark.parametrize(
    "header",
    [
        " Bearer {token}",
        "Bearer {token} ",
        "Bearer  {token}",
        "Bearer\t{token}",
        "bearer {token}",
        "BEARER {token}",
        "{token}",
        "Bearer {short}",
        "Bearer {token}x",
        "Bearer {head}",
        "",
    ],
    ids=[
        "leading-space",
        "trailing-space",
        "double-space",
        "tab",
        "lowercase",
        "uppercase",
        "no-scheme",
        "missing-last-char",
        "extra-char",
        "missing-signature",
        "empty",
    ],
)
def test_anything_but_exactly_bearer_and_the_token_is_unauthorized(world: TokenWorld, header: str) -> None:
    # Given a valid access token
    token = access_token(world, world.client())

    # When it is presented in a damaged header
    damaged = header.format(token=token, short=token[:-1], head=token.rpartition(".")[0])
    with pytest.raises(Unauthorized) as raised:
        world.service.authorize(damaged)

    # Then it is 8002 / 401
    assert_unauthorized(raised)


def test_a_trailing_newline_after_the_token_is_unauthorized(world: TokenWorld) -> None:
    # Given a valid access token
    token = access_token(world, world.client())

    # When it is presented with a trailing newline
    # Then it is Unauthorized (whitespace in the token gives 401)
    with pytest.raises(Unauthorized):
        world.service.authorize(f"Bearer {token}\n")


def test_no_header_is_unauthorized(world: TokenWorld) -> None:
    # Given no Authorization header
    # When authorized
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        world.service.authorize(None)


def test_an_auth_token_is_not_an_access_token(world: TokenWorld) -> None:
    # Given an authToken (token_use client, client-SDK audience) signed by this stack
    new = world.client()
    auth_token = tokens.encode(
        claims(
            world.audience,
            world.clock.now(),
            token_use="client",
            aud=world.audience.client_sdk,
            sub=new.client.client_id,
        ),
        world.signer,
    )

    # When it is presented as an access token
    with pytest.raises(Unauthorized) as raised:
        world.service.authorize(f"Bearer {auth_token}")

    # Then it is Unauthorized
    assert_unauthorized(raised)


def test_an_auth_token_with_the_api_audience_is_still_not_an_access_token(world: TokenWorld) -> None:
    # Given a token_use client token that otherwise looks like an access token
    new = world.client()
    token = tokens.encode(
        claims(world.audience, world.clock.now(), token_use="client", sub=new.client.client_id), world.signer
    )

    # When presented
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        world.service.authorize(f"Bearer {token}")


def test_an_access_token_stops_working_after_an_hour(world: TokenWorld) -> None:
    # Given an access token
    token = access_token(world, world.client())

    # When presented 59 min 59 s later, then at 60 min
    world.clock.advance(minutes=59, seconds=59)
    still = world.service.authorize(f"Bearer {token}")
    world.clock.advance(seconds=1)

    # Then it works until the hour, then is Unauthorized
    assert still.client_id
    with pytest.raises(Unauthorized):
        world.service.authorize(f"Bearer {token}")


def test_an_access_token_of_a_disabled_client_is_unauthorized(world: TokenWorld) -> None:
    # Given an access token of a client the operator then disables
    new = world.client()
    token = access_token(world, new)
    world.admin.set_enabled(new.client.client_id, False)

    # When presented
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        world.service.authorize(f"Bearer {token}")
