"""JWT verification: what the service signs verifies; hostile or foreign tokens are Unauthorized."""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from phoneid.domain import tokens
from phoneid.domain.errors import Unauthorized
from phoneid.domain.tokens import REQUIRED_CLAIMS, Audience
from tests.fakes import START, LocalSigner
from tests.unit.helpers import claims, compact, segment

SANDBOX_US = Audience("sandbox", "US")
NOW = START


def check(
    token: str, signer: LocalSigner, *, audience: Audience = SANDBOX_US, **options: Any
) -> dict[str, Any]:
    """Verify ``token`` as an access token of ``audience`` at NOW, unless ``options`` say otherwise."""
    arguments: dict[str, Any] = {
        "key_for": signer.verification_key,
        "issuer": audience.issuer,
        "audience": audience.api,
        "token_use": "access",
        "now": NOW,
        **options,
    }
    return tokens.verify(token, **arguments)


def signed_by(signer: LocalSigner, payload: dict[str, Any], **header: Any) -> str:
    """A token signed with the signer's own private key (so only its content is hostile)."""
    headers = {"kid": signer.signing_key().jwk["kid"], **header}
    return jwt.encode(payload, signer.private_key, algorithm="ES256", headers=headers)


def test_a_token_encoded_by_the_signer_round_trips() -> None:
    # Given claims signed through the service's signer
    signer = LocalSigner()
    original = claims(SANDBOX_US, NOW)
    token = tokens.encode(original, signer)

    # When verified against the signer's JWKS
    verified = check(token, signer)

    # Then the claims come back unchanged
    assert verified == original
    assert jwt.get_unverified_header(token) == {
        "alg": "ES256",
        "typ": "JWT",
        "kid": signer.signing_key().jwk["kid"],
    }


def test_alg_none_is_refused() -> None:
    # Given an unsigned token naming the signer's kid
    signer = LocalSigner()
    token = compact(
        {"alg": "none", "typ": "JWT", "kid": signer.signing_key().jwk["kid"]}, claims(SANDBOX_US, NOW), b""
    )

    # When verified
    # Then it is Unauthorized
    with pytest.raises(Unauthorized) as raised:
        check(token, signer)
    assert (raised.value.code, raised.value.http_status) == (8002, 401)


@pytest.mark.parametrize("encoding", [Encoding.PEM, Encoding.DER])
def test_hs256_signed_with_the_public_key_as_secret_is_refused(encoding: Encoding) -> None:
    # Given a token MACed with the public key's bytes (the classic algorithm-confusion attack)
    signer = LocalSigner()
    secret = signer.private_key.public_key().public_bytes(encoding, PublicFormat.SubjectPublicKeyInfo)
    header = {"alg": "HS256", "typ": "JWT", "kid": signer.signing_key().jwk["kid"]}
    payload = claims(SANDBOX_US, NOW)
    signing_input = segment(header) + b"." + segment(payload)
    token = compact(header, payload, hmac.new(secret, signing_input, hashlib.sha256).digest())

    # When verified
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


def test_a_token_of_another_algorithm_with_the_signers_kid_is_refused() -> None:
    # Given an RS256 token signed by a foreign key but naming the signer's kid
    signer = LocalSigner()
    foreign = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = jwt.encode(
        claims(SANDBOX_US, NOW), foreign, algorithm="RS256", headers={"kid": signer.signing_key().jwk["kid"]}
    )

    # When verified
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


def test_a_token_signed_by_an_unknown_key_is_refused() -> None:
    # Given a token signed by another signer (another kid)
    signer, stranger = LocalSigner(), LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, NOW), stranger)

    # When verified against the service's JWKS
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


def test_a_foreign_key_claiming_the_signers_kid_is_refused() -> None:
    # Given a token signed by a foreign P-256 key under the signer's kid
    signer = LocalSigner()
    foreign = ec.generate_private_key(ec.SECP256R1())
    token = jwt.encode(
        claims(SANDBOX_US, NOW), foreign, algorithm="ES256", headers={"kid": signer.signing_key().jwk["kid"]}
    )

    # When verified
    # Then the signature does not verify: Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


def test_a_tampered_signature_is_refused() -> None:
    # Given a valid token whose signature has one character changed
    signer = LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, NOW), signer)
    head, _, signature = token.rpartition(".")
    flipped = ("A" if signature[10] != "A" else "B").join([signature[:10], signature[11:]])

    # When verified
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(f"{head}.{flipped}", signer)


def test_tampered_claims_under_the_original_signature_are_refused() -> None:
    # Given a valid token whose payload is swapped for one naming another client
    signer = LocalSigner()
    header, _, signature = tokens.encode(claims(SANDBOX_US, NOW), signer).split(".")
    _, forged_payload, _ = tokens.encode(claims(SANDBOX_US, NOW, sub="client-b"), LocalSigner()).split(".")

    # When verified
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(f"{header}.{forged_payload}.{signature}", signer)


def test_a_wrong_audience_is_refused() -> None:
    # Given a client-SDK token (client-sdk audience) presented where the API audience is required
    signer = LocalSigner()
    token = signed_by(signer, claims(SANDBOX_US, NOW, aud=SANDBOX_US.client_sdk))

    # When verified for the API audience
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


@pytest.mark.parametrize(
    "other", [Audience("production", "US"), Audience("sandbox", "EU"), Audience("production", "EU")]
)
def test_a_token_of_another_tier_or_region_is_refused(other: Audience) -> None:
    # Given a token issued by another stack with the same key
    signer = LocalSigner()
    token = tokens.encode(claims(other, NOW), signer)

    # When verified by the sandbox US stack
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


def test_a_wrong_issuer_with_the_right_audience_is_refused() -> None:
    # Given a token with this stack's audience but another stack's issuer
    signer = LocalSigner()
    token = signed_by(signer, claims(SANDBOX_US, NOW, iss=Audience("production", "US").issuer))

    # When verified
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


def test_an_auth_token_is_refused_where_an_access_token_is_required() -> None:
    # Given a token with token_use "client" (an authToken) and otherwise valid claims
    signer = LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, NOW, token_use="client"), signer)

    # When verified as an access token
    # Then it is Unauthorized
    with pytest.raises(Unauthorized, match="wrong kind"):
        check(token, signer)


@pytest.mark.parametrize("seconds_left", [0, -1, -3600])
def test_an_expired_token_is_refused(seconds_left: int) -> None:
    # Given a token whose exp is at or before now
    signer = LocalSigner()
    exp = int(NOW.timestamp()) + seconds_left
    token = tokens.encode(claims(SANDBOX_US, NOW - timedelta(hours=1), exp=exp), signer)

    # When verified at now
    # Then it is Unauthorized
    with pytest.raises(Unauthorized, match="expired"):
        check(token, signer)


def test_a_token_one_second_before_expiry_is_accepted() -> None:
    # Given a token issued 59 min 59 s ago (60 minute lifetime)
    signer = LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, NOW - timedelta(minutes=59, seconds=59)), signer)

    # When verified at now
    # Then it is accepted
    assert check(token, signer)["sub"] == "client-a"


def test_a_token_issued_too_far_in_the_future_is_refused() -> None:
    # Given a token issued 31 seconds after now (beyond the 30 s skew)
    signer = LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, NOW + timedelta(seconds=31)), signer)

    # When verified at now
    # Then it is Unauthorized
    with pytest.raises(Unauthorized, match="future"):
        check(token, signer)


def test_a_token_issued_within_the_clock_skew_is_accepted() -> None:
    # Given a token issued 30 seconds after now
    signer = LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, NOW + timedelta(seconds=30)), signer)

    # When verified at now
    # Then it is accepted
    assert check(token, signer)["iss"] == SANDBOX_US.issuer


@pytest.mark.parametrize("missing", REQUIRED_CLAIMS)
def test_a_token_missing_a_required_claim_is_refused(missing: str) -> None:
    # Given a properly signed token without one required claim
    signer = LocalSigner()
    token = tokens.encode(claims(SANDBOX_US, NOW, **{missing: None}), signer)

    # When verified
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


@pytest.mark.parametrize("claim", ["exp", "iat"])
def test_non_integer_times_are_refused(claim: str) -> None:
    # Given a properly signed token whose exp or iat is a string
    signer = LocalSigner()
    valid = claims(SANDBOX_US, NOW)
    token = tokens.encode({**valid, claim: str(valid[claim])}, signer)

    # When verified
    # Then it is Unauthorized
    with pytest.raises(Unauthorized):
        check(token, signer)


@pytest.mark.parametrize("garbage", ["", "abc", "a.b.c", "e30.e30.e30"])
def test_garbage_is_refused(garbage: str) -> None:
    # Given text that is not a JWT
    # When verified
    # Then it is Unauthorized, not another exception
    with pytest.raises(Unauthorized):
        check(garbage, LocalSigner())
