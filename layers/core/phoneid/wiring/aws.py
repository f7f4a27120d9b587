"""The AWS clients: one per service, made on first use (``phoneid.adapters.aws.new_client``); API
Gateway's management clients, one per WebSocket endpoint, are the notifier's (``flows``)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from phoneid.wiring.base import Base


class AwsClients(Base):
    @cached_property
    def dynamodb(self) -> Any:
        """Its conditional writes recognise their own earlier success when botocore retries them
        (``phoneid.adapters.dynamodb.own_writes``)."""
        from phoneid.adapters.aws import new_client
        from phoneid.adapters.dynamodb.own_writes import OwnWrites

        return OwnWrites(new_client("dynamodb"))

    @cached_property
    def dynamodb_streams(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("dynamodbstreams")

    @cached_property
    def kms(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("kms")

    @cached_property
    def sns(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("sns")

    @cached_property
    def sqs(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("sqs")

    @cached_property
    def s3(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("s3")

    @cached_property
    def ses(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("sesv2")

    @cached_property
    def lambda_client(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("lambda")

    @cached_property
    def secrets(self) -> Any:
        """Secrets Manager: the carrier operator's credentials."""
        from phoneid.adapters.aws import new_client

        return new_client("secretsmanager")
