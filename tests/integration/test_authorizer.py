"""The access-token authorizer in front of every /v3 route, and the gateway's own refusals."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.utils import base64url_decode, base64url_encode

from phoneid.api.errors import to_json
from phoneid.domain import tokens
from phoneid.domain.tokens import Audience
from tests.harness import Api
from tests.sandbox_numbers import TOKEN_ONLY
from tests.unit.helpers import claims as token_claims
from tests.unit.helpers import compact, segment

UNAUTHORIZED = {"code": 8002, "message": "Unauthorized request: credentials missing or invalid"}
START = {"flowType": "mobile", "phoneNumber": TOKEN_ONLY}


def claims(api: Api, client_id: str, **changes: Any) -> dict[str, Any]:
    """Valid access-token claims of this stack for ``client_id``; ``None`` changes drop a claim."""
    return token_claims(api.container.audience, api.clock.now(), sub=client_id, **changes)


def signed(api: Api, payload: dict[str, Any]) -> str:
    """A token signed by this stack's own KMS key: only its claims can be wrong."""
    return tokens.encode(payload, api.container.signer)


def start_with(api: Api, authorization: str) -> Any:
    return api.request(
        "POST",
        "/v3/start",
        json.dumps(START),
        {"content-type": "application/json", "authorization": authorization},
    )


def test_a_valid_token_opens_v3_and_the_handler_sees_its_client(api: Api) -> None:
    integrator = api.integrator()

    started = start_with(api, f"Bearer {integrator.access_token}")

    assert started.status == 200
    session = api.container.sessions.get(integrator.client_id, started.json()["correlationId"])
    assert session is not None


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda t: "", id="empty"),
        pytest.param(lambda t: t, id="no-scheme"),
        pytest.param(lambda t: f"Bearer  {t}", id="double-space"),
        pytest.param(lambda t: f"Bearer {t} ", id="trailing-space"),
        pytest.param(lambda t: f" Bearer {t}", id="leading-space"),
        pytest.param(lambda t: f"Bearer\t{t}", id="tab"),
        pytest.param(lambda t: f"Bearer {t[:40]}\n{t[40:]}", id="line-break-inside"),
        pytest.param(lambda t: f"Bearer {t[:-1]}", id="last-character-missing"),
        pytest.param(lambda t: f"Bearer {t[1:]}", id="first-character-missing"),
        pytest.param(lambda t: f"Bearer {t.rsplit('.', 1)[0]}", id="signature-missing"),
        pytest.param(lambda t: f"Basic {t}", id="other-scheme"),
    ],
)
def test_missing_characters_or_whitespace_are_401_with_the_error_body(
    api: Api, damage: Callable[[str], str]
) -> None:
    integrator = api.integrator()

    refused = start_with(api, damage(integrator.access_token))

    assert refused.status == 401
    assert refused.json() == UNAUTHORIZED


def test_a_missing_authorization_header_is_401(api: Api) -> None:
    refused = api.post("/v3/start", START)

    assert refused.status == 401
    assert refused.json() == UNAUTHORIZED


def test_a_damaged_signature_is_401(api: Api) -> None:
    token = api.integrator().access_token
    head, body, signature = token.split(".")
    raw = bytearray(base64url_decode(signature))
    raw[10] ^= 0x01

    assert start_with(api, f"Bearer {head}.{body}.{base64url_encode(bytes(raw)).decode()}").status == 401


def test_changed_claims_under_the_original_signature_are_401(api: Api) -> None:
    integrator = api.integrator()
    other = api.integrator()
    head, body, signature = integrator.access_token.split(".")
    payload = json.loads(base64url_decode(body))

    forged = f"{head}.{segment({**payload, 'sub': other.client_id}).decode()}.{signature}"

    assert start_with(api, f"Bearer {forged}").status == 401


def test_alg_none_is_401(api: Api) -> None:
    integrator = api.integrator()
    header = {"alg": "none", "typ": "JWT", "kid": api.container.signer.signing_key().jwk["kid"]}

    unsigned = compact(header, claims(api, integrator.client_id), b"")

    assert start_with(api, f"Bearer {unsigned}").status == 401
    assert start_with(api, f"Bearer {unsigned}AAAA").status == 401


def test_hs256_signed_with_the_public_key_is_401(api: Api) -> None:
    # The classic confusion attack: the published public key used as an HMAC secret.
    integrator = api.integrator()
    jwk = dict(api.container.signer.signing_key().jwk)
    pem = jwt.PyJWK(jwk).key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = {"alg": "HS256", "typ": "JWT", "kid": jwk["kid"]}
    payload = claims(api, integrator.client_id)
    mac = hmac.new(pem, segment(header) + b"." + segment(payload), hashlib.sha256).digest()

    assert start_with(api, f"Bearer {compact(header, payload, mac)}").status == 401


def test_a_token_signed_by_another_key_is_401(api: Api) -> None:
    integrator = api.integrator()
    foreign = jwt.encode(
        claims(api, integrator.client_id),
        ec.generate_private_key(ec.SECP256R1()),
        algorithm="ES256",
        headers={"kid": api.container.signer.signing_key().jwk["kid"]},
    )

    assert start_with(api, f"Bearer {foreign}").status == 401


@pytest.mark.parametrize(
    ("tier", "region"),
    [("production", "US"), ("sandbox", "EU"), ("production", "EU")],
)
def test_a_token_for_another_tier_or_region_is_401(api: Api, tier: str, region: str) -> None:
    integrator = api.integrator()
    other = Audience(tier, region)  # type: ignore[arg-type]

    elsewhere = signed(api, claims(api, integrator.client_id, iss=other.issuer, aud=other.api))

    assert start_with(api, f"Bearer {elsewhere}").status == 401


@pytest.mark.parametrize("claim", ["exp", "iat", "iss", "aud", "sub", "jti", "token_use"])
def test_a_token_without_a_required_claim_is_401(api: Api, claim: str) -> None:
    integrator = api.integrator()
    payload = claims(api, integrator.client_id)
    del payload[claim]

    assert start_with(api, f"Bearer {signed(api, payload)}").status == 401


def test_the_sdk_audience_is_not_an_api_credential(api: Api) -> None:
    integrator = api.integrator()
    audience = api.container.audience

    sdk_token = signed(api, claims(api, integrator.client_id, aud=audience.client_sdk, token_use="client"))

    assert start_with(api, f"Bearer {sdk_token}").status == 401


def test_an_expired_token_is_401_and_one_issued_in_the_future_too(api: Api) -> None:
    integrator = api.integrator()
    now = int(api.clock.now().timestamp())

    expired = signed(api, claims(api, integrator.client_id, iat=now - 3600, exp=now))
    future = signed(api, claims(api, integrator.client_id, iat=now + 600, exp=now + 4200))
    fresh = signed(api, claims(api, integrator.client_id, iat=now - 3599, exp=now + 1))

    assert start_with(api, f"Bearer {expired}").status == 401
    assert start_with(api, f"Bearer {future}").status == 401
    assert start_with(api, f"Bearer {fresh}").status == 200


def test_a_token_of_an_unknown_or_disabled_client_is_401(api: Api) -> None:
    integrator = api.integrator()
    token = integrator.access_token

    unknown = signed(api, claims(api, "0" * 32))
    api.container.client_admin.set_enabled(integrator.client_id, False)

    assert start_with(api, f"Bearer {unknown}").status == 401
    assert start_with(api, f"Bearer {token}").status == 401


def test_the_authorizer_puts_the_clients_settings_in_the_context(api: Api) -> None:
    integrator = api.integrator(countries=["US", "CA"])

    policy = api.invoke(
        "AuthorizerFunction",
        {
            "type": "TOKEN",
            "authorizationToken": f"Bearer {integrator.access_token}",
            "methodArn": "arn:aws:execute-api:us-east-1:123456789012:abc/live/POST/v3/start",
        },
    )

    assert policy["principalId"] == integrator.client_id
    assert policy["policyDocument"]["Statement"] == [
        {
            "Action": "execute-api:Invoke",
            "Effect": "Allow",
            "Resource": "arn:aws:execute-api:us-east-1:123456789012:abc/live/*",
        }
    ]
    assert policy["context"]["clientId"] == integrator.client_id
    assert policy["context"]["countries"] == "CA,US"
    assert policy["context"]["solution"] == "identity"


def test_the_authorizer_refuses_with_the_message_api_gateway_turns_into_401(api: Api) -> None:
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        api.invoke(
            "AuthorizerFunction",
            {"type": "TOKEN", "authorizationToken": "Bearer a.b.c", "methodArn": "arn:x/live/POST/v3/start"},
        )


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/v3/nothing"), ("GET", "/v3/start"), ("DELETE", "/token"), ("POST", "/v2/start")],
)
def test_an_unknown_path_or_wrong_method_is_403_with_the_error_body(api: Api, method: str, path: str) -> None:
    token = api.integrator().access_token

    refused = api.request(method, path, "{}", {"authorization": f"Bearer {token}"})

    assert refused.status == 403
    assert refused.json() == {"code": 8001, "message": "No endpoint matches this method and path"}
    assert refused.headers["Content-Type"] == "application/json"


def test_gateway_refusals_never_use_api_gateways_default_body(api: Api) -> None:
    refused = api.post("/v3/start", START)

    assert "message" in refused.json()
    assert set(refused.json()) == {"code", "message"}


def test_gateway_made_error_bodies_are_written_as_the_handlers_write_theirs(api: Api) -> None:
    # Given answers made by the gateway (no token: 401; no route: 403; a body over
    # API Gateway's 10 MB: 413)
    # and one made by a handler (a malformed start: 400)
    token = api.integrator().access_token
    bearer = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    gateway_made = [
        api.post("/v3/start", START),
        api.request("POST", "/v3/nothing", "{}", bearer),
        api.request("POST", "/v3/start", "{" + " " * (10 * 1024 * 1024) + "}", bearer),
    ]
    handler_made = api.request("POST", "/v3/start", '{"flowType": "sideways"}', bearer)

    # Then every body is the same compact JSON, byte for byte as the handlers' serializer writes it
    assert [answer.status for answer in gateway_made] == [401, 403, 413]
    assert handler_made.status == 400
    for answer in [*gateway_made, handler_made]:
        assert answer.body == to_json(answer.json()), answer.body
