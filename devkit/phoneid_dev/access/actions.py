"""A botocore call as the IAM requests AWS authorizes for it: action, resource ARN, condition keys.

AWS does not authorize one action per API operation: a ``TransactWriteItems`` is a ``PutItem``,
``UpdateItem``, ``DeleteItem`` or ``ConditionCheckItem`` on each item's table, a multipart upload is
``s3:PutObject``, a ``HeadObject`` is ``s3:GetObject`` (``GetObjectVersion`` with a version id), an
SMS to a number has no resource but ``*``. Each operation the functions call is mapped here as the
Service Authorization Reference describes it; an operation that is not raises ``Unmapped``, so a
new call cannot pass the check unexamined.

Condition keys are set where the request carries them (``kms:EncryptionContext:*``,
``ses:FromAddress``, ``s3:prefix``, ``dynamodb:Attributes`` and ``dynamodb:Select``...); a key that
is not set is absent, as in AWS. Two choices AWS leaves unsaid:

- ``dynamodb:Select`` of a ``GetItem`` or ``BatchGetItem`` without a projection is
  ``ALL_ATTRIBUTES`` (of a ``Query`` of an index, ``ALL_PROJECTED_ATTRIBUTES``, DynamoDB's default).
- A ``GetObject`` or ``HeadObject`` that finds no object also asks for ``s3:ListBucket`` on the
  bucket with no ``s3:prefix``: S3 answers 404 only to a caller allowed to list the bucket (else
  403), and does not document the context of that check.

A bucket encrypted by default with a KMS key (``bucket_keys``) has S3 call KMS with the caller's
permissions: reading an object is also ``kms:Decrypt``, writing one ``kms:GenerateDataKey`` (and a
multipart upload ``kms:Decrypt``), on that key, through S3.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parseaddr
from typing import Any
from urllib.parse import unquote, urlsplit

# A condition key's value: one string, or several (a multivalued key such as dynamodb:Attributes).
Value = str | tuple[str, ...]


class Unmapped(Exception):
    """An operation (or a form of its parameters) this module does not know how AWS authorizes."""


@dataclass(frozen=True)
class Request:
    """One IAM authorization: the action on the resource, with the request's condition keys."""

    action: str
    resource: str
    context: Mapping[str, Value] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        context = {
            key: list(value) if isinstance(value, tuple) else value for key, value in self.context.items()
        }
        return {"action": self.action, "resource": self.resource, "context": context}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Request:
        context = {
            key: tuple(value) if isinstance(value, list) else str(value)
            for key, value in (data.get("context") or {}).items()
        }
        return cls(str(data["action"]), str(data["resource"]), context)


@dataclass(frozen=True)
class Call:
    """A botocore call as its handlers see it."""

    service: str  # botocore's service name: "dynamodb", "sesv2", "apigatewaymanagementapi"
    operation: str  # "TransactWriteItems"
    params: Mapping[str, Any]
    region: str
    account: str
    url: str | None = None  # where the request went
    response: Mapping[str, Any] | None = None  # botocore's parsed answer, errors included

    @property
    def error_code(self) -> str | None:
        error = (self.response or {}).get("Error") or {}
        code = error.get("Code")
        return str(code) if code else None


@dataclass(frozen=True)
class Stack:
    """What mapping a call needs of its stack beside the call itself."""

    endpoints: Mapping[str, str] = field(default_factory=dict)  # local endpoint -> the AWS one
    bucket_keys: Mapping[str, str] = field(default_factory=dict)  # bucket -> its default KMS key ARN


_Mapper = Callable[[Call, Stack], list[Request]]
_MAPPERS: dict[tuple[str, str], _Mapper] = {}
# Operations that AWS does not authorize at all.
_UNAUTHORIZED = {("sts", "GetCallerIdentity")}


def _maps(service: str, *operations: str) -> Callable[[_Mapper], _Mapper]:
    def register(mapper: _Mapper) -> _Mapper:
        for operation in operations:
            _MAPPERS[(service, operation)] = mapper
        return mapper

    return register


def requests_of(call: Call, stack: Stack | None = None) -> list[Request]:
    """The IAM requests of ``call`` on ``stack``."""
    if (call.service, call.operation) in _UNAUTHORIZED:
        return []
    mapper = _MAPPERS.get((call.service, call.operation))
    if mapper is None:
        raise Unmapped(f"no IAM mapping for {call.service}.{call.operation}")
    try:
        return mapper(call, stack or Stack())
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise Unmapped(f"{call.service}.{call.operation}: parameters not understood ({error!r})") from error


# --- DynamoDB ------------------------------------------------------------------------------------------


def _table_arn(call: Call, table: str) -> str:
    if table.startswith("arn:"):
        return table
    return f"arn:aws:dynamodb:{call.region}:{call.account}:table/{table}"


def _split_top_level(text: str) -> Iterator[str]:
    """``text`` split at the commas outside parentheses (function arguments of an expression)."""
    depth, start = 0, 0
    for at, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            yield text[start:at]
            start = at + 1
    yield text[start:]


def _attribute(path: str, names: Mapping[str, str]) -> str:
    """The top-level attribute a document path starts with (``#a.b[2]`` → what ``#a`` names)."""
    first = re.split(r"[.\[]", path.strip(), maxsplit=1)[0].strip()
    return names.get(first, first)


def _projected(
    projection: str | None, listed: Sequence[str] | None, names: Mapping[str, str]
) -> tuple[str, ...]:
    if projection:
        return tuple(
            sorted({_attribute(path, names) for path in _split_top_level(projection) if path.strip()})
        )
    return tuple(sorted(set(listed or ())))


_UPDATE_CLAUSE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b", re.IGNORECASE)


def _updated(expression: str, names: Mapping[str, str]) -> tuple[str, ...]:
    """The top-level attributes an update expression writes."""
    parts = _UPDATE_CLAUSE.split(expression)
    written = set()
    for keyword, body in zip(parts[1::2], parts[2::2], strict=True):
        for action in _split_top_level(body):
            if not action.strip():
                continue
            if keyword.upper() == "SET":
                path = action.split("=", 1)[0]
            elif keyword.upper() in ("ADD", "DELETE"):
                path = action.split()[0]
            else:
                path = action
            written.add(_attribute(path, names))
    return tuple(sorted(written))


def _read_context(params: Mapping[str, Any], default_select: str) -> dict[str, Value]:
    names = params.get("ExpressionAttributeNames") or {}
    attributes = _projected(params.get("ProjectionExpression"), params.get("AttributesToGet"), names)
    context: dict[str, Value] = {}
    if attributes:
        context["dynamodb:Attributes"] = attributes
    select = params.get("Select") or ("SPECIFIC_ATTRIBUTES" if attributes else default_select)
    context["dynamodb:Select"] = str(select)
    return context


def _write_context(params: Mapping[str, Any], attributes: tuple[str, ...]) -> dict[str, Value]:
    context: dict[str, Value] = {}
    if attributes:
        context["dynamodb:Attributes"] = attributes
    if params.get("ReturnValues"):
        context["dynamodb:ReturnValues"] = str(params["ReturnValues"])
    return context


def _item_request(call: Call, operation: str, params: Mapping[str, Any]) -> Request:
    """One item operation (on its own, or one item of a transaction)."""
    table = _table_arn(call, params["TableName"])
    names = params.get("ExpressionAttributeNames") or {}
    if operation == "GetItem":
        context = _read_context(params, "ALL_ATTRIBUTES")
    elif operation == "PutItem":
        context = _write_context(params, tuple(sorted(params["Item"])))
    elif operation == "UpdateItem":
        written = (
            _updated(params["UpdateExpression"], names)
            if params.get("UpdateExpression")
            else tuple(sorted(params.get("AttributeUpdates") or ()))
        )
        context = _write_context(params, written)
    else:
        context = _write_context(params, ())
    return Request(f"dynamodb:{operation}", table, context)


@_maps("dynamodb", "GetItem", "PutItem", "UpdateItem", "DeleteItem")
def _dynamodb_item(call: Call, _: Stack) -> list[Request]:
    return [_item_request(call, call.operation, call.params)]


@_maps("dynamodb", "Query", "Scan")
def _dynamodb_read(call: Call, _: Stack) -> list[Request]:
    table = _table_arn(call, call.params["TableName"])
    index = call.params.get("IndexName")
    resource = f"{table}/index/{index}" if index else table
    default = "ALL_PROJECTED_ATTRIBUTES" if index else "ALL_ATTRIBUTES"
    return [Request(f"dynamodb:{call.operation}", resource, _read_context(call.params, default))]


@_maps("dynamodb", "BatchGetItem")
def _dynamodb_batch_get(call: Call, _: Stack) -> list[Request]:
    return [
        Request("dynamodb:BatchGetItem", _table_arn(call, table), _read_context(spec, "ALL_ATTRIBUTES"))
        for table, spec in call.params["RequestItems"].items()
    ]


@_maps("dynamodb", "BatchWriteItem")
def _dynamodb_batch_write(call: Call, _: Stack) -> list[Request]:
    return [
        Request("dynamodb:BatchWriteItem", _table_arn(call, table)) for table in call.params["RequestItems"]
    ]


_TRANSACT_WRITES = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


@_maps("dynamodb", "TransactWriteItems")
def _dynamodb_transact_write(call: Call, _: Stack) -> list[Request]:
    requests = []
    for item in call.params["TransactItems"]:
        ((kind, spec),) = item.items()
        requests.append(_item_request(call, _TRANSACT_WRITES[kind], spec))
    return requests


@_maps("dynamodb", "TransactGetItems")
def _dynamodb_transact_get(call: Call, _: Stack) -> list[Request]:
    return [_item_request(call, "GetItem", item["Get"]) for item in call.params["TransactItems"]]


@_maps("dynamodb", "DescribeTable", "DescribeTimeToLive", "UpdateTimeToLive", "CreateTable", "DeleteTable")
def _dynamodb_table(call: Call, _: Stack) -> list[Request]:
    return [Request(f"dynamodb:{call.operation}", _table_arn(call, call.params["TableName"]))]


# --- KMS ------------------------------------------------------------------------------------------------


_KEY_ID_LENGTH = 36  # moto's ciphertexts start with the key's id


def _key_arn(call: Call, key_id: str) -> str:
    if key_id.startswith("arn:"):
        return key_id
    name = key_id if key_id.startswith("alias/") else f"key/{key_id}"
    return f"arn:aws:kms:{call.region}:{call.account}:{name}"


def _kms_context(params: Mapping[str, Any]) -> dict[str, Value]:
    context: dict[str, Value] = {}
    encryption_context = params.get("EncryptionContext")
    if encryption_context is not None:
        for name, value in encryption_context.items():
            context[f"kms:EncryptionContext:{name}"] = str(value)
        context["kms:EncryptionContextKeys"] = tuple(sorted(encryption_context))
    for parameter, key in (
        ("MacAlgorithm", "kms:MacAlgorithm"),
        ("EncryptionAlgorithm", "kms:EncryptionAlgorithm"),
    ):
        if params.get(parameter):
            context[key] = str(params[parameter])
    return context


@_maps(
    "kms",
    "Encrypt",
    "GenerateDataKey",
    "GenerateDataKeyWithoutPlaintext",
    "GenerateMac",
    "VerifyMac",
    "Sign",
    "Verify",
    "DescribeKey",
    "GetPublicKey",
)
def _kms_key(call: Call, _: Stack) -> list[Request]:
    return [Request(f"kms:{call.operation}", _key_arn(call, call.params["KeyId"]), _kms_context(call.params))]


@_maps("kms", "Decrypt")
def _kms_decrypt(call: Call, _: Stack) -> list[Request]:
    """The key the answer names, else the one the call names, else the one the ciphertext names."""
    key = (call.response or {}).get("KeyId") or call.params.get("KeyId")
    if not key:
        key = bytes(call.params["CiphertextBlob"])[:_KEY_ID_LENGTH].decode()
    return [Request("kms:Decrypt", _key_arn(call, str(key)), _kms_context(call.params))]


@_maps("kms", "GenerateRandom")
def _kms_random(call: Call, _: Stack) -> list[Request]:
    return [Request("kms:GenerateRandom", "*")]


# --- S3 -------------------------------------------------------------------------------------------------

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


@_maps("s3", "GetObject", "HeadObject")
def _s3_read(call: Call, stack: Stack) -> list[Request]:
    bucket = call.params["Bucket"]
    action = "s3:GetObjectVersion" if call.params.get("VersionId") else "s3:GetObject"
    requests = [Request(action, _object_arn(bucket, call.params["Key"]))]
    if call.error_code in _NOT_FOUND:  # S3 tells "not found" only to a caller who may list the bucket
        requests.append(Request("s3:ListBucket", f"arn:aws:s3:::{bucket}"))
    elif call.operation == "GetObject":  # a HEAD reads no data
        requests += _through_s3(call, stack, bucket, "kms:Decrypt")
    return requests


@_maps("s3", "PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")
def _s3_put(call: Call, stack: Stack) -> list[Request]:
    bucket = call.params["Bucket"]
    keys = (
        ("kms:GenerateDataKey",) if call.operation == "PutObject" else ("kms:GenerateDataKey", "kms:Decrypt")
    )
    return [
        Request("s3:PutObject", _object_arn(bucket, call.params["Key"])),
        *_through_s3(call, stack, bucket, *keys),
    ]


@_maps("s3", "AbortMultipartUpload")
def _s3_abort(call: Call, _: Stack) -> list[Request]:
    return [Request("s3:AbortMultipartUpload", _object_arn(call.params["Bucket"], call.params["Key"]))]


@_maps("s3", "ListParts")
def _s3_parts(call: Call, _: Stack) -> list[Request]:
    return [Request("s3:ListMultipartUploadParts", _object_arn(call.params["Bucket"], call.params["Key"]))]


@_maps("s3", "DeleteObject")
def _s3_delete(call: Call, _: Stack) -> list[Request]:
    action = "s3:DeleteObjectVersion" if call.params.get("VersionId") else "s3:DeleteObject"
    return [Request(action, _object_arn(call.params["Bucket"], call.params["Key"]))]


@_maps("s3", "DeleteObjects")
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


@_maps("s3", "CopyObject")
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


@_maps("s3", "ListObjectsV2", "ListObjects", "HeadBucket")
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


@_maps("s3", "ListObjectVersions")
def _s3_versions(call: Call, _: Stack) -> list[Request]:
    context: dict[str, Value] = {}
    if call.params.get("Prefix") is not None:
        context["s3:prefix"] = str(call.params["Prefix"])
    return [Request("s3:ListBucketVersions", f"arn:aws:s3:::{call.params['Bucket']}", context)]


# --- SNS, SQS, SES --------------------------------------------------------------------------------------


@_maps("sns", "Publish")
def _sns_publish(call: Call, _: Stack) -> list[Request]:
    """To a topic or an endpoint by its ARN; an SMS to a phone number has no ARN (``*``)."""
    target = call.params.get("TopicArn") or call.params.get("TargetArn")
    if target:
        return [Request("sns:Publish", str(target))]
    if call.params.get("PhoneNumber"):
        return [Request("sns:Publish", "*")]
    raise Unmapped("sns.Publish names no topic, target or phone number")


@_maps("sns", "PublishBatch")
def _sns_publish_batch(call: Call, _: Stack) -> list[Request]:
    return [Request("sns:Publish", str(call.params["TopicArn"]))]


def _queue_arn(call: Call, url: str) -> str:
    account, name = urlsplit(url).path.strip("/").split("/")[-2:]
    return f"arn:aws:sqs:{call.region}:{account}:{name}"


_SQS_ACTIONS = {
    "SendMessage": "sqs:SendMessage",
    "SendMessageBatch": "sqs:SendMessage",
    "ReceiveMessage": "sqs:ReceiveMessage",
    "DeleteMessage": "sqs:DeleteMessage",
    "DeleteMessageBatch": "sqs:DeleteMessage",
    "ChangeMessageVisibility": "sqs:ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
    "GetQueueAttributes": "sqs:GetQueueAttributes",
    "PurgeQueue": "sqs:PurgeQueue",
}


@_maps("sqs", *_SQS_ACTIONS)
def _sqs_queue(call: Call, _: Stack) -> list[Request]:
    return [Request(_SQS_ACTIONS[call.operation], _queue_arn(call, call.params["QueueUrl"]))]


@_maps("sqs", "GetQueueUrl")
def _sqs_queue_url(call: Call, _: Stack) -> list[Request]:
    account = call.params.get("QueueOwnerAWSAccountId") or call.account
    return [Request("sqs:GetQueueUrl", f"arn:aws:sqs:{call.region}:{account}:{call.params['QueueName']}")]


def _ses_identities(call: Call, address: str) -> list[str]:
    """The sender's identities: SES sends as the address, or as its domain when only that is
    verified; which one the operator verified is not the template's to know, so both."""
    domain = address.rpartition("@")[2]
    prefix = f"arn:aws:ses:{call.region}:{call.account}:identity"
    return [f"{prefix}/{address}", f"{prefix}/{domain}"]


def _ses_requests(call: Call, address: str, recipients: Sequence[str], version: str) -> list[Request]:
    context: dict[str, Value] = {
        "ses:FromAddress": address,
        "ses:Recipients": tuple(sorted(set(recipients))),
        "ses:ApiVersion": version,
    }
    return [Request("ses:SendEmail", identity, context) for identity in _ses_identities(call, address)]


def _destinations(destination: Mapping[str, Any] | None) -> list[str]:
    found = []
    for field_name in ("ToAddresses", "CcAddresses", "BccAddresses"):
        found += [parseaddr(address)[1] for address in (destination or {}).get(field_name) or ()]
    return found


@_maps("sesv2", "SendEmail")
def _sesv2_send(call: Call, _: Stack) -> list[Request]:
    address = parseaddr(str(call.params["FromEmailAddress"]))[1]
    return _ses_requests(call, address, _destinations(call.params.get("Destination")), "2")


@_maps("ses", "SendEmail", "SendRawEmail")
def _ses_send(call: Call, _: Stack) -> list[Request]:
    address = parseaddr(str(call.params["Source"]))[1]
    recipients = _destinations(call.params.get("Destination")) + list(call.params.get("Destinations") or ())
    requests = _ses_requests(call, address, recipients, "1")
    return [Request(f"ses:{call.operation}", r.resource, r.context) for r in requests]


# --- Secrets Manager, Lambda, Step Functions, API Gateway, CloudWatch -------------------------------------


@_maps("secretsmanager", "GetSecretValue", "DescribeSecret")
def _secret(call: Call, _: Stack) -> list[Request]:
    """By the secret's ARN, which carries the random suffix AWS (and moto) append to its name."""
    arn = (call.response or {}).get("ARN") or call.params["SecretId"]
    if not str(arn).startswith("arn:"):
        arn = f"arn:aws:secretsmanager:{call.region}:{call.account}:secret:{arn}"
    return [Request(f"secretsmanager:{call.operation}", str(arn))]


def _function_arn(call: Call, name: str, qualifier: str | None) -> str:
    if not name.startswith("arn:"):
        name = f"arn:aws:lambda:{call.region}:{call.account}:function:{name}"
    return f"{name}:{qualifier}" if qualifier and name.count(":") == 6 else name


@_maps("lambda", "Invoke", "InvokeWithResponseStream")
def _lambda_invoke(call: Call, _: Stack) -> list[Request]:
    arn = _function_arn(call, str(call.params["FunctionName"]), call.params.get("Qualifier"))
    return [Request("lambda:InvokeFunction", arn)]


@_maps("stepfunctions", "StartExecution", "StartSyncExecution")
def _states_start(call: Call, _: Stack) -> list[Request]:
    return [Request(f"states:{call.operation}", str(call.params["stateMachineArn"]))]


@_maps("stepfunctions", "DescribeExecution", "StopExecution")
def _states_execution(call: Call, _: Stack) -> list[Request]:
    return [Request(f"states:{call.operation}", str(call.params["executionArn"]))]


_CONNECTION_METHODS = {"PostToConnection": "POST", "GetConnection": "GET", "DeleteConnection": "DELETE"}


@_maps("apigatewaymanagementapi", *_CONNECTION_METHODS)
def _manage_connection(call: Call, stack: Stack) -> list[Request]:
    """``execute-api:ManageConnections`` on the connection, named by the API's id and stage (from the
    endpoint the client was made for: ``https://{apiId}.execute-api.{region}.amazonaws.com/{stage}``)."""
    url = call.url or ""
    for local, in_aws in stack.endpoints.items():
        if url.startswith(local.rstrip("/") + "/"):
            url = in_aws.rstrip("/") + url[len(local.rstrip("/")) :]
    parts = urlsplit(url)
    found = re.fullmatch(r"([a-z0-9]+)\.execute-api\.([a-z0-9-]+)\.amazonaws\.com", parts.hostname or "")
    if found is None:
        raise Unmapped(f"{call.operation} to {url or 'no URL'}: not an API Gateway management endpoint")
    api_id, region = found.groups()
    stage = parts.path.strip("/").split("/")[0]
    method, connection = _CONNECTION_METHODS[call.operation], call.params["ConnectionId"]
    resource = (
        f"arn:aws:execute-api:{region}:{call.account}:{api_id}/{stage}/{method}/@connections/{connection}"
    )
    return [Request("execute-api:ManageConnections", resource)]


@_maps("cloudwatch", "PutMetricData")
def _metrics(call: Call, _: Stack) -> list[Request]:
    return [Request("cloudwatch:PutMetricData", "*", {"cloudwatch:namespace": str(call.params["Namespace"])})]
