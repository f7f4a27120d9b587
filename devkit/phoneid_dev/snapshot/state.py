"""A stack's snapshot, taken and put back: its KMS keys, tables, buckets and queues, the local
clock's offset and the clients the stack made for itself (``own_clients``: their secrets in plain
text, as the table holds only their hashes).

Not kept: what the stack makes anew at each start (the fake operator and its Secrets Manager
secret, the SFTP host key, which lives beside the state file) and what runs (Step Functions
executions: a Connect batch that was running when the stack stopped stays as it was).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from phoneid_dev.snapshot import keys, services

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack


def taken(
    stack: LocalStack, clock_offset_seconds: float, own_clients: dict[str, dict[str, str]]
) -> dict[str, Any]:
    return {
        "clockOffsetSeconds": clock_offset_seconds,
        "ownClients": own_clients,
        "kmsKeys": keys.exported(stack),
        "tables": services.export_tables(stack),
        "buckets": services.export_buckets(stack),
        "queues": services.export_queues(stack),
    }


def check_fits(stack_template: Any, snapshot: dict[str, Any]) -> None:
    """Every table, bucket, queue and key the snapshot holds is one the template provisions:
    checked before anything is loaded, so that a snapshot is loaded whole or not at all."""
    kinds = {
        "kmsKeys": "AWS::KMS::Key",
        "tables": "AWS::DynamoDB::Table",
        "buckets": "AWS::S3::Bucket",
        "queues": "AWS::SQS::Queue",
    }
    for part, resource_type in kinds.items():
        unknown = set(snapshot.get(part, {})) - set(stack_template.of_type(resource_type))
        if unknown:
            raise ValueError(f"it holds {', '.join(sorted(unknown))}, which template.yaml no longer has")


def put_back(stack: LocalStack, snapshot: dict[str, Any]) -> None:
    """The snapshot's data into ``stack``, provisioned with its keys (``LocalStack.kept_keys``)."""
    services.import_tables(stack, snapshot["tables"])
    stack.streams_begun_again()
    services.import_buckets(stack, snapshot["buckets"])
    services.import_queues(stack, snapshot["queues"])
