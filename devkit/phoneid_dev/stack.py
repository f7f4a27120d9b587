"""A stack built from ``template.yaml`` on whatever AWS endpoint boto3 points at (moto here).

It creates the template's tables, keys, topics, queues, buckets and state machines (with their
EventBridge rules; ``phoneid_dev.workflows``), resolves each function's environment the way
CloudFormation would, and loads the handlers from ``functions/`` so they run in this process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import boto3

from phoneid import bootstrap
from phoneid.config import LOCAL_STACK_VARIABLE
from phoneid_dev.access.recording.attribution import invoked
from phoneid_dev.snapshot import keys
from phoneid_dev.template import Function, Template, template
from phoneid_dev.workflows import provisioning

if TYPE_CHECKING:
    from phoneid_dev.processes import FunctionProcesses

LambdaHandler = Callable[[dict[str, Any], Any], Any]

_ACCOUNT_ID = "123456789012"

# Read by boto3, not by the service: empty in AWS (boto3 ignores an empty value), where functions reach
# AWS itself. This stack's own processes are pointed at moto directly (``phoneid_dev.emulation``), so
# ``environment`` leaves it out; functions SAM runs get it from ``sam_env_vars``.
ENDPOINT_VARIABLE = "AWS_ENDPOINT_URL"

# In this process, one invocation at a time, as Lambda runs one per execution environment: Powertools
# keeps an invocation's event and log keys process-wide, as the runtime allows. Re-entrant: a handler
# may invoke another function on its own thread (a signer runs the key rotation). ``phoneid dev``
# runs every function in worker processes instead (``LocalStack.processes``), so that requests overlap.
_one_invocation_at_a_time = threading.RLock()


class FunctionError(Exception):
    """A function that raised, or died, in its worker process: Lambda's error payload."""

    def __init__(self, payload: Mapping[str, Any]) -> None:
        super().__init__(str(payload.get("errorMessage", "")))
        self.payload = dict(payload)

    @property
    def error_type(self) -> str:
        return str(self.payload.get("errorType", ""))


@dataclass
class LocalStack:
    parameters: Mapping[str, str]
    name: str = "phoneid-local"
    template: Template = field(default_factory=template)
    overrides: dict[str, str] = field(default_factory=dict)
    physical_ids: dict[str, str] = field(default_factory=dict)
    attributes: dict[tuple[str, str], str] = field(default_factory=dict)
    # Each function's handler loaded in this process (one instance: invocations here never overlap).
    _handlers: dict[str, LambdaHandler] = field(default_factory=dict)
    # Where the functions run when not in this process: worker processes, one invocation at a time
    # each (``phoneid dev``, and the suite's tests of requests that overlap).
    processes: FunctionProcesses | None = None
    # Every invocation a new Lambda instance: its own container, with nothing another function (or an
    # earlier invocation) cached in it (data keys, signing keys, the operator's credentials). Off, the
    # functions share one container, as the local stack's throughput wants. One thread at a time.
    cold_starts: bool = False
    # KMS keys an earlier run kept (``phoneid dev --data``): each logical id's key provisioned with the
    # kept id, ARN and material, so what that run sealed opens (``phoneid_dev.snapshot.keys``).
    kept_keys: Mapping[str, dict[str, str]] = field(default_factory=dict)

    @property
    def aws_region(self) -> str:
        return os.environ.get("AWS_DEFAULT_REGION", "us-east-1")

    @property
    def account_id(self) -> str:
        return _ACCOUNT_ID

    def function_name(self, logical_id: str) -> str:
        """The function's physical name (what moto's Lambda and the state machines call it by)."""
        return f"{self.name}-{logical_id}"

    # --- resources ---------------------------------------------------------------------------

    def provision(self) -> LocalStack:
        dynamodb = boto3.client("dynamodb")
        for logical_id, props in self.template.of_type("AWS::DynamoDB::Table").items():
            table_name = f"{self.name}-{logical_id}"
            created = dynamodb.create_table(
                TableName=table_name,
                KeySchema=props["KeySchema"],
                AttributeDefinitions=props["AttributeDefinitions"],
                BillingMode=props.get("BillingMode", "PAY_PER_REQUEST"),
                **{k: props[k] for k in ("GlobalSecondaryIndexes",) if k in props},
                **_read_stream(logical_id, props, self.template),
            )["TableDescription"]
            if "LatestStreamArn" in created:
                self.attributes[(logical_id, "StreamArn")] = created["LatestStreamArn"]
            if ttl := props.get("TimeToLiveSpecification"):
                dynamodb.update_time_to_live(TableName=table_name, TimeToLiveSpecification=ttl)
            self.physical_ids[logical_id] = table_name
            self.attributes[(logical_id, "Arn")] = (
                f"arn:aws:dynamodb:{self.aws_region}:{_ACCOUNT_ID}:table/{table_name}"
            )
        sns = boto3.client("sns")
        for logical_id in self.template.of_type("AWS::SNS::Topic"):
            arn = sns.create_topic(Name=f"{self.name}-{logical_id}")["TopicArn"]
            self.physical_ids[logical_id] = arn
            self.attributes[(logical_id, "TopicArn")] = arn
        apis = boto3.client("apigatewayv2")
        for logical_id, props in self.template.of_type("AWS::ApiGatewayV2::Api").items():
            created = apis.create_api(Name=f"{self.name}-{logical_id}", ProtocolType=props["ProtocolType"])
            self.physical_ids[logical_id] = created["ApiId"]
        self._provision_queues()
        kms = boto3.client("kms")
        for logical_id, props in self.template.of_type("AWS::KMS::Key").items():
            metadata = kms.create_key(
                Description=props.get("Description", logical_id),
                KeySpec=props.get("KeySpec", "SYMMETRIC_DEFAULT"),
                KeyUsage=props.get("KeyUsage", "ENCRYPT_DECRYPT"),
            )["KeyMetadata"]
            key_id, arn = metadata["KeyId"], metadata["Arn"]
            if logical_id in self.kept_keys:
                key_id, arn = keys.adopt(self, key_id, self.kept_keys[logical_id])
            self.physical_ids[logical_id] = key_id
            self.attributes[(logical_id, "Arn")] = arn
        self._provision_functions()
        self._provision_buckets()
        self._provision_mail()
        provisioning.provision(self)  # the state machines and their EventBridge rules
        return self

    def _provision_functions(self) -> None:
        """Names and ARNs only: the handlers run in this process (``invoke``; moto's Lambda is
        pointed at them by ``phoneid_dev.workflows``)."""
        for logical_id in self.template.functions:
            name = self.function_name(logical_id)
            self.physical_ids[logical_id] = name
            self.attributes[(logical_id, "Arn")] = (
                f"arn:aws:lambda:{self.aws_region}:{_ACCOUNT_ID}:function:{name}"
            )

    def _provision_buckets(self) -> None:
        """S3 buckets with what changes behaviour here: versioning (version ids in events), default
        encryption, EventBridge notifications. Lifecycle rules and the bucket policy do not run in moto."""
        s3: Any = boto3.client("s3")
        for logical_id, props in self.template.of_type("AWS::S3::Bucket").items():
            name = f"{self.name}-{logical_id}".lower()
            where = {} if self.aws_region == "us-east-1" else {"LocationConstraint": self.aws_region}
            s3.create_bucket(Bucket=name, **({"CreateBucketConfiguration": where} if where else {}))
            if (props.get("VersioningConfiguration") or {}).get("Status") == "Enabled":
                s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
            rules = (props.get("BucketEncryption") or {}).get("ServerSideEncryptionConfiguration") or []
            if rules:
                s3.put_bucket_encryption(
                    Bucket=name,
                    ServerSideEncryptionConfiguration={
                        "Rules": [
                            {
                                "ApplyServerSideEncryptionByDefault": self.resolve_deep(
                                    rule["ServerSideEncryptionByDefault"]
                                ),
                                "BucketKeyEnabled": bool(rule.get("BucketKeyEnabled", False)),
                            }
                            for rule in rules
                        ]
                    },
                )
            notifications = props.get("NotificationConfiguration") or {}
            if (notifications.get("EventBridgeConfiguration") or {}).get("EventBridgeEnabled"):
                s3.put_bucket_notification_configuration(
                    Bucket=name, NotificationConfiguration={"EventBridgeConfiguration": {}}
                )
            self.physical_ids[logical_id] = name
            self.attributes[(logical_id, "Arn")] = f"arn:aws:s3:::{name}"

    def _provision_mail(self) -> None:
        """Every address the functions send email from (``*_EMAIL_SENDER``) verified in SES, as the
        operator verifies it (or its domain) in AWS."""
        senders = {value for name, value in self.environment().items() if name.endswith("_EMAIL_SENDER")}
        if senders:
            ses: Any = boto3.client("ses")
            for sender in sorted(sender for sender in senders if sender):
                ses.verify_email_identity(EmailAddress=sender)

    def _provision_queues(self) -> None:
        """SQS queues, then their redrive policies (a dead-letter queue must exist first).

        Nothing here runs what feeds or drains them in AWS (schedules, event source mappings): the
        local stack and the tests drive those (``phoneid_dev.triggers``)."""
        sqs: Any = boto3.client("sqs")
        queues = self.template.of_type("AWS::SQS::Queue")
        copied = (
            "VisibilityTimeout",
            "MessageRetentionPeriod",
            "DelaySeconds",
            "ReceiveMessageWaitTimeSeconds",
        )
        for logical_id, props in queues.items():
            name = f"{self.name}-{logical_id}"
            url = sqs.create_queue(
                QueueName=name, Attributes={k: str(props[k]) for k in copied if k in props}
            )["QueueUrl"]
            self.physical_ids[logical_id] = url
            self.attributes[(logical_id, "QueueName")] = name
            self.attributes[(logical_id, "QueueUrl")] = url
            self.attributes[(logical_id, "Arn")] = sqs.get_queue_attributes(
                QueueUrl=url, AttributeNames=["QueueArn"]
            )["Attributes"]["QueueArn"]
        for logical_id, props in queues.items():
            if redrive := props.get("RedrivePolicy"):
                policy = {
                    "deadLetterTargetArn": self.resolve(redrive["deadLetterTargetArn"]),
                    "maxReceiveCount": int(redrive["maxReceiveCount"]),
                }
                sqs.set_queue_attributes(
                    QueueUrl=self.physical_ids[logical_id], Attributes={"RedrivePolicy": json.dumps(policy)}
                )

    def streams_begun_again(self) -> None:
        """The streams functions read start after the data just put back (``phoneid dev --data``): in
        AWS a table's items outlive a restart and its stream holds only later changes, where moto's
        would hold the import as new records, to be appended to the decision histories again."""
        from moto.dynamodb.models import dynamodb_backends

        backend = dynamodb_backends[self.account_id][self.aws_region]
        for logical_id, props in self.template.of_type("AWS::DynamoDB::Table").items():
            spec = _read_stream(logical_id, props, self.template).get("StreamSpecification")
            if spec:
                table = backend.get_table(self.physical_ids[logical_id])
                table.set_stream_specification(dict(spec))  # a new stream: a new label, no records
                self.attributes[(logical_id, "StreamArn")] = table.describe()["TableDescription"][
                    "LatestStreamArn"
                ]

    # --- intrinsic functions -----------------------------------------------------------------

    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                parameters = {**self.template.parameter_defaults(), **self.parameters}
                return parameters[argument] if argument in parameters else self.physical_ids[argument]
            if key == "Fn::GetAtt":
                return self.attributes[(argument[0], argument[1])]
            if key == "Fn::Sub" and isinstance(argument, str):
                return self._substitute(argument)
        if isinstance(value, (str, int, float, bool)):
            return str(value)
        raise ValueError(f"unsupported value in the local stack: {value!r}")

    def resolve_deep(self, value: Any) -> Any:
        """``value`` with every intrinsic function inside it resolved; other values kept as they are."""
        if isinstance(value, dict):
            if len(value) == 1 and next(iter(value)) in ("Ref", "Fn::GetAtt", "Fn::Sub"):
                return self.resolve(value)
            return {key: self.resolve_deep(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.resolve_deep(item) for item in value]
        return value

    def _substitute(self, text: str) -> str:
        def replace(found: re.Match[str]) -> str:
            name = found.group(1)
            if "." in name:
                resource, attribute = name.split(".", 1)
                return self.attributes[(resource, attribute)]
            pseudo = {
                "AWS::Region": self.aws_region,
                "AWS::AccountId": _ACCOUNT_ID,
                "AWS::Partition": "aws",
                "AWS::URLSuffix": "amazonaws.com",
                "AWS::StackName": self.name,
            }
            return pseudo.get(name) or self.resolve({"Ref": name})

        return re.sub(r"\$\{([^}]+)\}", replace, text)

    def environment(self, function: Function | None = None) -> dict[str, str]:
        """Resolved environment of one function, or the union of all (they share one process here).

        ``overrides`` replace what only exists in AWS (the public URLs of the APIs) with local ones,
        and ``PHONEID_LOCAL_STACK`` says the stack is local (loopback webhooks).
        """
        functions = [function] if function else list(self.template.functions.values())
        env: dict[str, str] = {}
        for each in functions:
            env.update(self._variables(each))
        env.pop(ENDPOINT_VARIABLE, None)
        # The one variable no template gives: this stack runs on the machine of its webhook receivers.
        return {**env, LOCAL_STACK_VARIABLE: "true"}

    def _variables(self, function: Function) -> dict[str, str]:
        """The variables the template declares for ``function``, resolved, the ``overrides`` applied."""
        return {
            name: self.overrides[name] if name in self.overrides else self.resolve(value)
            for name, value in function.environment.items()
        }

    def sam_env_vars(self, endpoint_url: str) -> dict[str, dict[str, str]]:
        """``sam local start-api --env-vars``: each function's variables on this stack, boto3's
        endpoint ``endpoint_url`` (this stack's AWS) among them.

        ``Parameters`` holds what every function has alike, a member named by a function's logical id
        what is its own. SAM sets only the variables the template declares for a function (so not
        ``PHONEID_LOCAL_STACK``: webhooks refuse loopback there, as in AWS), and the AWS credentials and
        region from its own command line, never from this file.
        """
        variables = {
            logical_id: {
                name: endpoint_url if name == ENDPOINT_VARIABLE else value
                for name, value in self._variables(function).items()
            }
            for logical_id, function in self.template.functions.items()
        }
        shared = dict(set.intersection(*(set(own.items()) for own in variables.values())))
        return {
            "Parameters": dict(sorted(shared.items())),
            **{
                logical_id: {name: value for name, value in own.items() if name not in shared}
                for logical_id, own in variables.items()
            },
        }

    # --- handlers ----------------------------------------------------------------------------

    def _load(self, logical_id: str) -> LambdaHandler:
        function = self.template.functions[logical_id]
        module_name = f"functions_{self.name}_{logical_id}_{id(self)}"
        spec = importlib.util.spec_from_file_location(module_name, function.module_path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {function.module_path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        handler: LambdaHandler = getattr(module, function.handler_name)
        return handler

    def invoke(self, logical_id: str, event: dict[str, Any], context: Any) -> Any:
        """The function's answer to ``event``: in a worker process of its own when the stack has them
        (an error raised as ``FunctionError``), else in this process, one invocation at a time."""
        if self.processes is not None and logical_id in self.processes:
            result, error = self.processes.invoke(logical_id, event)
            if error is not None:
                raise FunctionError(error)
            return result
        with _one_invocation_at_a_time:
            if self.cold_starts:
                bootstrap.override()  # a new container, with the settings and the test's parts
            # The calls the handler makes (its import too: Lambda's init phase) are the function's, on
            # every thread it hands work to (phoneid_dev.access).
            with invoked(self, logical_id):
                handler = self._handlers.get(logical_id)
                if handler is None:
                    handler = self._handlers[logical_id] = self._load(logical_id)
                return handler(event, context)


def _read_stream(logical_id: str, props: Mapping[str, Any], template: Template) -> dict[str, Any]:
    """The table's stream, when a function reads it with the DynamoDB Streams API (its environment
    names the stream's ARN). A stream only a Lambda event source consumes is not made: the local stack
    hands those functions their records itself (``phoneid_dev.ttl``), and moto would keep every
    change of the table in memory for nobody."""
    spec = props.get("StreamSpecification")
    arn = {"Fn::GetAtt": [logical_id, "StreamArn"]}
    read = any(
        arn in ((function.get("Environment") or {}).get("Variables") or {}).values()
        for function in template.of_type("AWS::Serverless::Function").values()
    )
    if not spec or not read:
        return {}
    return {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": spec["StreamViewType"]}}
