"""POST /token and the JWKS, as an integrator meets them through the gateway."""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import urlencode

import jwt
import pytest

from tests.harness import Api, Credentials

INVALID_CREDENTIALS = {
    "code": 8002,
    "message": "Unauthorized request: invalid client credentials for this tier and region",
}


def refresh(credentials: Credentials, refresh_token: str) -> dict[str, str]:
    return {"grant_type": "refresh_token", "client_id": credentials.client_id, "refresh_token": refresh_token}


def test_client_credentials_answer_exactly_the_token_table(api: Api) -> None:
    credentials = api.create_client()

    issued = api.token_response(credentials.token_form())

    assert issued.status == 200
    assert issued.headers["Cache-Control"] == "no-store"
    body = issued.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "refresh_token", "refresh_expires_in"}
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert body["refresh_expires_in"] == 86400
    assert body["refresh_token"] != body["access_token"]


def test_the_access_token_is_a_jwt_signed_by_a_key_the_jwks_publishes(api: Api) -> None:
    credentials = api.create_client()
    token = api.token_response(credentials.token_form()).json()["access_token"]

    published = api.request("GET", "/.well-known/jwks.json", None, {})

    assert published.status == 200
    keys = published.json()["keys"]
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "ES256"
    key = next(k for k in keys if k["kid"] == header["kid"])
    assert set(key) >= {"kty", "crv", "x", "y", "kid", "alg", "use"}
    assert "d" not in key
    claims = jwt.decode(
        token,
        key=jwt.PyJWK(key).key,
        algorithms=["ES256"],
        audience="urn:phoneid:sandbox:us:api",
        issuer="urn:phoneid:sandbox:us",
        options={"verify_exp": False, "verify_iat": False},
    )
    assert claims["sub"] == credentials.client_id
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["iat"] == int(api.clock.now().timestamp())
    assert claims["jti"]


def test_every_token_has_its_own_jti(api: Api) -> None:
    credentials = api.create_client()

    tokens = [api.token_response(credentials.token_form()).json()["access_token"] for _ in range(3)]

    assert len({jwt.decode(t, options={"verify_signature": False})["jti"] for t in tokens}) == 3


def test_the_issuer_and_audience_name_the_stacks_tier_and_region(make_api: Callable[..., Api]) -> None:
    api = make_api(tier="production", region="EU")
    credentials = api.create_client()

    token = api.token_response(credentials.token_form()).json()["access_token"]

    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["iss"] == "urn:phoneid:production:eu"
    assert claims["aud"] == "urn:phoneid:production:eu:api"


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda c: {**c.token_form(), "client_secret": "wrong"}, id="wrong-secret"),
        pytest.param(
            lambda c: {**c.token_form(), "client_id": "0" * 32},
            id="unknown-client",
        ),
        pytest.param(lambda c: {**c.token_form(), "client_secret": c.client_secret[:-1]}, id="truncated"),
        pytest.param(lambda c: {**c.token_form(), "client_id": "x" * 500}, id="overlong-client-id"),
    ],
)
def test_bad_credentials_are_401_8002_and_all_look_alike(
    api: Api, spoil: Callable[[Credentials], dict[str, str]]
) -> None:
    credentials = api.create_client()

    refused = api.token_response(spoil(credentials))

    assert refused.status == 401
    assert refused.json() == INVALID_CREDENTIALS


@pytest.mark.parametrize("missing", ["client_id", "client_secret"])
def test_missing_credentials_are_401_8002(api: Api, missing: str) -> None:
    credentials = api.create_client()
    fields = credentials.token_form()
    del fields[missing]

    refused = api.token_response(fields)

    assert refused.status == 401
    assert refused.json()["code"] == 8002


def test_a_client_of_another_tier_or_region_gets_no_token_here(api: Api) -> None:
    production = api.create_client(tier="production")
    european = api.create_client(region="EU")

    assert api.token_response(production.token_form()).json() == INVALID_CREDENTIALS
    assert api.token_response(european.token_form()).json() == INVALID_CREDENTIALS


def test_a_disabled_client_gets_no_token(api: Api) -> None:
    credentials = api.create_client()
    api.container.client_admin.set_enabled(credentials.client_id, False)

    refused = api.token_response(credentials.token_form())

    assert refused.status == 401


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"grant_type": "password", "client_id": "a", "client_secret": "b"}, "grant_type"),
        ({"client_id": "a", "client_secret": "b"}, "grant_type"),
        ({"grant_type": "refresh_token", "client_id": "a"}, "refresh_token"),
    ],
)
def test_an_unsupported_or_missing_grant_is_400_8001(api: Api, fields: dict[str, str], named: str) -> None:
    refused = api.token_response(fields)

    assert refused.status == 400
    assert refused.json()["code"] == 8001
    assert named in refused.json()["message"]


def test_a_json_body_is_400_8001(api: Api) -> None:
    credentials = api.create_client()

    refused = api.request(
        "POST", "/token", json.dumps(credentials.token_form()), {"content-type": "application/json"}
    )

    assert refused.status == 400
    assert refused.json()["code"] == 8001
    assert "application/x-www-form-urlencoded" in refused.json()["message"]


@pytest.mark.parametrize(
    "content_type", ["Application/X-WWW-Form-Urlencoded", "application/x-www-form-urlencoded; charset=UTF-8"]
)
def test_the_form_media_type_is_read_in_any_case_and_with_parameters(api: Api, content_type: str) -> None:
    credentials = api.create_client()

    answer = api.request(
        "POST", "/token", urlencode(credentials.token_form()), {"Content-Type": content_type}
    )

    assert answer.status == 200, answer.body


def test_a_form_body_declared_as_something_else_is_400_8001(api: Api) -> None:
    credentials = api.create_client()

    refused = api.request(
        "POST", "/token", urlencode(credentials.token_form()), {"content-type": "text/x-www-form-urlencoded"}
    )

    assert refused.status == 400
    assert refused.json()["code"] == 8001


@pytest.mark.parametrize(
    "body",
    [
        "grant_type=client_credentials&grant_type=client_credentials&client_id=a&client_secret=b",
        "grant_type",
        "a=1&" + "b" * 4100,
    ],
    ids=["repeated-field", "not-form-encoded", "over-4-kb"],
)
def test_a_malformed_form_is_400_8001(api: Api, body: str) -> None:
    refused = api.request("POST", "/token", body, {"content-type": "application/x-www-form-urlencoded"})

    assert refused.status == 400
    assert refused.json()["code"] == 8001


def test_a_refresh_token_buys_a_new_pair_once(api: Api) -> None:
    credentials = api.create_client()
    first = api.token_response(credentials.token_form()).json()

    renewed = api.token_response(refresh(credentials, first["refresh_token"]))
    replayed = api.token_response(refresh(credentials, first["refresh_token"]))

    assert renewed.status == 200
    assert renewed.json()["refresh_token"] != first["refresh_token"]
    assert api.post("/v3/start", {"flowType": "mobile"}, token=renewed.json()["access_token"]).status != 401
    assert replayed.status == 401
    assert replayed.json()["code"] == 8002


def test_a_refresh_token_works_with_the_client_secret_too(api: Api) -> None:
    credentials = api.create_client()
    first = api.token_response(credentials.token_form()).json()

    renewed = api.token_response(
        {**refresh(credentials, first["refresh_token"]), "client_secret": credentials.client_secret}
    )
    assert renewed.status == 200, renewed.body
    wrong_secret = api.token_response(
        {**refresh(credentials, renewed.json()["refresh_token"]), "client_secret": "nope"}
    )

    assert renewed.status == 200
    assert wrong_secret.status == 401


def test_a_refresh_token_expires_after_refresh_expires_in(api: Api) -> None:
    credentials = api.create_client()
    first = api.token_response(credentials.token_form()).json()
    second = api.token_response(credentials.token_form()).json()

    api.clock.advance(seconds=86399)
    just_in_time = api.token_response(refresh(credentials, first["refresh_token"]))
    api.clock.advance(seconds=2)
    too_late = api.token_response(refresh(credentials, second["refresh_token"]))

    assert just_in_time.status == 200
    assert too_late.status == 401


def test_a_refresh_token_belongs_to_its_client(api: Api) -> None:
    owner = api.create_client()
    other = api.create_client()
    issued = api.token_response(owner.token_form()).json()

    stolen = api.token_response(refresh(other, issued["refresh_token"]))
    still_good = api.token_response(refresh(owner, issued["refresh_token"]))

    assert stolen.status == 401
    assert still_good.status == 200


def test_a_disabled_client_cannot_refresh(api: Api) -> None:
    credentials = api.create_client()
    issued = api.token_response(credentials.token_form()).json()
    api.container.client_admin.set_enabled(credentials.client_id, False)

    assert api.token_response(refresh(credentials, issued["refresh_token"])).status == 401


def test_secrets_and_refresh_tokens_are_stored_only_as_hashes(api: Api) -> None:
    credentials = api.create_client()
    issued = api.token_response(credentials.token_form()).json()

    clients = json.dumps(api.table_items("ClientsTable"))
    refresh_tokens = api.table_items("RefreshTokensTable")

    assert credentials.client_id in clients
    assert credentials.client_secret not in clients
    assert len(refresh_tokens) == 1
    assert issued["refresh_token"] not in json.dumps(refresh_tokens)
    assert refresh_tokens[0]["clientId"] == {"S": credentials.client_id}


def test_access_tokens_stop_working_after_an_hour(api: Api) -> None:
    integrator = api.integrator()
    token = integrator.access_token

    api.clock.advance(seconds=3599)
    in_time = api.post("/v3/start", {"flowType": "mobile"}, token=token)
    api.clock.advance(seconds=1)
    expired = api.post("/v3/start", {"flowType": "mobile"}, token=token)

    assert in_time.status != 401
    assert expired.status == 401
    assert expired.json()["code"] == 8002
