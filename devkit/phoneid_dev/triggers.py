"""What starts functions other than requests, for the local stack and the tests: SQS event sources,
as Lambda's event source mapping runs them, and schedules (run on demand here).

Every function of ``template.yaml`` with an ``SQS`` event is fed here: receive up to its
``BatchSize`` visible messages, invoke the handler with an SQS event, delete the messages it did
not report as failed (``ReportBatchItemFailures``) and leave those to the visibility timeout the
handler gave them. A handler that raises leaves the whole batch in the queue, as on Lambda.

moto's SQS keeps visibility timeouts in real time (the local clock offset does not reach it):
``release()`` makes every message this poller saw fail visible again at once, so a retry need not
wait out its backoff.

A poller's ``observers`` see each batch it fed a function, and which of its messages failed (the
console's webhook panel: ``phoneid_dev.console_page``).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3

from phoneid_dev.events import function_context
from phoneid_dev.stack import LocalStack
from phoneid_dev.template import Template


@dataclass(frozen=True)
class QueueSource:
    """One SQS event of a function in the template."""

    function: str  # logical id
    queue: str  # logical id of the AWS::SQS::Queue
    batch_size: int
    partial_failures: bool  # FunctionResponseTypes has ReportBatchItemFailures


def queue_sources(template: Template) -> list[QueueSource]:
    sources = []
    for name, props in template.of_type("AWS::Serverless::Function").items():
        for event in (props.get("Events") or {}).values():
            if event.get("Type") != "SQS":
                continue
            spec = event["Properties"]
            queue = spec["Queue"]["Fn::GetAtt"][0]
            sources.append(
                QueueSource(
                    function=name,
                    queue=queue,
                    batch_size=int(spec.get("BatchSize", 10)),
                    partial_failures="ReportBatchItemFailures" in (spec.get("FunctionResponseTypes") or []),
                )
            )
    return sources


def sqs_event(messages: Iterable[Mapping[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    """The event Lambda gives a function for messages received with every system attribute."""
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": dict(message.get("Attributes") or {}),
                "messageAttributes": dict(message.get("MessageAttributes") or {}),
                "md5OfBody": message.get("MD5OfBody") or hashlib.md5(message["Body"].encode()).hexdigest(),  # noqa: S324
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for message in messages
        ]
    }


@dataclass(frozen=True)
class Polled:
    received: int
    failed: int  # reported failed (or the whole batch, when the handler raised)


# Told of each batch a poller fed: the function's logical id, the messages, the ids that failed.
BatchObserver = Callable[[str, list[dict[str, Any]], set[str]], None]


@dataclass
class QueuePoller:
    stack: LocalStack
    source: QueueSource
    observers: list[BatchObserver] = field(default_factory=list)
    _failed: dict[str, str] = field(default_factory=dict)  # messageId -> latest receipt handle
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _client: Any = None

    @property
    def _sqs(self) -> Any:
        if self._client is None:
            self._client = boto3.client("sqs")
        return self._client

    @property
    def queue_url(self) -> str:
        return self.stack.physical_ids[self.source.queue]

    @property
    def queue_arn(self) -> str:
        return self.stack.attributes[(self.source.queue, "Arn")]

    def poll(self) -> Polled:
        """One batch: receive, invoke, delete what succeeded."""
        sqs = self._sqs
        with self._lock:
            messages = sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=min(self.source.batch_size, 10),
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
                WaitTimeSeconds=0,
            ).get("Messages", [])
            if not messages:
                return Polled(0, 0)
            event = sqs_event(messages, self.queue_arn, self.stack.aws_region)
            try:
                result = self.stack.invoke(
                    self.source.function, event, function_context(self.stack.template, self.source.function)
                )
                failed = {
                    item["itemIdentifier"]
                    for item in ((result or {}).get("batchItemFailures") or [])
                    if self.source.partial_failures
                }
            except Exception:  # the invocation failed: every message goes back to the queue
                failed = {message["MessageId"] for message in messages}
            for observer in self.observers:
                with contextlib.suppress(Exception):  # a watcher never holds up the deliveries
                    observer(self.source.function, messages, failed)
            for message in messages:
                if message["MessageId"] in failed:
                    self._failed[message["MessageId"]] = message["ReceiptHandle"]
                else:
                    self._failed.pop(message["MessageId"], None)
                    sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
            return Polled(len(messages), len(failed))

    def drain(self, batches: int = 100) -> Polled:
        """Poll until no message is visible (at most ``batches`` batches)."""
        received = failed = 0
        for _ in range(batches):
            polled = self.poll()
            if not polled.received:
                break
            received, failed = received + polled.received, failed + polled.failed
        return Polled(received, failed)

    def release(self) -> int:
        """Make every message that failed here visible again now; how many were still in flight."""
        sqs = self._sqs
        released = 0
        with self._lock:
            for message_id, receipt in list(self._failed.items()):
                try:
                    sqs.change_message_visibility(
                        QueueUrl=self.queue_url, ReceiptHandle=receipt, VisibilityTimeout=0
                    )
                    released += 1
                except sqs.exceptions.ReceiptHandleIsInvalid:
                    pass  # deleted, or moved to the dead-letter queue
                except Exception:  # noqa: S110 - gone by other means; nothing to release
                    pass
                del self._failed[message_id]
        return released


def pollers(stack: LocalStack) -> list[QueuePoller]:
    return [QueuePoller(stack, source) for source in queue_sources(stack.template)]


def scheduled_functions(template: Template) -> dict[str, str]:
    """The functions EventBridge Scheduler schedules invoke: schedule logical id -> function logical id."""
    found = {}
    for schedule, props in template.of_type("AWS::Scheduler::Schedule").items():
        target = (props.get("Target") or {}).get("Arn")
        if isinstance(target, dict) and "Fn::GetAtt" in target:
            found[schedule] = str(target["Fn::GetAtt"][0])
    return found


def scheduler_event() -> dict[str, Any]:
    """What a schedule without an Input gives its Lambda target: an empty object."""
    return {}
