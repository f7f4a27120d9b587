"""Presigned URLs of the Connect bucket (``PresignedUrls``), for the ``s3`` Connect transport.

A URL is signed (SigV4) by the caller's own credentials, here, with no call to AWS: it carries their
authority for exactly the one request it names (PUT or GET of one key), and S3 refuses it after
``X-Amz-Expires`` seconds, or sooner when the credentials that signed it expire (a role's or an SSO
session's: hours; an IAM user's keys: the full 7 days). Only ``host`` is signed, so a client sends
the file with any plain HTTP client and no header of its own; the bucket's default encryption
(SSE-KMS under ConnectKey) applies to the object as to any other put, with the signer's KMS grant.
"""

from __future__ import annotations

from typing import Any, Literal

import boto3
from botocore.config import Config

_OPERATIONS = {"PUT": "put_object", "GET": "get_object"}


def signing_client() -> Any:
    """An S3 client that signs with SigV4 (botocore's default for presigning S3 is still SigV2,
    which S3 refuses for KMS-encrypted objects), for the region's own endpoint."""
    return boto3.client("s3", config=Config(signature_version="s3v4"))


class S3PresignedUrls:
    def __init__(self, s3: Any, bucket: str) -> None:
        self._s3 = s3
        self._bucket = bucket

    def url(self, method: Literal["PUT", "GET"], key: str, expires_in: int) -> str:
        return str(
            self._s3.generate_presigned_url(
                _OPERATIONS[method],
                Params={"Bucket": self._bucket, "Key": key},
                ExpiresIn=expires_in,
                HttpMethod=method,
            )
        )
