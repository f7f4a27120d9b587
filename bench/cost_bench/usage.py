"""What requests consume in the units AWS bills, and those units in dollars."""

from __future__ import annotations

from dataclasses import dataclass, fields

from bench.cost_bench.prices import (
    API_GATEWAY_PER_REQUEST,
    DYNAMODB_PER_READ_UNIT,
    DYNAMODB_PER_WRITE_UNIT,
    KMS_PER_ASYMMETRIC_REQUEST,
    KMS_PER_REQUEST,
    LAMBDA_PER_GB_SECOND,
    LAMBDA_PER_REQUEST,
    SMS_US_PER_MESSAGE,
)


@dataclass
class Usage:
    """What some requests consume, in the units AWS bills."""

    api_requests: float = 0.0
    lambda_requests: float = 0.0
    lambda_gb_seconds: float = 0.0
    read_units: float = 0.0
    write_units: float = 0.0
    kms_requests: float = 0.0
    kms_asymmetric_requests: float = 0.0
    sms: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def scaled(self, factor: float) -> Usage:
        return Usage(*(getattr(self, f.name) * factor for f in fields(self)))

    def dollars(self) -> Cost:
        return Cost(
            api_gateway=self.api_requests * API_GATEWAY_PER_REQUEST,
            lambda_requests=self.lambda_requests * LAMBDA_PER_REQUEST,
            lambda_gb_seconds=self.lambda_gb_seconds * LAMBDA_PER_GB_SECOND,
            dynamodb_reads=self.read_units * DYNAMODB_PER_READ_UNIT,
            dynamodb_writes=self.write_units * DYNAMODB_PER_WRITE_UNIT,
            kms=self.kms_requests * KMS_PER_REQUEST
            + self.kms_asymmetric_requests * KMS_PER_ASYMMETRIC_REQUEST,
            sms=self.sms * SMS_US_PER_MESSAGE,
        )


@dataclass(frozen=True)
class Cost:
    """Dollars, split as AWS bills them; ``total`` leaves SMS out."""

    api_gateway: float
    lambda_requests: float
    lambda_gb_seconds: float
    dynamodb_reads: float
    dynamodb_writes: float
    kms: float
    sms: float

    @property
    def total(self) -> float:
        return (
            self.api_gateway
            + self.lambda_requests
            + self.lambda_gb_seconds
            + self.dynamodb_reads
            + self.dynamodb_writes
            + self.kms
        )
