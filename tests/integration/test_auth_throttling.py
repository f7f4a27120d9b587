"""The brake on guessing credentials at POST /token, hand-set secret length, and token lifetimes."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import jwt
import pytest

from phoneid.domain import tokens
from phoneid.services.clients import InvalidClientSpec
from phoneid_dev.gateway import HttpResponse
from tests.harness import Api, Credentials, LogRecorder
from tests.integration.test_possession_sandbox import start
from tests.sandbox_numbers import OTP_PASS
from tests.unit.helpers import claims as token_claims

TOO_MANY = {
    "code": 8018,
    "message": "Rate limit exceeded: too many failed authentications; wait for Retry-After seconds",
}
INVALID_CREDENTIALS = {
    "code": 8002,
    "message": "Unauthorized request: invalid client credentials for this tier and region",
}
WRONG_SECRET = "a-wrong-guess-of-the-secret-0123456789"


def token_from(api: Api, fields: dict[str, str], source: str = "198.51.100.7") -> HttpResponse:
    return api.gateway.handle(
        "POST",
        "/token",
        {"content-type": "application/x-www-form-urlencoded"},
        urlencode(fields),
        source_ip=source,
        host="api.phoneid.test",
    )


def guess(credentials: Credentials) -> dict[str, str]:
    return {**credentials.token_form(), "client_secret": WRONG_SECRET}


def test_ten_wrong_secrets_lock_the_client_id_out_even_for_the_right_one(api: Api) -> None:
    credentials = api.create_client()

    refused = [token_from(api, guess(credentials)) for _ in range(10)]
    locked = token_from(api, credentials.token_form())

    assert [r.status for r in refused] == [401] * 10
    assert all(r.json() == INVALID_CREDENTIALS for r in refused)
    assert locked.status == 429
    assert locked.json() == TOO_MANY
    retry_after = int(locked.headers["Retry-After"])
    # The lockout lasts to the end of the next five-minute window.
    assert 300 < retry_after <= 600

    api.clock.advance(seconds=retry_after - 1)
    assert token_from(api, credentials.token_form()).status == 429
    api.clock.advance(seconds=1)
    assert token_from(api, credentials.token_form()).status == 200


def test_nine_wrong_secrets_leave_the_right_one_working(api: Api) -> None:
    credentials = api.create_client()

    for _ in range(9):
        token_from(api, guess(credentials))

    assert token_from(api, credentials.token_form()).status == 200


def test_an_unknown_client_id_is_counted_and_refused_exactly_like_a_known_one(api: Api) -> None:
    known = api.create_client()
    unknown = Credentials("0" * 32, known.client_secret)

    seen = {
        name: [token_from(api, guess(credentials)) for _ in range(11)]
        for name, credentials in (("known", known), ("unknown", unknown))
    }

    for name, responses in seen.items():
        assert [r.status for r in responses] == [401] * 10 + [429], name
    assert [r.body for r in seen["known"]] == [r.body for r in seen["unknown"]]
    assert seen["known"][-1].headers["Retry-After"] == seen["unknown"][-1].headers["Retry-After"]


def test_fifty_failures_from_one_address_lock_that_address_out(api: Api) -> None:
    credentials = api.create_client()
    attacker = "203.0.113.66"

    for n in range(50):
        token_from(api, {**credentials.token_form(), "client_id": f"guessed-client-{n}"}, source=attacker)

    from_the_attacker = token_from(api, credentials.token_form(), source=attacker)
    from_elsewhere = token_from(api, credentials.token_form(), source="198.51.100.20")

    assert from_the_attacker.status == 429
    assert from_the_attacker.json() == TOO_MANY
    assert int(from_the_attacker.headers["Retry-After"]) > 0
    assert from_elsewhere.status == 200


def test_wrong_refresh_tokens_count_as_failures_of_their_client_id(api: Api) -> None:
    credentials = api.create_client()
    wrong_refresh = {
        "grant_type": "refresh_token",
        "client_id": credentials.client_id,
        "refresh_token": "not-a-refresh-token-of-this-client",
    }

    refused = [token_from(api, wrong_refresh) for _ in range(10)]
    locked = token_from(api, credentials.token_form())

    assert [r.status for r in refused] == [401] * 10
    assert locked.status == 429
    assert "Retry-After" in locked.headers


def test_each_failure_is_audited_with_client_id_and_address_and_no_secret(
    api: Api, logged: LogRecorder
) -> None:
    credentials = api.create_client()

    token_from(api, guess(credentials), source="198.51.100.9")
    token_from(api, {**credentials.token_form(), "client_id": "no-such-client"}, source="198.51.100.9")

    audited = [json.loads(line) for line in logged.lines if "authentication failed" in line]
    assert [(a["clientId"], a["sourceIp"]) for a in audited] == [
        (credentials.client_id, "198.51.100.9"),
        ("no-such-client", "198.51.100.9"),
    ]
    written = "\n".join(logged.lines)
    assert WRONG_SECRET not in written
    assert credentials.client_secret not in written


def test_a_hand_set_secret_needs_32_characters(api: Api) -> None:
    with pytest.raises(InvalidClientSpec, match="a client secret must have at least 32 characters"):
        api.create_client(client_secret="s" * 31)

    chosen = api.create_client(client_secret="s" * 32)

    assert token_from(api, chosen.token_form()).status == 200


# --- token lifetimes -----------------------------------------------------------------------------


def test_a_correctly_signed_access_token_living_ten_years_is_refused(api: Api) -> None:
    integrator = api.integrator()
    issued = int(api.clock.now().timestamp())
    ten_years = token_claims(
        api.container.audience,
        api.clock.now(),
        sub=integrator.client_id,
        exp=issued + 10 * 365 * 86400,
    )
    sixty_minutes = token_claims(api.container.audience, api.clock.now(), sub=integrator.client_id)

    refused = api.post(
        "/v3/start", {"flowType": "mobile"}, token=tokens.encode(ten_years, api.container.signer)
    )
    accepted = api.post(
        "/v3/start", {"flowType": "mobile"}, token=tokens.encode(sixty_minutes, api.container.signer)
    )

    assert refused.status == 401
    assert refused.json()["code"] == 8002
    assert accepted.status != 401


def test_an_auth_token_living_longer_than_a_session_is_refused(api: Api) -> None:
    _, device = start(api.integrator(), OTP_PASS)
    issued = jwt.decode(device.auth_token, options={"verify_signature": False})
    stretched = {**issued, "iat": issued["iat"] - 60}  # 16 minutes for a 15-minute session

    forged = type(device)(api, tokens.encode(stretched, api.container.signer))

    assert device.call("/session").status == 200
    refused = forged.call("/session")
    assert refused.status == 401
    assert refused.json()["code"] == 8002


# --- CORS: /token and /v3 are server-to-server -----------------------------------------------------


def test_token_and_v3_answers_carry_no_cors_header(api: Api) -> None:
    integrator = api.integrator()
    assert integrator.access_token  # before the lockout below
    origin = {"origin": "https://shop.example.com"}

    issued = api.request(
        "POST",
        "/token",
        urlencode(integrator.credentials.token_form()),
        {"content-type": "application/x-www-form-urlencoded", **origin},
    )
    for _ in range(10):
        token_from(api, {**integrator.credentials.token_form(), "client_secret": WRONG_SECRET})
    locked = token_from(api, integrator.credentials.token_form())
    started = integrator.post("/v3/start", {"flowType": "mobile", "phoneNumber": OTP_PASS}, **origin)

    assert (issued.status, locked.status, started.status) == (200, 429, 200)
    for answer in (issued, locked, started):
        assert "Access-Control-Allow-Origin" not in answer.headers
