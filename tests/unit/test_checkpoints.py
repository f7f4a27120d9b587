"""Checkpoints of a decision history signed by a KMS asymmetric key (moto's KMS) and read back by a
verifier holding only the public keys; each way a checkpoint can be wrong is refused by name."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import boto3
import pytest
from moto import mock_aws

from phoneid.adapters.checkpoint_signer import KmsCheckpointSigner
from phoneid.adapters.es256 import Es256Key
from phoneid.domain.checkpoints import Checkpoint, CheckpointError, read_checkpoint, signed_checkpoint
from phoneid.domain.merkle import leaf_hash, root

CHECKPOINT = Checkpoint(
    origin="phoneid-sandbox-us/client-a",
    size=3,
    root=root([leaf_hash(b"a"), leaf_hash(b"b"), leaf_hash(b"c")]),
    time=datetime(2026, 12, 2, 10, 0, tzinfo=UTC),
)


@pytest.fixture
def signer() -> Iterator[KmsCheckpointSigner]:
    with mock_aws():
        kms = boto3.client("kms", region_name="us-east-1")
        key = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
        yield KmsCheckpointSigner(kms, key)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_checkpoint_signed_in_kms_reads_back_with_its_public_key(signer: KmsCheckpointSigner) -> None:
    jws = signed_checkpoint(CHECKPOINT, signer.kid, signer.sign)

    assert read_checkpoint(jws, {signer.kid: signer.public_jwk}) == CHECKPOINT
    assert (signer.public_jwk["kty"], signer.public_jwk["alg"]) == ("EC", "ES256")


def test_the_payload_is_the_canonical_json_of_origin_size_root_and_time(signer: KmsCheckpointSigner) -> None:
    jws = signed_checkpoint(CHECKPOINT, signer.kid, signer.sign)
    header, payload, _ = jws.split(".")

    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {
        "alg": "ES256",
        "kid": signer.kid,
        "typ": "phoneid-checkpoint+jws",
    }
    assert base64.urlsafe_b64decode(payload + "==").decode() == (
        '{"origin":"phoneid-sandbox-us/client-a","root":"' + _b64(CHECKPOINT.root) + '","size":3,'
        '"time":"2026-12-02T10:00:00.000Z"}'
    )


def test_a_changed_byte_of_the_checkpoint_is_refused(signer: KmsCheckpointSigner) -> None:
    jws = signed_checkpoint(CHECKPOINT, signer.kid, signer.sign)
    header, _, signature = jws.split(".")
    grown = Checkpoint(CHECKPOINT.origin, 4, CHECKPOINT.root, CHECKPOINT.time)

    with pytest.raises(CheckpointError, match=f"signature does not verify with key {signer.kid}"):
        read_checkpoint(f"{header}.{_b64(grown.payload())}.{signature}", {signer.kid: signer.public_jwk})


def test_a_checkpoint_re_signed_by_a_key_not_given_is_refused_naming_the_key(
    signer: KmsCheckpointSigner,
) -> None:
    forger = Es256Key.generate()
    jws = signed_checkpoint(CHECKPOINT, forger.jwk["kid"], forger.sign)

    with pytest.raises(CheckpointError, match=f"signed by key '{forger.jwk['kid']}', which is not among"):
        read_checkpoint(jws, {signer.kid: signer.public_jwk})


def test_a_checkpoint_claiming_the_real_kid_but_signed_by_another_key_is_refused(
    signer: KmsCheckpointSigner,
) -> None:
    forger = Es256Key.generate()
    jws = signed_checkpoint(CHECKPOINT, signer.kid, forger.sign)

    with pytest.raises(CheckpointError, match="signature does not verify"):
        read_checkpoint(jws, {signer.kid: signer.public_jwk})


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("a.b", "3 parts, not 2"),
        ("!!!.b.c", "header is not base64url JSON"),
        (_b64(b'{"alg":"none","typ":"phoneid-checkpoint+jws"}') + ".e30.", "is not an ES256"),
    ],
)
def test_a_malformed_checkpoint_is_refused_naming_what(text: str, named: str) -> None:
    with pytest.raises(CheckpointError, match=named):
        read_checkpoint(text, {})


ROOT = _b64(bytes(32))
TIME = "2026-12-02T10:00:00.000Z"


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        (f'{{"origin":"o","root":"{ROOT}","size":-1,"time":"{TIME}"}}', "size"),
        (f'{{"origin":"o","root":"{ROOT}","size":true,"time":"{TIME}"}}', "size"),
        (f'{{"origin":"o","root":"{_b64(bytes(31))}","size":1,"time":"{TIME}"}}', "31 bytes"),
        ('{"origin":"o","size":1}', "is not {origin, size, root, time}"),
        (f'{{"size":1,"origin":"o","root":"{ROOT}","time":"{TIME}"}}', "canonical"),
    ],
)
def test_a_signed_payload_that_is_no_checkpoint_is_refused(payload: str, named: str) -> None:
    key = Es256Key.generate()
    header = {"alg": "ES256", "kid": key.jwk["kid"], "typ": "phoneid-checkpoint+jws"}
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(payload.encode())}"
    jws = f"{signing_input}.{_b64(key.sign(signing_input.encode()))}"

    with pytest.raises(CheckpointError, match=named):
        read_checkpoint(jws, {key.jwk["kid"]: key.jwk})


def test_two_keys_in_the_keys_given_each_verify_their_own_checkpoints(signer: KmsCheckpointSigner) -> None:
    # A rotation: the retired key's checkpoints still verify beside the new key's
    retired = Es256Key.generate()
    keys = {signer.kid: signer.public_jwk, retired.jwk["kid"]: retired.jwk}
    old = signed_checkpoint(CHECKPOINT, retired.jwk["kid"], retired.sign)
    new = signed_checkpoint(CHECKPOINT, signer.kid, signer.sign)

    assert read_checkpoint(old, keys) == read_checkpoint(new, keys) == CHECKPOINT
