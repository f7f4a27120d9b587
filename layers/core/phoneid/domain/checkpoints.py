"""Checkpoints of a client's decision history: the tree's size and root at a time, signed
(docs/adr/0120-a-decision-history-verified-offline.md).

A checkpoint is a compact JWS (RFC 7515): the header names ``ES256``, the ``kid`` (the RFC 7638
thumbprint of the signing key's public JWK) and the type ``phoneid-checkpoint+jws``; the payload is
the canonical JSON of ``{"origin", "size", "root", "time"}``. A verifier needs only the public keys
(a JWKS) and this module's rules, which both server SDKs follow.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from phoneid.domain.decisions import parse_stamp, stamp
from phoneid.domain.merkle import HASH_SIZE

__all__ = ["TYPE", "Checkpoint", "CheckpointError", "read_checkpoint", "signed_checkpoint"]

TYPE = "phoneid-checkpoint+jws"


class CheckpointError(ValueError):
    """A checkpoint that cannot be trusted; the message says why."""


@dataclass(frozen=True)
class Checkpoint:
    origin: str  # whose tree: "{stack}/{clientId}"
    size: int
    root: bytes
    time: datetime

    def payload(self) -> bytes:
        body = {
            "origin": self.origin,
            "size": self.size,
            "root": _b64(self.root),
            "time": stamp(self.time),
        }
        return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def signed_checkpoint(checkpoint: Checkpoint, kid: str, sign: Callable[[bytes], bytes]) -> str:
    """The checkpoint as a compact JWS; ``sign`` gives the raw ES256 signature (r || s) of its input."""
    header = json.dumps({"alg": "ES256", "kid": kid, "typ": TYPE}, sort_keys=True, separators=(",", ":"))
    signing_input = f"{_b64(header.encode())}.{_b64(checkpoint.payload())}"
    signature = sign(signing_input.encode())
    if len(signature) != 64:
        raise ValueError(f"an ES256 signature is 64 bytes (r || s), not {len(signature)}")
    return f"{signing_input}.{_b64(signature)}"


def read_checkpoint(jws: str, keys: Mapping[str, Mapping[str, Any]]) -> Checkpoint:
    """The checkpoint ``jws`` states, once its signature is verified by the key of its ``kid`` among
    ``keys`` (public JWKs by kid); ``CheckpointError`` naming what failed otherwise."""
    import jwt

    parts = jws.split(".")
    if len(parts) != 3:
        raise CheckpointError(f"a checkpoint is a compact JWS of 3 parts, not {len(parts)}")
    try:
        header = json.loads(_unb64(parts[0]))
    except (ValueError, binascii.Error):
        raise CheckpointError("the checkpoint's header is not base64url JSON") from None
    if not isinstance(header, dict) or header.get("alg") != "ES256" or header.get("typ") != TYPE:
        raise CheckpointError(f"the checkpoint's header is not an ES256 {TYPE}: {header!r}")
    kid = header.get("kid")
    if not isinstance(kid, str) or kid not in keys:
        raise CheckpointError(f"the checkpoint is signed by key {kid!r}, which is not among the keys given")
    try:
        key = jwt.PyJWK(dict(keys[kid])).key
        payload = jwt.api_jws.decode(jws, key, algorithms=["ES256"])
    except jwt.InvalidSignatureError:
        raise CheckpointError(f"the checkpoint's signature does not verify with key {kid}") from None
    except (jwt.PyJWKError, jwt.InvalidTokenError) as error:
        raise CheckpointError(f"the checkpoint cannot be read: {type(error).__name__}") from None
    return _checkpoint(payload)


def _checkpoint(payload: bytes) -> Checkpoint:
    try:
        body = json.loads(payload)
        checkpoint = Checkpoint(
            origin=str(body["origin"]),
            size=int(body["size"]),
            root=_unb64(str(body["root"])),
            time=parse_stamp(str(body["time"])),
        )
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise CheckpointError("the checkpoint's payload is not {origin, size, root, time}") from None
    if isinstance(body["size"], bool) or not isinstance(body["size"], int) or checkpoint.size < 0:
        raise CheckpointError(f"the checkpoint's size is not a whole number: {body['size']!r}")
    if len(checkpoint.root) != HASH_SIZE:
        raise CheckpointError(f"the checkpoint's root is {len(checkpoint.root)} bytes, not {HASH_SIZE}")
    if checkpoint.payload() != payload:
        raise CheckpointError("the checkpoint's payload is not in its canonical form")
    return checkpoint


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
