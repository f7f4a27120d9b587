"""S3's operations as IAM authorizes them, with what S3 asks a bucket's default KMS key on the
caller's behalf."""

from __future__ import annotations

from urllib.parse import unquote

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack, Value

MAPPERS = Mappers()

_NOT_FOUND = {"NoSuchKey", "NoSuchVersion", "NotFound", "404"}


def _object_arn(bucket: str, key: str) -> str:
    return f"arn:aws:s3:::{bucket}/{key}"


def _through_s3(call: Call, stack: Stack, bucket: str, *actions: str) -> list[Request]:
    """What S3 asks the bucket's default KMS key, with the caller's permissions (none: no such key)."""
    key = stack.bucket_keys.get(bucket)
    if key is None:
        return []
    context: dict[str, Value] = {
        "kms:ViaService": f"s3.{call.region}.amazonaws.com",
        "kms:EncryptionContext:aws:s3:arn": f"arn:aws:s3:::{bucket}",
    }
    return [Request(action, key, context) for action in actions]


@MAPPERS.maps("s3", "GetObject", "HeadObject")
def _s3_read(call: Call, stack: Stack) -> list[Request]:
    bucket = call.params["Bucket"]
    action = "s3:GetObjectVersion" if call.params.get("VersionId") else "s3:GetObject"
    requests = [Request(action, _object_arn(bucket, call.params["Key"]))]
    if call.error_code in _NOT_FOUND:  # S3 tells "not found" only to a caller who may list the bucket
        requests.append(Request("s3:ListBucket", f"arn:aws:s3:::{bucket}"))
    elif call.operation == "GetObject":  # a HEAD reads no data
        requests += _through_s3(call, stack, bucket, "kms:Decrypt")
    return requests


@MAPPERS.maps("s3", "PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")
def _s3_put(call: Call, stack: Stack) -> list[Request]:
    bucket = call.params["Bucket"]
    keys = (
        ("kms:GenerateDataKey",) if call.operation == "PutObject" else ("kms:GenerateDataKey", "kms:Decrypt")
    )
    return [
        Request("s3:PutObject", _object_arn(bucket, call.params["Key"])),
        *_through_s3(call, stack, bucket, *keys),
    ]


@MAPPERS.maps("s3", "AbortMultipartUpload")
def _s3_abort(call: Call, _: Stack) -> list[Request]:
    return [Request("s3:AbortMultipartUpload", _object_arn(call.params["Bucket"], call.params["Key"]))]


@MAPPERS.maps("s3", "ListParts")
def _s3_parts(call: Call, _: Stack) -> list[Request]:
    return [Request("s3:ListMultipartUploadParts", _object_arn(call.params["Bucket"], call.params["Key"]))]


@MAPPERS.maps("s3", "DeleteObject")
def _s3_delete(call: Call, _: Stack) -> list[Request]:
    action = "s3:DeleteObjectVersion" if call.params.get("VersionId") else "s3:DeleteObject"
    return [Request(action, _object_arn(call.params["Bucket"], call.params["Key"]))]


@MAPPERS.maps("s3", "DeleteObjects")
def _s3_delete_many(call: Call, _: Stack) -> list[Request]:
    """S3 authorizes each object of the batch on its own."""
    bucket = call.params["Bucket"]
    return [
        Request(
            "s3:DeleteObjectVersion" if entry.get("VersionId") else "s3:DeleteObject",
            _object_arn(bucket, entry["Key"]),
        )
        for entry in call.params["Delete"]["Objects"]
    ]


@MAPPERS.maps("s3", "CopyObject")
def _s3_copy(call: Call, stack: Stack) -> list[Request]:
    source = call.params["CopySource"]
    if isinstance(source, str):
        source_bucket, _slash, source_key = unquote(source.lstrip("/").split("?", 1)[0]).partition("/")
        version = None
    else:
        source_bucket, source_key, version = source["Bucket"], source["Key"], source.get("VersionId")
    return [
        Request("s3:GetObjectVersion" if version else "s3:GetObject", _object_arn(source_bucket, source_key)),
        *_through_s3(call, stack, source_bucket, "kms:Decrypt"),
        Request("s3:PutObject", _object_arn(call.params["Bucket"], call.params["Key"])),
        *_through_s3(call, stack, call.params["Bucket"], "kms:GenerateDataKey"),
    ]


@MAPPERS.maps("s3", "ListObjectsV2", "ListObjects", "HeadBucket")
def _s3_list(call: Call, _: Stack) -> list[Request]:
    context: dict[str, Value] = {}
    for parameter, key in (
        ("Prefix", "s3:prefix"),
        ("Delimiter", "s3:delimiter"),
        ("MaxKeys", "s3:max-keys"),
    ):
        if call.params.get(parameter) is not None:
            context[key] = str(call.params[parameter])
    return [Request("s3:ListBucket", f"arn:aws:s3:::{call.params['Bucket']}", context)]


@MAPPERS.maps("s3", "ListObjectVersions")
def _s3_versions(call: Call, _: Stack) -> list[Request]:
    context: dict[str, Value] = {}
    if call.params.get("Prefix") is not None:
        context["s3:prefix"] = str(call.params["Prefix"])
    return [Request("s3:ListBucketVersions", f"arn:aws:s3:::{call.params['Bucket']}", context)]
