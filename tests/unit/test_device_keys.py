"""Device key proofs: ECDSA P-256 over the session's nonce, in WebCrypto's raw r||s form."""

from __future__ import annotations

from datetime import timedelta

import pytest

from phoneid.domain.devicekeys import (
    DeviceKey,
    InvalidKeyProof,
    KeyStatus,
    canonical_jwk,
    thumbprint,
    verify_proof,
)
from tests.device import KeyPair
from tests.fakes import START


def test_a_signature_over_the_nonce_verifies() -> None:
    key = KeyPair()

    verify_proof(key.jwk, "nonce-1", key.sign("nonce-1"))


@pytest.mark.parametrize(
    "tamper",
    [
        lambda key, other: (key.jwk, "nonce-1", key.sign("nonce-2")),  # another nonce
        lambda key, other: (key.jwk, "nonce-1", other.sign("nonce-1")),  # another key
        lambda key, other: (key.jwk, "nonce-1", "A" * 86),  # garbage
        lambda key, other: (key.jwk, "nonce-1", key.sign("nonce-1")[:-4]),  # truncated
        lambda key, other: ({**key.jwk, "crv": "P-384"}, "nonce-1", key.sign("nonce-1")),  # not P-256
        lambda key, other: ({**key.jwk, "d": "secret"}, "nonce-1", key.sign("nonce-1")),  # a private JWK
    ],
)
def test_anything_else_is_an_invalid_proof(tamper) -> None:  # type: ignore[no-untyped-def]
    jwk, nonce, signature = tamper(KeyPair(), KeyPair())

    with pytest.raises(InvalidKeyProof) as raised:
        verify_proof(jwk, nonce, signature)
    assert (raised.value.code, raised.value.http_status) == (8002, 403)


def test_canonical_form_and_thumbprint_ignore_extra_members() -> None:
    key = KeyPair()

    assert canonical_jwk({**key.jwk, "ext": "true", "key_ops": "verify"}) == key.jwk
    assert thumbprint({**key.jwk, "alg": "ES256"}) == thumbprint(key.jwk)


def test_inactivity_is_measured_from_the_last_use() -> None:
    key = DeviceKey("c", "d" * 16, KeyPair().jwk, "+12025550101", KeyStatus.ACTIVE, START, START)

    assert not key.inactive(START + timedelta(days=180), timedelta(days=180))
    assert key.inactive(START + timedelta(days=180, seconds=1), timedelta(days=180))
